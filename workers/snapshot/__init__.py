"""Snapshot worker: the hot snapshot taken just before a compaction (design section 4.4)."""

from workers.snapshot.core import (
    MESSAGE_PREVIEW_CHARS,
    build_snapshot_markdown,
    messages_part,
    thread_state_line,
)

__all__ = ["MESSAGE_PREVIEW_CHARS", "build_snapshot_markdown", "messages_part", "thread_state_line"]
