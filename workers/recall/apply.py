"""Applying a batch of events to the memory store, in stream order (synchronous: the
worker runs it in a thread so embedding never stalls the event loop).

Idempotence: every memory carries ``last_seq``, the stream sequence of the last event
that changed it. An event at or below it was applied already (a redelivery after a crash,
a replay) and changes nothing — per-memory watermarks, as documents have per-agent ones.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import msgspec

from schemas.events import FeedbackEvent, MessageEvent, NoteEvent, SessionEvent
from shared.codec import Envelope
from shared.config import RecallSettings
from workers.recall.capture import capture_message, capture_note, is_turn_memory
from workers.recall.embedders import Embedder
from workers.recall.lifecycle import (
    LifecyclePolicy,
    TieringPolicy,
    apply_lifecycle,
    merge_duplicate,
    plan_lifecycle,
    plan_tiering,
    record_hit,
    select_hot,
)
from workers.recall.models import Memory
from workers.recall.store import MemoryFilter, MemoryPoint, MemoryStore

log = logging.getLogger(__name__)

MAX_KEY_MEMORIES = 10


@dataclass
class BatchOutcome:
    """What a batch did, per agent (for the RecallDoc) and in total (for metrics)."""

    touched: dict[str, datetime] = field(default_factory=dict)  # agent -> latest event time
    last_seq: dict[str, int] = field(default_factory=dict)
    seqs: dict[str, list[int]] = field(default_factory=dict)  # every event's sequence, per agent
    added: int = 0
    merged: int = 0
    skipped: int = 0
    expired: int = 0
    demoted: int = 0


def _candidates(env: Envelope, languages: Sequence[str]) -> list[Memory]:
    if isinstance(env.event, MessageEvent):
        return capture_message(env.event, languages=languages)
    if isinstance(env.event, NoteEvent):
        return capture_note(env.event, languages=languages)
    return []


def feedback_ids(event: FeedbackEvent) -> list[str]:
    """Memory ids a feedback event is about: ``target`` and/or a list in ``value``."""
    ids = [event.target] if event.target else []
    if isinstance(event.value, list):
        ids += [v for v in event.value if isinstance(v, str)]
    return list(dict.fromkeys(ids))


class StoreApplier:
    def __init__(self, store: MemoryStore, embedder: Embedder, settings: RecallSettings,
                 languages: Sequence[str]) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.languages = tuple(languages)

    def apply_batch(self, envs: Sequence[Envelope]) -> BatchOutcome:
        outcome = BatchOutcome()
        staged = [(env, _candidates(env, self.languages)) for env in envs]
        texts = [m.content for _, memories in staged for m in memories]
        vectors = iter(self.embedder.embed_documents(texts)) if texts else iter(())
        for env, memories in staged:
            outcome.touched[env.agent] = max(env.event.ts, outcome.touched.get(env.agent, env.event.ts))
            outcome.last_seq[env.agent] = env.seq
            outcome.seqs.setdefault(env.agent, []).append(env.seq)
            if memories:
                for memory in memories:
                    self._add(msgspec.structs.replace(memory, last_seq=env.seq), next(vectors), outcome)
            elif isinstance(env.event, FeedbackEvent):
                self._feedback(env, env.event, outcome)
            elif isinstance(env.event, SessionEvent) and env.kind == "start":
                self._maintain(env.agent, env.event.ts, outcome)
        self.store.flush()
        return outcome

    def add_memories(self, memories: Sequence[Memory]) -> BatchOutcome:
        """Embed and add memories made elsewhere (Claude's capture), with the same dedup."""
        outcome = BatchOutcome()
        if not memories:
            return outcome
        vectors = self.embedder.embed_documents([m.content for m in memories])
        for memory, vector in zip(memories, vectors, strict=True):
            self._add(memory, vector, outcome)
        self.store.flush()
        return outcome

    def _add(self, memory: Memory, vector: object, outcome: BatchOutcome) -> None:
        existing = self.store.get(memory.agent, [memory.id])
        if existing and existing[0].last_seq >= memory.last_seq:
            outcome.skipped += 1  # applied before this crash or replay
            return
        # A message's own turn memories are never folded into another: every turn stays
        # retrievable under its own source event (two "Thanks!" are two events).
        hits = [] if is_turn_memory(memory) else self.store.search(
            memory.agent, vector, flt=MemoryFilter(types=(memory.type,)), limit=2)  # type: ignore[arg-type]
        dup = next((h for h in hits if h.memory.id != memory.id and h.similarity >= self.settings.dedup_threshold),
                   None)
        if dup is not None and not memory.pinned:
            if dup.memory.last_seq >= memory.last_seq:
                outcome.skipped += 1
                return
            merged = msgspec.structs.replace(merge_duplicate(dup.memory, memory), last_seq=memory.last_seq)
            self.store.update_payloads([merged])
            outcome.merged += 1
            return
        self.store.upsert([MemoryPoint(memory, vector)])  # type: ignore[arg-type]
        outcome.added += 1

    def _feedback(self, env: Envelope, event: FeedbackEvent, outcome: BatchOutcome) -> None:
        ids = feedback_ids(event)
        if event.kind == "memory_forget":
            if event.value == "all" and not ids:  # `cortex forget AGENT`
                self.store.delete_agent(env.agent)
            else:
                self.store.delete(env.agent, ids)
            return
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

    def _maintain(self, agent: str, now: datetime, outcome: BatchOutcome) -> None:
        """Lifecycle and tiering at a session start, in event time (deterministic on replay)."""
        s = self.settings
        memories = list(self.store.scroll(agent))
        report = plan_lifecycle(memories, now, LifecyclePolicy(
            ttl_hours=s.ttl_hours, session_decay_hours=s.session_decay_hours,
            dedup_threshold=s.dedup_threshold, dry_run=s.lifecycle_dry_run))
        apply_lifecycle(self.store, agent, report)
        outcome.expired += len(report.expired) + len(report.decayed)
        if s.lifecycle_dry_run:
            return
        gone = set(report.expired) | set(report.decayed)
        alive = [m for m in memories if m.id not in gone]
        plan = plan_tiering(alive, now, TieringPolicy(hot_size=s.hot_size, cold_idle_days=s.cold_idle_days,
                                                      cold_min_hits=s.cold_min_hits))
        by_id = {m.id: m for m in alive}
        moved = [msgspec.structs.replace(by_id[i], tier="cold") for i in plan.demote] + [
            msgspec.structs.replace(by_id[i], tier="hot") for i in plan.promote]
        if moved:
            self.store.update_payloads(moved)
        outcome.demoted += len(plan.demote)

    def key_memories(self, agent: str, now: datetime) -> tuple[list[str], int, int]:
        """Rules first (most confident), then the hot set; plus hot and cold counts."""
        memories = list(self.store.scroll(agent))
        rules = sorted((m for m in memories if m.type == "rule"), key=lambda m: (-m.confidence, m.id))
        hot_ids = select_hot((m for m in memories if m.tier == "hot"), now, TieringPolicy(
            hot_size=self.settings.hot_size, cold_idle_days=self.settings.cold_idle_days,
            cold_min_hits=self.settings.cold_min_hits))
        hot = sorted((m for m in memories if m.id in hot_ids and m.type != "episode" and m.access_count > 0),
                     key=lambda m: (-m.access_count, -m.last_accessed.timestamp(), m.id))
        picked = list(dict.fromkeys([m.content for m in rules] + [m.content for m in hot]))[:MAX_KEY_MEMORIES]
        n_hot = sum(1 for m in memories if m.tier == "hot")
        return picked, n_hot, len(memories) - n_hot
