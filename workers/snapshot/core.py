"""Pure core of the snapshot worker: compaction messages in, hot-snapshot markdown out.

The format is the reference's ``buildHotSnapshot`` (openclaw-cortex ``pre-compaction.ts``)
plus the thread-state block the design shows under it (section 4.4). The timestamp is the
compaction event's, never the wall clock, so a replay writes the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from schemas.docs import ThreadsDoc
from schemas.events import CompactionMessage
from workers.render import clip_words, iso_seconds, one_line, plural

MESSAGE_PREVIEW_CHARS = 200
_NO_MESSAGES = "(No recent messages captured)"


def _message_line(message: CompactionMessage) -> str:
    # Collapsing newlines keeps each message one list item. The reference cut at 200
    # characters inside a word and added "..."; here the cut falls between words, "…".
    content = clip_words(one_line(message.content), MESSAGE_PREVIEW_CHARS)
    return f"- [{one_line(message.role)}] {content}"


def _recent(messages: Sequence[CompactionMessage], max_messages: int) -> Sequence[CompactionMessage]:
    # messages[-0:] would be the whole list, so a non-positive limit must mean "none".
    if max_messages <= 0:
        return ()
    return messages[-max_messages:]


def build_snapshot_markdown(
    ts: datetime,
    messages: list[CompactionMessage],
    max_messages: int,
    thread_line: str,
) -> tuple[str, int]:
    """The hot snapshot and how many messages it holds (the last ``max_messages``).

    An empty ``thread_line`` leaves the thread-state block out.
    """
    recent = _recent(messages, max_messages)
    parts = [f"# Hot Snapshot — {iso_seconds(ts)}", "## Last conversation before compaction", ""]
    if recent:
        parts.append("**Recent messages:**")
        parts.extend(_message_line(m) for m in recent)
    else:
        parts.append(_NO_MESSAGES)
    parts.append("")
    if thread_line:
        parts.extend([_STATE_LABEL, thread_line, ""])
    return "\n".join(parts), len(recent)


def window_messages(threads: ThreadsDoc | None, session: str) -> list[CompactionMessage]:
    """The last messages of ``session`` the threads worker keeps (``ThreadsDoc.recent``: the
    last ten of the agent, each its first 400 characters), for a compaction event that
    carries none — an OpenClaw gateway's (``session.compaction_start``) carries only counts.
    Read as of the compaction, like the thread state: what was said right before it."""
    if threads is None:
        return []
    return [CompactionMessage(role=m.role, content=m.text) for m in threads.recent
            if m.role and m.session == session]


def thread_state_line(threads: ThreadsDoc | None) -> str:
    """``- 3 open threads, 1 waiting`` from the threads document.

    The design's example said "1 decision pending"; what the count can know is an open
    thread waiting on something (``waiting_for`` set), so that is what it says — and a
    count of none is left unsaid.
    """
    if threads is None:
        return "- No thread data yet"
    open_threads = [t for t in threads.threads if t.status == "open"]
    if not open_threads:
        return "- No open threads"
    waiting = sum(1 for t in open_threads if t.waiting_for)
    return f"- {plural(len(open_threads), 'open thread')}, {waiting} waiting" if waiting else (
        f"- {plural(len(open_threads), 'open thread')}")


_STATE_LABEL = "**Thread state at compaction:**"


def messages_part(markdown: str) -> str:
    """The snapshot without its own headings and its thread-state block: what a briefing
    quotes of it. The briefing has headings of its own (a pasted ``# Hot Snapshot`` reads as
    one of them) and shows the threads as they are now, not the count at compaction."""
    kept: list[str] = []
    in_state = False
    for line in markdown.split("\n"):
        if line == _STATE_LABEL:
            in_state = True
        elif in_state and not line.strip():
            in_state = False
        elif not in_state and not line.startswith("#"):
            kept.append(line)
    return "\n".join(kept).strip()
