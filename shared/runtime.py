"""The worker host: connect, hold leases, run consume loops and services, shut down cleanly.

Shutdown (SIGTERM/SIGINT): stop fetching → each loop finishes or gives back its batch
within the drain limit → services stop → the connection drains.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import logging
import os
import signal
import socket
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, replace
from typing import Any, Final, Literal

import msgspec
import nats.js.errors
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from shared.asof import DOC_HISTORY
from shared.backoff import backoff_delay
from shared.briefing import BriefingSection
from shared.codec import Envelope, event_limits
from shared.config import Settings, without_llm
from shared.connection import ConnectError, ConnectionLost, connect
from shared.consume import ConsumeLoop, Handler, LoopConfig
from shared.derive import Derivation
from shared.errors import ConsumerLost, LeaseLost, RebuildRequired, WorkerCannotRun, is_transient
from shared.fingerprint import patterns_digest
from shared.footprint import Source, buckets_of, workers_of
from shared.forget import start_forgotten
from shared.health import Health, HealthRegistry, serve
from shared.inputs import Inputs
from shared.kv import checkpoint_value, kv_read
from shared.lease import Lease, holdable_ttl
from shared.names import BUCKET_CHECKPOINTS, EVENTS_STREAM, KINDS, consumer_name, shadow_bucket
from shared.projection import EventProjection, trigger_subjects
from shared.provision import ConsumerSpec, LayoutError, ensure_bucket, ensure_consumer, layout_problem
from shared.tasks import cancel_and_wait

log = logging.getLogger(__name__)

# a consumer or service task cancelled at shutdown gets this long for its clean-up (closing
# its handler's store, releasing its lease) before it is cancelled again (shared.tasks)
_CLEANUP_S = 5.0


def _unfenced() -> None:
    """No lease to check (a context made outside a host or a replay)."""


@dataclass
class WorkerContext:
    nc: Client
    js: JetStreamContext
    settings: Settings
    worker: str
    consumer: str
    producer: str
    health: Health
    shadow: bool = False
    extras: dict[str, Any] = field(default_factory=dict)
    partition: int | None = None  # k of CORTEX_PARTITIONS; None when the worker is not partitioned
    # every worker of the deployment (the registry's, handed down by whoever made the host): what
    # a worker that looks at the others (the status API) sees, without importing the registry
    catalog: Mapping[str, WorkerSpec] = field(default_factory=dict)
    version: str = "0+unknown"  # the package's (what its API services announce)
    # raises ``LeaseLost`` unless this process holds the consumer's lease (``Lease.check``, the fence
    # the consume loop passes before each commit): a writer beside the loop (boot's early path)
    # passes it before each write. Unfenced in a context made outside a host.
    fence: Callable[[], None] = _unfenced
    # the process's composed-input reader (the host's, shared by all its workers); one of its
    # own when none is given (a context made outside a host)
    shared_inputs: InitVar[Inputs | None] = None
    inputs: Inputs = field(init=False)

    def __post_init__(self, shared_inputs: Inputs | None) -> None:
        self._owns_inputs = shared_inputs is None
        self.inputs = shared_inputs if shared_inputs is not None else \
            Inputs(self.js, self.settings, derivation(self.js, self.settings, self.catalog.values(), self.version))

    async def aclose(self) -> None:
        """Stop what this context made for itself: its own inputs reader (a host's shared one
        stops with the host)."""
        if self._owns_inputs:
            await self.inputs.stop()

    def bucket(self, name: str) -> str:
        """The physical bucket for a document bucket (shadow mode writes cortex_shadow_*)."""
        return shadow_bucket(name) if self.shadow else name


@dataclass(frozen=True)
class WorkerSpec:
    """One worker: how it runs, and its whole NATS footprint — what ``deploy/gen_manifests.py``
    makes its permissions and manifest from (tests/ops run every worker under exactly those)."""

    name: str
    families: tuple[str, ...]  # the event families its consumer reads ([] and no build: it consumes nothing)
    # the FeedbackEvent kinds it applies, when it reads the feedback family: the server delivers
    # only those (None: every kind), so a kind it ignores never wakes it
    feedback_kinds: tuple[str, ...] | None = None
    build: Callable[[WorkerContext], Awaitable[Handler]] | None = None
    # its documents derive from the events alone: its projections, pure (``EventProjection``). A
    # composed reader whose as-of read goes past the bucket's history derives them (``shared.derive``)
    derive: Callable[[Settings], Sequence[EventProjection[Any]]] | None = None
    serve: Callable[[WorkerContext, asyncio.Event], Awaitable[None]] | None = None
    config_sections: tuple[str, ...] = ()  # the built-in sections of ``Settings`` it reads
    # its own settings section, ``CORTEX_<NAME>_<KNOB>`` (``Settings.section(name, config)``):
    # no edit of shared/config.py; checked when a host starts, part of ``producer``'s hash
    config: type[msgspec.Struct] | None = None
    buckets: tuple[str, ...] = ()  # the document buckets this worker owns (replay resets them)
    max_batch: int | None = None  # a cap on the fetch batch for workers with slow applies (embedding)
    # a throughput worker's own linger (ms), in place of ``CORTEX_RUNTIME_THROUGHPUT_LINGER_MS``'s
    # while that is on (0 there turns every linger off): a worker whose per-batch work is large
    # (recall's embedding call, engine update, summaries and document writes) shares it longer
    linger_ms: int | None = None
    # composed inputs: other workers' documents read as of a trigger, after waiting on their
    # watermarks (history reads of the bucket; the owner's consumer info and checkpoints)
    sources: tuple[Source, ...] = ()
    reads: tuple[str, ...] = ()  # other workers' buckets read as they are now (direct gets)
    serves: tuple[str, ...] = ()  # cortex.api.<service>.<agent> endpoints (shared.service), by ``serve``
    feedback: tuple[str, ...] = ()  # FeedbackEvent kinds it publishes
    llm: bool = False  # goes through cortex_llm_cache, may use ANTHROPIC_API_KEY (shared.llm)
    qdrant: bool = False  # talks to Qdrant (CORTEX_QDRANT_URL): runs the image with the recall stack
    inspects_consumers: bool = False  # reads every consuming worker's consumer state and checkpoint
    watches_sources: bool = False  # reads CORTEX_EVENTS' stream info: its sources (shared.sources)
    # the packages (or modules) holding the regex and keyword tables its cores match with:
    # their digest is part of ``producer`` (shared.fingerprint)
    patterns: tuple[str, ...] = ()
    # the sections of the agent's briefing made from its documents (``shared.briefing``)
    briefing: tuple[BriefingSection[Any], ...] = ()
    # its sources include every worker's briefing section (the boot worker): the registry adds
    # them (``with_briefings``), so a new worker's section needs no edit here
    reads_briefings: bool = False
    # the sections it reads (worker → section), by worker name: the registry's (``with_briefings``)
    sections: tuple[tuple[str, BriefingSection[Any]], ...] = ()
    # how urgent its work is (``shared.priority``): "latency" — a session start or a turn waits for
    # its documents or answers (threads, decisions, boot, api); "throughput" — work that catches up,
    # which a briefing reads as of its last cut while it is behind. A process running only
    # throughput workers lowers its own priority (``CORTEX_RUNTIME_THROUGHPUT_NICENESS``)
    priority: Literal["latency", "throughput"] = "latency"
    # True with these settings: it derives nothing from the events (extraction with no model
    # configured), so its consumer reads only its feedback kinds (``consumer_for``) — the server
    # delivers it none of the events it would ignore, and an idle consumer is a caught-up source
    idle: Callable[[Settings], bool] | None = None

    def __post_init__(self) -> None:
        if bool(self.serves) != (self.serve is not None):
            raise ValueError(f"worker {self.name}: `serves` names the services `serve` serves (both or neither)")
        if self.build is None and (self.families or self.buckets):
            raise ValueError(f"worker {self.name}: families and buckets need a consumer (`build`)")
        if self.feedback_kinds is not None and ("feedback" not in self.families
                                                or not set(self.feedback_kinds) <= KINDS["feedback"]):
            raise ValueError(f"worker {self.name}: `feedback_kinds` names kinds of FeedbackEvent, of the feedback "
                             "family it reads")
        if self.idle is not None and ("feedback" not in self.families or not self.feedback_kinds):
            raise ValueError(f"worker {self.name}: an idle consumer reads its feedback kinds alone "
                             "(`idle` needs the feedback family and `feedback_kinds`)")
        for section in self.briefing:
            if section.bucket not in self.buckets:
                raise ValueError(f"worker {self.name}: its briefing section reads {section.bucket}, "
                                 "which is not one of its buckets")

    def consumer(self, name: str, partition: int | None = None, partitions: int = 1) -> ConsumerSpec:
        """Its durable consumer ``name`` (of partition ``partition`` of ``partitions``)."""
        return ConsumerSpec(name=name, families=self.families, partition=partition, partitions=partitions,
                            feedback_kinds=self.feedback_kinds,
                            # the buckets it writes and those it reads as of a trigger: a worker provisioned
                            # alone (an eval's recall) still finds its sources' buckets, empty
                            buckets=tuple(dict.fromkeys([*self.buckets, *self.reads_as_of])))

    def consumer_for(self, settings: Settings, name: str, partition: int | None = None) -> ConsumerSpec:
        """The consumer its process runs with these settings: ``consumer``, narrowed to the feedback
        kinds it reads while it is ``idle`` (``cortex init`` makes every consumer whole: a process of
        another configuration — the one with the model's key — must find all its events there)."""
        spec = self.consumer(name, partition, settings.partitions)
        if self.idle is not None and self.idle(settings):
            return msgspec.structs.replace(spec, families=("feedback",))
        return spec

    @property
    def consumes(self) -> bool:
        """A durable pull consumer on CORTEX_EVENTS, a lease and a checkpoint."""
        return self.build is not None

    @property
    def reads_as_of(self) -> tuple[str, ...]:
        """The buckets its sources live in."""
        return buckets_of(self.sources)

    @property
    def waits_on(self) -> tuple[str, ...]:
        """The workers whose watermarks it follows: its sources' owners."""
        return workers_of(self.sources)


def briefings(specs: Iterable[WorkerSpec]) -> list[tuple[str, BriefingSection[Any]]]:
    """Every worker's briefing sections (worker → section), by worker name."""
    return sorted(((s.name, b) for s in specs for b in s.briefing), key=lambda wb: wb[0])


def with_briefings(spec: WorkerSpec, specs: Iterable[WorkerSpec]) -> WorkerSpec:
    """``spec`` with the sources of every briefing section among ``specs`` when it reads
    briefings (its permissions, its waits and its reads follow from them)."""
    if not spec.reads_briefings:
        return spec
    sections = tuple(briefings(specs))
    sources = {s.field: s for s in (*spec.sources, *(b.source(w) for w, b in sections))}
    return replace(spec, sources=tuple(sources.values()), sections=sections)


def briefing_knobs(sections: Iterable[tuple[str, BriefingSection[Any]]], settings: Settings) -> list[msgspec.Struct]:
    """The own knobs of ``sections`` (worker → section; ``BriefingSection.knobs``), as the
    environment sets them: a bad value is a ``SettingsError`` naming the variable."""
    return [settings.briefing_knobs(b.knobs) for _, b in sections if b.knobs is not None]


# Knobs that change how long a worker waits, never what it derives: not part of the hash.
OPERATIONAL_KNOBS = frozenset({"wait_ms"})


def producer_id(spec: WorkerSpec, settings: Settings, version: str) -> str:
    """``<worker>@<version>+<config-hash>``: which code, which settings and which patterns
    made a document (the hash covers the worker's pattern tables, ``spec.patterns``: a
    shadow worker trying new patterns is another producer)."""
    sections: dict[str, Any] = {
        name: {k: v for k, v in msgspec.structs.asdict(getattr(settings, name)).items() if k not in OPERATIONAL_KNOBS}
        for name in spec.config_sections
    }
    sections["language"] = settings.language
    sections["timezone"] = settings.timezone
    if spec.config is not None:
        own = settings.section(spec.name, spec.config)
        sections["own"] = {k: v for k, v in msgspec.structs.asdict(own).items() if k not in OPERATIONAL_KNOBS}
    if spec.sections:  # the briefing sections it makes (boot's): their knobs change its documents
        sections["briefing"] = [msgspec.structs.asdict(k) for k in briefing_knobs(spec.sections, settings)]
    if spec.patterns:
        sections["patterns"] = patterns_digest(spec.patterns)
    if spec.llm and settings.model_provider is not None:
        # a model read the events too: its documents are not the events' alone (``derivation``).
        # Without one the id is what it always was.
        sections["model"] = settings.model_provider
    digest = hashlib.sha256(msgspec.json.encode(sections)).hexdigest()[:8]
    return f"{spec.name}@{version}+{digest}"


def derivation(js: JetStreamContext, settings: Settings, specs: Iterable[WorkerSpec],
               version: str) -> Derivation:
    """What a process's composed reads derive from the events when a source's history no longer
    reaches a trigger: the projections of every worker of ``specs`` that declares ``derive``, by
    the buckets they are read from (shadow mode's own), each taking what its consume loop takes.

    A worker that may ask a model (``WorkerSpec.llm``: knowledge, traces) derives from the
    events alone only without one, and whether its documents were made with one is a fact of
    the process that made them (a briefing's process may hold no key): so its documents are
    derived only when their producer is the one the worker has without a model
    (``producer_id``: its version and settings as here, no model)."""
    shadow = settings.mode == "shadow"
    derivable = [s for s in specs if s.derive is not None]
    alone = without_llm(settings)

    def physical(bucket: str) -> str:
        return shadow_bucket(bucket) if shadow else bucket

    def projections() -> dict[str, EventProjection[Any]]:
        return {physical(p.bucket): p for spec in derivable if spec.derive is not None for p in spec.derive(settings)}

    producers = {physical(bucket): producer_id(spec, alone, version)
                 for spec in derivable if spec.llm for bucket in spec.buckets}
    return Derivation(js, settings, projections, channel_filter(settings, shadow),
                      lambda first_seq: start_forgotten(js, first_seq), producers)


def channel_filter(settings: Settings, shadow: bool) -> Callable[[Envelope], bool]:
    """Channel modes: `off` channels are ignored everywhere; `shadow` ones only by shadow workers."""
    if not settings.channel_modes:
        return lambda env: True

    def accept(env: Envelope) -> bool:
        mode = settings.channel_mode(env.channel)
        return mode == "live" or (mode == "shadow" and shadow)

    return accept


def loop_config(settings: Settings, spec: WorkerSpec | None = None) -> LoopConfig:
    rt = settings.runtime
    linger_ms = rt.throughput_linger_ms if spec is not None and spec.priority == "throughput" else 0
    if linger_ms and spec is not None and spec.linger_ms is not None:
        linger_ms = spec.linger_ms
    linger_s = linger_ms / 1000
    batch = min(rt.batch_size, spec.max_batch) if spec is not None and spec.max_batch else rt.batch_size
    return LoopConfig(
        prefix=settings.prefix,
        batch_size=batch,
        fetch_timeout_s=rt.fetch_timeout_ms / 1000,
        ack_wait_s=float(rt.ack_wait_s),
        max_attempts=rt.max_attempts,
        retry_base_s=rt.retry_base_ms / 1000,
        retry_max_s=rt.retry_max_ms / 1000,
        drain_timeout_s=rt.drain_timeout_s,
        limits=event_limits(settings),
        duplicate_window=settings.openclaw.dedup_window,
        read_ahead=rt.read_ahead,
        read_ahead_bytes=rt.read_ahead_mib << 20,
        linger_s=linger_s,
        # a trigger ends a linger (the session start's sources must not sleep on its last events)
        wake_on=trigger_subjects(settings.prefix, settings.openclaw.prefix) if linger_s else (),
    )


def owned_buckets(spec: WorkerSpec, shadow: bool) -> tuple[str, ...]:
    """The document buckets a worker writes, by their physical names (shadow mode's own)."""
    return tuple(shadow_bucket(b) if shadow else b for b in spec.buckets)


def make_loop(ctx: WorkerContext, spec: WorkerSpec, handler: Handler, fence: Callable[[], None]) -> ConsumeLoop:
    """The consume loop of one consumer: ``ctx.consumer``, partition ``ctx.partition``."""
    settings = ctx.settings
    config = msgspec.structs.replace(loop_config(settings, spec), buckets=owned_buckets(spec, ctx.shadow),
                                     partition=ctx.partition, partitions=settings.partitions)
    return ConsumeLoop(ctx.js, worker=spec.name, consumer=ctx.consumer, handler=handler,
                       config=config, health=ctx.health,
                       accept=channel_filter(settings, ctx.shadow), fence=fence, label=ctx.consumer)


_CONNECTION = "nats"  # the task watching the host's connection (not a worker: a host of it alone is done)


# the cyclic collector's thresholds in a host that owns its process (``freeze_start_up``): a young
# collection every 10 000 net allocations of tracked objects (the default 700), the older ones as by default
COLLECTOR_THRESHOLDS: Final = (10_000, 10, 10)


def freeze_start_up() -> None:
    """Leave what start-up made (modules, compiled patterns, the handler's tables: ~40-55 k
    objects in a regex worker) out of the cyclic collector's collections, which scanned them
    all again at every full one: over the bench backlog's drain the collections cost the threads
    / decisions worker 0.48-0.53 / 0.57-0.66 s of thread CPU (3-5 % of its CPU), 0.36-0.48 /
    0.50-0.61 s frozen (gc callbacks, docs/BENCHMARKS.md's issue 39 section, tenth round: the
    young collections are most of it, and stay). Refcounting still frees
    them; only a cycle among them that is garbage (now or later) is kept.
    Called once a handler is built (again after a rebuild: what was made since is frozen too), by a
    host that owns its process only: a test process starting many hosts would keep every cycle
    made before each for good. No collection first (one per worker built at start).

    It also makes the young collections rarer (``COLLECTOR_THRESHOLDS``): a regex worker's core
    allocates ~10 tracked containers an event that refcounting frees (a message's lists, tuples,
    the document's new structs), and at the default 700 the collector ran a young collection every
    ~70 events and a middle one every ~700 — over the bench backlog's drain 0.34 / 0.30 s of the
    threads / decisions worker's CPU (~7 / ~6 µs an event; gc callbacks over each worker's life, start-up's
    collections included), 0.10 / 0.13 s at 10 000
    (eighteenth round, docs/BENCHMARKS.md). What it changes is when a cycle that is garbage is
    freed (after up to 10 000 allocations, not 700), never what is derived."""
    gc.freeze()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)


class WorkerHost:
    def __init__(self, settings: Settings, specs: list[WorkerSpec], version: str,
                 extras: dict[str, Any] | None = None, catalog: Iterable[WorkerSpec] | None = None) -> None:
        self.extras = extras or {}  # shared collaborators handed to every worker (e.g. an LLM client)
        # the host is its process's (``install_signal_handlers``: `cortex up`, `cortex worker`): it
        # also freezes start-up's objects (``freeze_start_up``), which a test process must not keep
        self.owns_process = False
        self.settings = settings
        self.specs = specs
        # every worker of the deployment (``cortex worker`` passes the registry's); by default the ones run here
        self.catalog = {s.name: s for s in (specs if catalog is None else catalog)}
        self.version = version
        self.registry = HealthRegistry()
        self.stop = asyncio.Event()
        self.instance = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.http_port: int | None = None
        self.inputs: Inputs | None = None  # the composed-input reader every worker here shares (run)
        for spec in specs:  # a bad value of a worker's own settings stops it here, naming the variable
            if spec.config is not None:
                settings.section(spec.name, spec.config)
            briefing_knobs([*spec.sections, *((spec.name, b) for b in spec.briefing)], settings)

    async def _ensure_consumer(self, js: JetStreamContext, consumer: str, spec: WorkerSpec, health: Health,
                               partition: int | None) -> None:
        cspec = spec.consumer_for(self.settings, consumer, partition)
        failures = 0
        while not self.stop.is_set():
            try:
                problem = await layout_problem(js, self.settings.prefix)
                if problem is None:
                    await ensure_consumer(js, cspec, self.settings)
                    return
                health.set_ready(False, problem)  # never consume a stream of another layout
            except LayoutError as exc:
                health.set_ready(False, str(exc))
            except nats.js.errors.NotFoundError:
                health.set_ready(False, "stream CORTEX_EVENTS not found: run `cortex init`")
            except Exception as exc:
                if not is_transient(exc):
                    raise
                health.set_ready(False, f"cannot create consumer: {exc!r}")
            failures += 1
            if failures == 1:
                log.warning("consumer_unavailable", extra={"consumer": consumer, "reason": health.reason})
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.stop.wait(), timeout=min(5.0, 0.5 * failures))

    async def run_consumer(self, nc: Client, spec: WorkerSpec, partition: int | None = None) -> None:
        """One consumer of the worker (partition k of N, or the only one), its lease and loop."""
        shadow = self.settings.mode == "shadow"
        consumer = consumer_name(spec.name, partition, shadow)
        health = self.registry.worker(consumer)
        js = nc.jetstream()
        await self._ensure_consumer(js, consumer, spec, health, partition)
        if shadow:  # shadow documents live in their own buckets, made on first use
            for bucket in spec.buckets:
                await ensure_bucket(js, shadow_bucket(bucket), history=DOC_HISTORY, replicas=self.settings.replicas)
        lease = Lease(js, consumer, self.instance, await holdable_ttl(js, self.settings.runtime.lease_ttl_s))
        ctx = WorkerContext(nc=nc, js=js, settings=self.settings, worker=spec.name, consumer=consumer,
                            producer=producer_id(spec, self.settings, self.version), health=health, shadow=shadow,
                            extras=self.extras, partition=partition, catalog=self.catalog,
                            version=self.version, fence=lease.check, shared_inputs=self.inputs)
        try:
            while not self.stop.is_set():
                health.set_ready(True, "standby: waiting for the lease")
                if not await lease.acquire(self.stop):
                    break
                await self._run_active(ctx, spec, lease)
        finally:  # also when the worker cannot run: a standby elsewhere need not wait out the TTL
            await lease.release()

    async def _build(self, ctx: WorkerContext, spec: WorkerSpec, lease: Lease) -> Handler | None:
        """Build the handler; a store that is unreachable at start-up is retried, not fatal."""
        assert spec.build is not None
        lost = asyncio.Event()
        keeper = asyncio.create_task(lease.keep_alive(lost.set), name=f"{ctx.consumer}-lease-build")
        failures = 0
        try:
            while not (self.stop.is_set() or lost.is_set()):
                try:
                    return await spec.build(ctx)
                except Exception as exc:
                    if not is_transient(exc):
                        raise
                    failures += 1
                    ctx.health.set_ready(False, f"starting: {exc}")
                    if failures == 1 or failures % 10 == 0:
                        log.warning("worker_start_failed", extra={"consumer": ctx.consumer, "error": str(exc)[:300]})
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.stop.wait(), timeout=backoff_delay(failures, 0.5, 30.0))
            return None
        finally:
            await cancel_and_wait(keeper)

    async def _run_active(self, ctx: WorkerContext, spec: WorkerSpec, lease: Lease) -> None:
        while True:
            try:
                again = await self._run_once(ctx, spec, lease)
            except ConsumerLost as exc:
                # created again (at the stream's start); the next loop rewinds it to the checkpoint
                log.warning("consumer_lost", extra={"consumer": ctx.consumer, "error": str(exc)})
                await self._ensure_consumer(ctx.js, ctx.consumer, spec, ctx.health, ctx.partition)
                continue
            if not again:
                return
            log.warning("rebuilding_from_sequence_1", extra={"consumer": ctx.consumer})

    async def _run_once(self, ctx: WorkerContext, spec: WorkerSpec, lease: Lease) -> bool:
        """One consume loop; True when a lost bucket asks for a fresh loop from sequence 1."""
        handler = await self._build(ctx, spec, lease)
        if handler is None:
            return False
        if self.owns_process:
            freeze_start_up()
        await self._idle_checkpoint(ctx, spec)
        loop = make_loop(ctx, spec, handler, lease.check)
        keeper = asyncio.create_task(lease.keep_alive(loop.stop), name=f"{ctx.consumer}-lease")
        stopper = asyncio.create_task(self._stop_on_signal(loop), name=f"{ctx.consumer}-stop")
        try:
            await loop.run()
            await self._idle_checkpoint(ctx, spec)  # stopped (a new configuration starts next): up to the end
        except LeaseLost:
            log.warning("lease_lost_stopping", extra={"consumer": ctx.consumer})
            handler.reset()
        except RebuildRequired:
            return not self.stop.is_set()
        finally:
            for task in (keeper, stopper):
                await cancel_and_wait(task)
            await handler.aclose()
        return False

    async def _idle_checkpoint(self, ctx: WorkerContext, spec: WorkerSpec) -> None:
        """An idle worker (``WorkerSpec.idle``: its consumer reads none of the events it would
        ignore) has applied every event stored so far — it derives nothing from them: at its start
        and when it stops, its checkpoint moves to the stream's last sequence. A model configured
        later (a restart with the key) then starts from the events after the idle process stopped,
        as when the worker consumed every event to ignore it — not from the checkpoint it had when
        it fell idle (months of windows sent to the model). Killed, it leaves its start's."""
        if spec.idle is None or not spec.idle(self.settings):
            return
        try:
            last = int((await ctx.js.stream_info(EVENTS_STREAM)).state.last_seq or 0)
            kv = await ctx.js.key_value(BUCKET_CHECKPOINTS)
            raw, _ = await kv_read(kv, ctx.consumer)
            if last > (checkpoint_value(raw) or 0):
                await kv.put(ctx.consumer, str(last).encode())
        except Exception as exc:  # the loop starts from the checkpoint it has: only a later model reads more
            if not is_transient(exc):
                raise
            log.warning("idle_checkpoint_failed", extra={"consumer": ctx.consumer, "error": repr(exc)})

    async def _stop_on_signal(self, loop: ConsumeLoop) -> None:
        await self.stop.wait()
        loop.stop()

    async def run_service(self, nc: Client, spec: WorkerSpec) -> None:
        assert spec.serve is not None
        health = self.registry.worker(f"{spec.name}-api")
        ctx = WorkerContext(nc=nc, js=nc.jetstream(), settings=self.settings, worker=spec.name,
                            consumer="", producer=producer_id(spec, self.settings, self.version), health=health,
                            shadow=self.settings.mode == "shadow",  # a shadow API answers from shadow state
                            # an API may call the LLM too (recall's re-ranker)
                            extras=self.extras, catalog=self.catalog, version=self.version,
                            shared_inputs=self.inputs)
        await spec.serve(ctx, self.stop)

    def install_signal_handlers(self) -> None:
        """Stop on SIGTERM and SIGINT: the host is its process's (``owns_process``)."""
        self.owns_process = True
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._stop_on, sig)

    def _stop_on(self, sig: signal.Signals) -> None:
        """A stop signal: said once (an operator sees the shutdown begin), then the one shutdown sequence."""
        if not self.stop.is_set():
            log.info("stopping", extra={"signal": sig.name, "workers": ",".join(s.name for s in self.specs)})
        self.stop.set()

    async def run(self, nats_url: str | None = None) -> None:
        settings = self.settings if nats_url is None else msgspec.structs.replace(self.settings, nats_url=nats_url)
        if settings.metrics_port is not None:
            server = serve(self.registry, settings.metrics_port)
            self.http_port = server.server_port
            log.info("http_listening", extra={"port": self.http_port})
        beat = asyncio.create_task(self.registry.beat(), name="beat")

        def on_state(connected: bool) -> None:
            self.registry.connected = connected

        closed = asyncio.Event()
        try:
            nc = await connect(settings, f"cortex-{'+'.join(s.name for s in self.specs)}",
                               retry_forever=True, on_state=on_state, stop=self.stop, on_closed=closed.set)
        except ConnectError:
            beat.cancel()
            if self.stop.is_set():
                return  # stopped before NATS was ever reachable: a clean exit
            raise
        self.inputs = Inputs(nc.jetstream(), settings,
                             derivation(nc.jetstream(), settings, self.catalog.values(), self.version))
        # one consume loop per consumer: every partition of the worker, or the one this process runs
        tasks = {asyncio.create_task(self.run_consumer(nc, s, k), name=consumer_name(s.name, k)): s.name
                 for s in self.specs if s.build for k in settings.own_partitions}
        tasks |= {asyncio.create_task(self.run_service(nc, s), name=f"{s.name}-api"): s.name
                  for s in self.specs if s.serve}
        tasks[asyncio.create_task(self._closed_for_good(nc, closed), name="nats-connection")] = _CONNECTION
        try:
            await self._supervise(tasks)
        finally:
            beat.cancel()
            with contextlib.suppress(Exception):
                await self.inputs.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(nc.drain(), timeout=5)
            if not nc.is_closed:
                await nc.close()

    async def _closed_for_good(self, nc: Client, closed: asyncio.Event) -> None:
        """The connection reconnects after any loss; should it ever be closed while the process
        runs (the server refused the credentials on a reconnect), the process ends with one line
        instead of going on without NATS: its orchestrator (or the person at `cortex up`) restarts it."""
        stopping = asyncio.create_task(self.stop.wait())
        closing = asyncio.create_task(closed.wait())
        try:
            await asyncio.wait([stopping, closing], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (stopping, closing):
                await cancel_and_wait(task)
        if not self.stop.is_set():
            last = nc.last_error
            raise ConnectionLost("the connection to NATS was closed and cannot come back"
                                 + (f" ({last})" if last is not None and str(last) else ""))

    async def _stop_worker(self, tasks: dict[asyncio.Task[None], str], done: asyncio.Task[None]) -> None:
        """A worker that cannot run (``WorkerCannotRun``): one error line (unless it is the
        process's last worker: then the process ends with that line), its readiness says why,
        its other tasks (partitions, its API) are cancelled; the other workers go on."""
        worker, exc = tasks.pop(done), done.exception()
        if any(name not in (worker, _CONNECTION) for name in tasks.values()):
            log.error("worker_stopped", extra={"worker": worker, "error": str(exc)})
        self.registry.worker(done.get_name()).set_ready(False, f"stopped: {exc}")
        siblings = [t for t, name in tasks.items() if name == worker]
        for task in siblings:
            task.cancel()
            tasks.pop(task)
        for task in siblings:
            with contextlib.suppress(Exception):
                await cancel_and_wait(task, again_s=_CLEANUP_S)

    async def _wait_first(self, tasks: dict[asyncio.Task[None], str]) -> list[asyncio.Task[None]]:
        """Wait until stop or a task ends; the workers that cannot run are stopped on the way
        (only when none is left does the process end with the last one's error)."""
        stop_wait = asyncio.create_task(self.stop.wait())
        try:
            while True:
                done, _ = await asyncio.wait([*tasks, stop_wait], return_when=asyncio.FIRST_COMPLETED)
                ended = [t for t in tasks if t in done]
                cannot = [t for t in ended if isinstance(t.exception(), WorkerCannotRun)]
                if not cannot or len(cannot) < len(ended) or stop_wait in done:
                    return [t for t in ended if t.exception() is not None]
                for task in cannot:
                    await self._stop_worker(tasks, task)
                if all(name == _CONNECTION for name in tasks.values()):  # no worker left
                    raise cannot[-1].exception()  # type: ignore[misc]  # checked above: a WorkerCannotRun
        finally:
            stop_wait.cancel()

    @staticmethod
    async def _cancel_all(tasks: dict[asyncio.Task[None], str]) -> None:
        """Every task cancelled and waited for, what each raised taken (not left to asyncio's
        "exception was never retrieved" at exit)."""
        for task in tasks:
            with contextlib.suppress(Exception):
                await cancel_and_wait(task, again_s=_CLEANUP_S)

    async def _supervise(self, tasks: dict[asyncio.Task[None], str]) -> None:
        """Run until stop; a crashed task stops the process (the orchestrator restarts it),
        except a worker that cannot run with its settings, which stops alone."""
        try:
            crashed = await self._wait_first(tasks)
        except asyncio.CancelledError:  # the host itself cancelled (an interrupted command): its tasks end now
            self.stop.set()
            await self._cancel_all(tasks)
            raise
        self.stop.set()
        grace = self.settings.runtime.drain_timeout_s + 5
        _, pending = await asyncio.wait(tasks, timeout=grace) if tasks else (set(), set())
        for task in pending:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(Exception):
                await cancel_and_wait(task, again_s=_CLEANUP_S)
            if not task.cancelled() and task.exception() is not None and task not in crashed:
                log.error("worker_failed_at_shutdown", extra={"task": task.get_name(),
                                                              "error": repr(task.exception())})
        if crashed:
            exc = crashed[0].exception()
            assert exc is not None
            raise exc
