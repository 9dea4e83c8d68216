"""Inputs.patiently against a real nats-server: a trigger waits, without a bound, for a source
that is being applied (its ack floor reaching the trigger ends the wait), and not for one
nobody consumes — given up once, then not waited for again until its checkpoint moves."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

import shared.inputs
from schemas.docs import ThreadsDoc
from schemas.events import SessionEvent
from shared.codec import Envelope
from shared.config import load_settings
from shared.footprint import Source
from shared.inputs import Inputs
from shared.names import EVENTS_STREAM
from shared.provision import ConsumerSpec, provision

SOURCE = Source("threads", "slow", "cortex_threads", ThreadsDoc)


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="slow", families=("msg",))])
    for i in range(3):
        payload = {"id": f"e{i}", "agent": "a", "session": "s", "ts": "2026-03-01T10:00:00Z",
                   "role": "user", "content": "x"}
        await js.publish("cortex.msg.a.received", msgspec.json.encode(payload))
    return js


def trigger(seq: int) -> Envelope:
    event = SessionEvent(id="t", agent="a", session="s", ts=datetime(2026, 3, 1, 10, 1, tzinfo=UTC))
    return Envelope(seq=seq, subject="cortex.session.a.end", family="session", kind="end", agent="a", event=event)


async def test_a_trigger_waits_for_a_source_being_applied_until_its_ack_floor_is_there(js: JetStreamContext) -> None:
    inputs = Inputs(js, load_settings({"CORTEX_BOOT_WAIT_MS": "100"}))  # the bounded read's wait
    try:
        waiting = asyncio.create_task(inputs.patiently([SOURCE], trigger(4)))
        sub = await js.pull_subscribe_bind("slow", stream=EVENTS_STREAM)
        first = await sub.fetch(1, timeout=10)
        for msg in first:
            await msg.ack_sync()
        done, _ = await asyncio.wait({waiting}, timeout=1.0)
        assert not done  # one of three applied: still waiting, well past the bound
        for msg in await sub.fetch(2, timeout=10):
            await msg.ack_sync()
        await asyncio.wait_for(waiting, timeout=30)  # ack floor 3: everything before seq 4
    finally:
        await inputs.stop()


async def test_a_source_nobody_consumes_is_given_up_then_not_waited_for_again(
    js: JetStreamContext, monkeypatch: Any
) -> None:
    monkeypatch.setattr(shared.inputs, "UNCONSUMED_S", 0.3)
    inputs = Inputs(js, load_settings({}))
    try:
        await asyncio.wait_for(inputs.patiently([SOURCE], trigger(4)), timeout=30)  # given up
        monkeypatch.setattr(shared.inputs, "UNCONSUMED_S", 3600.0)
        # its checkpoint has not moved: the next trigger does not wait for it at all
        await asyncio.wait_for(inputs.patiently([SOURCE], trigger(5)), timeout=30)
    finally:
        await inputs.stop()


async def test_a_source_without_a_consumer_is_not_waited_for(js: JetStreamContext) -> None:
    """Its worker never ran against this server (a deployment without it): no 30 s stall."""
    inputs = Inputs(js, load_settings({}))
    try:
        missing = Source("threads", "absent", "cortex_threads", ThreadsDoc)
        await asyncio.wait_for(inputs.patiently([missing], trigger(4)), timeout=20)  # not UNCONSUMED_S (30 s)
    finally:
        await inputs.stop()
