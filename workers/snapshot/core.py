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
        parts.extend(["**Thread state at compaction:**", thread_line, ""])
    return "\n".join(parts), len(recent)


def thread_state_line(threads: ThreadsDoc | None) -> str:
    """``- 3 open threads, 1 decision pending`` from the threads document.

    A pending decision is an open thread waiting on something (``waiting_for`` set): the
    conversation stopped at a point where someone still has to decide or deliver.
    """
    if threads is None:
        return "- No thread data yet"
    open_threads = [t for t in threads.threads if t.status == "open"]
    pending = sum(1 for t in open_threads if t.waiting_for)
    return (
        f"- {plural(len(open_threads), 'open thread')}, "
        f"{plural(pending, 'decision')} pending"
    )
