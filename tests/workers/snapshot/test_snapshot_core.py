"""The hot snapshot's markdown and its thread-state line.

Cases marked "port" come from alberthild/vainplex-openclaw
packages/openclaw-cortex/test/pre-compaction.test.ts (``buildHotSnapshot`` and the
``messagesSnapshotted`` count of ``PreCompaction``); the full format is the design's
section 4.4 example.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import msgspec

from schemas.docs import Integrity, RecentMessage, Thread, ThreadsDoc
from schemas.events import CompactionMessage
from workers.snapshot import build_snapshot_markdown, messages_part, thread_state_line
from workers.snapshot.core import window_messages

TS = datetime(2026, 2, 17, 10, 30, tzinfo=UTC)


def msg(role: str, content: str) -> CompactionMessage:
    return CompactionMessage(role=role, content=content)


def threads_doc(*specs: tuple[str, str | None]) -> ThreadsDoc:
    """Threads from (status, waiting_for) pairs."""
    threads = [
        Thread(id=f"t{i}", title=f"thread {i}", status=status, priority="medium",
               summary="", decisions=[], waiting_for=waiting, mood="neutral", last_activity=TS, created=TS)
        for i, (status, waiting) in enumerate(specs)
    ]
    return ThreadsDoc(updated=TS, session_mood="neutral", threads=threads, integrity=Integrity())


def test_builds_markdown_from_messages():
    """port: builds markdown from messages."""
    md, count = build_snapshot_markdown(
        TS, [msg("user", "Fix the auth bug"), msg("assistant", "Done, JWT validation is fixed")], 15, "")
    assert "Hot Snapshot" in md
    assert "auth bug" in md
    assert "- [user] Fix the auth bug\n" in md
    assert "- [assistant] Done, JWT validation is fixed\n" in md
    assert count == 2


def test_handles_empty_messages():
    """port: handles empty messages."""
    md, count = build_snapshot_markdown(TS, [], 15, "")
    assert "Hot Snapshot" in md
    assert "(No recent messages captured)" in md
    assert "**Recent messages:**" not in md
    assert count == 0


def test_truncates_long_messages_at_200_characters():
    """port: truncates long messages (the reference: 200 characters and "...", inside a
    word; here between words, "…", within the same 200 characters)."""
    md, _ = build_snapshot_markdown(TS, [msg("user", "A" * 500)], 15, "")
    assert f"- [user] {'A' * 199}…\n" in md
    assert len(md) < 500
    words = "the rollout plan needs another review " * 10
    md, _ = build_snapshot_markdown(TS, [msg("user", words)], 15, "")
    line = md.split("- [user] ", 1)[1].split("\n", 1)[0]
    assert line.endswith("…") and len(line) <= 200 and words.startswith(line[:-1])
    assert line[:-1].split()[-1] in words.split()  # never mid-word


def test_message_of_exactly_200_characters_is_kept_whole():
    md, _ = build_snapshot_markdown(TS, [msg("user", "B" * 200)], 15, "")
    assert f"- [user] {'B' * 200}\n" in md
    assert "..." not in md


def test_keeps_the_last_max_messages():
    """port: limits to maxMessages (takes last N)."""
    messages = [msg("user" if i % 2 == 0 else "assistant", f"Message {i}") for i in range(20)]
    md, count = build_snapshot_markdown(TS, messages, 5, "")
    assert "Message 19" in md
    assert "Message 15" in md
    assert "Message 14" not in md
    assert "Message 0" not in md
    assert count == 5


def test_reports_the_capped_message_count():
    """port: reports correct messagesSnapshotted count (30 messages, limit 15)."""
    _, count = build_snapshot_markdown(TS, [msg("user", f"Msg {i}") for i in range(30)], 15, "")
    assert count == 15


def test_non_positive_limit_captures_nothing():
    md, count = build_snapshot_markdown(TS, [msg("user", "hello")], 0, "")
    assert count == 0
    assert "(No recent messages captured)" in md


def test_full_format_with_thread_state():
    """The design's section 4.4 example, character for character."""
    messages = [
        msg("user", "Can you fix the auth bug in..."),
        msg("assistant", "I'll look at the JWT validation..."),
        msg("user", "Also check the rate limiter"),
        msg("assistant", "Done — both issues fixed..."),
    ]
    md, count = build_snapshot_markdown(TS, messages, 15, "- 3 open threads, 1 waiting")
    assert md == (
        "# Hot Snapshot — 2026-02-17T10:30:00Z\n"
        "## Last conversation before compaction\n"
        "\n"
        "**Recent messages:**\n"
        "- [user] Can you fix the auth bug in...\n"
        "- [assistant] I'll look at the JWT validation...\n"
        "- [user] Also check the rate limiter\n"
        "- [assistant] Done — both issues fixed...\n"
        "\n"
        "**Thread state at compaction:**\n"
        "- 3 open threads, 1 waiting\n"
    )
    assert count == 4


def test_without_thread_line_matches_the_reference_layout():
    md, _ = build_snapshot_markdown(TS, [], 15, "")
    assert md == (
        "# Hot Snapshot — 2026-02-17T10:30:00Z\n"
        "## Last conversation before compaction\n"
        "\n"
        "(No recent messages captured)\n"
    )


def test_timestamp_is_the_event_time_in_utc_seconds():
    ts = datetime(2026, 2, 17, 11, 30, 2, 999_000, tzinfo=timezone(timedelta(hours=1)))
    md, _ = build_snapshot_markdown(ts, [], 15, "")
    assert md.startswith("# Hot Snapshot — 2026-02-17T10:30:02Z\n")


def test_multiline_message_stays_one_list_item():
    md, _ = build_snapshot_markdown(TS, [msg("user", "  first line\n\n# not a heading\n  ")], 15, "")
    assert "- [user] first line # not a heading\n" in md
    assert "\n# not a heading" not in md


def test_same_inputs_give_the_same_bytes():
    messages = [msg("user", f"m{i}") for i in range(20)]
    first = build_snapshot_markdown(TS, messages, 15, "- x")
    assert first == build_snapshot_markdown(TS, messages, 15, "- x")


def test_thread_state_counts_open_threads_and_those_waiting():
    """The design's "1 decision pending" counted waits: the line says what it counts (issue 18)."""
    doc = threads_doc(("open", None), ("open", "code review"), ("open", None), ("closed", "ignored"))
    assert thread_state_line(doc) == "- 3 open threads, 1 waiting"


def test_thread_state_pluralises_and_leaves_a_count_of_none_unsaid():
    two_waiting = threads_doc(("open", "a"), ("open", "b"))
    assert thread_state_line(two_waiting) == "- 2 open threads, 2 waiting"
    assert thread_state_line(threads_doc(("open", None))) == "- 1 open thread"
    assert thread_state_line(threads_doc(("closed", None))) == "- No open threads"
    assert thread_state_line(threads_doc()) == "- No open threads"


def test_the_part_a_briefing_quotes_has_the_messages_only():
    messages = [msg("user", "# not a heading"), msg("assistant", "Done.")]
    md, _ = build_snapshot_markdown(TS, messages, 15, "- 1 open thread, 1 waiting")
    assert messages_part(md) == "**Recent messages:**\n- [user] # not a heading\n- [assistant] Done."
    assert messages_part(build_snapshot_markdown(TS, [], 15, "")[0]) == "(No recent messages captured)"


def test_thread_state_without_a_threads_document():
    assert thread_state_line(None) == "- No thread data yet"


def test_a_compaction_without_messages_takes_the_session_s_last_ones_from_the_threads_document():
    recent = [RecentMessage(n=1, text="old doc, no role"), RecentMessage(n=2, text="Deploy?", role="user", session="a"),
              RecentMessage(n=3, text="elsewhere", role="user", session="b"),
              RecentMessage(n=4, text="Deployed ✅", role="assistant", session="a")]
    threads = msgspec.structs.replace(threads_doc(), recent=recent)
    assert window_messages(threads, "a") == [msg("user", "Deploy?"), msg("assistant", "Deployed ✅")]
    assert window_messages(threads, "c") == [] and window_messages(None, "a") == []
    md, count = build_snapshot_markdown(TS, window_messages(threads, "a"), 15, "")
    assert count == 2 and "**Recent messages:**\n- [user] Deploy?\n- [assistant] Deployed ✅" in md
