"""PullFetcher against a real nats-server: order, completeness, prompt delivery when caught
up, later deliveries of an open request, server errors."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import nats
import nats.js.errors
import pytest
from cortex_testkit import held_back, wait_for
from nats.aio.client import Client
from nats.js.client import JetStreamContext
from pull_testkit import publish, puller

from shared.names import EVENTS_STREAM
from shared.pull import PullFetcher


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    return await puller(nc.jetstream())


async def test_batches_come_in_stream_order_and_all_are_acked(
    nc: Client, js: JetStreamContext, wait_for: Callable[..., Awaitable[Any]]
) -> None:
    await publish(js, 1, 1200)
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller")
    await fetcher.start()
    seqs: list[int] = []
    while len(seqs) < 1200:
        msgs = await fetcher.fetch(500, wait_s=5)
        assert msgs, f"stalled after {len(seqs)} messages"
        assert len(msgs) <= 500
        for msg in msgs:
            seqs.append(msg.metadata.sequence.stream)
            await msg.ack()
    await fetcher.stop()
    await nc.flush()
    assert seqs == list(range(1, 1201))

    async def all_acked() -> bool:  # the server applies acks asynchronously
        info = await js.consumer_info(EVENTS_STREAM, "puller")
        return info.num_pending == 0 and info.num_ack_pending == 0

    await wait_for(all_acked, within=30)


async def test_a_caught_up_fetch_returns_a_new_message_at_once_not_at_its_timeout(
    nc: Client, js: JetStreamContext
) -> None:
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller")
    await fetcher.start()
    assert await fetcher.fetch(500, wait_s=0.2) == []  # nothing there: empty at the timeout
    waiting = asyncio.create_task(fetcher.fetch(500, wait_s=300))
    await publish(js, 1, 1)
    # nats-py's fetch would hold this batch open for more messages until its 300 s timeout
    msgs = await asyncio.wait_for(waiting, timeout=30)
    assert [m.metadata.sequence.stream for m in msgs] == [1]
    await msgs[0].ack()
    # the request is still open on the server: what it delivers later is the next batch, in order
    await publish(js, 2, 3)
    got: list[int] = []
    while len(got) < 3:
        more = await asyncio.wait_for(fetcher.fetch(500, wait_s=300), timeout=30)
        got += [m.metadata.sequence.stream for m in more]
        for m in more:
            await m.ack()
    assert got == [2, 3, 4]
    await fetcher.stop()


async def test_a_missing_consumer_raises_the_servers_error(nc: Client, js: JetStreamContext) -> None:
    fetcher = PullFetcher(nc, EVENTS_STREAM, "nobody-here")
    await fetcher.start()
    with pytest.raises(nats.js.errors.APIError):
        await fetcher.fetch(10, wait_s=5)
    await fetcher.stop()


async def test_fetch_before_start_is_a_clear_error(nc: Client) -> None:
    with pytest.raises(RuntimeError, match="start"):
        await PullFetcher(nc, EVENTS_STREAM, "puller").fetch(1, wait_s=0.1)


async def test_stop_gives_back_what_was_delivered_but_not_taken(nc: Client, js: JetStreamContext) -> None:
    await publish(js, 1, 1)
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller")
    await fetcher.start()
    # a request for two, shorter than stop's wait like a worker's: it delivers the one there is
    # and stays open for one more
    taken = await fetcher.fetch(2, wait_s=1.5)
    assert [m.metadata.sequence.stream for m in taken] == [1]
    await taken[0].ack_sync()  # confirmed: the probe below reads the ack floor
    await publish(js, 2, 9)  # the open request delivers 2, which nobody takes
    await fetcher.stop()  # the open request is waited out and what it delivered is nak'd

    assert await held_back(js, "puller") == 0
    again = PullFetcher(nc, EVENTS_STREAM, "puller")
    await again.start()
    rest: list[int] = []
    while len(rest) < 9:
        rest += [m.metadata.sequence.stream for m in await again.fetch(10, wait_s=5)]
    assert rest == list(range(2, 11))
    await again.stop()


def _starve_loop_until_request_ended(url: str, fetcher: PullFetcher, within: float = 30) -> None:
    """Hold this thread's event loop (a worker busy with a batch) until the server has ended the
    open pull request — no request waits on the consumer, asked on a connection of another
    thread — and the fetcher's own deadline for the request has passed."""
    async def ended() -> None:
        other = await nats.connect(url)
        try:
            async def no_request_waiting() -> bool:
                info = await other.jetstream().consumer_info(EVENTS_STREAM, "puller")
                return not info.num_waiting and time.monotonic() > fetcher._open_until

            await wait_for(no_request_waiting, within=within, interval=0.01)
        finally:
            await other.close()

    waiter = threading.Thread(target=asyncio.run, args=(ended(),))
    waiter.start()
    waiter.join(within + 5)
    assert not waiter.is_alive(), "the pull request was not ended"


async def test_a_late_end_of_an_earlier_request_does_not_end_the_open_one(
    nc: Client, js: JetStreamContext, nats_url: str
) -> None:
    """A busy worker may read a request's 408 only after it gave that request up and sent the
    next one. That status must not end the next request: a stop would then drop the subscription
    while the next request still delivers, and those messages stay unacked until ack_wait."""
    fetcher = PullFetcher(nc, EVENTS_STREAM, "puller")
    await fetcher.start()
    assert await fetcher.fetch(100, wait_s=0.05) == []  # request 1: expires after 50 ms
    # a worker busy with a batch: the event loop does not run while request 1 ends on the
    # server (its 408 waits in the socket) and the fetcher's own deadline for it passes
    _starve_loop_until_request_ended(nats_url, fetcher)
    fetching = asyncio.create_task(fetcher.fetch(100, wait_s=1))  # gives request 1 up, sends request 2
    await publish(js, 1, 1)
    first = await asyncio.wait_for(fetching, timeout=30)
    assert [m.metadata.sequence.stream for m in first] == [1]
    assert fetcher._open, "request 2 was taken for ended by request 1's late 408"
    await publish(js, 2, 20)  # request 2 delivers these while the worker stops
    await fetcher.stop()
    for msg in first:
        await msg.ack_sync()  # confirmed: a plain ack is applied by the server later, and the probe
        # below would count the still-unacked first message as held back

    assert await held_back(js, "puller") == 0
    info = await js.consumer_info(EVENTS_STREAM, "puller")
    assert info.ack_floor.stream_seq == 1 and info.num_ack_pending == 20  # given back: nak'd, not acked
