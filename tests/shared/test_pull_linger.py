"""A lingering PullFetcher (the throughput workers' ``CORTEX_RUNTIME_THROUGHPUT_LINGER_MS``) against a
real nats-server: what is stored during the linger comes in one batch, without a delivery a message
while it waits; a lone event is returned at the linger's end, not the fetch's; a full batch or
``hurry`` (a stop) ends it, and any wait, early; a cancelled linger gives everything back."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from cortex_testkit import held_back
from nats.aio.client import Client
from nats.js.client import JetStreamContext
from pull_testkit import held as delivered
from pull_testkit import publish, puller, seqs

from shared.names import EVENTS_STREAM
from shared.pull import PullFetcher


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    return await puller(nc.jetstream())


async def test_what_is_stored_during_the_linger_comes_in_one_batch_not_one_delivery_each(
    nc: Client, js: JetStreamContext, wait_for: Callable[..., Awaitable[Any]]
) -> None:
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller")
    await fetcher.start()
    fetching = asyncio.create_task(fetcher.fetch(500, wait_s=60, linger_s=3.0))
    await publish(js, 1, 1)
    await wait_for(lambda: asyncio.sleep(0, fetcher.buffered()), within=30)  # the first wakes the fetch
    await publish(js, 2, 4)
    # while it lingers nothing more is delivered: the server holds them, the process sleeps
    assert await delivered(js) == (1, 4)
    assert len(fetcher.buffered()) == 1
    batch = await asyncio.wait_for(fetching, timeout=30)
    assert seqs(batch) == [1, 2, 3, 4, 5]  # without the linger: [1], then each alone
    for msg in batch:
        await msg.ack()
    await fetcher.stop()


async def test_a_lone_event_is_returned_at_the_lingers_end_not_at_the_fetchs_wait(
    nc: Client, js: JetStreamContext
) -> None:
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller")
    await fetcher.start()
    fetching = asyncio.create_task(fetcher.fetch(500, wait_s=300, linger_s=0.2))
    await publish(js, 1, 1)
    # the request made at the linger's end returns at once when nothing more is there (its end
    # is a status): not after the 300 s the fetch may wait, nor a full batch
    assert seqs(await asyncio.wait_for(fetching, timeout=30)) == [1]
    await fetcher.stop()


async def test_a_backlog_is_not_held_back_and_comes_whole_in_order(
    nc: Client, js: JetStreamContext, wait_for: Callable[..., Awaitable[Any]]
) -> None:
    await publish(js, 1, 40)  # stored before the worker looks: it is behind, not idle
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller")
    await fetcher.start()
    # the first message says more are stored: no two minutes' sleep, and the request at its end
    # asks for the room (500), not only the batch wanted (5)
    first = await asyncio.wait_for(fetcher.fetch(500, wait_s=300, linger_s=120, enough=5), timeout=30)
    assert len(first) >= 5
    got = seqs(first)
    while len(got) < 40:
        got += seqs(await asyncio.wait_for(fetcher.poll(500, 5.0), timeout=30))
        if len(got) < 40:
            await wait_for(lambda: asyncio.sleep(0, fetcher.buffered()), within=30)
    assert got == list(range(1, 41))
    assert await delivered(js) == (40, 0)  # every one delivered by the requests made so far
    await fetcher.stop()


async def test_a_full_batch_ends_the_linger_early(nc: Client, js: JetStreamContext) -> None:
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller")
    await fetcher.start()
    await fetcher.ask(10, 60)  # a request for many open (a backlog's): its deliveries come as they are stored
    fetching = asyncio.create_task(fetcher.fetch(500, wait_s=60, linger_s=120, enough=3))
    await publish(js, 1, 3)
    assert seqs(await asyncio.wait_for(fetching, timeout=30)) == [1, 2, 3]
    await fetcher.stop()


async def test_hurry_ends_a_linger_with_what_it_holds(
    nc: Client, js: JetStreamContext, wait_for: Callable[..., Awaitable[Any]]
) -> None:
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller")
    await fetcher.start()
    fetching = asyncio.create_task(fetcher.fetch(500, wait_s=300, linger_s=120))
    await publish(js, 1, 1)
    await wait_for(lambda: asyncio.sleep(0, fetcher.buffered()), within=30)
    fetcher.hurry()  # the loop stops
    assert seqs(await asyncio.wait_for(fetching, timeout=30)) == [1]
    # and no later fetch waits: nothing in hand, it returns none at once (not after its 300 s)
    assert await asyncio.wait_for(fetcher.fetch(500, wait_s=300, linger_s=120), timeout=30) == []
    await fetcher.stop()


async def test_a_cancelled_linger_gives_everything_back(
    nc: Client, js: JetStreamContext, wait_for: Callable[..., Awaitable[Any]]
) -> None:
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller")
    await fetcher.start()
    fetching = asyncio.create_task(fetcher.fetch(500, wait_s=1.0, linger_s=120))
    await publish(js, 1, 1)
    await wait_for(lambda: asyncio.sleep(0, fetcher.buffered()), within=30)
    await publish(js, 2, 2)
    fetching.cancel()  # the worker's task cancelled mid-linger
    with pytest.raises(asyncio.CancelledError):
        await fetching
    await fetcher.stop()
    assert await held_back(js, "puller") == 0
    again = PullFetcher(nc, EVENTS_STREAM, "puller")
    await again.start()
    got: list[int] = []
    while len(got) < 3:
        got += seqs(await again.fetch(10, wait_s=5))
    assert got == [1, 2, 3]
    await again.stop()
