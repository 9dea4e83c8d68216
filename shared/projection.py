"""Per-agent documents derived by pure functions, written with compare-and-set.

A ``Projection`` says which events it takes and how one event changes one agent's
document. ``ProjectionHandler`` runs projections inside the consume loop:

* the document's ``integrity.last_seq`` is the per-agent watermark: an event at or below
  it was applied already (a redelivery or a replay) and changes nothing;
* documents are cached with their KV revision; a batch's changes are written once per
  agent at commit, with compare-and-set on the revision;
* on a conflict (someone else wrote the key: a replay reset, a split brain) the document
  is reloaded and the batch's events for that agent are applied again on top of it —
  the watermark makes that exact: nothing lost, nothing applied twice.

A document type with ``SPLIT_LISTS`` is stored over several keys when it outgrows one
value (``shared.parts``; a projection may lower the limit with ``max_value_bytes``): its
parts are put first, then the head with compare-and-set — the head's revision is the
consistency point — then the part keys it no longer uses are deleted.

A *deferred* projection (``Projection.deferred``) has its inputs made for many events at
once: the events it accepts wait in the handler until their documents are next written (a
cut, the commit) and are prepared together by ``prepare_deferred`` — one store write, one
embedding call for all of them — then composed one by one, in stream order, as any other.
It also sees the events its documents hold already (a redelivery, a replay), marked so:
what it keeps outside the documents (a store with watermarks of its own) may be behind the
document after a crash, and catches up on them.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from schemas.docs import Integrity
from schemas.events import LlmAnswerValue
from shared import metrics, parts
from shared.codec import Envelope
from shared.consume import Handler
from shared.errors import (
    DocumentCorrupt,
    DocumentTooLarge,
    RebuildRequired,
    TransientError,
    UnwritableDocuments,
    is_unwritable,
)
from shared.feedback import late_answer
from shared.footprint import Source
from shared.kv import kv_cas, kv_delete, kv_read
from shared.names import OPENCLAW_TYPES, TRIGGERS
from shared.natsio import max_payload
from shared.repair import decode_document, discard_document, unreadable_reason

log = logging.getLogger(__name__)

D = TypeVar("D", bound=msgspec.Struct)
In = TypeVar("In")


class Deferred(NamedTuple, Generic[D]):
    """An event a deferred projection accepted, as ``prepare_deferred`` is given it."""

    env: Envelope
    doc: D | None  # the agent's document before this preparation's events (as last written or composed)
    applied: bool  # the document holds it already: it is not composed, only its outside effects are made


class Projection(ABC, Generic[D, In]):
    """One kind of per-agent document: which events change it, and how.

    ``ProjectionHandler`` calls every hook for every event a projection accepts, in this
    order: ``accepts``, then (unless the document's watermark holds the event already)
    ``prepare``, which may wait and do I/O (other workers' documents, an LLM answer), then
    ``compose``, which is pure given what ``prepare`` returned — a conflict rebase runs it
    again with the same inputs — and last ``counts``. Subclass ``EventProjection`` for a
    document derived from events alone (one ``apply``); subclass this class directly for a
    composed one (``prepare`` + ``compose``).

    Class attributes: ``bucket`` (the logical document bucket), ``doc_type`` (the
    document's Struct), ``max_value_bytes`` (where a ``SPLIT_LISTS`` document splits; the
    contract's 512 KiB unless lowered), ``deferred`` (its events are prepared together
    by ``prepare_deferred`` when their documents are next written, see the module).
    """

    bucket: str
    doc_type: type[D]
    max_value_bytes: int = parts.MAX_VALUE_BYTES
    deferred: bool = False

    @abstractmethod
    def accepts(self, env: Envelope) -> bool:
        """Whether ``env`` concerns this document at all (cheap: called for every event).
        May raise ``InvalidEvent``: bad input only this projection can tell, dead-lettered
        before anything of it is prepared."""

    @abstractmethod
    async def prepare(self, env: Envelope, doc: D | None) -> In:
        """The inputs ``compose`` needs beyond the document and the event."""

    @abstractmethod
    def compose(self, doc: D | None, env: Envelope, inputs: In) -> D | None:
        """The document after ``env``; None leaves it as it is. Must not mutate ``doc``."""

    async def prepare_deferred(self, events: Sequence[Deferred[D]]) -> list[In]:
        """A deferred projection's inputs for ``events`` (in stream order; one list item per
        event, those of the ``applied`` ones unused). Default: ``prepare`` of each."""
        return [await self.prepare(e.env, e.doc) for e in events]

    def counts(self, env: Envelope) -> bool:
        """Whether a change by ``env`` counts in ``integrity.events`` (default: yes)."""
        return True

    def resets(self, env: Envelope) -> bool:
        """Whether ``env`` ends the agent's document (``compose`` is not called): it is
        deleted when written, and the agent's next event starts a new one (default: never)."""
        return False

    async def on_commit(self, more: bool) -> None:
        """At each commit, before its documents are written: make durable what
        ``prepare`` / ``prepare_deferred`` changed outside them (default: nothing). ``more``:
        events wait behind this commit (read ahead by the loop, or the rest of a batch at a
        stream boundary's cut) — durability beyond a crash of the process may wait for a
        commit that catches up."""
        return None

    async def aclose(self) -> None:
        """Release what the projection opened, when its handler closes (default: nothing)."""
        return None

    # The LLM purposes of this projection's calls whose answers may come later, as
    # ``llm_answer`` events (``shared.llm.deferred``): the handler gives such an event to
    # ``enrich`` instead of ``accepts``/``prepare``/``compose`` — except to a deferred
    # projection, which takes it as any event (``accepts``, ``prepare_deferred``: the
    # recall worker adds a late capture's memories to its store there).
    answers: frozenset[str] = frozenset()

    def enrich(self, doc: D | None, env: Envelope, answer: LlmAnswerValue) -> D | None:
        """The document with the late answer to one of its calls applied; pure, like
        ``compose``. None leaves it as it is (the default: no call of its is ever late)."""
        return None


class _Late(msgspec.Struct, frozen=True):
    """The inputs of a late answer (what ``_apply_to_slot`` hands to ``enrich``)."""

    answer: LlmAnswerValue


def late_inputs(env: Envelope) -> _Late | None:
    """What ``step`` is given for ``env`` when it is a late answer to a model's call (``enrich``
    applies it), else None (an ``EventProjection``'s inputs)."""
    late = late_answer(env.event)
    return _Late(late) if late is not None else None


class EventProjection(Projection[D, None]):
    """A document derived from the events alone: ``apply`` is the whole story."""

    async def prepare(self, env: Envelope, doc: D | None) -> None:
        return None

    def compose(self, doc: D | None, env: Envelope, inputs: None) -> D | None:
        return self.apply(doc, env)

    @abstractmethod
    def apply(self, doc: D | None, env: Envelope) -> D | None:
        """The document after ``env``; None leaves it as it is. Must not mutate ``doc``."""


class SourcedProjection(EventProjection[D]):
    """A document derived from the events and, at some of them, from other documents as they
    were then (the channel summaries: threads and decisions as of each session trigger): what
    a composed reader past the bucket's history derives (``shared.derive``) when those derive
    too. Its worker reads them through ``shared.inputs``; this is the rule alone."""

    @abstractmethod
    def sources_for(self, env: Envelope, doc: D | None) -> Sequence[Source]:
        """The documents ``env`` reads, each as of it (``Source.before``); none: the event alone."""

    @abstractmethod
    def apply_read(self, doc: D | None, env: Envelope, docs: Mapping[str, Any]) -> D | None:
        """The document after ``env``, given the documents ``sources_for`` named (by field)."""

    def apply(self, doc: D | None, env: Envelope) -> D | None:
        return self.apply_read(doc, env, {})

    def compose(self, doc: D | None, env: Envelope, inputs: Mapping[str, Any] | None) -> D | None:
        return self.apply_read(doc, env, inputs or {})


AnyProjection = Projection[Any, Any]  # what ProjectionHandler holds: documents and inputs of any type



def trigger_subjects(prefix: str, store_prefix: str | None = None) -> tuple[str, ...]:
    """The subjects a trigger is published on — the contract's ``<prefix>.<family>.<agent>.<kind>``,
    the stored form with its slot, which a publisher may use as well, and (``store_prefix``) the
    OpenClaw event store's ``<store prefix>.<agent>.<type token>`` of the types that map to a
    trigger (``shared.names.OPENCLAW_TYPES``; CORTEX_EVENTS sources them): what a lingering
    worker listens on so that it never sleeps on the events a trigger's composed documents wait
    for (``shared.pull``)."""
    contract = [f"{prefix}.{family}.{'*.' * tokens}{kind}" for family, kind in TRIGGERS for tokens in (1, 2)]
    store = [f"{store_prefix}.*.{token}" for token, pair in OPENCLAW_TYPES.items() if pair in TRIGGERS]
    return tuple(sorted(contract + (store if store_prefix else [])))


def _nothing_waiting() -> int:
    return 0


def is_trigger(env: Envelope) -> bool:
    """Events that composed documents (snapshot, narrative, boot) are made for."""
    return (env.family, env.kind) in TRIGGERS


def boundary(seq: int, every: int) -> int:
    """The last cut at or below ``seq``: the stream is cut every ``every`` sequences.

    An event-derived worker writes its pending documents before it applies the first
    event at or past a multiple of ``every``, so for each agent the newest revision with
    ``last_seq`` below that multiple is the agent's state there, however the stream was
    batched (what the boot worker's change documents read, see ``shared.asof``)."""
    return seq // every * every


class _Slot:
    __slots__ = ("doc", "parts", "pending", "revision")

    def __init__(self, doc: Any, revision: int, stored_parts: int = 0) -> None:
        self.doc = doc
        self.revision = revision  # the head's
        self.parts = stored_parts  # part keys agent.part1 … that exist (split documents only)
        self.pending: list[tuple[Envelope, Any]] = []


def _stamp(doc: D, previous: Any, env: Envelope, producer: str, counted: bool = True) -> D:
    """``doc`` with its integrity for ``env``: the shell is the one owner of ``integrity``
    (cores carry it over untouched). A new document, so a core may return its input."""
    events = previous.integrity.events if previous is not None else 0
    integrity = Integrity(last_seq=env.seq, last_event_ts=env.event.ts, events=events + (1 if counted else 0),
                          producer=producer)
    return msgspec.structs.replace(doc, integrity=integrity)


def _holds(slot: _Slot, env: Envelope) -> bool:
    """Whether the slot's document holds ``env`` already (its watermark): a redelivery or a replay."""
    return _doc_holds(slot.doc, env)


def _doc_holds(doc: Any, env: Envelope) -> bool:
    return doc is not None and bool(doc.integrity.last_seq >= env.seq)


def step(projection: AnyProjection, doc: Any, env: Envelope, inputs: Any, producer: str) -> tuple[Any, bool]:
    """The document after ``env`` and whether it changed — the one rule by which a document
    takes an event, for the handler and for a reader deriving a source (``shared.derive``):
    one that holds it already (its watermark: a redelivery, a replay) stays as it is;
    ``resets`` ends it; else ``compose`` (``enrich`` for a late answer) makes the next one,
    stamped."""
    if _doc_holds(doc, env):
        return doc, False
    if projection.resets(env):
        return None, doc is not None  # deleted when written (``ProjectionHandler._delete``)
    if isinstance(inputs, _Late):
        new = projection.enrich(doc, env, inputs.answer)
    else:
        new = projection.compose(doc, env, inputs)
    if new is None:
        return doc, False
    return _stamp(new, doc, env, producer, projection.counts(env)), True


class ProjectionHandler(Handler):
    """Applies projections to envelopes; the consume loop calls ``apply`` then ``commit``."""

    def __init__(
        self,
        js: JetStreamContext,
        worker: str,
        producer: str,
        projections: Sequence[AnyProjection],
        bucket_names: dict[str, str] | None = None,
        cache_size: int = 10000,
        cut_on_triggers: bool = False,
        cut_every: int = 0,
    ) -> None:
        self._js = js
        self.worker = worker
        self.producer = producer
        self._projections = list(projections)
        self._bucket_names = bucket_names or {}
        self._kvs: dict[str, KeyValue] = {}
        self._lost_buckets: set[str] = set()
        self._cache: OrderedDict[tuple[str, str], _Slot] = OrderedDict()
        self._dirty: set[tuple[str, str]] = set()
        self._cache_size = cache_size
        self._encoder = msgspec.json.Encoder()
        self._decoders = {p.bucket: msgspec.json.Decoder(p.doc_type) for p in projections}
        # the largest value each bucket's writes may carry: the contract's 512 KiB, a
        # projection's own lower limit, and always below the server's max payload
        payload = max_payload(js, parts.MAX_VALUE_BYTES * 2)
        self._budget = {p.bucket: parts.value_budget(payload, p.max_value_bytes) for p in projections}
        self._split = {p.bucket: self._budget[p.bucket] for p in projections if parts.split_lists(p.doc_type)}
        self._unwritable: dict[int, str] = {}  # events whose documents can never be written
        self.cut_on_triggers = cut_on_triggers
        self.cut_every = cut_every  # 0: no cuts at stream boundaries (see ``boundary``)
        self._last_seen = 0  # the sequence of the event applied last, for the boundary cuts
        # the deferred projections' events waiting for their documents' next write, in stream order
        self._deferred: list[tuple[AnyProjection, Envelope]] = []
        self._waiting: Callable[[], int] = _nothing_waiting  # the loop's backlog (``follow_backlog``)
        # the projections whose ``prepare`` is ``EventProjection``'s (None, nothing awaited): not called
        self._from_events = {id(p) for p in self._projections if type(p).prepare is EventProjection.prepare}

    def bucket_name(self, bucket: str) -> str:
        """The physical bucket (shadow mode maps cortex_x to cortex_shadow_x)."""
        return self._bucket_names.get(bucket, bucket)

    async def _kv(self, bucket: str) -> KeyValue:
        kv = self._kvs.get(bucket)
        if kv is None:
            try:
                kv = await self._js.key_value(self.bucket_name(bucket))
            except nats.js.errors.BucketNotFoundError as exc:
                raise self._lost(bucket) from exc
            if bucket in self._lost_buckets:
                # back, but empty: every document in it must be rebuilt from the stream
                self._lost_buckets.discard(bucket)
                raise RebuildRequired(self.bucket_name(bucket))
            self._kvs[bucket] = kv
        return kv

    def _lost(self, bucket: str) -> TransientError:
        self._kvs.pop(bucket, None)
        self._lost_buckets.add(bucket)
        name = self.bucket_name(bucket)
        return TransientError(f"bucket {name} not found: run `cortex init` (documents are rebuilt when it is back)")

    async def _load(self, projection: AnyProjection, agent: str) -> _Slot:
        key = (projection.bucket, agent)
        slot = self._cache.get(key)
        if slot is not None:
            self._cache.move_to_end(key)
            return slot
        slot = await self._read(projection, await self._kv(projection.bucket), agent)
        self._cache[key] = slot
        self._evict()
        return slot

    async def _read(self, projection: AnyProjection, kv: KeyValue, agent: str) -> _Slot:
        """The stored document. One that cannot be read (garbage, the wrong shape, times no
        worker writes) is deleted and ``DocumentCorrupt`` raised: the loop derives it again
        from the agent's events (see ``shared.repair``)."""
        try:
            return await self._read_stored(projection, kv, agent)
        except Exception as exc:
            reason = unreadable_reason(exc)
            if reason is None:
                raise
            raise await self._discard(projection, kv, agent, reason) from exc

    async def _read_stored(self, projection: AnyProjection, kv: KeyValue, agent: str) -> _Slot:
        decoder = self._decoders[projection.bucket]
        if projection.bucket not in self._split:
            raw, revision = await kv_read(kv, agent)
            return _Slot(decode_document([raw], decoder) if raw is not None else None, revision)
        values, revision = await parts.read_latest(kv, agent)
        stored = len(values) - 1 if values else 0
        while (await kv_read(kv, parts.part_key(agent, stored + 1)))[0] is not None:
            stored += 1  # leftovers of an interrupted write: deleted at the next one
        return _Slot(decode_document(values, decoder) if values else None, revision, stored)

    async def _discard(self, projection: AnyProjection, kv: KeyValue, agent: str, reason: str) -> DocumentCorrupt:
        bucket = self.bucket_name(projection.bucket)
        log.error("document_unreadable", extra={"worker": self.worker, "bucket": bucket, "agent": agent,
                                                "error": reason, "action": "deleted; rebuilding from the stream"})
        metrics.DOCUMENTS_REBUILT.labels(self.worker, projection.bucket).inc()
        await discard_document(kv, agent)
        self._cache.pop((projection.bucket, agent), None)
        self._dirty.discard((projection.bucket, agent))
        return DocumentCorrupt(bucket, agent, reason)

    def _evict(self) -> None:
        while len(self._cache) > self._cache_size:
            for key in self._cache:
                if key not in self._dirty:
                    del self._cache[key]
                    break
            else:
                return

    async def apply(self, env: Envelope) -> bool:
        """Apply ``env`` to every projection that takes it; True when any document changed
        (or, for a deferred projection, will change when its events are prepared)."""
        if self.cut_every and (self._dirty or self._deferred) and boundary(env.seq, self.cut_every) > self._last_seen:
            await self._commit(boundary=True)  # a boundary cut: every pending document, before the first event past it
        # the event applied last: a batch is in stream order, and the next one may start lower (after
        # another agent's turn, shared.lanes) only with every document written at the commit between
        self._last_seen = env.seq
        trigger = self.cut_on_triggers and is_trigger(env)
        if trigger:
            await self._cut(env.agent)
        changed = deferred = False
        late = late_answer(env.event)
        for projection in self._projections:
            if projection.deferred:  # a late answer too: its preparations are where it does its I/O
                taken = await self._defer(projection, env)
                deferred = deferred or taken is not None
                changed = bool(taken) or changed
                continue
            if not (projection.accepts(env) if late is None else late.purpose in projection.answers):
                continue
            # a cached document is taken without a coroutine (the common case: ``_load`` reads the rest)
            key = (projection.bucket, env.agent)
            slot = self._cache.get(key)
            if slot is None:
                slot = await self._load(projection, env.agent)
            else:
                self._cache.move_to_end(key)
            if not _holds(slot, env):  # else applied before (redelivery or replay)
                if late is not None:
                    inputs: Any = _Late(late)
                elif id(projection) in self._from_events:
                    inputs = None  # an ``EventProjection``'s ``prepare``: nothing to wait for
                else:
                    inputs = await projection.prepare(env, slot.doc)
                changed = self._changed(projection, slot, env, inputs) or changed
        if trigger and (changed or deferred):
            await self._cut(env.agent)  # and the document made for the trigger (read as of S + 1)
        return changed

    async def _defer(self, projection: AnyProjection, env: Envelope) -> bool | None:
        """Queue ``env`` for a deferred projection that accepts it: True when its document
        will change, False when it holds the event already, None when not taken."""
        if not projection.accepts(env):
            return None
        slot = await self._load(projection, env.agent)
        self._deferred.append((projection, env))
        return not _holds(slot, env)

    async def apply_prepared(self, projection: AnyProjection, env: Envelope, inputs: Any) -> bool:
        """Apply ``env``, an event ``projection`` accepts, with inputs prepared beforehand
        instead of by ``prepare``: for a handler that prepares several events of a batch at
        once (the boot worker reads the sources of a batch's changes together, at commit).
        True when the document changed; it is written at the next ``commit``."""
        slot = await self._load(projection, env.agent)
        return self._changed(projection, slot, env, inputs)

    def _changed(self, projection: AnyProjection, slot: _Slot, env: Envelope, inputs: Any) -> bool:
        slot.doc, changed = step(projection, slot.doc, env, inputs, self.producer)  # ``_apply_to_slot``, inline
        if not changed:
            return False
        self._dirty.add((projection.bucket, env.agent))
        slot.pending.append((env, inputs))
        return True

    def _apply_to_slot(self, projection: AnyProjection, slot: _Slot, env: Envelope, inputs: Any) -> bool:
        slot.doc, changed = step(projection, slot.doc, env, inputs, self.producer)
        return changed

    async def _cut(self, agent: str) -> None:
        """Write the agent's pending changes now, so the state just before a trigger exists
        as its own revision for composed documents to read (see shared.asof) — and, right
        after it, the state the trigger made: a document made *for* the trigger (the channel
        summaries, ``Source.as_of`` "made_for_trigger") is read as of S + 1, and a message
        after the trigger in the same batch would otherwise be written over it at commit."""
        await self._settle(agent)
        keys = [k for k in sorted(self._dirty) if k[1] == agent]
        for key in keys:
            await self._write(key)

    async def _settle(self, agent: str | None = None) -> None:
        """Prepare the deferred events (``agent``'s; None: every agent's) together and
        compose them in stream order. They leave the queue once composed: a failure leaves
        them for the retry."""
        for projection in self._projections:
            envs = [env for p, env in self._deferred if p is projection and agent in (None, env.agent)]
            if not envs:
                continue
            slots = {env.agent: await self._load(projection, env.agent) for env in envs}
            events = [Deferred(env, slots[env.agent].doc, _holds(slots[env.agent], env)) for env in envs]
            inputs = await projection.prepare_deferred(events)
            for event, made in zip(events, inputs, strict=True):
                if not event.applied:
                    self._changed(projection, slots[event.env.agent], event.env, made)
            self._deferred = [(p, env) for p, env in self._deferred
                              if not (p is projection and agent in (None, env.agent))]

    def follow_backlog(self, waiting: Callable[[], int]) -> None:
        self._waiting = waiting

    async def commit(self) -> None:
        """Write every changed document once; raises TransientError when the store fails,
        and ``UnwritableDocuments`` (after writing all the others) for documents that can
        never be written: the loop dead-letters the events that made them."""
        await self._commit(boundary=False)

    async def _commit(self, boundary: bool) -> None:
        await self._settle()
        more = boundary or self._waiting() > 0  # asked after the preparations: what arrived meanwhile
        for projection in self._projections:
            await projection.on_commit(more)
        keys = sorted(self._dirty)
        results = await asyncio.gather(*(self._write(k) for k in keys), return_exceptions=True)
        failed = [(k, r) for k, r in zip(keys, results, strict=True) if isinstance(r, BaseException)]
        rebuild = next((r for _, r in failed if isinstance(r, RebuildRequired)), None)
        if rebuild is not None:
            raise rebuild
        for key, exc in failed:
            if is_unwritable(exc):
                self._give_up(key, exc)
        retry = [r for _, r in failed if not is_unwritable(r)]
        if retry:
            raise TransientError(f"{len(retry)} document write(s) failed: {retry[0]!r}") from retry[0]
        if self._unwritable:
            failures, self._unwritable = self._unwritable, {}
            raise UnwritableDocuments(failures)

    def _give_up(self, key: tuple[str, str], exc: BaseException) -> None:
        """A document that can never be written: its events become dead letters, and the
        agent's next event starts again from the stored document."""
        bucket, agent = key
        slot = self._cache.pop(key)
        self._dirty.discard(key)
        reason = f"document {self.bucket_name(bucket)}/{agent} cannot be written: {type(exc).__name__}: {exc}"
        log.error("document_unwritable", extra={"worker": self.worker, "bucket": self.bucket_name(bucket),
                                                "agent": agent, "error": reason, "events": len(slot.pending)})
        for env, _ in slot.pending:
            self._unwritable[env.seq] = reason

    async def _write(self, key: tuple[str, str]) -> None:
        bucket, agent = key
        projection = next(p for p in self._projections if p.bucket == bucket)
        slot = self._cache[key]
        kv = await self._kv(bucket)
        for _ in range(50):
            try:
                await self._store(projection, slot, kv, agent)
                slot.pending.clear()
                self._dirty.discard(key)
                return
            except nats.js.errors.NoStreamResponseError as exc:
                # the bucket was deleted, or the server is restarting: look it up again next time
                self._kvs.pop(bucket, None)
                raise TransientError(f"bucket {self.bucket_name(bucket)} not answering ({exc!r}); "
                                     "if it was deleted, run `cortex init`") from exc
            except nats.js.errors.KeyWrongLastSequenceError:
                metrics.KV_CONFLICTS.labels(self.worker).inc()
                if not await self._rebase(projection, slot, kv, agent):
                    slot.pending.clear()  # the stored document already holds every event
                    self._dirty.discard(key)
                    return
        raise TransientError(f"{bucket}/{agent}: too many write conflicts")

    async def _store(self, projection: AnyProjection, slot: _Slot, kv: KeyValue, agent: str) -> None:
        """Write the slot's document, or delete it when an event ended it (``resets``)."""
        bucket = projection.bucket
        values = self._values(bucket, slot.doc) if slot.doc is not None else None
        if slot.doc is not None and values is None:
            # it does not fit one value: derive it again, fitting event by event
            if not await self._refit(projection, slot, kv, agent):
                return
            values = self._values(bucket, slot.doc) if slot.doc is not None else None
            if slot.doc is not None and values is None:
                raise DocumentTooLarge(f"{self.bucket_name(bucket)}/{agent} does not fit")
        if values is None:
            await self._delete(bucket, kv, agent, slot)
            return
        await self._put(kv, agent, slot, values)
        metrics.KV_WRITES.labels(self.worker).inc()

    async def _delete(self, bucket: str, kv: KeyValue, agent: str, slot: _Slot) -> None:
        """A delete marker over the head (compare-and-set on its revision), then the part
        keys; nothing when no document was stored."""
        if not slot.revision:
            return
        slot.revision = await kv_delete(self._js, self.bucket_name(bucket), agent, slot.revision)
        if slot.parts:
            await parts.delete_parts(kv, agent, 0, slot.parts)
            slot.parts = 0

    def _values(self, bucket: str, doc: Any) -> list[bytes] | None:
        """The document as the values a write puts (one, or the head and its parts), or
        None when it does not fit: a write that cannot succeed is never attempted."""
        max_bytes = self._split.get(bucket)
        if max_bytes is None:
            data = self._encoder.encode(doc)
            return [data] if len(data) <= self._budget[bucket] else None
        try:
            if parts.cap(doc, max_bytes // 2)[1]:
                return None  # what every part repeats takes more than half a value
            return parts.encode_parts(doc, max_bytes)
        except DocumentTooLarge:
            return None

    async def _put(self, kv: KeyValue, agent: str, slot: _Slot, values: list[bytes]) -> None:
        """Write the slot's document: one value, or parts then the head (compare-and-set
        on the head's revision) then the deletion of part keys no longer used."""
        if len(values) == 1 and not slot.parts:
            slot.revision = await kv_cas(kv, agent, values[0], slot.revision)
            return
        await parts.put_parts(kv, agent, values)
        slot.parts = max(slot.parts, len(values) - 1)
        slot.revision = await kv_cas(kv, agent, values[0], slot.revision)
        await parts.delete_parts(kv, agent, len(values) - 1, slot.parts)
        slot.parts = len(values) - 1

    async def _refit(self, projection: AnyProjection, slot: _Slot, kv: KeyValue, agent: str) -> bool:
        """The slot's document outgrew one value: apply this batch's events again to the
        stored document one at a time, fitting after each (``_fitted``), as a batch of one
        event each would have — so which items are dropped, or which event cannot be
        applied at all, does not depend on how the stream was batched. True when there is
        something to write."""
        stored = await self._read(projection, kv, agent)
        slot.doc, slot.revision, slot.parts = stored.doc, stored.revision, max(slot.parts, stored.parts)
        kept = []
        for env, inputs in slot.pending:
            before = slot.doc
            if not self._apply_to_slot(projection, slot, env, inputs):
                continue
            if slot.doc is None:  # ended (``resets``): nothing to fit
                kept.append((env, inputs))
                continue
            try:
                slot.doc = self._fitted(projection.bucket, agent, slot.doc)
            except DocumentTooLarge as exc:
                slot.doc = before
                reason = f"document {self.bucket_name(projection.bucket)}/{agent} cannot be written: {exc}"
                log.error("document_unwritable", extra={"worker": self.worker, "seq": env.seq, "error": reason})
                self._unwritable[env.seq] = reason
                continue
            kept.append((env, inputs))
        slot.pending = kept
        return bool(kept)

    def _fitted(self, bucket: str, agent: str, doc: Any) -> Any:
        """The document with its oldest ``CAP_LISTS`` items dropped until it fits one value
        (``parts.cap``; counted and logged). Field limits at decode and the cores' caps keep
        documents far below; this is the last line. Raises ``DocumentTooLarge``."""
        max_bytes = self._split.get(bucket)
        fitted, dropped = parts.cap(doc, max_bytes // 2 if max_bytes is not None else self._budget[bucket])
        if max_bytes is not None:
            parts.encode_parts(fitted, max_bytes)  # raises when one item cannot fit a part
        if dropped:
            metrics.DOCUMENTS_CAPPED.labels(self.worker, bucket).inc()
            log.warning("document_capped", extra={"worker": self.worker, "bucket": self.bucket_name(bucket),
                                                  "agent": agent, "dropped": dropped})
        return fitted

    async def _rebase(self, projection: AnyProjection, slot: _Slot, kv: KeyValue, agent: str) -> bool:
        """Reload the stored document and re-apply this batch's events on top of it.

        True when any event still had to be applied (the document must be written).
        """
        stored = await self._read(projection, kv, agent)
        if stored.doc is None and stored.revision == 0 and slot.revision > 0:
            # not deleted (that leaves a marker with a revision): the bucket itself was recreated
            raise RebuildRequired(self.bucket_name(projection.bucket))
        slot.doc, slot.revision, slot.parts = stored.doc, stored.revision, max(slot.parts, stored.parts)
        applied = [self._apply_to_slot(projection, slot, env, inputs) for env, inputs in slot.pending]
        return any(applied)

    def reset(self) -> None:
        """Forget uncommitted changes and cached documents (after a failure or lease loss)."""
        self._cache.clear()
        self._dirty.clear()
        self._unwritable.clear()
        self._deferred.clear()

    async def aclose(self) -> None:
        """Close every projection (what each opened: a store, an LLM client)."""
        for projection in self._projections:
            await projection.aclose()

    async def current(self, bucket: str, agent: str) -> Any:
        """The agent's document as this handler has it now (loaded into the cache if needed),
        including changes not yet committed."""
        projection = next(p for p in self._projections if p.bucket == bucket)
        return (await self._load(projection, agent)).doc

    def adopt(self, bucket: str, agent: str, doc: Any, revision: int) -> None:
        """A document written outside the batch with compare-and-set (the boot worker's
        completions and early briefings), stored at ``revision``: the cache
        takes it when it held an older revision and no uncommitted change (what it held is
        not what is stored any more). Otherwise nothing changes here: the next write
        conflicts and rebases onto the stored document, as after any other writer."""
        key = (bucket, agent)
        slot = self._cache.get(key)
        if slot is not None and key not in self._dirty and slot.revision < revision:
            slot.doc, slot.revision = doc, revision

    def cached(self, bucket: str, agent: str) -> Any:
        slot = self._cache.get((bucket, agent))
        return slot.doc if slot is not None else None
