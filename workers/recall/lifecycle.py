"""Memory lifecycle and hot/cold tiering: pure functions of memories and an event time.

The semantic-memory design's lifecycle manager (``internal/lifecycle``) deletes
``ttl`` memories past their TTL (default 720 h) and ``session`` memories idle for more
than 24 h, and merges near-duplicates. Here every rule is a pure function whose "now"
is the time of the event that triggered the run, so a replay makes the same decisions;
``plan_lifecycle`` reports what to delete and what to rewrite, and ``apply_lifecycle``
is the only place that touches a store — and in dry-run mode it touches nothing.
Consolidation's rules are in ``workers.recall.consolidation``.

Pinned memories (``memory_pin`` feedback) never expire, never decay, are never merged
away, and always sit in the hot tier.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Protocol

import msgspec

from schemas.types import MemoryScope
from workers.recall.consolidation import Merge, Vector, consolidate, merge_duplicate
from workers.recall.models import Memory, Tier

__all__ = [
    "DEFAULT_POLICY", "DEFAULT_TIERING", "Aging", "LifecyclePolicy", "LifecycleReport", "LifecycleSink", "Merge",
    "TieringPlan", "TieringPolicy", "apply_lifecycle", "consolidate", "hot_order", "is_decayed", "is_evictable",
    "is_expired", "merge_duplicate", "plan_lifecycle", "plan_tiering", "record_hit", "select_hot", "upkeep_counted",
    "upkeep_due",
]


class Aging(Protocol):
    """What expiry and tiering read of a memory (a ``Memory``, or the few fields of it that
    upkeep keeps between session starts: ``workers.recall.upkeep``)."""

    @property
    def id(self) -> str: ...
    @property
    def scope(self) -> MemoryScope: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def tier(self) -> Tier: ...
    @property
    def ttl_hours(self) -> int | None: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def last_accessed(self) -> datetime: ...
    @property
    def access_count(self) -> int: ...


class LifecyclePolicy(msgspec.Struct, frozen=True, kw_only=True):
    ttl_hours: int = 720
    session_decay_hours: int = 24
    dedup_threshold: float = 0.92
    dry_run: bool = False


DEFAULT_POLICY = LifecyclePolicy()


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


def is_expired(memory: Aging, now: datetime, ttl_hours: int = 720) -> bool:
    """A ``ttl`` memory older than its TTL (its own ``ttl_hours`` or the default)."""
    if memory.pinned or memory.scope != "ttl":
        return False
    hours = memory.ttl_hours if memory.ttl_hours is not None else ttl_hours
    return now - memory.created_at > timedelta(hours=hours)


def is_decayed(memory: Aging, now: datetime, session_decay_hours: int = 24) -> bool:
    """A ``session`` memory not accessed for longer than the decay window."""
    if memory.pinned or memory.scope != "session":
        return False
    return now - memory.last_accessed > timedelta(hours=session_decay_hours)


def plan_lifecycle(
    memories: Iterable[Memory],
    now: datetime,
    policy: LifecyclePolicy = DEFAULT_POLICY,
    vectors: Mapping[str, Vector] | None = None,
    before_seq: int | None = None,
) -> LifecycleReport:
    """Decide expiry, session decay and consolidation (turns by exact repeat; the other
    memories by cosine, those with a vector in ``vectors``). With ``before_seq`` (the
    session start's sequence) only memories created before it are consolidated."""
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
    if before_seq is not None:
        alive = [m for m in alive if m.first_seq < before_seq]
    merged = consolidate(alive, vectors or {}, policy.dedup_threshold)
    return LifecycleReport(
        expired=tuple(sorted(expired)), decayed=tuple(sorted(decayed)), merged=merged, dry_run=policy.dry_run
    )


def upkeep_due(before: datetime, at: datetime, hours: int) -> bool:
    """Whether a message at ``at`` that follows one at ``before`` in its session starts a new
    ``hours``-long period of event time (periods counted from the epoch, so every replay cuts
    them alike): the session's upkeep runs there, as at a session start. An agent in one
    endless session, or a producer that publishes only messages, is maintained all the same."""
    if hours <= 0:
        return False
    period = hours * 3600
    return int(at.timestamp() // period) > int(before.timestamp() // period)


def upkeep_counted(before: int, seq: int, events: int) -> bool:
    """Whether a message at stream sequence ``seq`` that follows one at ``before`` in its
    session starts a new ``events``-long run of the stream (``0``: never): a session busier
    than its periods of event time is maintained that often too. Stream sequences are the
    events' own, so every replay and restart cuts them alike."""
    return events > 0 and seq // events > before // events


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


def is_evictable(memory: Aging, now: datetime, policy: TieringPolicy) -> bool:
    """Idle longer than ``cold_idle_days`` with fewer than ``cold_min_hits`` hits, unpinned."""
    if memory.pinned:
        return False
    idle = now - memory.last_accessed > timedelta(days=policy.cold_idle_days)
    return idle and memory.access_count < policy.cold_min_hits


def hot_order(memory: Aging) -> tuple[int, float, str]:
    """Most hits first, then the most recent access, then id (a total order)."""
    return (-memory.access_count, -memory.last_accessed.timestamp(), memory.id)


def select_hot(memories: Iterable[Aging], now: datetime, policy: TieringPolicy = DEFAULT_TIERING) -> set[str]:
    """Ids that belong in the hot tier: every pinned memory plus the top ``hot_size``
    of the rest by hits then last access, leaving out the evictable ones."""
    pinned: set[str] = set()
    candidates: list[Aging] = []
    for memory in memories:
        if memory.pinned:
            pinned.add(memory.id)
        elif not is_evictable(memory, now, policy):
            candidates.append(memory)
    # the first ``hot_size`` in hot order (``nsmallest`` is ``sorted(...)[:n]``, without sorting all)
    return pinned | {m.id for m in heapq.nsmallest(policy.hot_size, candidates, key=hot_order)}


def plan_tiering(memories: Sequence[Aging], now: datetime, policy: TieringPolicy = DEFAULT_TIERING) -> TieringPlan:
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
