"""A step's store writes, held and written together (``StoreApplier``'s view of the store).

Applying a batch used to cost one store call per memory: a read by id before each write
(was it applied already? the reply window's turn), an upsert of one point, a payload
overwrite of one point — ~0.3 ms each in the embedded engine, ~70 % of the worker's CPU.
``PendingWrites`` keeps what a step knows of its memories instead:

* ``prime_many`` reads every memory a step will ask about in one lookup for all its
  agents, absent ones included, and ``get`` answers from that (and from the step's own writes);
* ``upsert`` and ``update`` only record the change; ``flush`` writes the recorded points
  in one upsert and the payloads after them;
* a read that must see the store as written so far calls ``flush`` first — a search for
  a near-duplicate or a scroll by claim only when a pending write is one it could find
  (``flush_if``), a forget's or a session start's reads always — so every read sees
  exactly what one-write-at-a-time would have shown it: what is stored never depends on
  how the writes were grouped;
* ``claimed`` answers "the agent's memories making this claim that are current, or
  superseded by this memory" (what a new statement may supersede) from the memories
  ``prime`` read in two scrolls per agent for the whole step (or, where the agent's memo
  knows them, ``upkeep.TrackedStore.claimed_ids``, one lookup by id), kept up to date by the
  step's own writes;
* ``forget_known`` drops what it knows after the store changed underneath it (deletes,
  lifecycle): the next ``get`` asks the store again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from workers.recall.models import Memory
from workers.recall.store import MemoryFilter, MemoryPoint, MemoryStore

# (agent, claims, superseded by one of) -> the ids of the agent's memories making one of the
# claims that are current or superseded by one of those, or None when not known
ClaimedIds = Callable[[str, Sequence[str], Sequence[str]], list[str] | None]


def _making(claims: Sequence[str]) -> Callable[[Memory], bool]:
    """Does a memory make one of ``claims``?"""
    return lambda memory: memory.claim in claims


class PendingWrites:
    def __init__(self, store: MemoryStore, claimed_ids: ClaimedIds | None = None) -> None:
        self.store = store
        # the ids ``prime_claims`` would find, where the store's tracker knows them (None: scroll)
        self._claimed_ids = claimed_ids
        self._known: dict[str, Memory | None] = {}  # id -> as stored after the writes below (None: absent)
        # (agent, claim) -> the memories making it that can be superseded in this step (see ``claimed``)
        self._claims: dict[tuple[str, str], dict[str, Memory]] = {}
        self._points: dict[str, MemoryPoint] = {}  # new or replaced points, not yet written
        self._payloads: dict[str, Memory] = {}  # payload rewrites of stored points, not yet written

    def prime(self, agent: str, ids: Iterable[str]) -> None:
        """Read the agent's memories among ``ids`` that this view does not know yet, in one lookup."""
        self.prime_many({agent: ids})

    def prime_many(self, wanted: Mapping[str, Iterable[str]]) -> None:
        """``prime`` for several agents: one lookup for all of them (``MemoryStore.get_many``)."""
        unknown: dict[str, list[str]] = {}
        for agent, ids in wanted.items():
            new = [i for i in dict.fromkeys(ids) if i not in self._known]
            if new:
                unknown[agent] = new
        if not unknown:
            return
        found = self.store.get_many(unknown)
        for agent, ids in unknown.items():
            held = {m.id: m for m in found.get(agent, [])}
            for memory_id in ids:
                self._known[memory_id] = held.get(memory_id)

    def prime_claims(self, agent: str, claims: Iterable[str], ids: Iterable[str]) -> None:
        """Read the agent's current memories making any of ``claims``, and those superseded
        by one of ``ids`` (the step's candidates: a retry after a crash between a statement's
        two writes finds what it had superseded), in two scrolls — or, where the agent's memo
        knows which they are, in one lookup by id (none when there are none)."""
        self.prime_claims_many({agent: claims}, {agent: ids})

    def prime_claims_many(self, claims: Mapping[str, Iterable[str]], ids: Mapping[str, Iterable[str]]) -> None:
        """``prime_claims`` for several agents (``claims`` and ``ids`` by agent): the lookups
        by id of the agents whose memos know their claimed memories are one lookup for all."""
        keys: dict[str, list[str]] = {}
        for agent, wanted in claims.items():
            new = [k for k in dict.fromkeys(wanted) if (agent, k) not in self._claims]
            if new:
                keys[agent] = new
        for agent, new in keys.items():
            self.flush_if(agent, _making(new))
        held: dict[str, list[str]] = {}
        found: dict[str, list[Memory]] = {}
        for agent, new in keys.items():
            for key in new:
                self._claims[(agent, key)] = {}
            by = tuple(dict.fromkeys(ids.get(agent, ())))
            known = self._claimed_ids(agent, new, by) if self._claimed_ids is not None else None
            if known is not None:  # the agent's memo knows them: read below, those not known here
                held[agent] = known
            else:
                current = MemoryFilter(claims=tuple(new), current=True)
                by_them = MemoryFilter(claims=tuple(new), superseded_by=by)
                found[agent] = [*self.store.scroll(agent, flt=current), *self.store.scroll(agent, flt=by_them)]
        # what is known is as stored: every pending write of these claims was flushed above
        unknown = {agent: u for agent, known in held.items() if (u := [i for i in known if i not in self._known])}
        read = self.store.get_many(unknown) if unknown else {}
        for agent, known in held.items():
            got = {m.id: m for m in read.get(agent, [])}
            found[agent] = [m for i in known if (m := self._known[i] if i in self._known else got.get(i)) is not None
                            and m.agent == agent]
        for agent in keys:
            for memory in found[agent]:
                self._index(memory)

    def claimed(self, agent: str, claim: str, by: str) -> list[Memory]:
        """The agent's memories making ``claim`` that are current or superseded by ``by``, as
        they are after this step's writes so far."""
        if (agent, claim) not in self._claims:
            self.prime_claims(agent, [claim], [by])
        return [m for m in self._claims[(agent, claim)].values() if m.superseded_by in (None, by)]

    def _index(self, memory: Memory) -> None:
        found = self._claims.get((memory.agent, memory.claim)) if memory.claim is not None else None
        if found is not None:
            found[memory.id] = memory

    def get(self, agent: str, memory_id: str) -> Memory | None:
        """The memory as it is after this step's writes so far (the store's, if not primed)."""
        if memory_id not in self._known:
            self.prime(agent, [memory_id])
        memory = self._known[memory_id]
        return memory if memory is None or memory.agent == agent else None

    def upsert(self, point: MemoryPoint) -> None:
        memory = point.memory
        self._points[memory.id] = point
        self._payloads.pop(memory.id, None)
        self._known[memory.id] = memory
        self._index(memory)

    def update(self, memories: Sequence[Memory]) -> None:
        """Payload rewrites (the vector stays): folded into a pending point when there is one."""
        for memory in memories:
            point = self._points.get(memory.id)
            if point is not None:
                self._points[memory.id] = MemoryPoint(memory, point.vector)
            else:
                self._payloads[memory.id] = memory
            self._known[memory.id] = memory
            self._index(memory)

    def flush_if(self, agent: str, affects: Callable[[Memory], bool]) -> None:
        """``flush``, when a pending write of ``agent`` is one that ``affects`` says a read
        could see (a memory of the type a search asks for, of the claim a scroll asks for):
        the read then finds the store exactly as if every write had been made at once."""
        pending = (*(p.memory for p in self._points.values()), *self._payloads.values())
        if any(m.agent == agent and affects(m) for m in pending):
            self.flush()

    def flush(self) -> None:
        """Write what is pending: the payload rewrites of stored points first (what a new
        statement supersedes is marked before the statement exists, so a retry after a
        crash in between completes the change), then the new points in one upsert."""
        points, payloads = list(self._points.values()), list(self._payloads.values())
        self._points, self._payloads = {}, {}
        if payloads:
            self.store.update_payloads(payloads)
        if points:
            self.store.upsert(points)

    def next_step(self) -> None:
        """A new step of the same batch: what is known of the store carries over (nothing
        else wrote the agents' memories meanwhile), the claims are read again for the new
        step's candidates (``prime_claims``: those they supersede after a crash)."""
        self.flush()
        self._claims.clear()

    def forget_known(self) -> None:
        """The store changed in ways this view did not record (deletes, lifecycle): write
        what is pending and ask the store again next time."""
        self.flush()
        self._known.clear()
        self._claims.clear()

    def discard(self) -> None:
        """A failed batch: nothing pending is written, nothing known is trusted."""
        self._points, self._payloads = {}, {}
        self._known.clear()
        self._claims.clear()
