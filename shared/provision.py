"""``cortex init``: streams, KV buckets and durable consumers. Idempotent, and safe to run
from several pods at once (a lost creation race becomes an update)."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Iterable, Sequence

import msgspec
import nats.js.errors
from nats.js import api
from nats.js.client import JetStreamContext

from shared.asof import DOC_HISTORY
from shared.config import Settings, parse_duration_s
from shared.errors import TransientError, WorkerCannotRun, api_codes
from shared.kv import checkpoint_value, kv_read
from shared.lease import bucket_max_age_s
from shared.names import (
    BUCKET_BOOT,
    BUCKET_CHECKPOINTS,
    BUCKET_FORGETS,
    BUCKET_LEASES,
    DLQ_STREAM,
    EVENTS_STREAM,
    LAYOUT,
    LAYOUT_METADATA,
    NOTES_STREAM,
    OPENCLAW_FAMILY,
    OPENCLAW_SESSION_AGENT,
    RUNTIME_BUCKETS,
    SLOTS,
    consumer_filter_subjects,
    dlq_subject,
    event_subjects,
    is_store_subject,
    notes_subject,
    notes_transform,
    openclaw_transform,
    partition_slots,
    published_subject,
    shadow_bucket,
    slot_transform,
)
from shared.natsio import connection, server_info

log = logging.getLogger(__name__)

DUPLICATE_WINDOW_S = 120.0
DLQ_UNLIMITED_WINDOW_S = 30 * 86400.0
MIGRATING_METADATA = "cortex_migrating"  # on CORTEX_EVENTS while ``cortex init --migrate`` copies into it
_IN_USE = 10058  # stream name already in use with a different configuration
_NOT_CLUSTERED = 10074  # replicas > 1 not supported in non-clustered mode
_NO_PEERS = 10005  # no suitable peers for placement (more replicas than servers)
_OVER_STREAM = 10126  # consumer config replica count exceeds parent stream


class ReplicasError(WorkerCannotRun):
    """``CORTEX_REPLICAS`` asks for more copies than the NATS servers can hold; one line (a
    worker that meets it stops with it, as `cortex init` does)."""


class ReplicasUnavailable(TransientError):
    """The cluster has enough servers for ``CORTEX_REPLICAS`` copies, but not enough of them
    can take one now (a server still joining, down, or out of JetStream storage): one line;
    a worker retries, `cortex init` fails and can be run again (the init Job retries)."""


def _refusal(exc: nats.js.errors.APIError, replicas: int, what: str,
             servers: int | None) -> ReplicasError | ReplicasUnavailable | None:
    """The server's refusal of ``replicas`` copies of ``what`` as one line, or None (another error)."""
    reason = exc.description or str(exc)
    code = api_codes(exc)[1]
    if code == _NOT_CLUSTERED:
        return ReplicasError(f"CORTEX_REPLICAS={replicas}: the NATS server is not part of a cluster and holds one "
                             f"copy of {what} (the server says: {reason}); set CORTEX_REPLICAS=1, or run "
                             f"{replicas} or more clustered servers")
    if code == _NO_PEERS and servers is not None and servers >= replicas:
        return ReplicasUnavailable(f"CORTEX_REPLICAS={replicas}: the NATS cluster has {servers} servers, but fewer "
                                   f"than {replicas} can take a copy of {what} now (the server says: {reason}); a "
                                   "server is still joining, down or out of JetStream storage: try again when "
                                   "every server is up")
    if code == _NO_PEERS:
        size = f"has {servers} servers" if servers else "has fewer servers"
        return ReplicasError(f"CORTEX_REPLICAS={replicas}: the NATS cluster {size}, it cannot hold {replicas} copies "
                             f"of {what} (the server says: {reason}); set CORTEX_REPLICAS to at most the number "
                             "of servers")
    return None


def cluster_servers(js: JetStreamContext) -> int | None:
    """How many servers the connected cluster announces (its INFO ``connect_urls``), 1 for a
    server that is not clustered, None when it does not say (``no_advertise``)."""
    info = server_info(connection(js))
    if "cluster" not in info:
        return 1 if info else None
    urls = info.get("connect_urls")
    return len(set(urls)) if isinstance(urls, list) and urls else None


class ConsumerSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A durable consumer of CORTEX_EVENTS: its name, the families it reads (of feedback, the
    kinds it reads: None, every kind), and for partition k of N the k (its slots are s with
    s mod N = k; ``shared.names.consumer_filter_subjects``)."""

    name: str
    families: tuple[str, ...]
    partition: int | None = None
    partitions: int = 1
    feedback_kinds: tuple[str, ...] | None = None
    buckets: tuple[str, ...] = ()  # the document buckets its worker writes or reads (``provision`` makes them)

    def filter_subjects(self, prefix: str) -> list[str]:
        return consumer_filter_subjects(prefix, self.families, self.partition, self.partitions, self.feedback_kinds)


class LayoutError(Exception):
    """CORTEX_EVENTS holds events in another stored layout: the message says how to migrate."""


def openclaw_source(settings: Settings) -> api.StreamSource | None:
    """The OpenClaw event store as a source of CORTEX_EVENTS (contract: Sources): the server
    copies every event of its stream, from the first, payload unchanged, to
    ``<prefix>.openclaw.<agent>.<type token>`` — durably, exactly once, in the store's order."""
    if settings.openclaw.stream is None:
        return None
    src, dest = openclaw_transform(settings.prefix, settings.openclaw.prefix)
    transform = api.SubjectTransform(src=src, dest=dest)
    return api.StreamSource(name=settings.openclaw.stream, subject_transforms=[transform])


def is_openclaw_source(source: api.StreamSource, prefix: str) -> bool:
    """Is this a source ``cortex init`` wired (it lands in the openclaw family), not an operator's?"""
    return any(is_store_subject(prefix, t.dest) for t in source.subject_transforms or [])


def notes_source(prefix: str) -> api.StreamSource:
    """CORTEX_NOTES as a source of CORTEX_EVENTS: each note published to the contract's
    ``<prefix>.notes.<agent>`` copied, payload and headers unchanged, to
    ``<prefix>.notes.<agent>.section`` — durably, exactly once, in publish order."""
    src, dest = notes_transform(prefix)
    return api.StreamSource(name=NOTES_STREAM, subject_transforms=[api.SubjectTransform(src=src, dest=dest)])


def _resumed(ours: api.StreamSource, current: list[api.StreamSource] | None) -> api.StreamSource:
    """``ours``, resuming where a migration made the same source resume (shared.migrate)."""
    for source in current or []:
        if source.opt_start_seq and _sources_key([source]) == _sources_key(
                [api.StreamSource(name=ours.name, subject_transforms=ours.subject_transforms,
                                  opt_start_seq=source.opt_start_seq)]):
            ours.opt_start_seq = source.opt_start_seq
    return ours


def _sources_key(sources: list[api.StreamSource] | None) -> list[tuple[object, ...]]:
    return sorted((s.name, s.filter_subject or "", tuple((t.src, t.dest) for t in s.subject_transforms or []),
                   s.opt_start_seq or 0) for s in sources or [])


def events_stream_config(settings: Settings, current: list[api.StreamSource] | None = None) -> api.StreamConfig:
    """CORTEX_EVENTS as the settings want it; ``current``: its sources now.

    An operator's own sources are kept, and CORTEX_NOTES is always one. The OpenClaw source
    is replaced by the one the settings name; with ``CORTEX_OPENCLAW_STREAM`` unset it is
    kept as it is — a process that does not know about the store (``cortex up`` without the
    setting, a worker) must not unwire it. Removing it is an operator's edit of the stream
    (docs/integration.md)."""
    openclaw = openclaw_source(settings)
    ours = [_resumed(notes_source(settings.prefix), current),
            *([_resumed(openclaw, current)] if openclaw is not None else [])]
    kept = [s for s in current or [] if s.name != NOTES_STREAM
            and (openclaw is None or not is_openclaw_source(s, settings.prefix))]
    sources = [*kept, *ours]
    src, dest = slot_transform(settings.prefix)
    return api.StreamConfig(
        name=EVENTS_STREAM,
        subjects=event_subjects(settings.prefix),
        subject_transform=api.SubjectTransform(src=src, dest=dest),
        metadata={LAYOUT_METADATA: str(LAYOUT)},
        sources=sources,
        storage=api.StorageType.FILE,
        retention=api.RetentionPolicy.LIMITS,
        duplicate_window=DUPLICATE_WINDOW_S,
        max_age=float(parse_duration_s(settings.retention)) if settings.retention else 0.0,
        num_replicas=settings.replicas,
        allow_direct=True,
        description="Cortex events: messages, sessions, compactions, notes, feedback, tool calls, runs",
    )


def _transform_key(transform: api.SubjectTransform | None) -> tuple[str, str] | None:
    return (transform.src, transform.dest) if transform is not None else None


def stream_layout(config: api.StreamConfig, prefix: str) -> int:
    """The stored layout of CORTEX_EVENTS as configured: 2 when its subject transform is the
    slot transform, else 1 (subjects stored as published)."""
    return LAYOUT if _transform_key(config.subject_transform) == slot_transform(prefix) else 1


def migrate_steps(prefix: str, messages: int, layout: int) -> str:
    return (f"CORTEX_EVENTS holds {messages} events in stored layout {layout}; this version stores them with a "
            f"slot token ({prefix}.<family>.<slot>.<agent>.<kind>, layout {LAYOUT}). Nothing was changed. To "
            "migrate: 1. stop every worker and producer (a publish during the migration fails and must be retried); "
            "2. back the stream up (`nats stream backup CORTEX_EVENTS DIR`); 3. run `cortex init --migrate` (it copies "
            "every event into the new layout keeping its stream sequence, so checkpoints, documents and dead letters "
            f"stay valid; notes published to {prefix}.notes.<agent> go to CORTEX_NOTES from now on); 4. start the "
            "workers (docs/BENCHMARKS.md, Partitions in the server)")


async def layout_problem(js: JetStreamContext, prefix: str) -> str | None:
    """Why workers cannot consume CORTEX_EVENTS as it is (another layout with events in it,
    or a migration not finished), or None."""
    try:
        info = await js.stream_info(EVENTS_STREAM)
    except nats.js.errors.NotFoundError:
        return None
    layout = stream_layout(info.config, prefix)
    if (info.config.metadata or {}).get(MIGRATING_METADATA):
        return "CORTEX_EVENTS is being migrated to the slot layout: finish it with `cortex init --migrate`"
    if layout != LAYOUT and info.state.messages:
        return migrate_steps(prefix, info.state.messages, layout)
    return None


def notes_stream_config(settings: Settings) -> api.StreamConfig:
    """CORTEX_NOTES: notes published to the contract's ``<prefix>.notes.<agent>``, kept as long
    as events are (a restored CORTEX_EVENTS sources them again from where it had got to)."""
    return api.StreamConfig(
        name=NOTES_STREAM,
        subjects=[notes_subject(settings.prefix)],
        storage=api.StorageType.FILE,
        retention=api.RetentionPolicy.LIMITS,
        duplicate_window=DUPLICATE_WINDOW_S,
        max_age=float(parse_duration_s(settings.retention)) if settings.retention else 0.0,
        num_replicas=settings.replicas,
        description=f"Cortex notes published as {settings.prefix}.notes.<agent>, copied into {EVENTS_STREAM}",
    )


def dlq_stream_config(settings: Settings) -> api.StreamConfig:
    """The dead letters. Each is published with ``Nats-Msg-Id`` ``dlq:<worker>:<stream seq>``
    and the duplicate window is the whole retention: a replay that meets the same bad event
    again adds no second letter (with two minutes, every replay re-added a copy of each one)."""
    retention = float(parse_duration_s(settings.dlq_retention))
    return api.StreamConfig(
        name=DLQ_STREAM,
        subjects=[dlq_subject(settings.prefix, ">")],  # every worker's
        storage=api.StorageType.FILE,
        retention=api.RetentionPolicy.LIMITS,
        duplicate_window=retention or DLQ_UNLIMITED_WINDOW_S,  # kept for ever (0): a month of replays
        max_age=retention,
        num_replicas=settings.replicas,
        description="Cortex dead letters: events a worker could not apply, with the reason",
    )


async def ensure_stream(js: JetStreamContext, config: api.StreamConfig) -> str:
    """Create or update a stream; returns "created", "updated" or "unchanged".

    Its replicas are raised to ``config.num_replicas``, never lowered (a stream an operator
    raised by hand keeps its copies; a process run without ``CORTEX_REPLICAS`` — `cortex up`
    on a laptop against the cluster, a restore — must not take them away)."""
    assert config.name is not None
    try:
        info = await js.stream_info(config.name)
    except nats.js.errors.NotFoundError:
        try:
            await js.add_stream(config)
            return "created"
        except nats.js.errors.BadRequestError as exc:
            if api_codes(exc)[1] != _IN_USE:
                raise
            info = await js.stream_info(config.name)  # another pod won the race
    current = info.config
    config.num_replicas = max(config.num_replicas or 1, current.num_replicas or 1)
    wanted = (sorted(config.subjects or []), config.max_age or 0.0, config.duplicate_window,
              _sources_key(config.sources), config.num_replicas, _transform_key(config.subject_transform))
    have = (sorted(current.subjects or []), current.max_age or 0.0, current.duplicate_window,
            _sources_key(current.sources), current.num_replicas or 1, _transform_key(current.subject_transform))
    if wanted == have:
        return "unchanged"
    await js.update_stream(config)
    return "updated"


async def raise_replicas(js: JetStreamContext, stream: str, replicas: int) -> str:
    """Raise an existing stream (a KV bucket's ``KV_<bucket>``) to ``replicas`` copies in place
    (the server copies its data to the new peers); "raised", "unchanged" or "missing"."""
    try:
        info = await js.stream_info(stream)
    except nats.js.errors.NotFoundError:
        return "missing"
    if (info.config.num_replicas or 1) >= replicas:
        return "unchanged"
    info.config.num_replicas = replicas
    await js.update_stream(info.config)
    return "raised"


async def _sources(js: JetStreamContext) -> list[api.StreamSource] | None:
    try:
        return (await js.stream_info(EVENTS_STREAM)).config.sources
    except nats.js.errors.NotFoundError:
        return None


async def describe_source(js: JetStreamContext, settings: Settings) -> str:
    """One line on the OpenClaw store for ``cortex init``: found (how much it holds) or not yet."""
    name, prefix = settings.openclaw.stream, settings.openclaw.prefix
    assert name is not None
    try:
        info = await js.stream_info(name)
    except nats.js.errors.NotFoundError:
        return (f"stream {name} not found yet, the server starts copying when it exists "
                "(is CORTEX_OPENCLAW_STREAM the plugin's streamName?)")
    covered = any(s in (f"{prefix}.>", ">") or s.startswith(f"{prefix}.") for s in info.config.subjects or [])
    hint = "" if covered else f"; its subjects {info.config.subjects} do not look like {prefix}.<agent>.<type>: " \
                              "is CORTEX_OPENCLAW_PREFIX the plugin's subjectPrefix?"
    return (f"{info.state.messages} messages (sequences {info.state.first_seq}..{info.state.last_seq}), copied "
            f"from the first as {published_subject(settings.prefix, OPENCLAW_FAMILY, '<agent>', '<type>')}{hint}")


async def ensure_bucket(js: JetStreamContext, bucket: str, ttl_s: float | None = None, history: int = 1,
                        replicas: int = 1) -> str:
    """Create a bucket with ``replicas`` copies if it is missing; an existing one is left as it
    is (``raise_replicas`` raises it: `cortex init`, whose user may edit streams)."""
    try:
        await js.key_value(bucket)
        return "unchanged"
    except nats.js.errors.BucketNotFoundError:
        pass
    try:
        await js.create_key_value(bucket=bucket, history=history, direct=True, ttl=ttl_s,
                                  storage=api.StorageType.FILE, replicas=replicas)
    except nats.js.errors.BadRequestError as exc:
        if api_codes(exc)[1] != _IN_USE:
            raise
        return "unchanged"
    return "created"


def max_ack_pending(settings: Settings) -> int:
    """The consume loop's read-ahead (never less than a batch) plus a batch: the server never
    stops delivering while the loop has room to read ahead (shared.lanes)."""
    rt = settings.runtime
    return max(1000, max(rt.batch_size, rt.read_ahead) + rt.batch_size)


def consumer_config(spec: ConsumerSpec, settings: Settings) -> api.ConsumerConfig:
    return api.ConsumerConfig(
        durable_name=spec.name,
        deliver_policy=api.DeliverPolicy.ALL,
        ack_policy=api.AckPolicy.EXPLICIT,
        ack_wait=float(settings.runtime.ack_wait_s),
        max_deliver=-1,  # the worker counts attempts itself and dead-letters (see consume.py)
        max_ack_pending=max_ack_pending(settings),
        filter_subjects=spec.filter_subjects(settings.prefix),
        num_replicas=settings.replicas,
        description=f"Cortex worker consumer {spec.name}",
        # kept in the server's memory, not rewritten to a file every 10 ms (the checkpoint is the record)
        mem_storage=True if settings.runtime.consumer_state_in_memory else None,
    )


# ---------------------------------------------------------------------------- re-partitioning


def _slots_of(filters: Iterable[str]) -> frozenset[int]:
    """The slots a consumer's filter subjects read (``<prefix>.<family>.<slot>.<agent>.<kind>``;
    a wildcard slot, or no filter of that shape — the first layout's ``cortex.msg.>``: every
    slot). The four-token filters of what was stored without a slot name none, nor do those
    of the OpenClaw store's session token: every partition reads that one slot's token, its
    agents are the partitions' own ones (``consumer_filter_subjects``)."""
    slots: set[int] = set()
    for subject in filters:
        tokens = subject.split(".")
        if len(tokens) == 4 or (len(tokens) == 5 and tokens[3] == OPENCLAW_SESSION_AGENT):
            continue
        if len(tokens) != 5 or not tokens[2].isdigit():
            return ALL_SLOTS
        slots.add(int(tokens[2]))
    return frozenset(slots) or ALL_SLOTS


ALL_SLOTS: frozenset[int] = frozenset(range(SLOTS))
_PARTITION_SUFFIX = re.compile(r"-\d+$")


def spec_slots(spec: ConsumerSpec) -> frozenset[int]:
    return frozenset(partition_slots(spec.partition or 0, spec.partitions if spec.partition is not None else 1))


def _filters(config: api.ConsumerConfig) -> list[str]:
    return list(config.filter_subjects or ([config.filter_subject] if config.filter_subject else []))


async def seed_checkpoints(js: JetStreamContext, specs: Iterable[ConsumerSpec]) -> dict[str, int]:
    """Changing ``CORTEX_PARTITIONS`` (docs/operations.md, Scaling): a consumer that is
    new or whose slots change starts at the lowest checkpoint among the same worker's
    consumers that read any of its slots now — splitting a partition starts both halves at its
    checkpoint, merging starts at the lower one and the documents' per-agent watermarks skip
    what the other half applied already. When those consumers do not cover all its slots (a
    slot nobody read), it starts from the beginning. Decided from a snapshot of the consumers
    before any changes; returns the checkpoints written."""
    try:
        infos = await js.consumers_info(EVENTS_STREAM)
        kv = await js.key_value(BUCKET_CHECKPOINTS)
    except (nats.js.errors.NotFoundError, nats.js.errors.BucketNotFoundError):
        return {}
    current = {info.name: _slots_of(_filters(info.config)) for info in infos}
    seeds: dict[str, int] = {}
    for spec in specs:
        wanted = spec_slots(spec)
        if current.get(spec.name) == wanted:
            continue
        base = _PARTITION_SUFFIX.sub("", spec.name)
        readers = [name for name, slots in current.items()
                   if _PARTITION_SUFFIX.sub("", name) == base and slots & wanted]
        if not readers and spec.name not in current:
            continue  # a worker's first consumer: nothing to carry over
        covered = frozenset().union(*(current[name] for name in readers))
        values = [checkpoint_value((await kv_read(kv, name))[0]) or 0 for name in readers]
        seeds[spec.name] = min(values) if wanted <= covered and values else 0
    for name, seq in seeds.items():
        await kv.put(name, str(seq).encode())
        log.info("checkpoint_seeded", extra={"consumer": name, "seq": seq})
    return seeds


async def retire_consumers(js: JetStreamContext, specs: Iterable[ConsumerSpec]) -> list[str]:
    """Delete the consumers (and checkpoints) of the specs' workers that the layout no longer
    names (``<worker>-3`` after going from 4 partitions to 2), after ``seed_checkpoints``."""
    wanted = {spec.name for spec in specs}
    bases = {_PARTITION_SUFFIX.sub("", name) for name in wanted}
    retired = []
    for info in await js.consumers_info(EVENTS_STREAM):
        if info.name not in wanted and _PARTITION_SUFFIX.sub("", info.name) in bases:
            await js.delete_consumer(EVENTS_STREAM, info.name)
            kv = await js.key_value(BUCKET_CHECKPOINTS)
            await kv.purge(info.name)
            retired.append(info.name)
    return retired


def consumer_replicas(info: api.ConsumerInfo) -> int:
    """How many copies of a consumer's state the servers keep: its leader and peers (a
    consumer created without ``num_replicas`` got its stream's count at creation, and keeps
    it when the stream is raised later)."""
    peers = len(info.cluster.replicas or []) if info.cluster is not None and info.cluster.leader else 0
    return max(info.config.num_replicas or 1, peers + 1)


async def ensure_consumer(js: JetStreamContext, spec: ConsumerSpec, settings: Settings, *,
                          recreate: bool = False, repartition: bool = False) -> str:
    """Create or update one consumer; its replicas are raised, never lowered. ``recreate``
    (`cortex init`): a server that cannot change a consumer's replicas in place gets it
    deleted and created again at its checkpoint (``recreate_at_checkpoint``). Its slots
    change only through ``repartition`` (``cortex init``, after ``seed_checkpoints``): a
    worker started with another ``CORTEX_PARTITIONS`` than its consumer was made for gets
    ``LayoutError`` instead (its checkpoint would be wrong for the new slots); a consumer it
    creates starts from the beginning."""
    config = consumer_config(spec, settings)
    try:
        info = await js.consumer_info(EVENTS_STREAM, spec.name)
    except nats.js.errors.NotFoundError:
        await _add_consumer(js, config)
        return "created"
    have = info.config
    if not repartition and _slots_of(_filters(have)) != spec_slots(spec):
        raise LayoutError(f"consumer {spec.name} reads other slots than CORTEX_PARTITIONS={spec.partitions} gives it: "
                          "run `cortex init` with the new setting (it carries the checkpoints over)")
    replicas = consumer_replicas(info)
    config.num_replicas = max(settings.replicas, replicas)
    # where it starts cannot change; a consumer recreated at its checkpoint keeps its start
    config.deliver_policy, config.opt_start_seq = have.deliver_policy, have.opt_start_seq
    if (sorted(have.filter_subjects or ([have.filter_subject] if have.filter_subject else []))
            == sorted(config.filter_subjects or []) and have.ack_wait == config.ack_wait
            and have.max_ack_pending == config.max_ack_pending and config.num_replicas == replicas):
        return "unchanged"
    try:
        await _add_consumer(js, config)  # same durable: an update
    except nats.js.errors.BadRequestError:  # a refused config; never a transient error
        if not recreate or config.num_replicas == replicas:
            raise
        log.warning("consumer_recreated", extra={"consumer": spec.name, "replicas": config.num_replicas})
        await recreate_at_checkpoint(js, config)
        return "recreated"
    return "updated"


async def _add_consumer(js: JetStreamContext, config: api.ConsumerConfig) -> None:
    """Create or update; more replicas than the servers hold, or than CORTEX_EVENTS has, is
    ``ReplicasError``."""
    try:
        await js.add_consumer(EVENTS_STREAM, config)
    except nats.js.errors.APIError as exc:
        if api_codes(exc)[1] == _OVER_STREAM:  # a worker's setting above the stream's: init raises the stream first
            raise ReplicasError(f"CORTEX_REPLICAS={config.num_replicas}: {EVENTS_STREAM} has fewer copies, and "
                                f"consumer {config.durable_name} cannot have more than its stream (the server "
                                f"says: {exc.description or exc}); run `cortex init` with the same setting "
                                "(it raises the stream first)") from None
        refused = _refusal(exc, config.num_replicas or 1, f"consumer {config.durable_name}", cluster_servers(js))
        if refused is None:
            raise
        raise refused from None


async def await_placed(js: JetStreamContext, stream: str, within: float = 30.0) -> None:
    """Until every copy of ``stream`` its configuration asks for has a server. A stream raised
    in place gets its new peers a moment (~0.2 s) after the update returns; a consumer raised
    before then is refused ("consumer config replica count exceeds parent stream")."""
    deadline = time.monotonic() + within
    while True:
        info = await js.stream_info(stream)
        want = info.config.num_replicas or 1
        cluster = info.cluster
        have = 1 + len(cluster.replicas or []) if cluster is not None and cluster.leader else 0
        if want <= 1 or have >= want:
            return
        if time.monotonic() >= deadline:
            raise ReplicasUnavailable(f"{stream}: {have} of its {want} copies placed after {within:.0f} s (a server "
                                      "is down or out of JetStream storage); try again when every server is up")
        await asyncio.sleep(0.1)


async def recreate_at_checkpoint(js: JetStreamContext, config: api.ConsumerConfig) -> int:
    """Delete a durable consumer and create it again with ``config``, delivering from the
    first event its worker has not made durable: after the lower of its ack floor and its
    checkpoint (the worker skips what its checkpoint covers, so a redelivery changes
    nothing; nothing after it is skipped). Returns the sequence it starts at."""
    assert config.durable_name is not None
    info = await js.consumer_info(EVENTS_STREAM, config.durable_name)
    floor = int(info.ack_floor.stream_seq or 0) if info.ack_floor is not None else 0
    try:
        raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), config.durable_name)
    except nats.js.errors.BucketNotFoundError:
        raw = None
    checkpoint = int(raw) if raw and raw.isdigit() else 0
    start = min(floor, checkpoint) + 1
    await js.delete_consumer(EVENTS_STREAM, config.durable_name)
    config.deliver_policy = api.DeliverPolicy.BY_START_SEQUENCE
    config.opt_start_seq = start
    await js.add_consumer(EVENTS_STREAM, config)
    return start


def buckets_for(settings: Settings, doc_buckets: Sequence[str]) -> list[tuple[str, float | None, int]]:
    """(bucket, ttl, history) of every bucket Cortex keeps: the document buckets
    (``workers.registry.doc_buckets``), which keep history for composed reads (shared.asof),
    then the runtime's own (``RUNTIME_BUCKETS``); in shadow mode the documents' twins too."""
    docs = list(dict.fromkeys(doc_buckets))

    def spec(b: str) -> tuple[str, float | None, int]:
        ttl = bucket_max_age_s(settings.runtime.lease_ttl_s) if b == BUCKET_LEASES else None
        return b, ttl, (DOC_HISTORY if b in docs and b != BUCKET_BOOT else 1)

    buckets = [spec(b) for b in dict.fromkeys([*docs, *RUNTIME_BUCKETS])]
    if settings.mode == "shadow":
        buckets += [(shadow_bucket(b), t, h) for b, t, h in (spec(b) for b in docs)]
    return buckets


async def provision(js: JetStreamContext, settings: Settings, consumers: Iterable[ConsumerSpec],
                    doc_buckets: Sequence[str] = ()) -> dict[str, str]:
    """Create or update everything the contract names — the streams, the ``consumers`` and
    the document buckets their workers write (``ConsumerSpec.buckets``; ``doc_buckets``
    adds others: every worker's, ``workers.registry.doc_buckets``) —, with ``CORTEX_REPLICAS`` copies
    (existing streams, buckets and consumers raised, never lowered); returns what happened
    to each. More replicas than servers: ``ReplicasError`` before anything is changed (the
    first request, CORTEX_EVENTS's, is the one the server refuses).

    A CORTEX_EVENTS holding events in another stored layout is never changed in place
    (that would mix layouts): ``LayoutError`` with the steps (``cortex init --migrate``).
    An empty one is simply reconfigured."""
    report: dict[str, str] = {}
    problem = await layout_problem(js, settings.prefix)
    if problem is not None:
        raise LayoutError(problem)
    try:
        report[f"stream {EVENTS_STREAM}"] = await ensure_stream(js, events_stream_config(settings, await _sources(js)))
    except nats.js.errors.APIError as exc:  # 10074 comes as a ServerError (500), 10005 as a BadRequest
        refused = _refusal(exc, settings.replicas, EVENTS_STREAM, cluster_servers(js))
        if refused is None:
            raise
        raise refused from None
    # after CORTEX_EVENTS: an empty stream of the first layout captured the three-token notes
    report[f"stream {NOTES_STREAM}"] = await ensure_stream(js, notes_stream_config(settings))
    if settings.openclaw.stream is not None:
        report[f"source {settings.openclaw.stream} → {EVENTS_STREAM}: {await describe_source(js, settings)}"] = "wired"
    report[f"stream {DLQ_STREAM}"] = await ensure_stream(js, dlq_stream_config(settings))
    specs = list(consumers)
    written = [b for spec in specs for b in spec.buckets]
    for bucket, ttl, history in buckets_for(settings, [*written, *doc_buckets]):
        outcome = await ensure_bucket(js, bucket, ttl, history, settings.replicas)
        if outcome == "unchanged":
            outcome = await raise_replicas(js, f"KV_{bucket}", settings.replicas)
        report[f"bucket {bucket}"] = outcome
    if await raise_replicas(js, f"KV_{BUCKET_FORGETS}", settings.replicas) == "raised":  # made by the first forget
        report[f"bucket {BUCKET_FORGETS}"] = "raised"
    if specs and settings.replicas > 1:
        await await_placed(js, EVENTS_STREAM)
    for name, seq in (await seed_checkpoints(js, specs)).items():
        report[f"checkpoint {name} (re-partitioned: starts after sequence {seq})"] = "seeded"
    for spec in specs:
        report[f"consumer {spec.name}"] = await ensure_consumer(js, spec, settings, recreate=True,
                                                                repartition=True)
    for name in await retire_consumers(js, specs):
        report[f"consumer {name} (not in the layout of CORTEX_PARTITIONS={settings.partitions})"] = "deleted"
    return report
