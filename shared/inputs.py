"""Composed inputs: other workers' documents as of a trigger, with their lag — one reader per process.

A composed document (a snapshot, a narrative, the channel summaries, a briefing, recall's
facts) made for the event at stream sequence S reflects every event of the agent before S.
Each of its sources (``shared.footprint.Source``, declared on the ``WorkerSpec``) is waited
for until its worker has applied everything before S (``shared.watermarks``, at most
``CORTEX_BOOT_WAIT_MS``), then read as of S by the source's ``as_of`` rule (``shared.asof``).
A source still behind at the bound is read as it is then, and its consumer is named in
``Reading.lagging``: every composed worker gets its inputs and their lag the same way.

The host makes one ``Inputs`` per process (``WorkerContext.inputs``): one checkpoint watch
and one document reader, whichever composed workers and APIs the process runs. The watch
starts on first use, so a worker that composes nothing never opens it (nor needs the
permission to).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

import nats.js.errors
from nats.js.client import JetStreamContext
from prometheus_client import Counter, Histogram

from shared.asof import DocReader
from shared.codec import Envelope
from shared.config import Settings
from shared.derive import Derivation
from shared.feedback import request_time
from shared.footprint import Source
from shared.names import EVENTS_STREAM, agent_consumer, shadow_bucket
from shared.projection import D, Projection
from shared.watermarks import Drained, Proof, WatermarkTracker

if TYPE_CHECKING:
    from shared.runtime import WorkerContext

log = logging.getLogger(__name__)

COMPOSED_LAGGING = Counter(
    "cortex_composed_lagging_total",
    "Composed readings (a snapshot, narrative, channel summary, briefing or recall's facts, as of a trigger) "
    "with a source still behind the trigger at the wait bound (CORTEX_BOOT_WAIT_MS): read as it was then",
    ["worker", "source"])
COMPOSED_WAIT = Histogram(
    "cortex_composed_wait_seconds",
    "How long a composed reading (a briefing, snapshot, narrative, channel summary or recall's facts, as of a "
    "trigger) waited for one source to apply the events before the trigger (to the bound, CORTEX_BOOT_WAIT_MS, "
    "when it lagged)", ["worker", "source"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0))


class Reading(NamedTuple):
    """The sources read for a trigger (field → document, None when absent) and the source
    consumers still behind it at the bound."""

    env: Envelope
    docs: dict[str, Any]
    lagging: list[str]


class Inputs:
    """Reads composed workers' sources; one per process, shared by all its workers."""

    def __init__(self, js: JetStreamContext, settings: Settings, derivation: Derivation | None = None) -> None:
        self._js = js
        self._settings = settings
        self._shadow = settings.mode == "shadow"
        # sources past their buckets' history are derived from the events when they can be (shared.derive)
        self.docs = DocReader(js, derivation)
        self._tracker: WatermarkTracker | None = None
        self._lock = asyncio.Lock()
        # the consumers' state as requests last saw it (``now``), apart from the consume path's
        self._request_cache: dict[str, Drained] = {}
        # source consumers ``patiently`` stopped waiting for, at the checkpoint they had then
        self._given_up: dict[str, int] = {}

    @property
    def bound_s(self) -> float:
        """How long a trigger waits for its sources (``CORTEX_BOOT_WAIT_MS``)."""
        return self._settings.boot.wait_ms / 1000

    async def tracker(self) -> WatermarkTracker:
        """The process's watermark tracker, started on first use."""
        async with self._lock:
            if self._tracker is None:
                self._tracker = WatermarkTracker(self._js)  # follows the consumers it is asked about
            return self._tracker

    async def stop(self) -> None:
        async with self._lock:
            if self._tracker is not None:
                await self._tracker.stop()
                self._tracker = None

    def consumer(self, worker: str, agent: str) -> str:
        """The consumer of ``worker`` that applies ``agent``'s events: with partitions, the
        source's consumer of the agent's partition (``<worker>-<k>``), whose watermark is the
        one that says whether the agent's events before a sequence are applied."""
        return agent_consumer(worker, agent, self._settings.partitions, self._shadow)

    def consumers(self, sources: Iterable[Source], agent: str) -> dict[str, str]:
        """The source consumers that apply ``agent``'s events → their worker."""
        return {self.consumer(s.worker, agent): s.worker for s in sources}

    def bucket(self, name: str) -> str:
        """The physical bucket (shadow mode reads cortex_shadow_*)."""
        return shadow_bucket(name) if self._shadow else name

    async def at_trigger(self, worker: str, sources: Sequence[Source], env: Envelope,
                         before: int | None = None, until: float | None = None) -> Reading:
        """``sources`` as of the trigger ``env`` (each by its ``as_of`` rule, or all just
        before ``before`` when given: boot's change documents read the last stream cut), for
        ``worker``'s document: a source still behind at the bound — or at ``until`` (a
        ``time.monotonic()``, the caller's budget: ``WatermarkTracker.wait``) — is counted
        (``cortex_composed_lagging_total{worker,source}``) and named in ``Reading.lagging``.

        Each source is read as soon as *it* has caught up, not when the slowest one has: a
        source that caught up keeps writing while another is waited for, and the as-of read
        must find the wanted revision within the bucket's short history."""
        if not sources:
            return Reading(env, {}, [])
        tracker = await self.tracker()
        waited: dict[str, float] = {}
        read_s: dict[str, float] = {}  # the as-of read after the wait

        async def read(source: Source) -> tuple[Any, list[str]]:
            started = time.monotonic()
            seq = before if before is not None else source.before(env.seq, env.family)
            consumer = self.consumer(source.worker, env.agent)
            lagging = await tracker.wait({consumer: env.seq}, self.bound_s, {consumer: self._final(source, env, seq)},
                                         until)
            waited[source.field] = time.monotonic() - started
            COMPOSED_WAIT.labels(worker, source.worker).observe(waited[source.field])
            doc, _ = await self.docs.as_of(self.bucket(source.bucket), env.agent, source.doc_type, seq)
            read_s[source.field] = time.monotonic() - started - waited[source.field]
            return doc, lagging

        found = await asyncio.gather(*(read(source) for source in sources))
        if log.isEnabledFor(logging.DEBUG):  # what each trigger waited for, source by source
            waits = {w: round(secs * 1000, 1) for w, secs in sorted(waited.items())}
            reads = {w: round(secs * 1000, 1) for w, secs in sorted(read_s.items())}
            log.debug("sources_waited", extra={"worker": worker, "agent": env.agent, "seq": env.seq,
                                               "family": env.family, "waited_ms": waits, "read_ms": reads})
        docs = {source.field: doc for source, (doc, _) in zip(sources, found, strict=True)}
        lagging = sorted({c for _, lag in found for c in lag})
        if lagging:
            behind = sorted({s.worker for s, (_, lag) in zip(sources, found, strict=True) if lag})
            for source in behind:
                COMPOSED_LAGGING.labels(worker, source).inc()
            log.info("sources_lagging", extra={"worker": worker, "agent": env.agent, "seq": env.seq,
                                               "lagging": lagging})
        return Reading(env, docs, lagging)

    def _final(self, source: Source, env: Envelope, seq: int) -> Proof:
        """The proof that the read of ``source`` before ``seq`` for ``env``'s agent is final
        already, whatever the source's checkpoint says (``DocReader.final_before``)."""
        bucket = self.bucket(source.bucket)

        async def final() -> bool:
            return await self.docs.final_before(bucket, env.agent, seq)

        return final

    async def patiently(self, sources: Sequence[Source], env: Envelope, unconsumed_s: float | None = None) -> None:
        """Until every source consumer of ``env``'s agent has applied the events before it (or the
        agent's document of the source says the read is final: ``Inputs._final``), with no
        bound — for a composed document whose every trigger must read its sources complete, as a
        replay does (the channel summaries: a summary made with a source behind stayed wrong until
        the agent's next trigger). It stops waiting for a source that nobody consumes (no pull
        request waiting and nothing in flight, for ``UNCONSUMED_S``) or that stopped moving (for
        ``STUCK_S``), and does not wait again for it until its checkpoint moves: the bounded read
        (``at_trigger``) then reports it lagging, as before. ``unconsumed_s``: how long nobody
        is at a source before it is given up (None: ``UNCONSUMED_S``) — shorter for a reader that
        often runs without that source's worker (recall without knowledge)."""
        if not sources:
            return
        tracker = await self.tracker()
        pending = {self.consumer(s.worker, env.agent): env.seq for s in sources}
        tracker.follow(pending)
        pending = {c: seq for c, seq in pending.items() if self._given_up.get(c) != tracker.checkpoint(c)}
        proofs = {self.consumer(s.worker, env.agent): self._final(s, env, s.before(env.seq, env.family))
                  for s in sources}
        await _Patience(tracker, self._js, pending, self._given_up, proofs, unconsumed_s).wait(env.agent)

    async def now(self, sources: Sequence[Source], agent: str) -> tuple[dict[str, Any], list[str], datetime]:
        """``sources`` as they are now (for requests), the consumers behind the stream's end
        (without waiting), and the latest event time among the documents."""
        tracker = await self.tracker()
        lagging = await tracker.lagging_now({c: 2**62 for c in self.consumers(sources, agent)},
                                            cache=self._request_cache)
        results = await asyncio.gather(*(self.docs.latest(self.bucket(s.bucket), agent, s.doc_type)
                                         for s in sources))
        docs = {s.field: doc for s, doc in zip(sources, results, strict=True)}
        return docs, lagging, request_time(d.integrity.last_event_ts for d in docs.values() if d is not None)


UNCONSUMED_S = 30.0  # a source consumer nobody fetches from for this long is not waited for (not running)
STUCK_S = 60.0  # nor one whose checkpoint has not moved for this long while short of the trigger
_POLL_S = 0.1  # the server's view is asked this often while a trigger waits
_PROOF_POLL_S = 0.02  # and the sources' documents this often (``Inputs._final``)


class _SourceState(NamedTuple):
    applied: int  # every event up to this stream sequence is applied: its ack floor (acked once committed)
    done: bool  # nothing pending, nothing in flight
    consumed: bool  # a pull request is waiting or a batch is in flight: a worker is at it


class _Patience:
    """One ``Inputs.patiently`` wait: the consumers still short of their sequences, each
    followed until it gets there, is found not consumed or stuck (then given up). The
    server's view of each consumer decides (its ack floor), not the checkpoint watch: a
    watch that died with a NATS restart would have held every trigger for ``STUCK_S``."""

    def __init__(self, tracker: WatermarkTracker, js: JetStreamContext, pending: dict[str, int],
                 given_up: dict[str, int], proofs: Mapping[str, Proof] | None = None,
                 unconsumed_s: float | None = None) -> None:
        self._tracker = tracker
        self._unconsumed_s = unconsumed_s
        self._js = js
        self._proofs = proofs or {}
        self._pending = dict(pending)
        self._given_up = given_up
        now = time.monotonic()
        self._moved: dict[str, tuple[int, float]] = {c: (-1, now) for c in pending}  # ack floor seen, and when
        self._consumed = dict.fromkeys(pending, now)  # when a worker was last seen at it

    async def wait(self, agent: str) -> None:
        idle_said: set[str] = set()  # the source consumers nobody was at, logged once a wait
        while self._pending:
            changed = self._tracker.changed()  # taken before looking: a change after that sets it
            for consumer, seq in list(self._pending.items()):
                if await self._arrived(consumer, seq):
                    del self._pending[consumer]
                    continue
                state = await self._state(consumer)
                if state is None or state.applied >= seq or state.done:
                    del self._pending[consumer]
                    continue
                if not state.consumed and consumer not in idle_said:  # its worker is down: the trigger is held
                    idle_said.add(consumer)
                    log.info("waiting_for_source", extra={"consumer": consumer, "agent": agent, "seq": seq,
                                                          "gives_up_after_s": self._unconsumed()})
                if self._hopeless(consumer, state):
                    self._given_up[consumer] = self._tracker.checkpoint(consumer)
                    del self._pending[consumer]
            if self._pending:
                poll = _PROOF_POLL_S if any(c in self._proofs for c in self._pending) else _POLL_S
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(changed.wait(), timeout=poll)

    async def _arrived(self, consumer: str, seq: int) -> bool:
        """Its checkpoint says it got there, or its document does (no request to the server)."""
        proof = self._proofs.get(consumer)
        return self._tracker.checkpoint(consumer) >= seq or (proof is not None and await proof())

    async def _state(self, consumer: str) -> _SourceState | None:
        """None: no such consumer (its worker never ran here) — nothing to wait for."""
        try:
            info = await self._js.consumer_info(EVENTS_STREAM, consumer)
        except nats.js.errors.NotFoundError:
            return None
        applied = int(info.ack_floor.stream_seq or 0) if info.ack_floor else 0
        return _SourceState(applied, not info.num_pending and not info.num_ack_pending,
                            bool(info.num_waiting or info.num_ack_pending))

    def _unconsumed(self) -> float:
        return UNCONSUMED_S if self._unconsumed_s is None else self._unconsumed_s

    def _hopeless(self, consumer: str, state: _SourceState) -> bool:
        now = time.monotonic()
        if state.applied != self._moved[consumer][0]:
            self._moved[consumer] = (state.applied, now)
        if state.consumed:
            self._consumed[consumer] = now
        return now - self._moved[consumer][1] >= STUCK_S or now - self._consumed[consumer] >= self._unconsumed()


class ComposedProjection(Projection[D, Reading]):
    """A document composed from other workers' documents: ``prepare`` reads the sources
    ``sources_for`` names (by default all of ``sources``) as of the trigger, with their
    lag; ``compose`` makes the document from the ``Reading``. The sources are the ones the
    worker's ``WorkerSpec.sources`` declares (they make its NATS permissions)."""

    def __init__(self, ctx: WorkerContext, sources: Sequence[Source]) -> None:
        self.inputs = ctx.inputs
        self.worker = ctx.worker
        self.sources = tuple(sources)
        self._context = ctx

    async def aclose(self) -> None:
        """Stop what the worker's context made for itself (its own inputs reader)."""
        await self._context.aclose()

    # True: every trigger waits for its sources without a bound while they are being applied
    # (``Inputs.patiently``), so the document never depends on how far behind they were
    patient = False

    def sources_for(self, env: Envelope, doc: D | None) -> Sequence[Source]:
        """The sources this trigger reads (none: nothing is waited for or read)."""
        return self.sources

    async def prepare(self, env: Envelope, doc: D | None) -> Reading:
        sources = self.sources_for(env, doc)
        if self.patient:
            await self.inputs.patiently(sources, env)
        return await self.inputs.at_trigger(self.worker, sources, env)
