"""Edits with history (pure): a ``memory_update`` FeedbackEvent changes a memory's statement
and keeps the one it replaces, as mem0's ``update`` and ``history`` do — but through the
stream, so an edit replays like everything else.

The memory keeps its id, its provenance (``source_event``, what it absorbed) and its use; its
text, and the type and scope when the edit gives them, change; the replaced version (its
text, type, scope, the event that made it and when) goes to ``versions``. A knowledge
fact's mirror follows its fact and is not edited here; an edit older than the memory's last
change (a redelivery) changes nothing.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from schemas.api import MemoryVersion
from schemas.events import FeedbackEvent, RememberValue
from workers.recall.models import MAX_VERSIONS, Memory


def new_statement(event: FeedbackEvent) -> RememberValue | None:
    """The statement a ``memory_update`` gives (validated at decode), or None when blank."""
    value = msgspec.convert(event.value, RememberValue)
    return value if value.content.strip() else None


def current_version(memory: Memory) -> MemoryVersion:
    return MemoryVersion(content=memory.content, type=memory.type, scope=memory.scope,
                         event=memory.revised_by or memory.source_event, at=memory.revised_at or memory.created_at)


def revise(memory: Memory, value: RememberValue, event_id: str, at: datetime) -> Memory:
    """``memory`` with the statement ``value`` as its current version, the one it had kept."""
    return msgspec.structs.replace(
        memory, content=value.content.strip(), type=value.type or memory.type, scope=value.scope or memory.scope,
        versions=(*memory.versions, current_version(memory))[-MAX_VERSIONS:], revised_by=event_id, revised_at=at,
        judged=False)


def editable(memory: Memory) -> bool:
    """Not a knowledge fact's mirror (it follows its fact)."""
    return memory.fact_id is None


def history(memory: Memory) -> list[MemoryVersion]:
    """Every version of the memory's statement, oldest first, the current one last."""
    return [*memory.versions, current_version(memory)]


def as_it_was(memory: Memory, when: datetime) -> Memory:
    """The memory with the version of its statement in effect at ``when`` (itself when it
    was not edited since)."""
    if memory.revised_at is None or memory.revised_at <= when:
        return memory
    earlier = [v for v in memory.versions if v.at <= when]
    if not earlier:
        return memory
    v = earlier[-1]
    return msgspec.structs.replace(memory, content=v.content, type=v.type, scope=v.scope)
