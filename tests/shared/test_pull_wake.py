"""A lingering PullFetcher woken by a published trigger (``wake_on``), against a real nats-server:
a session start ends a two-minute linger at once and the events stored before it come in one
batch; for ``URGENT_S`` after it no fetch sleeps; without ``wake_on`` the trigger changes nothing;
the throughput workers' loop listens on the triggers' subjects, the latency workers' does not,
and the generated permissions allow exactly that."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext
from pull_testkit import held, publish, puller, seqs

from shared.config import load_settings
from shared.names import EVENTS_STREAM
from shared.projection import trigger_subjects
from shared.pull import PullFetcher
from shared.runtime import loop_config


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    return await puller(nc.jetstream())


async def session_start(js: JetStreamContext) -> None:
    payload = {"id": "start", "agent": "main", "session": "s2", "ts": "2026-03-01T10:00:01Z"}
    await js.publish("cortex.session.main.start", msgspec.json.encode(payload))


async def test_a_published_session_start_ends_a_two_minute_linger_with_everything_stored_before_it(
    nc: Client, js: JetStreamContext, wait_for: Callable[..., Awaitable[Any]]
) -> None:
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller", wake_on=trigger_subjects("cortex"))
    await fetcher.start()
    fetching = asyncio.create_task(fetcher.fetch(500, wait_s=300, linger_s=120))
    await publish(js, 1, 1)
    await wait_for(lambda: asyncio.sleep(0, fetcher.buffered()), within=30)  # the first wakes the fetch
    await publish(js, 2, 4)
    assert await held(js) == (1, 4)  # it lingers: the server holds them
    assert not fetching.done()
    await session_start(js)  # stored at 6; the consumer (msg only) does not take it
    # without the wake: [1..5] after the two minutes
    assert seqs(await asyncio.wait_for(fetching, timeout=60)) == [1, 2, 3, 4, 5]
    assert fetcher.wakes == 1
    # for URGENT_S after it, a fetch takes what it finds without sleeping: the next event at once
    # (a trigger's own store may follow its core delivery; what precedes it must not wait)
    fetcher._urgent_until = float("inf")  # the window held open: this test does not race its 50 ms
    nxt = asyncio.create_task(fetcher.fetch(500, wait_s=300, linger_s=120))
    await publish(js, 7, 1)
    assert seqs(await asyncio.wait_for(nxt, timeout=60)) == [7]
    await fetcher.stop()


async def test_without_wake_subjects_a_trigger_does_not_end_the_linger(
    nc: Client, js: JetStreamContext, wait_for: Callable[..., Awaitable[Any]]
) -> None:
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller")
    await fetcher.start()
    fetching = asyncio.create_task(fetcher.fetch(500, wait_s=300, linger_s=120))
    await publish(js, 1, 1)
    await wait_for(lambda: asyncio.sleep(0, fetcher.buffered()), within=30)
    await session_start(js)
    await publish(js, 3, 1)
    # the trigger and the event after it are stored; the linger goes on (the server still holds 3)
    async def stored_and_held() -> bool:
        return await held(js) == (1, 1)

    await wait_for(stored_and_held, within=30)
    assert not fetching.done() and fetcher.wakes == 0
    fetcher.hurry()
    assert seqs(await asyncio.wait_for(fetching, timeout=60)) == [1]
    await fetcher.stop()


def test_the_throughput_workers_loop_wakes_on_the_triggers_subjects_the_latency_workers_never_lingers() -> None:
    from workers.registry import all_specs

    settings = load_settings({})
    specs = all_specs()
    assert loop_config(settings, specs["knowledge"]).wake_on == trigger_subjects("cortex", "openclaw.events")
    assert loop_config(settings, specs["threads"]).wake_on == ()
    assert loop_config(settings, specs["threads"]).linger_s == 0
    off = load_settings({"CORTEX_RUNTIME_THROUGHPUT_LINGER_MS": "0"})
    assert loop_config(off, specs["knowledge"]).wake_on == ()
    assert set(trigger_subjects("cortex")) == {
        "cortex.session.*.start", "cortex.session.*.*.start", "cortex.session.*.end", "cortex.session.*.*.end",
        "cortex.compaction.*.before", "cortex.compaction.*.*.before"}
    assert set(trigger_subjects("cortex", "openclaw.events")) - set(trigger_subjects("cortex")) == {
        "openclaw.events.*.session_start", "openclaw.events.*.session_end", "openclaw.events.*.session_reset",
        "openclaw.events.*.session_compaction_start"}


def test_the_generated_permissions_let_each_throughput_worker_and_only_those_subscribe_to_the_triggers() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "deploy"))
    from gen_manifests import worker_permissions, worker_specs

    for name, spec in worker_specs().items():
        subscribe = worker_permissions(name, spec)["subscribe"]
        wakes = spec.consumes and spec.priority == "throughput"
        assert all((s in subscribe) == wakes for s in trigger_subjects("cortex", "openclaw.events")), name


async def test_an_openclaw_store_session_start_wakes_it_too(
    nc: Client, js: JetStreamContext, wait_for: Callable[..., Awaitable[Any]]
) -> None:
    # the store's events reach CORTEX_EVENTS through a source, never on the contract's subjects: its
    # own publish of a trigger type is what the fetcher hears (a core publish here: no store needed)
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller", wake_on=trigger_subjects("cortex", "openclaw.events"))
    await fetcher.start()
    fetching = asyncio.create_task(fetcher.fetch(500, wait_s=300, linger_s=120))
    await publish(js, 1, 2)
    await wait_for(lambda: asyncio.sleep(0, fetcher.buffered()), within=30)
    await nc.publish("openclaw.events.main.msg_in", b"{}")  # not a trigger type: the linger goes on
    await nc.publish("openclaw.events.main.session_start", b"{}")
    assert seqs(await asyncio.wait_for(fetching, timeout=60)) == [1, 2]
    assert fetcher.wakes == 1
    await fetcher.stop()
