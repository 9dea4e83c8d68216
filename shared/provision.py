"""``cortex init``: streams, KV buckets and durable consumers. Idempotent, and safe to run
from several pods at once (a lost creation race becomes an update)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

import msgspec
import nats.js.errors
from nats.js import api
from nats.js.client import JetStreamContext

from shared.asof import DOC_HISTORY
from shared.config import Settings, parse_duration_s
from shared.names import (
    ALL_BUCKETS,
    BUCKET_BOOT,
    BUCKET_LEASES,
    DLQ_STREAM,
    DOC_BUCKETS,
    EVENTS_STREAM,
    OPENCLAW_FAMILY,
    event_subjects,
    family_filter_subjects,
    openclaw_transform,
    shadow_bucket,
)

log = logging.getLogger(__name__)

DUPLICATE_WINDOW_S = 120.0
_IN_USE = 10058  # stream name already in use with a different configuration


class ConsumerSpec(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    families: tuple[str, ...]

    def filter_subjects(self, prefix: str) -> list[str]:
        return [subject for family in self.families for subject in family_filter_subjects(prefix, family)]


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
    return any(t.dest.startswith(f"{prefix}.{OPENCLAW_FAMILY}.") for t in source.subject_transforms or [])


def _sources_key(sources: list[api.StreamSource] | None) -> list[tuple[object, ...]]:
    return sorted((s.name, s.filter_subject or "", tuple((t.src, t.dest) for t in s.subject_transforms or []),
                   s.opt_start_seq or 0) for s in sources or [])


def events_stream_config(settings: Settings, current: list[api.StreamSource] | None = None) -> api.StreamConfig:
    """CORTEX_EVENTS as the settings want it; ``current``: its sources now.

    An operator's own sources are kept. The OpenClaw source is replaced by the one the
    settings name; with ``CORTEX_OPENCLAW_STREAM`` unset it is kept as it is — a process
    that does not know about the store (``cortex up`` without the setting, a worker) must
    not unwire it. Removing it is an operator's edit of the stream (docs/integration.md)."""
    ours = openclaw_source(settings)
    kept = [s for s in current or [] if ours is None or not is_openclaw_source(s, settings.prefix)]
    sources = [*kept, *([ours] if ours is not None else [])]
    return api.StreamConfig(
        name=EVENTS_STREAM,
        subjects=event_subjects(settings.prefix),
        sources=sources or None,
        storage=api.StorageType.FILE,
        retention=api.RetentionPolicy.LIMITS,
        duplicate_window=DUPLICATE_WINDOW_S,
        max_age=float(parse_duration_s(settings.retention)) if settings.retention else 0.0,
        allow_direct=True,
        description="Cortex events: messages, sessions, compactions, notes, feedback, tool calls, runs",
    )


def dlq_stream_config(settings: Settings) -> api.StreamConfig:
    return api.StreamConfig(
        name=DLQ_STREAM,
        subjects=[f"{settings.prefix}.dlq.>"],
        storage=api.StorageType.FILE,
        retention=api.RetentionPolicy.LIMITS,
        duplicate_window=DUPLICATE_WINDOW_S,
        max_age=float(parse_duration_s(settings.dlq_retention)),
        description="Cortex dead letters: events a worker could not apply, with the reason",
    )


async def ensure_stream(js: JetStreamContext, config: api.StreamConfig) -> str:
    """Create or update a stream; returns "created", "updated" or "unchanged"."""
    assert config.name is not None
    try:
        info = await js.stream_info(config.name)
    except nats.js.errors.NotFoundError:
        try:
            await js.add_stream(config)
            return "created"
        except nats.js.errors.BadRequestError as exc:
            if exc.err_code != _IN_USE:
                raise
            info = await js.stream_info(config.name)  # another pod won the race
    current = info.config
    wanted = (sorted(config.subjects or []), config.max_age or 0.0, config.duplicate_window,
              _sources_key(config.sources))
    have = (sorted(current.subjects or []), current.max_age or 0.0, current.duplicate_window,
            _sources_key(current.sources))
    if wanted == have:
        return "unchanged"
    # keep what an operator raised by hand (e.g. `nats stream edit --replicas 3`)
    config.num_replicas = max(config.num_replicas or 1, current.num_replicas or 1)
    await js.update_stream(config)
    return "updated"


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
            f"from the first as {settings.prefix}.{OPENCLAW_FAMILY}.<agent>.<type>{hint}")


async def ensure_bucket(js: JetStreamContext, bucket: str, ttl_s: float | None = None, history: int = 1) -> str:
    try:
        await js.key_value(bucket)
        return "unchanged"
    except nats.js.errors.BucketNotFoundError:
        pass
    try:
        await js.create_key_value(bucket=bucket, history=history, direct=True, ttl=ttl_s,
                                  storage=api.StorageType.FILE)
    except nats.js.errors.BadRequestError as exc:
        if exc.err_code != _IN_USE:
            raise
        return "unchanged"
    return "created"


def consumer_config(spec: ConsumerSpec, settings: Settings) -> api.ConsumerConfig:
    return api.ConsumerConfig(
        durable_name=spec.name,
        deliver_policy=api.DeliverPolicy.ALL,
        ack_policy=api.AckPolicy.EXPLICIT,
        ack_wait=float(settings.runtime.ack_wait_s),
        max_deliver=-1,  # the worker counts attempts itself and dead-letters (see consume.py)
        max_ack_pending=max(1000, settings.runtime.batch_size * 2),
        filter_subjects=spec.filter_subjects(settings.prefix),
        description=f"Cortex worker consumer {spec.name}",
    )


async def ensure_consumer(js: JetStreamContext, spec: ConsumerSpec, settings: Settings) -> str:
    config = consumer_config(spec, settings)
    try:
        info = await js.consumer_info(EVENTS_STREAM, spec.name)
    except nats.js.errors.NotFoundError:
        await js.add_consumer(EVENTS_STREAM, config)
        return "created"
    have = info.config
    if (sorted(have.filter_subjects or ([have.filter_subject] if have.filter_subject else []))
            == sorted(config.filter_subjects or []) and have.ack_wait == config.ack_wait
            and have.max_ack_pending == config.max_ack_pending):
        return "unchanged"
    await js.add_consumer(EVENTS_STREAM, config)  # same durable: an update
    return "updated"


def buckets_for(settings: Settings) -> list[tuple[str, float | None, int]]:
    """(bucket, ttl, history): document buckets keep history for composed reads (shared.asof)."""
    def spec(b: str) -> tuple[str, float | None, int]:
        ttl = float(settings.runtime.lease_ttl_s) if b == BUCKET_LEASES else None
        return b, ttl, (DOC_HISTORY if b in DOC_BUCKETS and b != BUCKET_BOOT else 1)

    buckets = [spec(b) for b in ALL_BUCKETS]
    if settings.mode == "shadow":
        buckets += [(shadow_bucket(b), t, h) for b, t, h in (spec(b) for b in DOC_BUCKETS)]
    return buckets


async def provision(js: JetStreamContext, settings: Settings, consumers: Iterable[ConsumerSpec]) -> dict[str, str]:
    """Create or update everything the contract names; returns what happened to each."""
    report: dict[str, str] = {}
    report[f"stream {EVENTS_STREAM}"] = await ensure_stream(js, events_stream_config(settings, await _sources(js)))
    if settings.openclaw.stream is not None:
        report[f"source {settings.openclaw.stream} → {EVENTS_STREAM}: {await describe_source(js, settings)}"] = "wired"
    report[f"stream {DLQ_STREAM}"] = await ensure_stream(js, dlq_stream_config(settings))
    for bucket, ttl, history in buckets_for(settings):
        report[f"bucket {bucket}"] = await ensure_bucket(js, bucket, ttl, history)
    for spec in consumers:
        report[f"consumer {spec.name}"] = await ensure_consumer(js, spec, settings)
    return report
