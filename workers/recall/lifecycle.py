"""Memory lifecycle and hot/cold tiering: pure functions of memories and an event time.

The semantic-memory design's lifecycle manager (``internal/lifecycle``) deletes
``ttl`` memories past their TTL (default 720 h) and ``session`` memories idle for more
than 24 h, and merges near-duplicates. Here every rule is a pure function whose "now"
is the time of the event that triggered the run, so a replay makes the same decisions;
``plan_lifecycle`` reports what to delete and what to rewrite, and ``apply_lifecycle``
is the only place that touches a store — and in dry-run mode it touches nothing.

Pinned memories (``memory_pin`` feedback) never expire, never decay, are never merged
away, and always sit in the hot tier.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Protocol

import msgspec
import numpy as np
import numpy.typing as npt

from workers.recall.models import Memory

Vector = Sequence[float] | npt.NDArray[np.float32]


class LifecyclePolicy(msgspec.Struct, frozen=True, kw_only=True):
    ttl_hours: int = 720
    session_decay_hours: int = 24
    dedup_threshold: float = 0.92
    dry_run: bool = False


DEFAULT_POLICY = LifecyclePolicy()


class Merge(msgspec.Struct, frozen=True, kw_only=True):
    """``removed`` was folded into ``kept``; ``kept`` is the rewritten survivor."""

    kept: Memory
    removed: str


class LifecycleReport(msgspec.Struct, frozen=True, kw_only=True):
    expired: tuple[str, ...] = ()
    decayed: tuple[str, ...] = ()
    merged: tuple[Merge, ...] = ()
    dry_run: bool = False

    @property
    def deletions(self) -> tuple[str, ...]:
        return self.expired + self.decayed + tuple(m.removed for m in self.merged)

    @property
    def rewrites(self) -> tuple[Memory, ...]:
        """Final survivors of merges (one per kept id, the last rewrite wins)."""
        latest = {m.kept.id: m.kept for m in self.merged}
        return tuple(latest.values())


def is_expired(memory: Memory, now: datetime, ttl_hours: int = 720) -> bool:
    """A ``ttl`` memory older than its TTL (its own ``ttl_hours`` or the default)."""
    if memory.pinned or memory.scope != "ttl":
        return False
    hours = memory.ttl_hours if memory.ttl_hours is not None else ttl_hours
    return now - memory.created_at > timedelta(hours=hours)


def is_decayed(memory: Memory, now: datetime, session_decay_hours: int = 24) -> bool:
    """A ``session`` memory not accessed for longer than the decay window."""
    if memory.pinned or memory.scope != "session":
        return False
    return now - memory.last_accessed > timedelta(hours=session_decay_hours)


def merge_duplicate(kept: Memory, duplicate: Memory) -> Memory:
    """Fold ``duplicate`` into ``kept``: access counts add, times and flags take the max.

    ``kept`` keeps its id and content; it records the folded id in ``supersedes_id``.
    """
    seen = [t for t in (kept.last_seen, duplicate.last_seen, duplicate.created_at) if t is not None]
    return msgspec.structs.replace(
        kept,
        access_count=kept.access_count + duplicate.access_count,
        last_accessed=max(kept.last_accessed, duplicate.last_accessed),
        last_seen=max(seen),
        confidence=max(kept.confidence, duplicate.confidence),
        tags=tuple(dict.fromkeys(kept.tags + duplicate.tags)),
        pinned=kept.pinned or duplicate.pinned,
        supersedes_id=duplicate.id,
    )


def _survivor_order(memory: Memory) -> tuple[bool, datetime, str]:
    # Pinned first, then the oldest: a merge never removes a pinned or an earlier memory.
    return (not memory.pinned, memory.created_at, memory.id)


def consolidate(memories: Sequence[Memory], vectors: Mapping[str, Vector], threshold: float) -> tuple[Merge, ...]:
    """Greedy near-duplicate merge within one (type, scope, project) group.

    Memories are visited pinned-first then oldest-first; each one whose cosine to an
    already kept memory of its group reaches ``threshold`` is folded into the most
    similar kept one. Groups keep an episode ("Alice: never deploy on Fridays") and the
    rule captured from it apart. Memories without a vector are left alone. Cost is
    O(n·kept) per group: the worker runs it per agent.
    """
    groups: dict[tuple[str, str, str | None], list[Memory]] = {}
    for memory in sorted(memories, key=_survivor_order):
        if memory.id in vectors:
            groups.setdefault((memory.type, memory.scope, memory.project), []).append(memory)
    merges: list[Merge] = []
    for group in groups.values():
        merges.extend(_consolidate_group(group, vectors, threshold))
    return tuple(merges)


def _unit(vector: Vector) -> npt.NDArray[np.float32]:
    arr = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(arr))
    return arr / norm if norm > 0 else arr


def _consolidate_group(group: list[Memory], vectors: Mapping[str, Vector], threshold: float) -> list[Merge]:
    kept: list[Memory] = []
    kept_vectors: list[npt.NDArray[np.float32]] = []
    merges: list[Merge] = []
    for memory in group:
        vector = _unit(vectors[memory.id])
        if kept and not memory.pinned:
            sims = np.stack(kept_vectors) @ vector
            best = int(np.argmax(sims))
            if float(sims[best]) >= threshold:
                kept[best] = merge_duplicate(kept[best], memory)
                merges.append(Merge(kept=kept[best], removed=memory.id))
                continue
        kept.append(memory)
        kept_vectors.append(vector)
    return merges


def plan_lifecycle(
    memories: Iterable[Memory],
    now: datetime,
    policy: LifecyclePolicy = DEFAULT_POLICY,
    vectors: Mapping[str, Vector] | None = None,
) -> LifecycleReport:
    """Decide expiry, session decay and (when vectors are given) consolidation."""
    expired: list[str] = []
    decayed: list[str] = []
    alive: list[Memory] = []
    for memory in memories:
        if is_expired(memory, now, policy.ttl_hours):
            expired.append(memory.id)
        elif is_decayed(memory, now, policy.session_decay_hours):
            decayed.append(memory.id)
        else:
            alive.append(memory)
    merged = consolidate(alive, vectors, policy.dedup_threshold) if vectors else ()
    return LifecycleReport(
        expired=tuple(sorted(expired)), decayed=tuple(sorted(decayed)), merged=merged, dry_run=policy.dry_run
    )


class LifecycleSink(Protocol):
    """What applying a plan needs from a store (``MemoryStore`` satisfies it)."""

    def delete(self, agent: str, ids: Sequence[str]) -> None: ...

    def update_payloads(self, memories: Sequence[Memory]) -> None: ...


def apply_lifecycle(store: LifecycleSink, agent: str, report: LifecycleReport) -> LifecycleReport:
    """Carry out a plan; a dry-run plan is returned untouched and nothing is written."""
    if report.dry_run:
        return report
    if report.rewrites:
        store.update_payloads(report.rewrites)
    if report.deletions:
        store.delete(agent, report.deletions)
    return report


# --- hot/cold tiering -------------------------------------------------------------------


class TieringPolicy(msgspec.Struct, frozen=True, kw_only=True):
    hot_size: int = 50
    cold_idle_days: int = 14
    cold_min_hits: int = 3


DEFAULT_TIERING = TieringPolicy()


class TieringPlan(msgspec.Struct, frozen=True, kw_only=True):
    promote: tuple[str, ...] = ()  # cold -> hot
    demote: tuple[str, ...] = ()  # hot -> cold


def is_evictable(memory: Memory, now: datetime, policy: TieringPolicy) -> bool:
    """Idle longer than ``cold_idle_days`` with fewer than ``cold_min_hits`` hits, unpinned."""
    if memory.pinned:
        return False
    idle = now - memory.last_accessed > timedelta(days=policy.cold_idle_days)
    return idle and memory.access_count < policy.cold_min_hits


def hot_order(memory: Memory) -> tuple[int, float, str]:
    """Most hits first, then the most recent access, then id (a total order)."""
    return (-memory.access_count, -memory.last_accessed.timestamp(), memory.id)


def select_hot(memories: Iterable[Memory], now: datetime, policy: TieringPolicy = DEFAULT_TIERING) -> set[str]:
    """Ids that belong in the hot tier: every pinned memory plus the top ``hot_size``
    of the rest by hits then last access, leaving out the evictable ones."""
    pinned: set[str] = set()
    candidates: list[Memory] = []
    for memory in memories:
        if memory.pinned:
            pinned.add(memory.id)
        elif not is_evictable(memory, now, policy):
            candidates.append(memory)
    candidates.sort(key=hot_order)
    return pinned | {m.id for m in candidates[: policy.hot_size]}


def plan_tiering(memories: Sequence[Memory], now: datetime, policy: TieringPolicy = DEFAULT_TIERING) -> TieringPlan:
    hot = select_hot(memories, now, policy)
    promote = sorted(m.id for m in memories if m.tier == "cold" and m.id in hot)
    demote = sorted(m.id for m in memories if m.tier == "hot" and m.id not in hot)
    return TieringPlan(promote=tuple(promote), demote=tuple(demote))


def record_hit(memory: Memory, ts: datetime) -> Memory:
    """Apply one ``recall_access``: count the hit, move the access time, promote to hot.

    ``ts`` is the feedback event's time; an older event never moves the time backwards.
    """
    return msgspec.structs.replace(
        memory,
        access_count=memory.access_count + 1,
        last_accessed=max(memory.last_accessed, ts),
        tier="hot",
    )
