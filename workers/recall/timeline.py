"""One truth per fact, over time: when a memory became true and when it stopped (pure).

Every memory records, in event time, since when it has been said (``valid_from``: its first
statement, kept through restatements; the capture time when unset) and, once a newer memory
contradicts it, the time of that correction (``superseded_at``) beside the successor's id
(``superseded_by``). Recall ranks only current memories; a question asked *as of* a time
(``as_of`` on ``cortex.api.recall.<agent>``, ``cortex recall --as-of``) is answered from the
memories believed then: said by that time and not yet superseded at it — what Zep calls a
temporal query, here a pure function of the replayable stream. A forgotten memory is gone
from every time: forgetting is not superseding.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import msgspec

from workers.recall.edits import as_it_was
from workers.recall.models import Memory, SearchHit


def since(memory: Memory) -> datetime:
    """When the memory's statement was first made."""
    return memory.valid_from or memory.created_at


def superseded(old: Memory, by: Memory, seq: int) -> Memory:
    """``old`` replaced by ``by`` (as of ``by``'s event), written at stream sequence ``seq``."""
    return msgspec.structs.replace(old, superseded_by=by.id, superseded_at=by.created_at,
                                   last_seq=max(old.last_seq, seq))


def reinstated(memory: Memory, seq: int | None = None) -> Memory:
    """Current again (its correction forgotten, or itself said again)."""
    changed = msgspec.structs.replace(memory, superseded_by=None, superseded_at=None)
    return changed if seq is None else msgspec.structs.replace(changed, last_seq=max(memory.last_seq, seq))


def believed_at(memory: Memory, when: datetime) -> bool:
    """Said by ``when`` and not superseded then (a memory superseded at an unrecorded time,
    stored before the time was kept, counts as superseded)."""
    if since(memory) > when:
        return False
    return memory.superseded_by is None or (memory.superseded_at is not None and memory.superseded_at > when)


AS_OF_DEPTH = 4  # an as-of query reads this many times the candidates: later memories are among them


def believed_hits(hits: Sequence[SearchHit], when: datetime) -> list[SearchHit]:
    """The candidates believed at ``when`` (:func:`believed_at`), each as its statement read
    then (an edit since is not shown: ``workers.recall.edits.as_it_was``)."""
    return [msgspec.structs.replace(h, memory=as_it_was(h.memory, when)) for h in hits if believed_at(h.memory, when)]

