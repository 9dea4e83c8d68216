"""WatermarkTracker against a real nats-server: waits end when a consumer's checkpoint
reaches the sequence; a stalled consumer is waited for once, then reported at once until
it moves again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from shared.config import load_settings
from shared.names import BUCKET_CHECKPOINTS
from shared.provision import ConsumerSpec, provision
from shared.watermarks import STALLED_LAG, WatermarkTracker

WaitFor = Callable[..., Awaitable[Any]]


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="slow", families=("msg",))])
    payload = {"id": "e1", "agent": "a", "session": "s", "ts": "2026-03-01T10:00:00Z", "role": "user", "content": "x"}
    await js.publish("cortex.msg.a.received", msgspec.json.encode(payload))  # "slow" never drains
    return js


async def set_checkpoint(js: JetStreamContext, consumer: str, seq: int) -> None:
    await (await js.key_value(BUCKET_CHECKPOINTS)).put(consumer, str(seq).encode())


async def test_a_stalled_consumer_is_waited_for_once_then_reported_at_once(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    tracker = WatermarkTracker(js)
    await tracker.start()
    try:
        await set_checkpoint(js, "slow", 10)
        await wait_for(lambda: _true(tracker.checkpoint("slow") == 10))
        assert await tracker.wait({"slow": 5}, bound_s=30) == []  # reached
        assert await tracker.wait({"slow": 20}, bound_s=0.3) == ["slow"]  # the bound passes
        # no progress since: a long bound is not waited out again
        assert await asyncio.wait_for(tracker.wait({"slow": 21}, bound_s=300), timeout=30) == ["slow"]
        # it moves (a little): waited for again, and reaching the sequence ends the wait
        await set_checkpoint(js, "slow", 12)
        await wait_for(lambda: _true(tracker.checkpoint("slow") == 12))
        waiting = asyncio.create_task(tracker.wait({"slow": 22}, bound_s=300))
        await set_checkpoint(js, "slow", 15)
        await wait_for(lambda: _true(tracker.checkpoint("slow") == 15))
        assert not waiting.done()
        await set_checkpoint(js, "slow", 22)
        assert await asyncio.wait_for(waiting, timeout=30) == []
        # far behind a sequence it missed, even while moving: reported at once
        assert await tracker.wait({"slow": 30 + STALLED_LAG * 2}, bound_s=0.3) == ["slow"]
        await set_checkpoint(js, "slow", 25)
        await wait_for(lambda: _true(tracker.checkpoint("slow") == 25))
        assert await asyncio.wait_for(tracker.wait({"slow": 40 + STALLED_LAG * 2}, bound_s=300),
                                      timeout=30) == ["slow"]
    finally:
        await tracker.stop()


async def _true(value: bool) -> bool:
    return value
