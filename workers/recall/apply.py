"""Applying a batch of events to the memory store, in stream order (synchronous: the
worker runs it in a thread so embedding never stalls the event loop).

Idempotence: every memory carries ``last_seq``, the stream sequence of the last event
that changed it. An event at or below it was applied already (a redelivery after a crash,
a replay) and changes nothing — per-memory watermarks, as documents have per-agent ones.

A batch (each part of it up to a session start, which consolidates) runs in three steps:
stage its candidates (turn context, store reads), embed them, write them. Only the first
and the last hold the caller's store lock, so queries are answered while a batch is
embedded (embedding is ~98 % of the time). Each distinct text is embedded once per batch,
in one call, and a candidate the store already holds at or above its event's sequence (a
redelivery, a replay over the existing store) is not embedded at all: it is skipped when
written. Vectors do not depend on the batch a text is embedded with, so neither changes
what is stored. The store is not flushed here: the caller makes a batch durable before it
is acknowledged (the recall worker at each commit, ``RecallProjection.on_commit``).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

import msgspec

from schemas.events import FeedbackEvent, MessageEvent, NoteEvent, SessionEvent
from shared.codec import Envelope
from shared.config import RecallSettings
from shared.feedback import feedback_ids
from workers.recall.capture import (
    WINDOW_LINE_CHARS,
    WINDOW_TURNS,
    capture_message,
    capture_note,
    capture_remember,
    is_context_memory,
    is_explicit,
    is_reply_memory,
    is_turn_memory,
    reply_memory,
    turn_line,
    window_memory,
)
from workers.recall.conflicts import Claim, conflicts, memory_claim
from workers.recall.consolidation import may_fold, needs_vector
from workers.recall.edits import editable, new_statement, revise
from workers.recall.embedders import Embedder, FloatVector
from workers.recall.lifecycle import (
    LifecyclePolicy,
    LifecycleReport,
    TieringPolicy,
    apply_lifecycle,
    merge_duplicate,
    plan_lifecycle,
    plan_tiering,
    record_hit,
    select_hot,
    upkeep_counted,
    upkeep_due,
)
from workers.recall.models import Memory, SearchHit, memory_id
from workers.recall.pending import PendingWrites
from workers.recall.people import answers_another, conversation_person, owners
from workers.recall.store import MemoryFilter, MemoryPoint, MemoryStore
from workers.recall.timeline import reinstated, since, superseded
from workers.recall.upkeep import AgentMemo, Memos, TrackedStore, plan_since

log = logging.getLogger(__name__)

MAX_KEY_MEMORIES = 10
NEAR_DUPLICATES = 4  # stored memories a new one is compared with for folding
# feedback that names a memory by the id it was given: one folded away since names its survivor
RESOLVED_KINDS = frozenset({"memory_pin", "memory_forget"})


@dataclass(frozen=True)
class KeyMemories:
    """What the RecallDoc shows of an agent's memories: the key ones' texts, the person of
    each that belongs to one (``workers.recall.people``), and the tiers' counts."""

    texts: list[str]
    owners: dict[str, str]
    hot: int
    cold: int


@dataclass
class BatchOutcome:
    """What a batch did to the store, in total (for metrics)."""

    added: int = 0
    merged: int = 0  # folded into a near-duplicate when captured
    consolidated: int = 0  # folded into a near-duplicate at a session start
    superseded: int = 0  # contradicted by a newer memory
    skipped: int = 0
    expired: int = 0
    demoted: int = 0
    updated: int = 0  # a memory_update changed a memory's statement
    upkeep: list[Envelope] = field(default_factory=list)  # messages at which upkeep ran (lifecycle.upkeep_due)


def _turn_id(reply: Memory) -> str:
    """The id of the turn a reply window restates (the turn of its own source event)."""
    return memory_id(reply.agent, reply.source_event, 0)


def _candidates(env: Envelope, languages: Sequence[str]) -> list[Memory]:
    if isinstance(env.event, MessageEvent):
        return capture_message(env.event, languages=languages)
    if isinstance(env.event, NoteEvent):
        return capture_note(env.event, languages=languages)
    if isinstance(env.event, FeedbackEvent) and env.event.kind == "remember":
        return capture_remember(env.event, languages=languages)
    return []


def _updated_texts(envs: Iterable[Envelope]) -> list[str]:
    """The new statements of the ``memory_update`` events among ``envs`` (embedded with the step)."""
    values = (new_statement(env.event) for env in envs
              if isinstance(env.event, FeedbackEvent) and env.event.kind == "memory_update")
    return [value.content.strip() for value in values if value is not None]


Entry = tuple[int, Memory]  # (stream sequence, the turn's memory); a seed from the store has sequence 0


class TurnContext:
    """The last turns of each (agent, session), for context windows (see ``capture``).

    Filled in stream order as messages are staged; entries carry their stream sequence
    so a turn only ever sees turns before it. A session first met in this process (a
    restart, a standby taking over) is seeded from the store: the session's turn
    memories older than the turn (turns are never merged, so none is missing). A forget
    is staged in stream order too: the agent's sessions are rebuilt from the store and
    the batch's turns without the forgotten ones, so no later window quotes a forgotten
    turn, wherever the batch boundaries fall. A batch that fails is rolled back
    (``begin``/``rollback``), so a retry sees what the first attempt saw. Bounded: the
    least recently used sessions are dropped (and re-seeded).
    """

    def __init__(self, store: MemoryStore, max_sessions: int = 10_000) -> None:
        self._store = store
        self._max = max_sessions
        self._recent: OrderedDict[tuple[str, str], list[Entry]] = OrderedDict()
        self._saved: dict[tuple[str, str], list[Entry] | None] = {}
        self._staged: dict[tuple[str, str], list[Entry]] = {}  # this batch's turns, not yet in the store
        self._gone: dict[str, set[str] | None] = {}  # this batch's forgets per agent (None: everything)

    def begin(self) -> None:
        self._saved, self._staged, self._gone = {}, {}, {}

    def rollback(self) -> None:
        for key, entries in self._saved.items():
            if entries is None:
                self._recent.pop(key, None)
            else:
                self._recent[key] = entries
        self.begin()

    def previous(self, turn: Memory, seq: int) -> list[Memory]:
        """The turns before ``turn`` (oldest first), at most a window's worth."""
        return [m for s, m in self._entries(turn) if s < seq][-(WINDOW_TURNS - 1):]

    def push(self, turn: Memory, seq: int) -> None:
        key = (turn.agent, turn.session or "")
        entry = (seq, turn)
        entries = [e for e in self._entries(turn) if e[0] < seq]
        self._recent[key] = [*entries, entry][-(WINDOW_TURNS - 1):]
        self._staged.setdefault(key, []).append(entry)

    def forget(self, agent: str, ids: Collection[str] | None) -> None:
        """A forget of ``ids`` (``None``: all of the agent's memories), in stream order:
        the agent's sessions are dropped and re-seeded without the forgotten turns."""
        gone = self._gone.get(agent, set())
        self._gone[agent] = None if ids is None or gone is None else gone | set(ids)
        for key, entries in self._staged.items():
            if key[0] == agent:
                self._staged[key] = [] if ids is None else [e for e in entries if e[1].id not in ids]
        for key in [k for k in self._recent if k[0] == agent]:
            self._saved.setdefault(key, list(self._recent[key]))
            del self._recent[key]

    def _entries(self, turn: Memory) -> list[Entry]:
        key = (turn.agent, turn.session or "")
        if key not in self._recent:
            self._saved.setdefault(key, None)
            self._recent[key] = self._seed(turn)
            while len(self._recent) > self._max:
                self._recent.popitem(last=False)
        else:
            self._saved.setdefault(key, list(self._recent[key]))
            self._recent.move_to_end(key)
        return self._recent[key]

    def _seed(self, turn: Memory) -> list[Entry]:
        """The session's earlier turns: those in the store (less what this batch forgot),
        then those staged in this batch."""
        staged = self._staged.get((turn.agent, turn.session or ""), [])
        gone = self._gone.get(turn.agent, set())
        if gone is None:
            return staged[-(WINDOW_TURNS - 1):]
        skip = gone | {e[1].id for e in staged}
        earlier = sorted(
            (m for m in self._store.scroll(turn.agent, flt=MemoryFilter(types=("episode",), session=turn.session))
             if is_turn_memory(m) and m.created_at < turn.created_at and m.id not in skip),
            key=lambda m: (m.created_at, m.id))
        return [*((0, m) for m in earlier), *staged][-(WINDOW_TURNS - 1):]


def plan_maintenance(store: MemoryStore, agent: str, memories: Sequence[Memory], now: datetime,
                     settings: RecallSettings, *, seq: int | None = None,
                     dry_run: bool | None = None) -> LifecycleReport:
    """What a session start at ``now`` (stream sequence ``seq``) would do to ``memories``
    (the agent's, as stored): expiry, session decay and consolidation of the memories
    created before ``seq`` (``None``: all). Only the memories consolidation compares by
    cosine have their vectors read. ``dry_run`` overrides the setting (the report of
    ``cortex memory consolidate --dry-run``)."""
    vectors = store.vectors(agent, [m.id for m in memories
                                    if needs_vector(m) and (seq is None or m.first_seq < seq)])
    return plan_lifecycle(memories, now, LifecyclePolicy(
        ttl_hours=settings.ttl_hours, session_decay_hours=settings.session_decay_hours,
        dedup_threshold=settings.dedup_threshold,
        dry_run=settings.lifecycle_dry_run if dry_run is None else dry_run), vectors, before_seq=seq)


STEP_EVENTS = 64  # events staged and written under one hold of the store lock at most


def _steps(envs: Sequence[Envelope]) -> list[Sequence[Envelope]]:
    """``envs`` cut after each session start and every STEP_EVENTS events: a query waits
    for one step's staging or writing at most, whatever the batch (a cut is what a batch
    boundary is, less the flush, so it changes nothing that is stored)."""
    steps: list[Sequence[Envelope]] = []
    first = 0
    for i, env in enumerate(envs):
        if (isinstance(env.event, SessionEvent) and env.kind == "start") or i + 1 - first >= STEP_EVENTS:
            steps.append(envs[first: i + 1])
            first = i + 1
    if first < len(envs):
        steps.append(envs[first:])
    return steps


class StoreApplier:
    def __init__(self, store: MemoryStore, embedder: Embedder, settings: RecallSettings,
                 languages: Sequence[str]) -> None:
        self.embedder = embedder
        self.settings = settings
        self.languages = tuple(languages)
        self.memos = Memos()
        # every write goes through the tracker, which keeps the agents' memos as the store is
        self.tracked = TrackedStore(store, self.memos)
        self.store: MemoryStore = self.tracked
        self.context = TurnContext(self.store)

    def apply_batch(self, envs: Sequence[Envelope],
                    lock: AbstractContextManager[object] | None = None,
                    at_upkeep: Callable[[Envelope], None] | None = None) -> BatchOutcome:
        """Apply ``envs`` in stream order. ``lock`` (the worker's store lock) is held while
        the batch is staged and while it is written, never while it is embedded.
        ``at_upkeep`` is called (without the lock) with each message at which upkeep ran on
        its cadence, once it is written and before anything after it is staged: the store
        holds exactly the events up to it then, whatever the batching, so what the call does
        (the worker's fact mirror, the model's judgement) replays alike. A session
        start ends a step of its own: its consolidation changes what later events are staged
        against (the turns a context window quotes), so they are staged after it is written,
        whatever the batching. A batch that fails anywhere leaves the turn context as it
        was, so a retry sees the same.

        Each step reads what it needs of the store in one lookup for all its agents and writes its
        new points in one upsert (``PendingWrites``): the store calls per step do not grow
        with its events, except the reads of the memories that are compared with others
        (near-duplicates, claims) and of forgets and session starts. What the steps read and
        wrote is known to the next ones of the batch (nothing else writes the agents' memories
        between them but the ``at_upkeep`` call, after which it is read again), so an agent's
        memories are looked up once a batch, not once a step."""
        lock = lock if lock is not None else nullcontext()
        outcome = BatchOutcome()
        self.context.begin()
        writes = PendingWrites(self.store, self.tracked.claimed_ids)
        try:
            for step in _steps(envs):
                done = 0
                while done < len(step):  # a message due for upkeep ends a step too (known once staged)
                    writes.next_step()
                    with lock:
                        staged, due = self._stage_until_upkeep(step[done:])
                        held = self._applied(writes, [m for _, memories in staged for m in memories])
                    vectors = self._embed([m.content for _, memories in staged for m in memories if m.id not in held]
                                          + _updated_texts(env for env, _ in staged))
                    ran = len(outcome.upkeep)
                    with lock:
                        self._write(writes, staged, vectors, outcome, due)
                        writes.flush()
                    done += len(staged)
                    if at_upkeep is not None:
                        for env in outcome.upkeep[ran:]:
                            at_upkeep(env)
                            writes.forget_known()  # it wrote the agent's memories (facts, a judgement)
            return outcome
        except BaseException:
            self.context.rollback()
            self.memos.clear()  # an upkeep may be planned and not written: the next ones read everything
            self.tracked.forget_counts()  # and the counts and summary reads kept, read again too
            raise

    def _stage_until_upkeep(self, envs: Sequence[Envelope]) -> tuple[list[tuple[Envelope, list[Memory]]], int | None]:
        """``envs`` staged up to and including the first message due for upkeep
        (``lifecycle.upkeep_due``: its maintenance changes what later events are staged
        against, as a session start's does), and that message's sequence (None: none)."""
        staged: list[tuple[Envelope, list[Memory]]] = []
        for env in envs:
            memories, due = self._stage(env)
            staged.append((env, [msgspec.structs.replace(m, last_seq=env.seq) for m in memories]))
            if due:
                return staged, env.seq
        return staged, None

    def _stage(self, env: Envelope) -> tuple[list[Memory], bool]:
        """The event's memories, and whether it is a message due for upkeep."""
        if isinstance(env.event, FeedbackEvent) and env.event.kind == "memory_forget":
            ids = feedback_ids(env.event)
            self.context.forget(env.agent, None if env.event.value == "all" and not ids else ids)
        memories = _candidates(env, self.languages)
        if isinstance(env.event, MessageEvent) and memories and is_turn_memory(memories[0]):
            previous = self.context.previous(memories[0], env.seq)
            if any(m.type == "rule" for m in memories) and answers_another(env.event, previous):
                # said to another person: no standing instruction to the agent (``people``)
                memories = capture_message(env.event, languages=self.languages, to_agent=False)
            person = conversation_person(env.event, previous)
            memories = [msgspec.structs.replace(m, person=person) for m in memories]
            turn = memories[0]
            memories.append(window_memory(turn, [p.content for p in previous]))
            if previous:
                # before this turn's memories: a statement here supersedes the reply window
                # (the previous turn's statement) as it supersedes that turn
                memories.insert(0, reply_memory(previous[-1], turn.content))
            # pushed with its sequence (as the store will have it): a later turn's cadence reads it
            self.context.push(msgspec.structs.replace(turn, first_seq=env.seq), env.seq)
            return memories, bool(previous) and self._upkeep_due(previous[-1], turn, env.seq)
        return memories, False

    def _upkeep_due(self, before: Memory, turn: Memory, seq: int) -> bool:
        """Whether upkeep runs at ``turn`` (stream sequence ``seq``), the message after
        ``before`` in its session: a new period of event time, or of the stream's events."""
        s = self.settings
        return (upkeep_due(before.created_at, turn.created_at, s.upkeep_hours)
                or upkeep_counted(before.first_seq, seq, s.upkeep_events))

    def _applied(self, writes: PendingWrites, memories: Sequence[Memory]) -> set[str]:
        """Ids of candidates the store holds at or above their own ``last_seq`` already:
        they will be skipped, so they need no vector. Reads every candidate and every turn a
        reply window restates in one lookup for all the agents (``writes`` keeps them for the step)."""
        wanted: dict[str, list[str]] = {}
        for memory in memories:
            ids = wanted.setdefault(memory.agent, [])
            ids.append(memory.id)
            if is_reply_memory(memory):
                ids.append(_turn_id(memory))
        claims: dict[str, list[str]] = {}
        for memory in memories:
            claim = memory_claim(memory)
            if claim is not None:
                claims.setdefault(memory.agent, []).append(claim.key)
        writes.prime_many(wanted)
        writes.prime_claims_many(claims, wanted)
        return {m.id for m in memories
                if (held := writes.get(m.agent, m.id)) is not None and held.last_seq >= m.last_seq}

    def _embed(self, texts: Sequence[str]) -> dict[str, FloatVector]:
        """One embedding call for the distinct texts (a repeated turn is embedded once)."""
        distinct = list(dict.fromkeys(texts))
        if not distinct:
            return {}
        return dict(zip(distinct, self.embedder.embed_documents(distinct), strict=True))

    def _vector(self, memory: Memory, vectors: dict[str, FloatVector]) -> FloatVector:
        """The memory's vector; embedded here (under the lock) only when an earlier event of
        the batch removed a memory that was held when the batch was staged (a forget or an
        expiry before a redelivered message), which is rare."""
        if memory.content not in vectors:
            vectors.update(self._embed([memory.content]))
        return vectors[memory.content]

    def _write(self, writes: PendingWrites, staged: Sequence[tuple[Envelope, list[Memory]]],
               vectors: dict[str, FloatVector], outcome: BatchOutcome, due: int | None = None) -> None:
        for env, memories in staged:
            if memories:
                for memory in memories:
                    self._add(writes, memory, partial(self._vector, memory, vectors), outcome)
                if env.seq == due:  # a new period of the session's event time: its upkeep
                    writes.forget_known()  # lifecycle reads and rewrites the agent's memories
                    self._maintain(env.agent, env.event.ts, env.seq, outcome)
                    outcome.upkeep.append(env)
            elif isinstance(env.event, FeedbackEvent) and env.event.kind == "memory_update":
                self._update(writes, env, env.event, vectors, outcome)
            elif isinstance(env.event, FeedbackEvent):
                self._feedback(writes, env, env.event, outcome)
            elif isinstance(env.event, SessionEvent) and env.kind == "start":
                writes.forget_known()  # lifecycle reads and rewrites the agent's memories
                self._maintain(env.agent, env.event.ts, env.seq, outcome)

    def add_memories(self, memories: Sequence[Memory],
                     lock: AbstractContextManager[object] | None = None) -> BatchOutcome:
        """Embed and add memories made elsewhere (Claude's capture), with the same dedup;
        ``lock`` is held for the store work only."""
        outcome = BatchOutcome()
        if not memories:
            return outcome
        lock = lock if lock is not None else nullcontext()
        writes = PendingWrites(self.store, self.tracked.claimed_ids)
        with lock:
            held = self._applied(writes, memories)
        vectors = self._embed([m.content for m in memories if m.id not in held])
        with lock:
            for memory in memories:
                self._add(writes, memory, partial(self._vector, memory, vectors), outcome)
            writes.flush()
            self.store.flush()
        return outcome

    def _add(self, writes: PendingWrites, memory: Memory, vector_of: Callable[[], FloatVector],
             outcome: BatchOutcome) -> None:
        existing = writes.get(memory.agent, memory.id)
        if existing is not None and existing.last_seq >= memory.last_seq:
            outcome.skipped += 1  # applied before this crash or replay
            return
        if is_reply_memory(memory):
            memory = self._as_its_turn(writes, memory)
        claim = memory_claim(memory)
        if claim is not None:
            memory = msgspec.structs.replace(memory, claim=claim.key)
        vector = vector_of()
        # A message's own turn (and its context window) is never folded into another
        # memory: every turn stays retrievable under its own source event (two "Thanks!"
        # are two events; overlapping windows are near-duplicates by construction). A
        # near-duplicate that says the opposite ("… is Tuesday" / "… is Thursday") is none.
        hits = [] if is_turn_memory(memory) or is_context_memory(memory) else self._near(writes, memory, vector)
        dup = next((h for h in hits if h.memory.id != memory.id and h.similarity >= self.settings.dedup_threshold
                    and may_fold(memory, h.memory, claim)), None)
        if dup is not None and not memory.pinned:
            if dup.memory.last_seq >= memory.last_seq:
                outcome.skipped += 1
                return
            if is_explicit(memory):
                self._restate(writes, memory, dup.memory, claim, vector, outcome)
                return
            # said again: the memory is current again, whatever had superseded it since
            merged = msgspec.structs.replace(reinstated(merge_duplicate(dup.memory, memory)),
                                             last_seq=memory.last_seq)
            writes.update([self._supersede(writes, merged, claim, memory.last_seq, outcome)])
            outcome.merged += 1
            return
        created = memory if memory.first_seq else msgspec.structs.replace(memory, first_seq=memory.last_seq)
        if not is_reply_memory(created):  # a reply window restates an earlier turn: it supersedes nothing
            created = self._supersede(writes, created, claim, memory.last_seq, outcome)
        writes.upsert(MemoryPoint(created, vector))
        outcome.added += 1

    def _near(self, writes: PendingWrites, memory: Memory, vector: FloatVector) -> list[SearchHit]:
        """The stored memories of its type nearest to ``memory`` (the step's writes so far
        included: they are written first)."""
        writes.flush_if(memory.agent, lambda m: m.type == memory.type)
        return self.store.nearest(memory.agent, vector, flt=MemoryFilter(types=(memory.type,)), limit=NEAR_DUPLICATES)

    def _restate(self, writes: PendingWrites, memory: Memory, old: Memory, claim: Claim | None,
                 vector: FloatVector, outcome: BatchOutcome) -> None:
        """An explicit memory (remembered, noted) that says again what ``old`` says: it is
        stored under its own id (the one its publisher was told) and takes ``old`` in, whose
        id then names it (``merged_from``: a pin, forget or update of it reaches this one).
        What ``old`` had superseded is superseded by this one now."""
        kept = msgspec.structs.replace(reinstated(merge_duplicate(memory, old)), first_seq=memory.last_seq,
                                       supersedes_id=old.supersedes_id, valid_from=min(since(old), since(memory)))
        kept = self._supersede(writes, kept, claim, memory.last_seq, outcome)
        writes.flush()  # the scroll below sees the step's writes
        writes.update([msgspec.structs.replace(m, superseded_by=kept.id, last_seq=max(m.last_seq, memory.last_seq))
                       for m in self.store.scroll(memory.agent, flt=MemoryFilter(superseded_by=(old.id,)))])
        writes.upsert(MemoryPoint(kept, vector))
        writes.forget_known()  # written before the old one goes
        self.store.delete(memory.agent, [old.id])
        outcome.merged += 1

    def _as_its_turn(self, writes: PendingWrites, reply: Memory) -> Memory:
        """A reply window, made when the next turn arrives, states its own turn's statement
        as of that turn: it takes the turn's first sequence (so only later statements
        supersede it), whatever already superseded the turn, and its pin."""
        turn = writes.get(reply.agent, _turn_id(reply))
        if turn is None:
            return reply
        return msgspec.structs.replace(reply, first_seq=turn.first_seq or reply.first_seq,
                                       superseded_by=turn.superseded_by, superseded_at=turn.superseded_at,
                                       pinned=turn.pinned)

    def _supersede(self, writes: PendingWrites, memory: Memory, claim: Claim | None, seq: int,
                   outcome: BatchOutcome) -> Memory:
        """Mark the agent's memories that ``memory`` contradicts (made by events before
        ``seq``, another event's, not pinned) as superseded by it, and return it with
        ``supersedes_id`` naming the newest of them. The old ones are written first, and
        those this memory superseded already count again, so a retry after a crash in
        between completes the change."""
        if claim is None:
            return memory
        olds = sorted(
            (m for m in writes.claimed(memory.agent, claim.key, memory.id)
             if m.id != memory.id and m.source_event != memory.source_event and not m.pinned
             and m.first_seq < seq and conflicts(claim, memory_claim(m))),
            key=lambda m: (m.first_seq, m.created_at, m.id))
        if not olds:
            return memory
        changed = [*olds, *self._quoting(writes, memory, olds, seq)]
        writes.update([superseded(m, memory, seq) for m in changed])
        outcome.superseded += sum(1 for m in changed if m.superseded_by is None)
        return msgspec.structs.replace(memory, supersedes_id=olds[-1].id)

    def _quoting(self, writes: PendingWrites, memory: Memory, olds: Sequence[Memory], seq: int) -> list[Memory]:
        """The later turns' context and reply windows that quote one of the superseded turns
        among ``olds``: they carry its old value, so they are history too (not ``memory``'s
        own, not pinned, made before ``seq``)."""
        turns = [m for m in olds if is_turn_memory(m)]
        if not turns:
            return []
        sessions = {t.session for t in turns}
        writes.flush_if(memory.agent, lambda m: is_context_memory(m) and m.session in sessions)  # the scroll sees them
        known = {m.id for m in olds}
        found = {m.id: m for m in self._windows_quoting_memories(turns)
                 if m.id not in known and m.source_event != memory.source_event and not m.pinned
                 and m.superseded_by in (None, memory.id) and m.first_seq < seq}
        return [writes.get(m.agent, i) or m for i, m in found.items()]

    def _update(self, writes: PendingWrites, env: Envelope, event: FeedbackEvent, vectors: dict[str, FloatVector],
                outcome: BatchOutcome) -> None:
        """A ``memory_update``: the memory (or the one that took its id in) with its new
        statement, the old one kept as a version (``workers.recall.edits``), embedded again;
        what the new statement contradicts is superseded by it."""
        value = new_statement(event)
        writes.forget_known()  # the id is resolved through the store
        found = self._resolve(env.agent, [event.target] if event.target else [])
        current = writes.get(env.agent, found[0]) if found else None
        if value is None or current is None or current.last_seq >= env.seq or not editable(current):
            outcome.skipped += 1
            return
        revised = revise(current, value, event.id, event.ts)
        claim = memory_claim(revised)
        revised = msgspec.structs.replace(revised, claim=claim.key if claim else None, last_seq=env.seq)
        revised = self._supersede(writes, revised, claim, env.seq, outcome)
        writes.upsert(MemoryPoint(revised, self._vector(revised, vectors)))
        outcome.updated += 1

    def _resolve(self, agent: str, ids: Sequence[str]) -> list[str]:
        """``ids`` with each one that names no memory any more replaced by the memory that
        took it in when it was folded (``merged_from``), if any."""
        held = {m.id for m in self.store.get(agent, ids)}
        gone = tuple(i for i in ids if i not in held)
        if not gone:
            return list(ids)
        survivors = [m.id for m in self.store.scroll(agent, flt=MemoryFilter(absorbed=gone))]
        return list(dict.fromkeys([*(i for i in ids if i in held), *survivors]))

    def _feedback(self, writes: PendingWrites, env: Envelope, event: FeedbackEvent, outcome: BatchOutcome) -> None:
        writes.forget_known()  # what follows reads and deletes through the store itself
        ids = feedback_ids(event)
        if event.kind in RESOLVED_KINDS:
            ids = self._resolve(env.agent, ids)
        if event.kind == "memory_forget":
            if event.value == "all" and not ids:  # `cortex forget AGENT`
                self.store.delete_agent(env.agent)
            else:
                turns = [m for m in self.store.get(env.agent, ids) if is_turn_memory(m)]
                gone = list(dict.fromkeys(ids + self._windows_quoting(turns)))
                self._restore_superseded(env, gone)
                self.store.delete(env.agent, gone)
            return  # the turn context forgot them when the batch was staged
        changed = []
        for current in self.store.get(env.agent, ids):
            if current.last_seq >= env.seq:
                continue
            if event.kind == "recall_access":
                updated = record_hit(current, event.ts)
            elif event.kind == "memory_pin":
                updated = msgspec.structs.replace(current, pinned=True, tier="hot")
            else:
                continue
            changed.append(msgspec.structs.replace(updated, last_seq=env.seq))
        if changed:
            self.store.update_payloads(changed)

    def _restore_superseded(self, env: Envelope, gone: Sequence[str]) -> None:
        """What a forgotten memory had superseded is current again: forgetting a
        correction brings back what it corrected."""
        if not gone:
            return
        restored = [reinstated(m, env.seq)
                    for m in self.store.scroll(env.agent, flt=MemoryFilter(superseded_by=tuple(gone)))
                    if m.id not in gone]
        if restored:
            self.store.update_payloads(restored)

    def _windows_quoting(self, turns: Sequence[Memory]) -> list[str]:
        """Ids of the context and reply windows that carry a forgotten turn's text (its own
        and the next turns' windows, its own and the previous turn's reply window), so
        forgetting a message leaves no copy of it behind."""
        return [m.id for m in self._windows_quoting_memories(turns)]

    def _windows_quoting_memories(self, turns: Sequence[Memory]) -> list[Memory]:
        """The context and reply windows that carry one of ``turns``' text."""
        found: list[Memory] = []
        for turn in turns:
            lines = {turn_line(turn.content), turn_line(turn.content, WINDOW_LINE_CHARS)}
            flt = MemoryFilter(types=("episode",), session=turn.session)
            found += [m for m in self.store.scroll(turn.agent, flt=flt)
                      if is_context_memory(m) and lines & set(m.content.split("\n"))]
        return found

    def _maintain(self, agent: str, now: datetime, seq: int, outcome: BatchOutcome) -> None:
        """Lifecycle, consolidation and tiering at a session start, in event time
        (deterministic on replay). Survivors of a merge are stamped with the session
        start's sequence; the merged turns leave the turn context, as a forget would, so a
        later window is the same whether or not the process restarted in between. The
        agent's memo (``workers.recall.upkeep``) plans it from what changed since the last
        upkeep; without one (the agent's first upkeep in this process) every memory is read."""
        s = self.settings
        report, memo = self._plan_upkeep(agent, now, seq)
        fresh = memo is not None and memo.seq == 0
        if not report.dry_run:
            report = msgspec.structs.replace(report, merged=tuple(
                msgspec.structs.replace(m, kept=msgspec.structs.replace(m.kept, last_seq=max(m.kept.last_seq, seq)))
                for m in report.merged))
        merged_turns = [m.removed for m in report.merged if memo is not None and memo.kept[m.removed].role == "turn"]
        if memo is not None:
            memo.settle(seq)
        apply_lifecycle(self.store, agent, report)  # the memo follows the writes (TrackedStore)
        outcome.expired += len(report.expired) + len(report.decayed)
        if memo is None:  # a dry run
            return
        outcome.consolidated += len(report.merged)
        if merged_turns:
            self.context.forget(agent, merged_turns)
        policy = TieringPolicy(hot_size=s.hot_size, cold_idle_days=s.cold_idle_days, cold_min_hits=s.cold_min_hits)
        # a memo just made from every memory plans as before; one kept since, from its ranking
        plan = plan_tiering(list(memo.kept.values()), now, policy) if fresh else memo.tiering(now, policy)
        # one operation each way (a payload rewrite per memory cost ~0.1 ms: ~100 a session start on LoCoMo)
        self.store.set_tier(agent, plan.demote, "cold")
        self.store.set_tier(agent, plan.promote, "hot")
        outcome.demoted += len(plan.demote)
        self.memos.trim()

    def _plan_upkeep(self, agent: str, now: datetime, seq: int) -> tuple[LifecycleReport, AgentMemo | None]:
        """The upkeep's plan, and the agent's memo it leaves the store's state in (None in a
        dry run, which writes nothing): from the memo kept since the last upkeep when there
        is one, else from every memory of the agent (and a new memo of them)."""
        s = self.settings
        memo = None if s.lifecycle_dry_run else self.memos.get(agent)
        if memo is not None and memo.seq < seq:
            return plan_since(self.store, memo, agent, now, seq, LifecyclePolicy(
                ttl_hours=s.ttl_hours, session_decay_hours=s.session_decay_hours,
                dedup_threshold=s.dedup_threshold)), memo
        memories = list(self.store.scroll(agent))
        report = plan_maintenance(self.store, agent, memories, now, s, seq=seq)
        if report.dry_run:
            return report, None
        return report, self.memos.start(agent, memories)

    def key_memories(self, agent: str, now: datetime) -> KeyMemories:
        """Rules first (most confident), then the hot set, of the memories nothing newer
        contradicts, with the person of each that belongs to one; plus hot and cold counts (of all)."""
        # read by filter, not the whole collection: this runs for every batch that touches
        # the agent, and the collection grows with every message
        # (both kept between batches until a write may change them: ``TrackedStore.shown``)
        shown = self.tracked.shown(agent)
        rules = sorted(shown.rules, key=lambda m: (-m.confidence, m.id))
        # only those recalled at least once can be shown, and those come first in the hot
        # order (most hits first), so the top of the hot tier among them is the top of all:
        # the engine filters, instead of every hot memory's payload decoded here
        hot_tier = list(shown.hot)
        hot_ids = select_hot(hot_tier, now, TieringPolicy(
            hot_size=self.settings.hot_size, cold_idle_days=self.settings.cold_idle_days,
            cold_min_hits=self.settings.cold_min_hits))
        hot = sorted((m for m in hot_tier if m.id in hot_ids and m.type != "episode" and m.access_count > 0),
                     key=lambda m: (-m.access_count, -m.last_accessed.timestamp(), m.id))
        picked = list(dict.fromkeys([m.content for m in rules] + [m.content for m in hot]))[:MAX_KEY_MEMORIES]
        n_hot, n_all = self._counts(agent)
        return KeyMemories(texts=picked, owners=owners([*rules, *hot], picked), hot=n_hot, cold=n_all - n_hot)

    def _counts(self, agent: str) -> tuple[int, int]:
        """The agent's hot and total memories: its memo's, kept as the store is written (an
        agent upkeep has not met in this process yet is counted by the store)."""
        memo = self.memos.peek(agent)
        if memo is not None:
            return len(memo.hot), len(memo.kept)
        # every point carries its tier (hot or cold): the cold count goes through the tier
        # index (few cold: ~0.1 ms at 100 k memories, where a hot count costs ~12 ms)
        every = self.store.count(agent)
        return every - self.store.count(agent, MemoryFilter(tier="cold")), every
