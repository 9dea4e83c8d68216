"""A session start read as it happens (within the early path's budget) waits for a throughput
worker's document only while that worker is not busy (``BootSources.until_of``): at low load the
session's last few messages are waited for and the document is complete; with many messages left,
or its checkpoint moving at a sustained pace (the worker run second by the priority classes under
load), it is read at once as of its last cut and named lagging. A latency worker's document, and every document of a
trigger read without a budget (a backlog's, a replay's), are waited for however far behind.

Real nats-server; the source consumers are the registry's, provisioned as ``cortex init`` makes
them, and stand still (no worker runs): the test moves their checkpoints itself."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext
from prometheus_client import REGISTRY

from shared.codec import Envelope, decode_event, event_limits
from shared.config import Settings, load_settings
from shared.health import Health
from shared.names import BUCKET_CHECKPOINTS, EVENTS_STREAM
from shared.provision import provision
from shared.runtime import WorkerContext
from workers import registry
from workers.boot.early import BUSY_PACE, FEW_LEFT
from workers.boot.sources import BootSources

WaitFor = Callable[..., Awaitable[Any]]
BUDGET_S = 60.0  # the budget each reading is given: far longer than any test step


@pytest.fixture
def settings() -> Settings:
    return load_settings({"CORTEX_BOOT_WAIT_MS": "60000"})


@pytest.fixture
async def js(nc: Client, settings: Settings) -> JetStreamContext:
    js = nc.jetstream()
    await provision(js, settings, registry.consumer_specs(), registry.doc_buckets())
    return js


@pytest.fixture
async def sources(nc: Client, js: JetStreamContext, settings: Settings) -> AsyncIterator[BootSources]:
    ctx = WorkerContext(nc=nc, js=js, settings=settings, worker="boot", consumer="boot", producer="boot@test",
                        health=Health("boot"), catalog=registry.all_specs())
    try:
        yield BootSources(ctx)
    finally:
        await ctx.aclose()


async def session_start(js: JetStreamContext, settings: Settings, agent: str, messages: int) -> Envelope:
    """``messages`` messages of ``agent``, then its session start: the trigger, as stored."""
    for i in range(messages):
        body = {"id": f"{agent}-m{i}", "agent": agent, "session": "s1", "ts": "2026-03-04T14:00:00Z",
                "role": "user", "sender": "albert", "channel": "webchat", "content": f"message {i}"}
        await js.publish(f"cortex.msg.{agent}.received", msgspec.json.encode(body))
    start = {"id": f"{agent}-s2-start", "agent": agent, "session": "s2", "ts": "2026-03-04T14:30:00Z"}
    seq = (await js.publish(f"cortex.session.{agent}.start", msgspec.json.encode(start))).seq
    stored = await js.get_msg(EVENTS_STREAM, seq)
    env = decode_event(settings.prefix, stored.subject or "", seq, stored.data or b"", event_limits(settings))
    assert isinstance(env, Envelope)
    return env


async def left(js: JetStreamContext, consumer: str) -> int:
    info = await js.consumer_info(EVENTS_STREAM, consumer)
    return int(info.num_pending or 0) + int(info.num_ack_pending or 0)


async def set_checkpoint(js: JetStreamContext, consumer: str, seq: int) -> None:
    await (await js.key_value(BUCKET_CHECKPOINTS)).put(consumer, str(seq).encode())


def field_of(sources: BootSources, worker: str) -> str:
    return next(s.field for s in sources.sources if s.worker == worker)


def behind_count(worker: str) -> float:
    return REGISTRY.get_sample_value("cortex_boot_source_behind_total", {"source": worker}) or 0.0


async def decided(sources: BootSources, worker: str, env: Envelope) -> str:
    """What ``BootSources.until_of`` decides for ``worker``'s document: wait to the budget's end,
    or only a moment (it counts a moment in ``cortex_boot_source_behind_total``)."""
    source = next(s for s in sources.sources if s.worker == worker)
    end = await sources.until_of(source, env, until=2000.0, soon=1000.0)
    return {2000.0: "the budget", 1000.0: "a moment"}[end]


async def waited_for(js: JetStreamContext, sources: BootSources, wait_for: WaitFor, env: Envelope,
                     worker: str, until: float | None) -> None:
    """The reading of ``worker``'s document is still waiting once the worker has applied all but
    the trigger's last event, and ends, complete, when it has applied them all."""
    reading = asyncio.create_task(sources.at_trigger(env, fields=[field_of(sources, worker)], until=until))
    tracker = await sources._inputs.tracker()
    await set_checkpoint(js, worker, env.seq - 1)
    await wait_for(lambda: _true(tracker.checkpoint(worker) == env.seq - 1))
    assert not reading.done()
    await set_checkpoint(js, worker, env.seq)
    assert (await asyncio.wait_for(reading, timeout=30)).lagging == []


async def _true(value: bool) -> bool:
    return value


async def paced(js: JetStreamContext, sources: BootSources, wait_for: WaitFor, worker: str, env: Envelope,
                per_s: float) -> None:
    """``worker``'s checkpoint is 4 short of ``env``, and the tracker saw it move there at ``per_s``
    stream events a second over the last three seconds (what the checkpoint watch records)."""
    tracker = await sources._inputs.tracker()
    tracker.follow((worker,))
    await set_checkpoint(js, worker, env.seq - 4)
    await wait_for(lambda: _true(tracker.checkpoint(worker) == env.seq - 4))
    now = time.monotonic()
    tracker._moves[worker] = deque([(now - 3.0, env.seq - 4 - round(3 * per_s)), (now - 0.1, env.seq - 4)])
    assert tracker.pace(worker) == pytest.approx(per_s, rel=0.1)


@pytest.mark.parametrize("pace", [None, BUSY_PACE * 0.9], ids=["idle", "moving, below the busy pace"])
async def test_a_throughput_source_a_few_messages_behind_is_waited_for(
        js: JetStreamContext, settings: Settings, sources: BootSources, wait_for: WaitFor,
        pace: float | None) -> None:
    """Low load: recall has the session's last messages (and the start) left to apply, idle before
    them or moving below ``BUSY_PACE`` — it is waited for to the budget's end, and the document is
    complete."""
    env = await session_start(js, settings, "ada", 3)
    assert await left(js, "recall") <= FEW_LEFT
    if pace is not None:
        await paced(js, sources, wait_for, "recall", env, pace)
    before = behind_count("recall")
    assert await decided(sources, "recall", env) == "the budget"
    await waited_for(js, sources, wait_for, env, "recall", time.monotonic() + BUDGET_S)
    assert behind_count("recall") == before


async def read_at_once(sources: BootSources, env: Envelope) -> None:
    """The session start's reading of recall does not wait for it (its budget is a minute away
    and nothing moves it): it names recall lagging, counts it, and the rule says "a moment"."""
    before = behind_count("recall")
    reading = await asyncio.wait_for(
        sources.at_trigger(env, fields=[field_of(sources, "recall")], until=time.monotonic() + BUDGET_S),
        timeout=BUDGET_S / 2)
    assert reading.lagging == ["recall"]
    assert behind_count("recall") == before + 1
    assert await decided(sources, "recall", env) == "a moment"


async def test_a_throughput_source_far_behind_is_read_at_once_and_named_lagging(
        js: JetStreamContext, settings: Settings, sources: BootSources, wait_for: WaitFor) -> None:
    """Busy: recall has many more messages left than a session's last few — the reading does
    not wait for it (its budget is a minute away and nothing moves it), names it lagging and
    counts it (``cortex_boot_source_behind_total``)."""
    env = await session_start(js, settings, "ada", 3 * FEW_LEFT)
    assert await left(js, "recall") > FEW_LEFT
    await read_at_once(sources, env)
    # it is not one source's rule for all: with threads read beside it, threads is still waited for
    # and recall still read as of its last cut
    both = asyncio.create_task(sources.at_trigger(
        env, fields=[field_of(sources, "recall"), field_of(sources, "threads")], until=time.monotonic() + BUDGET_S))
    tracker = await sources._inputs.tracker()
    await set_checkpoint(js, "threads", env.seq - 1)
    await wait_for(lambda: _true(tracker.checkpoint("threads") == env.seq - 1))
    assert not both.done()
    await set_checkpoint(js, "threads", env.seq)
    assert (await asyncio.wait_for(both, timeout=30)).lagging == ["recall"]


async def test_a_throughput_source_at_a_sustained_pace_is_read_at_once_however_few_it_has_left(
        js: JetStreamContext, settings: Settings, sources: BootSources, wait_for: WaitFor) -> None:
    """Under a sustained load (its checkpoint moving ``BUSY_PACE`` events a second and more) the
    priority classes keep recall waiting for a core: a few messages left are no promise that it
    applies them soon, and the session start does not wait for it."""
    env = await session_start(js, settings, "ada", 3)
    assert await left(js, "recall") <= FEW_LEFT
    await paced(js, sources, wait_for, "recall", env, BUSY_PACE * 5)
    await read_at_once(sources, env)


async def test_a_latency_source_far_behind_is_waited_for(
        js: JetStreamContext, settings: Settings, sources: BootSources, wait_for: WaitFor) -> None:
    env = await session_start(js, settings, "ada", 3 * FEW_LEFT)
    assert await left(js, "threads") > FEW_LEFT
    assert await decided(sources, "threads", env) == "the budget"
    await waited_for(js, sources, wait_for, env, "threads", time.monotonic() + BUDGET_S)


async def test_without_a_budget_a_throughput_source_far_behind_is_waited_for(
        js: JetStreamContext, settings: Settings, sources: BootSources, wait_for: WaitFor) -> None:
    """A backlog's or a replay's trigger (no budget): every source to the bound, as before — what
    a replay writes does not depend on how busy the machine was."""
    env = await session_start(js, settings, "ada", 3 * FEW_LEFT)
    assert await left(js, "recall") > FEW_LEFT
    before = behind_count("recall")
    await waited_for(js, sources, wait_for, env, "recall", None)
    assert behind_count("recall") == before
