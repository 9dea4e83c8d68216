"""The plain-text tables the CLI prints and the MCP tools return (``workers.tables``)."""

from __future__ import annotations

import pytest

from schemas.api import CommitmentsReply, RecalledMemory, RecallReply
from workers.tables import commitment_rows, display_width, memory_rows, render_table


def test_columns_align_to_their_widest_cell_and_lines_end_without_padding() -> None:
    text = render_table(["id", "title", "due"], [["t1", "Auth migration", ""], ["t22", "Docs", "2026-03-01"]])
    assert text.splitlines() == [
        "ID   TITLE           DUE",
        "t1   Auth migration",
        "t22  Docs            2026-03-01",
    ]


def test_a_width_cuts_long_cells_with_an_ellipsis_and_none_keeps_every_word() -> None:
    long = "word " * 30
    assert render_table(["text"], [[long]], width=10).splitlines()[1] == "word word…"
    assert render_table(["text"], [[long]], width=None).splitlines()[1] == long.rstrip()


def test_no_rows_is_the_header_alone() -> None:
    assert render_table(["id", "status"], []) == "ID  STATUS"


def test_a_row_with_the_wrong_number_of_cells_is_refused() -> None:
    with pytest.raises(ValueError, match="2 cells"):
        render_table(["id", "status"], [["t1"]])


def test_a_cell_of_several_lines_stays_on_its_row() -> None:
    text = render_table(["id", "memory"], [["m1", "On 17 February 2026:\nalbert: hi\r\nclaudia:\tok"], ["m2", "one"]],
                        width=None)
    assert text.splitlines() == ["ID  MEMORY", "m1  On 17 February 2026: albert: hi claudia: ok", "m2  one"]


def test_the_memory_is_the_last_column_so_no_row_is_padded_to_another_s_text() -> None:
    """The MCP tool's table: a short memory's line is short (the id came after the memory,
    so every line was padded to the longest memory: hundreds of spaces a model pays for)."""
    def memory(i: str, content: str) -> RecalledMemory:
        return RecalledMemory(id=f"{i}-0000-0000-0000-000000000000", content=content, type="fact",
                              scope="permanent", score=0.5, similarity=0.5, source_event="e")

    reply = RecallReply(memories=[memory("aaaaaaaa", "word " * 80), memory("bbbbbbbb", "short")], text="", tokens=1)
    lines = render_table(*memory_rows(reply, id_chars=None), width=None).splitlines()
    assert lines[0].split() == ["SCORE", "TYPE", "SCOPE", "ID", "MEMORY"]
    assert lines[2].endswith("bbbbbbbb-0000-0000-0000-000000000000  short") and len(lines[2]) < 80
    commitments = CommitmentsReply(commitments=[])
    assert commitment_rows(commitments)[0][-1] == "what"


def test_a_cell_is_cut_between_words() -> None:
    """`cortex decisions` showed "… the plan is to use Stri…" and "… from Redis to Memcac…": a
    long cell is cut at the last space that leaves more than half of it, never inside a word."""
    what = "For the payment gateway integration the plan is to use Stripe webhooks with idempotency keys"
    assert render_table(["what"], [[what]], width=60).splitlines()[1] == (
        "For the payment gateway integration the plan is to use…")
    assert render_table(["id"], [["x" * 80]], width=10).splitlines()[1] == "x" * 9 + "…"


def test_a_closed_thread_waits_for_nothing() -> None:
    """`cortex threads` listed the closed "Onboarding-Flow" as WAITING FOR "die Crash-Logs von
    Jonas", the wait it had before it was fixed: a closed thread's wait is left out."""
    from datetime import UTC, datetime

    from schemas.api import ThreadsReply
    from schemas.docs import Thread
    from workers.tables import thread_rows

    at = datetime(2026, 3, 15, 15, 5, tzinfo=UTC)
    threads = [Thread(id=f"t-{status}", title="Onboarding-Flow", status=status, priority="medium", summary="",
                      decisions=[], waiting_for="die Crash-Logs von Jonas", mood="neutral", last_activity=at,
                      created=at) for status in ("open", "closed")]
    _, rows = thread_rows(ThreadsReply(threads=threads))
    assert [row[4] for row in rows] == ["die Crash-Logs von Jonas", ""]


def test_a_doom_loop_the_agent_got_out_of_says_when_and_after_what() -> None:
    """``cortex traces`` and the cortex_traces tool told a resolved loop as if it still held:
    the finding's resolution was in the document and the briefing only."""
    from datetime import UTC, datetime

    from schemas.api import TracesReply
    from schemas.docs import Finding
    from workers.tables import finding_rows

    at = datetime(2026, 3, 3, 9, 4, tzinfo=UTC)
    loop = Finding(id="f1", signal="doom_loop", severity="high", summary="`exec` failed 4× in a row", events=["e1"],
                   first_ts=at, last_ts=at, resolved_ts=datetime(2026, 3, 3, 9, 12, tzinfo=UTC),
                   resolved_after="rm -rf node_modules && npm ci")
    open_loop = Finding(id="f2", signal="doom_loop", severity="high", summary="`deploy` failed 3× in a row",
                        events=["e2"], first_ts=at, last_ts=at)
    _, rows = finding_rows(TracesReply(findings=[loop, open_loop]))
    assert rows[0][-1] == ("`exec` failed 4× in a row — worked at 2026-03-03T09:12+00:00"
                           " after rm -rf node_modules && npm ci")
    assert rows[1][-1] == "`deploy` failed 3× in a row"


def test_a_vague_task_is_listed_with_the_topic_it_was_promised_in() -> None:
    """``cortex commitments`` listed "den Fix einbauen" alone, though the briefing (d1b73f6)
    says which fix; a task that names its topic is listed as it was said."""
    from datetime import UTC, datetime

    from schemas.docs import Commitment
    from workers.tables import commitment_rows

    at = datetime(2026, 3, 12, 9, 10, tzinfo=UTC)
    vague = Commitment(id="c1", who="claudia", what="den Fix einbauen", status="open", created=at,
                       source_event="e1", topic="Onboarding-Flow")
    named = Commitment(id="c2", who="claudia", what="write the rollback script for the auth migration",
                       status="open", created=at, source_event="e2", topic="auth migration")
    _, rows = commitment_rows(CommitmentsReply(commitments=[vague, named]))
    assert [row[-1] for row in rows] == ["den Fix einbauen (Onboarding-Flow)",
                                         "write the rollback script for the auth migration"]


def test_a_task_running_in_a_child_session_says_which() -> None:
    """``cortex traces`` listed a spawned task waiting on its sub-agent with an empty result."""
    from datetime import UTC, datetime

    from schemas.api import OperationsReply
    from schemas.docs import Operation
    from workers.tables import operation_rows

    at = datetime(2026, 3, 9, 9, tzinfo=UTC)
    child = "agent:forge:subagent:8d3f0b2a-6c1e-4f7d-9a51-2e4c7b9d0f13"
    running = Operation(id="o1", tool="sessions_spawn", status="pending", started=at, seen=False,
                        child_session=child, request="Rebuild the search index")
    done = Operation(id="o2", tool="sessions_spawn", status="completed", started=at, seen=False, finished=at,
                     child_session=child, preview="Index rebuilt")
    plain = Operation(id="o3", tool="deploy_job", status="pending", started=at, seen=False)
    _, rows = operation_rows(OperationsReply(operations=[running, done, plain]))
    assert [row[-1] for row in rows] == [f"running in {child}", "Index rebuilt", ""]


def test_columns_line_up_by_display_width_with_wide_and_combining_characters() -> None:
    """Issue 44 item 6: cells were padded by len(), so Japanese, Korean, Chinese and emoji
    (two columns each) pushed the next column out, and a combining accent (none) pulled it in."""

    rows = [["t1", "データベース移行", "open"], ["t2", "배포 준비 👍🏽", "open"], ["t3", "Café au lait", "open"],
            ["t4", "plain", "closed"]]
    table = render_table(["id", "title", "status"], rows)
    starts = {line.index("open") if "open" in line else line.index("closed") for line in table.splitlines()[1:]}
    columns = {display_width(line[: line.rindex(" ") + 1]) for line in table.splitlines()}
    assert len(columns) == 1, table  # every row's last column starts at the same screen column
    assert len(starts) > 1  # …which len() alone would not give: the character counts differ
    assert display_width("データ") == 6 and display_width("e\u0301") == 1 and display_width("👨\u200d👩\u200d👧") == 2


def test_a_cut_counts_columns_and_a_control_character_never_reaches_the_terminal() -> None:
    cut = render_table(["title"], [["データベース移行の計画とロールバック手順の確認"]], width=20).splitlines()[1]
    assert cut.endswith("…") and display_width(cut) <= 20, cut
    assert "\x1b" not in render_table(["x"], [["red \x1b[31malert"]])
