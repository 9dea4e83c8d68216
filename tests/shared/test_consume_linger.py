"""The consume loop of a throughput worker lingers (``CORTEX_RUNTIME_THROUGHPUT_LINGER_MS``), against a
real nats-server: events that come one at a time while it lingers are applied and committed as one
batch; a lone event is applied after the linger, not the fetch's wait; a stop during the linger
applies what it holds and leaves nothing unacked; only throughput workers linger."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest
from cortex_testkit import held_back
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.docs import Integrity
from schemas.events import MessageEvent
from shared.codec import Envelope, Limits
from shared.config import load_settings
from shared.consume import ConsumeLoop, LoopConfig
from shared.health import Health
from shared.kv import kv_read
from shared.names import EVENTS_STREAM
from shared.projection import EventProjection, ProjectionHandler
from shared.provision import ConsumerSpec, ensure_bucket, provision
from shared.runtime import loop_config
from workers.registry import all_specs

WaitFor = Callable[..., Awaitable[Any]]
BUCKET = "test_linger"


class IdsDoc(msgspec.Struct, kw_only=True):
    ids: list[str]
    integrity: Integrity = msgspec.field(default_factory=Integrity)


class Ids(EventProjection[IdsDoc]):
    bucket = BUCKET
    doc_type = IdsDoc

    def accepts(self, env: Envelope) -> bool:
        return isinstance(env.event, MessageEvent)

    def apply(self, doc: IdsDoc | None, env: Envelope) -> IdsDoc:
        return IdsDoc(ids=[*(doc.ids if doc else []), env.event.id])


class Counted(ProjectionHandler):
    """A real projection handler that remembers how many events each commit took."""

    def __init__(self, js: JetStreamContext) -> None:
        super().__init__(js, "linger", "linger@test", [Ids()])
        self.commits: list[int] = []
        self._batch = 0

    async def apply(self, env: Envelope) -> bool:
        self._batch += 1
        return await super().apply(env)

    async def commit(self) -> None:
        await super().commit()
        self.commits.append(self._batch)
        self._batch = 0


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="linger", families=("msg",))])
    await ensure_bucket(js, BUCKET)
    return js


def config(linger_s: float) -> LoopConfig:
    # a minute's fetch: only the linger can end a wait with an event in hand
    return LoopConfig(batch_size=50, fetch_timeout_s=60.0, linger_s=linger_s, drain_timeout_s=5.0,
                      limits=Limits(max_content_bytes=4096))


async def publish(js: JetStreamContext, first: int, count: int) -> None:
    for i in range(first, first + count):
        payload = {"id": f"e{i}", "agent": "main", "session": "s", "ts": "2026-02-17T10:00:00Z",
                   "role": "user", "content": f"message {i}"}
        await js.publish("cortex.msg.main.received", msgspec.json.encode(payload))


async def applied(js: JetStreamContext) -> list[str]:
    raw, _ = await kv_read(await js.key_value(BUCKET), "main")
    return msgspec.json.decode(raw, type=IdsDoc).ids if raw else []


async def one_delivered(js: JetStreamContext) -> bool:
    info = await js.consumer_info(EVENTS_STREAM, "linger")
    return bool(info.num_ack_pending == 1)


async def test_events_that_come_one_at_a_time_while_it_lingers_are_one_batch(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    handler = Counted(js)
    loop = ConsumeLoop(js, worker="linger", consumer="linger", handler=handler, config=config(3.0),
                       health=Health("linger"))
    task = asyncio.create_task(loop.run())
    try:
        await publish(js, 1, 1)
        await wait_for(lambda: one_delivered(js), within=30)  # the loop holds it and lingers
        await publish(js, 2, 4)
        ids = [f"e{i}" for i in range(1, 6)]
        await wait_for(lambda: _is(js, ids), within=30)
        assert handler.commits == [5]  # one commit, one checkpoint, one ack write: not five
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)


async def _is(js: JetStreamContext, ids: list[str]) -> bool:
    return await applied(js) == ids


async def test_a_lone_event_is_applied_after_the_linger_not_the_fetchs_wait(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    handler = Counted(js)
    loop = ConsumeLoop(js, worker="linger", consumer="linger", handler=handler, config=config(0.2),
                       health=Health("linger"))
    task = asyncio.create_task(loop.run())
    try:
        await publish(js, 1, 1)
        await wait_for(lambda: _is(js, ["e1"]), within=30)  # a minute's fetch, a 50-event batch: the linger ends it
        await publish(js, 2, 1)
        await wait_for(lambda: _is(js, ["e1", "e2"]), within=30)  # and the next, idle again
        assert handler.commits == [1, 1]
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)


async def test_a_stop_during_the_linger_applies_what_it_holds_and_leaves_nothing_unacked(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    handler = Counted(js)
    loop = ConsumeLoop(js, worker="linger", consumer="linger", handler=handler, config=config(120.0),
                       health=Health("linger"))
    task = asyncio.create_task(loop.run())
    await publish(js, 1, 1)
    await wait_for(lambda: one_delivered(js), within=30)
    await publish(js, 2, 2)  # stored during the linger, not delivered
    loop.stop()
    await asyncio.wait_for(task, timeout=30)  # not the two minutes' linger
    assert await applied(js) == ["e1"]
    assert await held_back(js, "linger") == 0  # e1 acked, e2 and e3 still the consumer's to deliver
    again = Counted(js)
    loop = ConsumeLoop(js, worker="linger", consumer="linger", handler=again, config=config(0.0),
                       health=Health("linger"))
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _is(js, ["e1", "e2", "e3"]), within=30)  # exactly once, in order
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)


def test_only_throughput_workers_linger_and_zero_turns_it_off() -> None:
    specs = all_specs()
    settings = load_settings({})
    assert settings.runtime.throughput_linger_ms > 0
    for name, spec in specs.items():
        linger = loop_config(settings, spec).linger_s
        if spec.priority == "throughput":  # the runtime's, or the worker's own (recall's)
            assert linger == (spec.linger_ms or settings.runtime.throughput_linger_ms) / 1000, name
        else:
            assert linger == 0.0, name
    assert {n for n, s in specs.items() if s.priority == "latency"} >= {"threads", "decisions", "boot"}
    off = load_settings({"CORTEX_RUNTIME_THROUGHPUT_LINGER_MS": "0"})
    assert all(loop_config(off, spec).linger_s == 0.0 for spec in specs.values())
    assert loop_config(settings).linger_s == 0.0  # a loop of no worker's (a replay's, a tool's)
