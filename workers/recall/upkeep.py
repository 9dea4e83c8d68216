"""Upkeep without reading the whole agent at every session start.

A session start's upkeep (``StoreApplier._maintain``: expiry, consolidation, tiering) used to
read every memory of the agent, and the vectors of those consolidation compares: O(memories)
per session start, so a long-lived agent paid more each day. Here the process keeps, per
agent, what upkeep needs from one upkeep to the next (an ``AgentMemo``):

* each memory's few fields that expiry and tiering read (``Slim``), which memories may
  expire at all (``ttl`` and ``session`` scopes), and the unpinned ones in hot order (the
  tiering's ranking: most hits, then the latest access);
* the turns grouped by what consolidation folds them by (sender, scope, project, the
  paraphrase key);
* the memories written since the last upkeep (``dirty``).

Every write of the applier's store goes through :class:`TrackedStore`, which keeps the memos
as the store is: a memo mirrors what was written, never what was meant. A memo starts at a
full upkeep (the first of the agent in this process) and is dropped when a write fails (the
store may hold part of it) or the agent is forgotten whole; the next upkeep is then a full
one again. Memos are bounded (``MAX_KEPT`` memories in all, the agents least recently
maintained dropped first).

**The same result as a full upkeep.** Expiry runs over the memories that may expire, with
the lifecycle's own tests; tiering takes the hot set from the top of the ranking, skipping
the evictable ones (``lifecycle.select_hot``'s choice without sorting every memory).
Consolidation is greedy in survivor order, and a memory only ever
folds into one it is a near-duplicate of (the same turn group, or a cosine at the
threshold within a statement group), so it works on each connected group of
near-duplicates alone. A group whose members were all there, unchanged, at the last upkeep
was consolidated then and has nothing left to fold; so only the groups that hold a memory
written since (new, merged, superseded, reinstated, pinned: every such write stamps its
event's sequence) are consolidated again: the turns of its turn groups, and the statements
found from it by exact similarity search, and from those again, until no new one is found
(searched a little below the threshold: the engine's cosine and numpy's may differ in the
last bits, and a neighbour too many changes nothing). Tests compare the points a full and an
incremental run store, byte for byte.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NamedTuple, TypeVar

from schemas.types import MemoryScope, MemoryType
from workers.recall.capture import is_turn_memory
from workers.recall.consolidation import consolidate, paraphrase_key, takes_part
from workers.recall.embedders import FloatVector
from workers.recall.lifecycle import (
    LifecyclePolicy,
    LifecycleReport,
    TieringPlan,
    TieringPolicy,
    hot_order,
    is_decayed,
    is_evictable,
    is_expired,
)
from workers.recall.models import Memory, SearchHit, Tier
from workers.recall.store import CollectionInfo, MemoryFilter, MemoryPoint, MemoryStore

MAX_KEPT = 250_000  # memories kept in all memos of a process (~300 bytes each)
AGING_SCOPES = frozenset({"ttl", "session"})
STATEMENT_TYPES: tuple[MemoryType, ...] = ("rule", "procedure", "fact", "preference")
SEARCH_MARGIN = 1e-3  # neighbours are searched this far below the threshold (see the module docstring)
FIRST_LIMIT = 32  # neighbours asked for at first; four times as many while the answer is full

GroupKey = tuple[str | None, ...]
HotOrder = tuple[int, float, str]


class Slim(NamedTuple):
    """What upkeep keeps of one memory between session starts (``lifecycle.Aging`` and the
    memory's part in consolidation: ``role`` "turn" or "statement", "" for none, and its
    group). ``tier`` is the one the memory was written with; the memo's ``hot`` follows
    the moves since."""

    id: str
    scope: MemoryScope
    pinned: bool
    tier: Tier
    ttl_hours: int | None
    created_at: datetime
    last_accessed: datetime
    access_count: int
    first_seq: int
    role: str
    group: GroupKey


def slim(memory: Memory) -> Slim:
    role = ""
    group: GroupKey = ()
    if takes_part(memory):
        if is_turn_memory(memory):
            role, group = "turn", (memory.sender, memory.scope, memory.project, paraphrase_key(memory))
        else:
            role, group = "statement", ("episode" if memory.type == "episode" else "statement", memory.scope,
                                        memory.project)
    return Slim(memory.id, memory.scope, memory.pinned, memory.tier, memory.ttl_hours, memory.created_at,
                memory.last_accessed, memory.access_count, memory.first_seq, role, group)


@dataclass
class AgentMemo:
    """One agent's memories as upkeep needs them, as the store holds them now; ``seq`` is the
    stream sequence of the last upkeep (every memory made before it and not written since
    was consolidated then; 0: the memo was made at this upkeep, from every memory),
    ``dirty`` the memories written since, or made at or after it."""

    seq: int
    kept: dict[str, Slim] = field(default_factory=dict)
    turns: dict[GroupKey, set[str]] = field(default_factory=dict)  # turn group -> its turns
    aging: dict[str, Slim] = field(default_factory=dict)  # the memories that may expire or decay
    dirty: set[str] = field(default_factory=set)
    hot: set[str] = field(default_factory=set)  # the hot tier
    pinned: set[str] = field(default_factory=set)
    ranking: list[HotOrder] = field(default_factory=list)  # the others, in hot order (``lifecycle.hot_order``)
    # claim -> the memories making it -> what supersedes each (None: current), for the step's
    # reads of what a new statement may supersede (``PendingWrites.prime_claims``)
    claims: dict[str, dict[str, str | None]] = field(default_factory=dict)
    claim_of: dict[str, str] = field(default_factory=dict)

    def put(self, memory: Memory) -> None:
        self.remove(memory.id)
        kept = slim(memory)
        self.kept[kept.id] = kept
        if kept.tier == "hot":
            self.hot.add(kept.id)
        if kept.pinned:
            self.pinned.add(kept.id)
        else:
            bisect.insort(self.ranking, hot_order(kept))
        if kept.role == "turn":
            self.turns.setdefault(kept.group, set()).add(kept.id)
        if kept.scope in AGING_SCOPES:
            self.aging[kept.id] = kept
        if memory.claim is not None:
            self.claims.setdefault(memory.claim, {})[kept.id] = memory.superseded_by
            self.claim_of[kept.id] = memory.claim
        self.dirty.add(kept.id)

    def remove(self, memory_id: str) -> None:
        old = self.kept.pop(memory_id, None)
        if old is None:
            return
        self.hot.discard(memory_id)
        if old.pinned:
            self.pinned.discard(memory_id)
        else:
            del self.ranking[bisect.bisect_left(self.ranking, hot_order(old))]
        if old.role == "turn":
            group = self.turns[old.group]
            group.discard(memory_id)
            if not group:
                del self.turns[old.group]
        self.aging.pop(memory_id, None)
        claim = self.claim_of.pop(memory_id, None)
        if claim is not None:
            making = self.claims[claim]
            del making[memory_id]
            if not making:
                del self.claims[claim]
        self.dirty.discard(memory_id)

    def set_tier(self, ids: Iterable[str], tier: Tier) -> None:
        """Move memories between the tiers: ``hot`` says which tier a memory is in from now on
        (a slim's ``tier`` is the one it was written with, which only the memo's first
        tiering reads: rewriting each slim cost as much as the engine's move)."""
        if tier == "hot":
            self.hot.update(i for i in ids if i in self.kept)
        else:
            self.hot.difference_update(ids)

    def tiering(self, now: datetime, policy: TieringPolicy) -> TieringPlan:
        """``lifecycle.plan_tiering`` over the agent's memories, from the top of the ranking:
        the first ``hot_size`` that are not evictable (a run of evictable ones is skipped to
        the next hit count at once: at one count, the rest have been idle longer still)."""
        chosen: list[str] = []
        ranking, at = self.ranking, 0
        while at < len(ranking) and len(chosen) < policy.hot_size:
            hits, _, memory_id = ranking[at]
            if is_evictable(self.kept[memory_id], now, policy):
                at = bisect.bisect_left(ranking, (hits + 1,))
                continue
            chosen.append(memory_id)
            at += 1
        hot = self.pinned.union(chosen)
        return TieringPlan(promote=tuple(sorted(hot - self.hot)), demote=tuple(sorted(self.hot - hot)))

    def settle(self, seq: int) -> None:
        """An upkeep at ``seq`` is planned: what it consolidated is clean from now on; what
        it could not see yet (made at or after ``seq``) stays dirty, and its own rewrites
        (the merges' survivors) will be dirty as they are written."""
        self.seq = seq
        self.dirty = {i for i in self.dirty if self.kept[i].first_seq >= seq}


class Memos:
    """The agents' memos of one applier, least recently maintained first."""

    def __init__(self, limit: int = MAX_KEPT) -> None:
        self.limit = limit  # memories kept in all (0: none; every upkeep reads every memory)
        self._agents: OrderedDict[str, AgentMemo] = OrderedDict()

    def get(self, agent: str) -> AgentMemo | None:
        """The agent's memo (now the most recently maintained)."""
        memo = self._agents.get(agent)
        if memo is not None:
            self._agents.move_to_end(agent)
        return memo

    def peek(self, agent: str) -> AgentMemo | None:
        """The agent's memo, to read (its place in the order unchanged)."""
        return self._agents.get(agent)

    def start(self, agent: str, memories: Sequence[Memory]) -> AgentMemo:
        """A memo of ``memories`` (all of the agent's, as stored), all of them dirty (the
        caller settles it once its upkeep is planned)."""
        self._agents.pop(agent, None)
        memo = AgentMemo(seq=0)
        for memory in memories:
            memo.put(memory)
        self._agents[agent] = memo
        return memo

    def trim(self) -> None:
        """Drop the least recently maintained agents' memos while they hold more than the
        limit (the one just maintained last: alone over the limit, it goes too)."""
        kept = sum(len(m.kept) for m in self._agents.values())
        while kept > self.limit:
            _, dropped = self._agents.popitem(last=False)
            kept -= len(dropped.kept)

    def drop(self, agents: Iterable[str]) -> None:
        for agent in agents:
            self._agents.pop(agent, None)

    def clear(self) -> None:
        self._agents.clear()

    def written(self, memories: Iterable[Memory]) -> None:
        for memory in memories:
            memo = self._agents.get(memory.agent)
            if memo is not None:
                memo.put(memory)

    def deleted(self, agent: str, ids: Iterable[str]) -> None:
        memo = self._agents.get(agent)
        if memo is not None:
            for memory_id in ids:
                memo.remove(memory_id)

    def tiered(self, agent: str, ids: Iterable[str], tier: Tier) -> None:
        memo = self._agents.get(agent)
        if memo is not None:
            memo.set_tier(ids, tier)


T = TypeVar("T")

SHOWN_AGENTS = 4096  # agents whose summary reads are kept (``TrackedStore.shown``), most recent first


class Shown(NamedTuple):
    """What an agent's summary chooses from, as the store holds it (``TrackedStore.shown``)."""

    rules: list[Memory]  # its current rules
    hot: list[Memory]  # its current hot memories recalled at least once
    ids: frozenset[str]  # of both


class TrackedStore:
    """The applier's store: every write goes on to the store and, once done, into the memos
    (a write that fails drops the memos of its agents: the store may hold part of it), and
    into the agents' counts of all their memories, kept once asked for (an exact count of
    an agent is O(its memories) in the engine: ~10 ms at 100 k; the summary asks it at every
    batch for an agent upkeep has not met in this process). A payload rewrite or a tier move
    leaves a count as it is; an upsert adds the points the store did not hold (looked up
    by id); a delete drops it (asked again next time)."""

    def __init__(self, store: MemoryStore, memos: Memos) -> None:
        self.inner = store
        self.memos = memos
        self._counts: dict[str, int] = {}
        self._shown: OrderedDict[str, Shown] = OrderedDict()  # agent → what its summary reads (``shown``)

    def _write(self, agents: Iterable[str], write: Callable[[], T]) -> T:
        try:
            return write()
        except BaseException:
            dropped = set(agents)
            self.memos.drop(dropped)
            for agent in dropped:
                self._counts.pop(agent, None)
                self._shown.pop(agent, None)
            raise

    def shown(self, agent: str) -> Shown:
        """The agent's current rules and its current hot memories recalled at least once: what
        its summary (``StoreApplier.key_memories``) chooses from, read at every batch that
        touches the agent. Kept until a write may change them (``_touched``): a new turn's
        memories (no rule, never recalled) do not, so at a live rate — a batch of a few events,
        each agent's summary made again at each — the two scrolls are asked once in a while,
        not every batch. The same lists as the scrolls', in the same order."""
        kept = self._shown.get(agent)
        if kept is not None:
            self._shown.move_to_end(agent)
            return kept
        rules = list(self.inner.scroll(agent, flt=MemoryFilter(types=("rule",), current=True)))
        hot = list(self.inner.scroll(agent, flt=MemoryFilter(tier="hot", current=True, accessed=True)))
        kept = self._shown[agent] = Shown(rules, hot, frozenset(m.id for m in (*rules, *hot)))
        while len(self._shown) > SHOWN_AGENTS:
            self._shown.popitem(last=False)
        return kept

    def _touched(self, memories: Iterable[Memory]) -> None:
        """``memories`` are about to be written as they are: the kept reads of each agent that
        one of them may change are dropped — a rule, a memory recalled at least once (the two
        lists hold nothing else), or one of theirs (superseded, edited, moved)."""
        for memory in memories:
            kept = self._shown.get(memory.agent)
            if kept is not None and (memory.type == "rule" or memory.access_count > 0 or memory.id in kept.ids):
                del self._shown[memory.agent]

    def upsert(self, points: Sequence[MemoryPoint]) -> None:
        new = self._new_points(points)
        self._touched(p.memory for p in points)
        self._write((p.memory.agent for p in points), lambda: self.inner.upsert(points))
        self.memos.written(p.memory for p in points)
        for agent, added in new.items():
            self._counts[agent] += added

    def _new_points(self, points: Sequence[MemoryPoint]) -> dict[str, int]:
        """Per agent whose count is kept, how many of ``points`` the store does not hold yet."""
        ids: dict[str, set[str]] = {}
        for point in points:
            if point.memory.agent in self._counts:
                ids.setdefault(point.memory.agent, set()).add(point.memory.id)
        held = self.get_many({agent: list(wanted) for agent, wanted in ids.items()})
        return {agent: len(wanted) - len(held[agent]) for agent, wanted in ids.items()}

    def update_payloads(self, memories: Sequence[Memory]) -> None:
        self._touched(memories)
        self._write((m.agent for m in memories), lambda: self.inner.update_payloads(memories))
        self.memos.written(memories)

    def set_tier(self, agent: str, ids: Sequence[str], tier: Tier) -> None:
        if ids:
            self._shown.pop(agent, None)  # a recalled memory may move in or out of the hot tier
        self._write([agent], lambda: self.inner.set_tier(agent, ids, tier))
        self.memos.tiered(agent, ids, tier)

    def delete(self, agent: str, ids: Sequence[str]) -> None:
        self._counts.pop(agent, None)
        self._shown.pop(agent, None)
        self._write([agent], lambda: self.inner.delete(agent, ids))
        self.memos.deleted(agent, ids)

    def delete_agent(self, agent: str) -> None:
        self.memos.drop([agent])
        self._counts.pop(agent, None)
        self._shown.pop(agent, None)
        self.inner.delete_agent(agent)

    def forget_counts(self) -> None:
        """Drop every count and kept read (a batch failed: the store may hold part of a write)."""
        self._counts.clear()
        self._shown.clear()

    # --- reads and the rest: the store's own ----------------------------------------

    @property
    def info(self) -> CollectionInfo:
        return self.inner.info

    @property
    def vocabulary(self) -> Path | None:
        return self.inner.vocabulary

    def claimed_ids(self, agent: str, claims: Sequence[str], superseded_by: Sequence[str]) -> list[str] | None:
        """Ids of the agent's memories making one of ``claims`` that are current or superseded
        by one of ``superseded_by``, from its memo (None: no memo, ask the store)."""
        memo = self.memos.peek(agent)
        if memo is None:
            return None
        by = set(superseded_by)
        return [i for claim in claims for i, sup in memo.claims.get(claim, {}).items() if sup is None or sup in by]

    def get(self, agent: str, ids: Sequence[str]) -> list[Memory]:
        """The store's memories among ``ids``; those the agent's memo does not hold are not
        asked for (a memo holds every memory of its agent as stored, as the counts read from
        it: ``StoreApplier._counts``), so a step's new memories cost no lookup."""
        memo = self.memos.peek(agent)
        if memo is not None:
            ids = [i for i in ids if i in memo.kept]
            if not ids:
                return []
        return self.inner.get(agent, ids)

    def get_many(self, wanted: Mapping[str, Sequence[str]]) -> dict[str, list[Memory]]:
        """``get`` for several agents, in one lookup of the store for those it must ask
        (none when every agent's memo answers)."""
        asking: dict[str, list[str]] = {}
        for agent, ids in wanted.items():
            memo = self.memos.peek(agent)
            kept = list(ids) if memo is None else [i for i in ids if i in memo.kept]
            if kept:
                asking[agent] = kept
        found = self.inner.get_many(asking) if asking else {}
        return {agent: found.get(agent, []) for agent in wanted}

    def vectors(self, agent: str, ids: Sequence[str]) -> dict[str, FloatVector]:
        return self.inner.vectors(agent, ids)

    def search(self, agent: str, vector: FloatVector | Sequence[float], *, text: str | None = None,
               flt: MemoryFilter | None = None, limit: int = 50) -> list[SearchHit]:
        return self.inner.search(agent, vector, text=text, flt=flt, limit=limit)

    def nearest(self, agent: str, vector: FloatVector | Sequence[float], *, flt: MemoryFilter | None = None,
                limit: int = 4) -> list[SearchHit]:
        return self.inner.nearest(agent, vector, flt=flt, limit=limit)

    def similar(self, agent: str, vector: FloatVector | Sequence[float], *, threshold: float,
                flt: MemoryFilter | None = None, limit: int = 64) -> list[SearchHit]:
        return self.inner.similar(agent, vector, threshold=threshold, flt=flt, limit=limit)

    def scroll(self, agent: str, *, flt: MemoryFilter | None = None, page_size: int = 256) -> Iterator[Memory]:
        return self.inner.scroll(agent, flt=flt, page_size=page_size)

    def count(self, agent: str, flt: MemoryFilter | None = None) -> int:
        if flt is not None:
            return self.inner.count(agent, flt)
        if agent not in self._counts:
            self._counts[agent] = self.inner.count(agent)
        return self._counts[agent]

    def flush(self) -> None:
        self.inner.flush()

    def writable(self) -> bool:
        return self.inner.writable()

    def close(self) -> None:
        self.inner.close()


# --- the incremental plan ------------------------------------------------------------


def plan_since(store: MemoryStore, memo: AgentMemo, agent: str, now: datetime, seq: int,
               policy: LifecyclePolicy) -> LifecycleReport:
    """What ``plan_lifecycle`` over every memory of the agent would decide at ``now``
    (stream sequence ``seq``), from the memo and the memories near those written since the
    last upkeep (see the module docstring)."""
    expired = sorted(i for i, m in memo.aging.items() if is_expired(m, now, policy.ttl_hours))
    gone = set(expired)
    decayed = sorted(i for i, m in memo.aging.items()
                     if i not in gone and is_decayed(m, now, policy.session_decay_hours))
    gone.update(decayed)

    def taking_part(memory_id: str, role: str) -> bool:
        kept = memo.kept.get(memory_id)
        return kept is not None and kept.role == role and kept.first_seq < seq and memory_id not in gone

    turns = {i for key in {memo.kept[i].group for i in memo.dirty if taking_part(i, "turn")}
             for i in memo.turns[key] if taking_part(i, "turn")}
    statements, vectors = _neighbourhood(store, memo, agent, [i for i in memo.dirty if taking_part(i, "statement")],
                                         lambda i: taking_part(i, "statement"), policy.dedup_threshold)
    memories = store.get(agent, sorted(turns | statements))
    merged = consolidate(memories, vectors, policy.dedup_threshold)
    return LifecycleReport(expired=tuple(expired), decayed=tuple(decayed), merged=merged, dry_run=policy.dry_run)


def _neighbourhood(store: MemoryStore, memo: AgentMemo, agent: str, dirty: Sequence[str],
                   taking_part: Callable[[str], bool], threshold: float) -> tuple[set[str], dict[str, FloatVector]]:
    """``dirty`` and every statement of their groups linked to one of them by a chain of
    near-duplicates (a cosine at ``threshold`` or above, less the margin), with their vectors."""
    found = set(dirty)
    vectors: dict[str, FloatVector] = {}
    frontier = sorted(found)
    while frontier:
        vectors.update(store.vectors(agent, frontier))
        reached: list[str] = []
        for memory_id in frontier:
            if memory_id not in vectors:
                continue  # no vector: consolidation leaves it alone, as a full upkeep would
            kept = memo.kept[memory_id]
            for hit in _similar(store, agent, vectors[memory_id], kept, threshold - SEARCH_MARGIN):
                other = hit.memory.id
                if other not in found and taking_part(other) and memo.kept[other].group == kept.group:
                    found.add(other)
                    reached.append(other)
        frontier = sorted(reached)
    return found, vectors


def _similar(store: MemoryStore, agent: str, vector: FloatVector, kept: Slim, threshold: float) -> list[SearchHit]:
    """Every current memory of ``kept``'s types (episodes, or statements) and scope at
    ``threshold`` or above."""
    flt = MemoryFilter(types=("episode",) if kept.group[0] == "episode" else STATEMENT_TYPES, scopes=(kept.scope,),
                       current=True)
    limit = FIRST_LIMIT
    while True:
        hits = store.similar(agent, vector, threshold=threshold, flt=flt, limit=limit)
        if len(hits) < limit:
            return hits
        limit *= 4
