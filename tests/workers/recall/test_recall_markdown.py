"""The memory-directory indexer splits markdown into its H1–H4 section tree."""

from __future__ import annotations

from workers.recall.markdown import Section, note_id, split_sections

DOC = """Preamble line.

# Projects
Overview of projects.

## Cortex
### Deploys
Never deploy on Fridays.
```bash
# not a heading inside a fence
make deploy
```
#### Rollback
Run the rollback script.
## Other
Something else.
##### five hashes is text
"""


def test_sections_carry_their_heading_path() -> None:
    sections = split_sections(DOC)
    assert [s.headings for s in sections] == [
        (), ("Projects",), ("Projects", "Cortex", "Deploys"), ("Projects", "Cortex", "Deploys", "Rollback"),
        ("Projects", "Other"),
    ]
    assert sections[0].content == "Preamble line."
    assert "# not a heading inside a fence" in sections[2].content
    assert "##### five hashes is text" in sections[4].content


def test_empty_sections_are_left_out() -> None:
    assert split_sections("# A\n\n## B\ntext\n") == [Section(headings=("A", "B"), content="text")]


def test_note_ids_are_stable_and_change_with_content() -> None:
    section = Section(headings=("A",), content="text")
    assert note_id("x.md", section) == note_id("x.md", Section(headings=("A",), content="text"))
    assert note_id("x.md", section) != note_id("x.md", Section(headings=("A",), content="text!"))
    assert note_id("x.md", section) != note_id("y.md", section)
    assert note_id("x.md", section).startswith("note:")


def test_a_daily_note_is_dated_by_its_file_name_in_the_agents_time_zone() -> None:
    from datetime import UTC, datetime

    from workers.recall.markdown import note_day, note_time

    fallback = datetime(2026, 3, 6, 9, 1, tzinfo=UTC)
    assert note_time("memory/2026-03-05.md", "Europe/Berlin", fallback) == datetime(2026, 3, 4, 23, 0, tzinfo=UTC)
    assert note_time("2026-03-05-standup.md", "UTC", fallback) == datetime(2026, 3, 5, tzinfo=UTC)
    assert note_time("projects/cortex.md", "UTC", fallback) == fallback  # not a daily note: never its mtime
    assert note_day("2026-02-30.md") is None and note_day("notes-2026-03-05.md") is None
