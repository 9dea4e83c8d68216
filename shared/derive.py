"""A source document as of a stream sequence, derived from the events when its bucket's
history no longer reaches that far.

A composed reader (the channel summaries, a snapshot, a narrative, a briefing) reads each
source as it was just before its trigger (``shared.asof``): the newest revision below the
trigger. A source writes a revision at every commit that changed the agent's document, so
under paced load (batches of a few events) its ``DOC_HISTORY`` revisions span only a few
dozen of the agent's events; a reader further behind than that — restarted after a broker
restart, catching up, an eval publishing whole conversations at once — found only later
revisions. It used to read the latest one instead, and its document differed from a
replay's until the agent's next trigger.

A document derived from the events alone (an ``EventProjection``: threads, decisions,
commitments) needs no history at all: it is the agent's events before the trigger,
applied in stream order by the same projection, exactly as its worker applied them —
decoded with the same limits, bad input and second copies passed over as the consume loop
passes them over (dead letters, ``shared.duplicates``), ignored channels ignored, each
event through ``shared.projection.step``. So the reader derives it, and the read is exact
whatever the lag — as long as the stream still holds every event the worker applied: once
retention or a purge moved its start (forgets aside: every event below was a forgotten
agent's, ``shared.forget.start_forgotten``), what is left no longer makes what was stored,
and the read is refused (its reader falls back, counted). The events are read with direct
gets (one per event, a fallback's cost).

A composed document whose sources derive (the channel summaries, the snapshot, the
narrative: a ``SourcedProjection``) is derived the same way, each source it reads at an
event read as of that event through the reader (derived in turn when past its history).
A worker that may ask a model derives only documents its producer made without one
(``producers``: ``shared.runtime.derivation``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NamedTuple

from nats.js.client import JetStreamContext
from prometheus_client import Counter

from shared.codec import Envelope, Rejection, decode_event, event_limits
from shared.config import Settings
from shared.duplicates import DuplicateWindow
from shared.errors import InvalidEvent
from shared.feedback import late_answer
from shared.names import (
    EVENTS_STREAM,
    OPENCLAW_FAMILY,
    agent_filter,
    session_agent_filter,
    shadow_bucket,
    stored_subject,
)
from shared.natsio import direct_range
from shared.projection import EventProjection, SourcedProjection, late_inputs, step

log = logging.getLogger(__name__)

DERIVED = Counter(
    "cortex_asof_derived_total",
    "Composed reads whose source's history no longer reached the trigger, derived from the stream instead "
    "(exact: the source's projection over the agent's events before the trigger)", ["bucket"])

_GET_TIMEOUT_S = 5.0

# the projections of the workers whose documents derive from the events alone, by physical bucket
Derivable = Mapping[str, EventProjection[Any]]
Accept = Callable[[Envelope], bool]
# whether every event below the stream's first sequence (given) was a forgotten agent's
StartForgotten = Callable[[int], Awaitable[bool]]
# a document as of a sequence, exact or not (``shared.asof.DocReader.as_of``): (bucket, agent, type, before)
ReadAsOf = Callable[[str, str, type[Any], int], Awaitable[tuple[Any, bool]]]


class _Inexact(Exception):
    """A source a derived document reads at an event could not be read exactly as of it."""


BASES = 512  # documents kept to derive the next one from (per bucket and agent, the least recent dropped)


class _Base(NamedTuple):
    removed: int  # messages the stream no longer held when it was derived: a base older than a removal is stale
    before_seq: int  # the document holds every event before this sequence
    doc: Any


class _Stream(NamedTuple):
    removed: int  # messages the stream no longer holds (a forget's purge, retention)
    complete: bool  # it holds every event but forgotten agents': its start moved by forgets alone, if at all


# events decoded or applied between two turns of the event loop: a derivation of thousands (a source
# far past its history) held the loop, and every briefing in flight, for up to 1.2 s in boot under
# load (issue 39, ``loop_stalled``); each turn costs a loop iteration, ~10 µs
YIELD_EVERY = 50


# events a request of a derivation reads (a batched direct get, nats-server 2.11+): a change
# document's sources read at the last cut past their history derived each from a few dozen to
# thousands of the agent's events, one direct get each — boot's most frequent request (issue 39,
# eighteenth round: 1.4 an event at 300 msg/s)
READ_BATCH = 256


class Derivation:
    """Derives event-derived documents as of a sequence; one per process (``shared.inputs``)."""

    def __init__(self, js: JetStreamContext, settings: Settings, projections: Callable[[], Derivable],
                 accept: Accept | None = None, start_forgotten: StartForgotten | None = None,
                 producers: Mapping[str, str] | None = None) -> None:
        self._js = js
        # the buckets whose documents derive from the events only when this producer made them
        # (a worker that may ask a model: ``shared.runtime.derivation``)
        self._producers = dict(producers or {})
        self._prefix = settings.prefix
        self._limits = event_limits(settings)
        self._span = settings.openclaw.dedup_window
        self._make = projections  # made on first use: most processes never need them
        self._projections: Derivable | None = None
        self._accept = accept or (lambda env: True)
        self._start_forgotten = start_forgotten or _none_forgotten
        self._shadow = settings.mode == "shadow"
        self._bases: OrderedDict[tuple[str, str], _Base] = OrderedDict()  # the last derived, per (bucket, agent)

    def _derived(self) -> Derivable:
        if self._projections is None:
            self._projections = self._make()
        return self._projections

    async def warm(self) -> None:
        """The projections made now, on a thread: made on first use, they compile every
        deriving worker's patterns — seconds of CPU (2.2 s in boot under load, issue 39) that
        held the event loop, and with it every briefing in flight, the first time a source fell
        past its history. A derivation asked meanwhile makes them itself, as before."""
        if self._projections is None:
            made = await asyncio.to_thread(self._make)
            if self._projections is None:
                self._projections = made

    def derivable(self, bucket: str) -> bool:
        """Whether ``bucket``'s (physical name) documents derive from the events alone."""
        return bucket in self._derived()

    async def as_of(self, bucket: str, agent: str, before_seq: int, producer: str,
                    read: ReadAsOf | None = None) -> tuple[Any, bool]:
        """``agent``'s document in ``bucket`` (physical name) with every event before
        ``before_seq`` applied, or None when none made one, and True; ``producer`` is stamped
        on it, as its worker stamps its own (the stored document's). ``(None, False)`` when it
        cannot be derived: the stream's start was moved by retention or a purge, and the
        events it dropped made the stored documents too.

        From the last one derived for the agent at or before ``before_seq`` (a trigger's
        reads come in stream order: one session's events each), unless events were removed
        from the stream since (a forget, retention): then from the agent's first event.

        A ``SourcedProjection`` reads its sources as of the events that need them through
        ``read``; one that cannot be read exactly makes the derivation inexact too."""
        projection = self._derived()[bucket]
        if self._producers.get(bucket, producer) != producer:
            log.info("asof_not_derivable", extra={"bucket": bucket, "agent": agent, "before_seq": before_seq,
                                                  "reason": f"made by {producer or 'nothing readable'}, not by "
                                                            f"{self._producers[bucket]} (a model, or other settings)"})
            return None, False
        removed, complete = await self._stream()
        if not complete:
            log.info("asof_not_derivable", extra={"bucket": bucket, "agent": agent, "before_seq": before_seq,
                                                  "reason": "the stream's start was moved by retention or a purge"})
            return None, False
        base = self._bases.get((bucket, agent))
        if base is None or base.removed != removed or base.before_seq > before_seq:
            base = _Base(removed, 1, None)
        doc = base.doc
        window = DuplicateWindow(self._span)
        try:
            for i, env in enumerate(await self._events(agent, base.before_seq, before_seq, window)):
                if i % YIELD_EVERY == YIELD_EVERY - 1:
                    await asyncio.sleep(0)  # a long derivation holds the event loop no longer than this many
                if self._takes(projection, env):
                    inputs = await self._inputs(projection, doc, env, read)
                    doc = self._applied(projection, doc, env, inputs, producer)
        except _Inexact as exc:
            log.info("asof_not_derivable", extra={"bucket": bucket, "agent": agent, "before_seq": before_seq,
                                                  "reason": str(exc)})
            return None, False
        self._bases[(bucket, agent)] = _Base(removed, before_seq, doc)
        self._bases.move_to_end((bucket, agent))
        while len(self._bases) > BASES:
            self._bases.popitem(last=False)
        DERIVED.labels(bucket).inc()
        log.info("asof_derived", extra={"bucket": bucket, "agent": agent, "before_seq": before_seq,
                                        "from_seq": base.before_seq})
        return doc, True

    async def _stream(self) -> _Stream:
        """How many messages the stream no longer holds, and whether those below its start
        were all forgotten agents' (asked only when its start moved)."""
        state = (await self._js.stream_info(EVENTS_STREAM)).state
        first = int(state.first_seq or 0)
        complete = first <= 1 or await self._start_forgotten(first)
        return _Stream(int(state.last_seq or 0) - int(state.messages or 0), complete)

    def _takes(self, projection: EventProjection[Any], env: Envelope) -> bool:
        """What the source's handler applies: its projection's events (an invalid one is a dead
        letter there), a late answer only to a projection that asked for it."""
        late = late_answer(env.event)
        if late is not None:
            return late.purpose in projection.answers
        try:
            return projection.accepts(env)
        except InvalidEvent:
            return False

    async def _inputs(self, projection: EventProjection[Any], doc: Any, env: Envelope, read: ReadAsOf | None) -> Any:
        """What ``step`` is given: a late answer (``enrich`` takes it, as in the worker), the
        documents a sourced projection reads at ``env`` (each as of it), else None."""
        late = late_inputs(env)
        if late is not None or not isinstance(projection, SourcedProjection):
            return late
        docs = {}
        for source in projection.sources_for(env, doc):
            bucket = shadow_bucket(source.bucket) if self._shadow else source.bucket
            if read is None:
                raise _Inexact(f"{bucket} is read at {env.seq} and no reader was given")
            got, exact = await read(bucket, env.agent, source.doc_type, source.before(env.seq, env.family))
            if not exact:
                raise _Inexact(f"{bucket} as of {env.seq} is not exact")
            docs[source.field] = got
        return docs

    @staticmethod
    def _applied(projection: EventProjection[Any], doc: Any, env: Envelope, inputs: Any, producer: str) -> Any:
        try:
            return step(projection, doc, env, inputs, producer)[0]
        except Exception as exc:  # its worker dead-letters an event its pure core cannot apply, and goes on
            log.warning("asof_derive_skipped", extra={"seq": env.seq, "error": f"{type(exc).__name__}: {exc}"[:300]})
            return doc

    async def _events(self, agent: str, from_seq: int, before_seq: int, window: DuplicateWindow) -> list[Envelope]:
        """The agent's events from ``from_seq`` to before ``before_seq`` that its workers apply,
        in stream order: its own subjects' and those the OpenClaw store filed under its session
        token; bad input and second copies of store events passed over (the copies the window
        holds from before ``from_seq`` too), ignored channels too."""
        session_agent = session_agent_filter(self._prefix)
        stored: list[tuple[int, str, bytes]] = []
        for subject in (agent_filter(self._prefix, agent), session_agent):
            stored += await self._stored(subject, from_seq, before_seq)
        # before them, the window's span of the agent's OpenClaw store events: all it holds
        for subject in (stored_subject(self._prefix, OPENCLAW_FAMILY, agent, "*"), session_agent):
            stored += await self._stored(subject, max(1, from_seq - window.span), from_seq)
        out = []
        for i, (seq, subject, data) in enumerate(sorted(stored)):
            if i % YIELD_EVERY == YIELD_EVERY - 1:
                await asyncio.sleep(0)
            decoded = decode_event(self._prefix, subject, seq, data, self._limits)
            if isinstance(decoded, Rejection) or decoded.agent != agent:
                continue
            if decoded.duplicate_key is not None and window.seen(decoded.duplicate_key, seq):
                continue
            if seq >= from_seq and self._accept(decoded):
                out.append(decoded)
        return out

    async def _stored(self, subject: str, from_seq: int, before_seq: int) -> list[tuple[int, str, bytes]]:
        """Every stored message on ``subject`` from ``from_seq`` to before ``before_seq``:
        (sequence, subject, data) — ``READ_BATCH`` to a request (a batched direct get), not a
        request each: a derivation reads tens to thousands of events."""
        found = await direct_range(self._js, EVENTS_STREAM, subject, from_seq, before_seq, _GET_TIMEOUT_S, READ_BATCH)
        return [(seq, (msg.headers or {})["Nats-Subject"], msg.data) for seq, msg in found]


async def _none_forgotten(first_seq: int) -> bool:
    """Without a way to tell, a moved start may have dropped any agent's events."""
    return False
