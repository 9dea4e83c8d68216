"""``cortex status --json``: what ``cortex status`` reads, as the JetStream API returned it —
each stream's and consumer's info (with the consumer's checkpoint), the sources and each
document bucket's state — for scripts; the tables are ``workers.cli.ops``'s."""

from __future__ import annotations

from typing import Any

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext

from shared.config import Settings
from shared.kv import kv_count, kv_read
from shared.names import BUCKET_CHECKPOINTS, DLQ_STREAM, EVENTS_STREAM, NOTES_STREAM
from shared.provision import buckets_for
from shared.sources import SourceState, source_states
from workers.registry import doc_buckets


class BucketState(msgspec.Struct, kw_only=True, omit_defaults=True):
    bucket: str
    missing: bool = False
    keys: int = 0
    bytes: int = 0
    stream: dict[str, Any] | None = None  # the bucket's stream info, as the API returned it


class StatusReport(msgspec.Struct, kw_only=True):
    streams: dict[str, dict[str, Any] | None]  # None: missing (run `cortex init`)
    consumers: list[dict[str, Any]]
    checkpoints: dict[str, int]
    sources: list[SourceState]
    buckets: list[BucketState]


async def _streams(js: JetStreamContext) -> dict[str, dict[str, Any] | None]:
    found: dict[str, dict[str, Any] | None] = {}
    for name in (EVENTS_STREAM, NOTES_STREAM, DLQ_STREAM):
        try:
            found[name] = (await js.stream_info(name)).as_dict()
        except nats.js.errors.NotFoundError:
            found[name] = None
    return found


async def _consumers(js: JetStreamContext) -> tuple[list[dict[str, Any]], dict[str, int]]:
    try:
        consumers = await js.consumers_info(EVENTS_STREAM)
        kv = await js.key_value(BUCKET_CHECKPOINTS)
    except nats.js.errors.NotFoundError:
        return [], {}
    checkpoints = {}
    for info in consumers:
        raw, _ = await kv_read(kv, info.name)
        checkpoints[info.name] = int(raw) if raw else 0
    return [c.as_dict() for c in sorted(consumers, key=lambda c: c.name)], checkpoints


async def _buckets(js: JetStreamContext, settings: Settings) -> list[BucketState]:
    states = []
    for bucket, _, _ in buckets_for(settings, doc_buckets()):
        try:
            status = await (await js.key_value(bucket)).status()
        except nats.js.errors.BucketNotFoundError:
            states.append(BucketState(bucket=bucket, missing=True))
            continue
        states.append(BucketState(bucket=bucket, keys=await kv_count(js, bucket),
                                  bytes=int(status.stream_info.state.bytes), stream=status.stream_info.as_dict()))
    return states


async def status_report(js: JetStreamContext, settings: Settings) -> StatusReport:
    consumers, checkpoints = await _consumers(js)
    return StatusReport(streams=await _streams(js), consumers=consumers, checkpoints=checkpoints,
                        sources=await source_states(js, settings.prefix), buckets=await _buckets(js, settings))
