"""Section budgets (the design's table, scaled with max_chars) and the hard size limit.

Cases marked "port" come from alberthild/vainplex-openclaw
packages/openclaw-cortex/test/boot-context.test.ts (``BootContextGenerator — truncation``).
"""

from __future__ import annotations

from datetime import timedelta

from briefing_sections import SECTIONS, knobs
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from shared.config import BootSettings
from workers.boot import TRUNCATION_MARKER, assemble_boot
from workers.boot.budget import FOOTER_CHARS, HEADER_STATE_CHARS, enforce_limit, scaled
from workers.briefing import bounded, clip, fit_blocks, section


def bulky_threads(make, count=20):
    """The reference's bulky threads: 500-character summaries, long decisions and waits."""
    return make.threads(*(
        make.thread(f"t-{i}", title=f"very long thread title number {i}", summary="A" * 500,
                    decisions=["X" * 100], waiting_for="Y" * 100,
                    last_activity=make.now - timedelta(minutes=i))
        for i in range(count)
    ))


def bulky_everything(make):
    return make.inputs(
        threads=bulky_threads(make),
        decisions=make.decisions(*(make.decision(f"d{i}", what="W" * 200, why="Z" * 200) for i in range(30))),
        commitments=make.commitments(*(make.commitment(f"c{i}", what="C" * 200) for i in range(30))),
        snapshot=make.snapshot("S" * 5000),
        narrative=make.narrative("N" * 10000),
        knowledge=make.knowledge(*(make.fact(f"f{i}", object="F" * 200) for i in range(50))),
        channels=make.channels(*(make.channel(f"ch{i}", summary="H" * 200) for i in range(20))),
        key_memories=[f"memory {i} " + "M" * 200 for i in range(20)],
        lagging=["threads", "decisions"],
    )


def test_twenty_bulky_threads_stay_within_2000_characters_plus_marker(make, tz):
    """port: truncates output exceeding maxChars (2000 + truncation marker)."""
    md = assemble_boot(SECTIONS, make.inputs(threads=bulky_threads(make)), BootSettings(max_chars=2000), tz)
    assert len(md) <= 2000 + len(TRUNCATION_MARKER)
    # The section budget already keeps it whole: the footer survives, with what was shown.
    assert md.endswith("_Boot context | 1 active thread | 0 recent decisions | 0 open commitments_")
    assert "_… 19 more open threads not shown_" in md


def test_bulky_everything_is_hard_cut_with_the_reference_marker(make, tz):
    md = assemble_boot(SECTIONS, bulky_everything(make), BootSettings(max_chars=2000), tz)
    assert len(md) == 2000 + len(TRUNCATION_MARKER)
    assert md.endswith("\n\n_[truncated to token budget]_")
    assert "[truncated" in md


def test_does_not_truncate_within_budget(make, tz):
    """port: does not truncate within budget."""
    md = assemble_boot(SECTIONS, make.inputs(threads=make.threads(make.thread("1"))), BootSettings(max_chars=64000), tz)
    assert "[truncated" not in md


def test_max_chars_argument_overrides_the_setting(make, tz):
    inputs = bulky_everything(make)
    md = assemble_boot(SECTIONS, inputs, BootSettings(max_chars=64000), tz, max_chars=2500)
    assert len(md) <= 2500 + len(TRUNCATION_MARKER)


@hypothesis_settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(max_chars=st.integers(min_value=2000, max_value=64000), threads=st.integers(min_value=0, max_value=25))
def test_output_never_exceeds_max_chars_plus_marker(make, tz, max_chars, threads):
    inputs = bulky_everything(make)
    inputs = make.inputs(**{**{f: getattr(inputs, f) for f in inputs.__struct_fields__},
                            "threads": bulky_threads(make, threads)})
    md = assemble_boot(SECTIONS, inputs, BootSettings(max_chars=max_chars), tz,
                       knobs=knobs(CORTEX_BOOT_MAX_THREADS_IN_BOOT="20"))
    assert len(md) <= max_chars + len(TRUNCATION_MARKER)


def test_each_content_section_keeps_its_scaled_budget(make, tz):
    md = assemble_boot(SECTIONS, bulky_everything(make), BootSettings(max_chars=64000), tz)
    budgets = {s.name: scaled(s.chars, 64000) for s in SECTIONS}
    sections = md.split("\n## ")
    by_heading = {s.split("\n", 1)[0]: "## " + s + "\n" for s in sections[1:]}
    assert len(by_heading["🧵 Active Threads"]) <= budgets["threads"] + 1
    assert len(by_heading["🎯 Recent Decisions"]) <= budgets["decisions"] + 1
    snapshot_body = by_heading["🔥 Last Session Snapshot"].split("\n", 1)[1]
    taken = "Compacted just now (2026-02-17T11:30:02Z).\n\n"
    assert snapshot_body.strip() == taken + "S" * (budgets["snapshot"] - len(taken) - 1) + "…"
    narrative_body = by_heading["📖 Narrative (last 24h)"].split("\n", 1)[1]
    assert narrative_body.strip() == "N" * (budgets["narrative"] - 1) + "…"


DESIGN = {s.name: s.chars for s in SECTIONS}


def test_default_budgets_are_the_design_table():
    table = (HEADER_STATE_CHARS, DESIGN["snapshot"], DESIGN["narrative"], DESIGN["threads"], DESIGN["decisions"],
             FOOTER_CHARS)
    assert table == (500, 1000, 2000, 8000, 3000, 500)


def test_budgets_scale_with_max_chars_but_header_and_footer_do_not():
    small = {name: scaled(chars, 2000) for name, chars in DESIGN.items()}
    assert (small["snapshot"], small["narrative"], small["threads"], small["decisions"]) == (125, 250, 1000, 375)
    assert scaled(DESIGN["threads"], 32000) == 16000


def test_snapshot_is_cut_at_1000_characters_by_default(make, settings, tz):
    """The reference: hot snapshot content.trim().slice(0, 1000) — mid-sentence, no mark
    (issue 18). The same budget here (the line saying when included), the cut marked "…"."""
    md = assemble_boot(SECTIONS, make.inputs(snapshot=make.snapshot("  " + "S" * 1500 + "  ")), settings, tz)
    taken = "Compacted just now (2026-02-17T11:30:02Z).\n\n"
    assert f"## 🔥 Last Session Snapshot\n{taken}{'S' * (999 - len(taken))}…\n" in md


def test_a_cut_snapshot_keeps_whole_lines_the_newest_and_cuts_a_lone_long_one_between_words(make, settings, tz):
    lines = [f"- [user] message number {i} says something about the release plan" for i in range(40)]
    md = assemble_boot(SECTIONS, make.inputs(snapshot=make.snapshot("\n".join(lines))), settings, tz)
    section = md.split("## 🔥 Last Session Snapshot\n", 1)[1].split("\n\n---", 1)[0]
    assert len(section) <= 1000
    taken, quoted = section.split("\n\n", 1)
    assert taken == "Compacted just now (2026-02-17T11:30:02Z)."
    body = quoted.rstrip("\n").split("\n")
    assert body == lines[-len(body):] and len(body) > 5  # whole lines, the last said ones (the oldest left)
    # one message longer than the room: cut between words, marked
    long = "- [user] " + " ".join(f"word{i}" for i in range(300))
    md = assemble_boot(SECTIONS, make.inputs(snapshot=make.snapshot(long)), settings, tz)
    last = md.split("## 🔥 Last Session Snapshot\n", 1)[1].split("\n\n", 2)[1].split("\n")[0]
    assert last.endswith("…") and long.startswith(last[:-1]) and last[:-1].split()[-1] in long.split()


def test_narrative_is_cut_at_2000_characters_by_default(make, settings, tz):
    """The reference: narrative content.trim().slice(0, 2000); here the cut is marked "…"."""
    md = assemble_boot(SECTIONS, make.inputs(narrative=make.narrative("N" * 2500)), settings, tz)
    assert f"## 📖 Narrative (last 24h)\n{'N' * 1999}…\n" in md


def test_enforce_limit_is_the_reference_hard_cut():
    assert enforce_limit("abcdef", 6) == "abcdef"
    assert enforce_limit("abcdefg", 6) == "abcdef\n\n_[truncated to token budget]_"


def test_fit_blocks_takes_whole_blocks_only():
    assert fit_blocks(["aaaa", "bbbb", "cccc"], 10) == ["aaaa", "bbbb"]
    assert fit_blocks(["aaaa", "bbbb"], 100) == ["aaaa", "bbbb"]


def test_fit_blocks_clips_a_first_block_that_alone_is_too_big():
    assert fit_blocks(["a" * 50, "b"], 11) == ["a" * 9 + "…"]


def test_section_without_blocks_is_empty_and_with_blocks_within_budget():
    assert section("## H", [], 100) == ("", 0)
    text, shown = section("## H", ["- one", "- two", "- three"], 17)
    assert (text, shown) == ("## H\n- one\n- two\n", 2)
    assert len(text) == 17
    assert section("## H", ["- one", "- two", "- three"], 16) == ("## H\n- one\n", 1)


def test_clip_marks_the_cut():
    assert clip("abcdef", 10) == "abcdef"
    assert clip("abcdef", 4) == "abc…"
    assert clip("abcdef", 1) == "a"


def test_bounded_keeps_the_trailing_newline():
    assert bounded("short\n", 100) == "short\n"
    assert bounded("a" * 20 + "\n", 10) == "a" * 8 + "…\n"
    assert len(bounded("a" * 20 + "\n", 10)) == 10


def test_header_and_state_stay_within_their_budget_with_many_lagging_workers(make, settings, tz):
    lagging = [f"worker-with-a-long-name-{i:02d}" for i in range(40)]
    md = assemble_boot(SECTIONS, make.inputs(threads=make.threads(), lagging=lagging), settings, tz)
    header_and_state = md[: md.index("\n---\n")]
    assert len(header_and_state) <= 500
    assert header_and_state.endswith("…\n")
    assert md.endswith("_Boot context | 0 active threads | 0 recent decisions | 0 open commitments_")
