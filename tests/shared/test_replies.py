"""``shared.connection.reply_all``: a batch's acks, terms and in-progress marks in one write
to a real server, with the effect each one-by-one answer had."""

from __future__ import annotations

import contextlib
from typing import Any

import nats
import pytest
from cortex_testkit import NotMet, wait_for
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig

from shared.config import load_settings
from shared.connection import ACK, IN_PROGRESS, TERM, _CortexClient, connect, reply_all

STREAM = "REPLIES"


async def _delivered(nc: Client, n: int) -> tuple[Any, list[Msg]]:
    js = nc.jetstream()
    await js.add_stream(name=STREAM, subjects=["replies.>"])
    for i in range(n):
        await js.publish(f"replies.{i}", str(i).encode())
    sub = await js.pull_subscribe("replies.>", durable="c",
                                  config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=300, max_deliver=5))
    msgs = await sub.fetch(n, timeout=5)
    assert len(msgs) == n
    return js, msgs


async def _ack_pending(nc: Client, js: Any, expected: int) -> int:
    """The consumer's ack-pending count once it is ``expected`` (or what it is after 10 s): the
    server has read the acks by the flush's PONG, but its consumer applies them on its own queue,
    so one read right after can still see them pending (CI, stop 53: 6 where 2)."""
    await nc.flush()
    seen = -1

    async def reached() -> bool:
        nonlocal seen
        seen = int((await js.consumer_info(STREAM, "c")).num_ack_pending)
        return seen == expected

    with contextlib.suppress(NotMet):  # the caller's assert says what it was
        await wait_for(reached, within=10)
    return seen


async def test_a_batch_s_acks_and_terms_are_one_write_and_each_takes_effect(nats_url: str) -> None:
    nc = await connect(load_settings({"CORTEX_NATS_URL": nats_url}), "t")
    try:
        assert isinstance(nc, _CortexClient)
        js, msgs = await _delivered(nc, 6)
        writes: list[bytes] = []
        send = nc._send_command

        async def counted(cmd: bytes, priority: bool = False) -> None:  # the real one, counted
            if cmd.startswith(b"PUB $JS.ACK."):  # not the test's own requests
                writes.append(cmd)
            await send(cmd, priority)

        nc._send_command = counted  # type: ignore[method-assign]
        sent = nc.stats["out_msgs"]
        await reply_all([(msgs[0], ACK), (msgs[1], TERM), (msgs[2], ACK), (msgs[3], ACK)])
        assert len(writes) == 1 and writes[0].count(b"PUB ") == 4
        assert nc.stats["out_msgs"] == sent + 4
        assert all(m._ackd for m in msgs[:4]) and not any(m._ackd for m in msgs[4:])
        assert await _ack_pending(nc, js, 2) == 2

        # in progress: still held, not marked acked; a message acked already is left alone
        await reply_all([(msgs[4], IN_PROGRESS), (msgs[5], IN_PROGRESS), (msgs[0], ACK)])
        assert len(writes) == 2 and writes[1].count(b"PUB ") == 2 and b"+WPI" in writes[1]
        assert not msgs[4]._ackd and not msgs[5]._ackd
        assert await _ack_pending(nc, js, 2) == 2

        await reply_all([(msgs[4], ACK), (msgs[5], TERM)])
        assert await _ack_pending(nc, js, 0) == 0
        info = await js.consumer_info(STREAM, "c")
        assert info.num_redelivered == 0 and info.num_pending == 0
    finally:
        await nc.close()


async def test_another_client_s_messages_are_answered_one_by_one(nats_url: str) -> None:
    nc = await nats.connect(nats_url)  # nats-py's own client: no one-write path
    try:
        js, msgs = await _delivered(nc, 3)
        await reply_all([(msgs[0], ACK), (msgs[1], TERM), (msgs[2], IN_PROGRESS)])
        assert msgs[0]._ackd and msgs[1]._ackd and not msgs[2]._ackd
        assert await _ack_pending(nc, js, 1) == 1
        await reply_all([(msgs[2], ACK)])
        assert await _ack_pending(nc, js, 0) == 0
    finally:
        await nc.close()


async def test_a_closed_connection_loses_the_acks_without_raising(nats_url: str) -> None:
    nc = await connect(load_settings({"CORTEX_NATS_URL": nats_url}), "t")
    _js, msgs = await _delivered(nc, 2)
    await nc.close()
    await reply_all([(msgs[0], ACK), (msgs[1], TERM)])  # the loop's rule: redelivered later, skipped then
    assert not msgs[0]._ackd and not msgs[1]._ackd  # not handed over: not marked


@pytest.mark.parametrize("amounts", [[0.0, 5e-05, 0.0001, 0.00011, 0.003, 1.0, 7.5, 0.0], [2e-05] * 40, []])
def test_a_tally_hands_the_histogram_what_observe_would_have(amounts: list[float]) -> None:
    from prometheus_client import CollectorRegistry, Histogram

    from shared.metrics import Tally

    registry = CollectorRegistry()
    buckets = (0.00005, 0.0001, 0.00025, 0.001, 0.01, 1.0)
    direct = Histogram("direct", "d", ["w"], buckets=buckets, registry=registry).labels("x")
    tallied = Histogram("tallied", "t", ["w"], buckets=buckets, registry=registry).labels("x")
    tally = Tally(tallied)
    for amount in amounts:
        direct.observe(amount)
        tally.observe(amount)

    def samples(name: str) -> list[tuple[str, float]]:
        return sorted((s.name.removeprefix(name), s.value) for m in registry.collect() if m.name == name
                      for s in m.samples if not s.name.endswith("_created"))

    if amounts:
        assert samples("tallied") != samples("direct")  # nothing handed over before the flush
    tally.flush()
    assert samples("tallied") == samples("direct")
    tally.flush()  # flushed once: a second flush adds nothing
    assert samples("tallied") == samples("direct")
