"""Removing an agent everywhere (``cortex forget AGENT``): its events, its documents in
every bucket (history included), its dead letters, its LLM usage counters and its memories.

Memories live in a store only the recall worker may write; when a recall worker is
active (it holds the lease) the forget goes through the stream as a ``memory_forget``
FeedbackEvent with ``value: "all"`` and we wait until it is applied; otherwise the store
is opened here directly.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext

from schemas.events import FeedbackEvent
from shared.kv import kv_keys, kv_read
from shared.names import BUCKET_LLM_CACHE, DLQ_STREAM, DOC_BUCKETS, EVENTS_STREAM, shadow_bucket


class ForgetReport(msgspec.Struct, kw_only=True):
    events: int = 0
    documents: int = 0
    dead_letters: int = 0
    usage_keys: int = 0
    memories: str = "not attempted"


async def _count(js: JetStreamContext, subject: str) -> int:
    info = await js.stream_info(EVENTS_STREAM, subjects_filter=subject)
    return sum((info.state.subjects or {}).values()) if info.state.subjects else 0


async def purge_events(js: JetStreamContext, prefix: str, agent: str) -> int:
    removed = 0
    for subject in (f"{prefix}.*.{agent}.>", f"{prefix}.notes.{agent}"):
        removed += await _count(js, subject)
        await js.purge_stream(EVENTS_STREAM, subject=subject)
    return removed


async def purge_documents(js: JetStreamContext, agent: str) -> int:
    removed = 0
    for bucket in (*DOC_BUCKETS, *(shadow_bucket(b) for b in DOC_BUCKETS)):
        try:
            kv = await js.key_value(bucket)
        except nats.js.errors.BucketNotFoundError:
            continue
        for key in await kv_keys(js, bucket, agent):
            await kv.purge(key)  # purge, not delete: no revision of the document survives
            removed += 1
    return removed


async def purge_usage(js: JetStreamContext, agent: str) -> int:
    kv = await js.key_value(BUCKET_LLM_CACHE)
    keys = [k for k in await kv_keys(js, BUCKET_LLM_CACHE, f"usage.{agent}") if k.startswith(f"usage.{agent}.")]
    for key in keys:
        await kv.purge(key)
    return len(keys)


async def purge_dead_letters(js: JetStreamContext, prefix: str, agent: str) -> int:
    """Dead letters are keyed by worker, not agent: look at each one's original subject."""
    info = await js.stream_info(DLQ_STREAM)
    removed = 0
    if not info.state.messages:
        return 0  # an empty stream reports sequence 0, which get_msg refuses
    for seq in range(max(1, info.state.first_seq), info.state.last_seq + 1):
        try:
            msg = await js.get_msg(DLQ_STREAM, seq)
        except nats.js.errors.NotFoundError:
            continue
        original = (msg.headers or {}).get("Cortex-Original-Subject", "")
        tokens = original.split(".")
        if len(tokens) >= 3 and tokens[0] == prefix and tokens[2] == agent:
            await js.delete_msg(DLQ_STREAM, seq)
            removed += 1
    return removed


async def request_memory_forget(js: JetStreamContext, prefix: str, agent: str,
                                applied: Callable[[], Awaitable[bool]]) -> None:
    event = FeedbackEvent(id=f"forget-{uuid.uuid4().hex}", agent=agent, ts=datetime.now(UTC), kind="memory_forget",
                          value="all", actor="cortex forget")
    await js.publish(f"{prefix}.feedback.{agent}.memory_forget", msgspec.json.encode(event),
                     headers={"Nats-Msg-Id": event.id})
    await applied()


async def settle_consumers(js: JetStreamContext, through_seq: int, within_s: float = 30.0) -> list[str]:
    """Wait until no consumer still holds an undelivered-ack event at or below
    ``through_seq`` (a worker that fetched one of the agent's events before the purge would
    otherwise write its documents again after they are purged). Returns the consumers still
    busy at the bound."""
    deadline = time.monotonic() + within_s
    while True:
        busy = [info.name for info in await js.consumers_info(EVENTS_STREAM)
                if info.num_ack_pending and (info.ack_floor is None or (info.ack_floor.stream_seq or 0) < through_seq)]
        if not busy or time.monotonic() >= deadline:
            return busy
        await asyncio.sleep(0.05)


async def recall_active(js: JetStreamContext, consumer: str = "recall") -> bool:
    try:
        raw, _ = await kv_read(await js.key_value("cortex_leases"), consumer)
    except nats.js.errors.BucketNotFoundError:
        return False
    return raw is not None
