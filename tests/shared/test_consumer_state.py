"""``shared.natsio.consumer_state``: a consumer's progress as nats-py's ``consumer_info`` reads it
— the same numbers for every state, the same errors — decoded into the four fields a wait reads."""

from __future__ import annotations

import nats.js.errors
import pytest
from nats.aio.client import Client
from nats.js.api import AckPolicy, ConsumerConfig

from shared.natsio import ConsumerState, consumer_state


def _same(state: ConsumerState, info: object) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    floor = getattr(info, "ack_floor", None)
    theirs = (int(getattr(info, "num_pending", 0) or 0), int(getattr(info, "num_ack_pending", 0) or 0),
              int(getattr(info, "num_waiting", 0) or 0), int(floor.stream_seq or 0) if floor is not None else 0)
    return (state.num_pending, state.num_ack_pending, state.num_waiting, state.acked), theirs


async def test_a_consumer_s_state_is_what_consumer_info_says_at_every_step(nc: Client) -> None:
    js = nc.jetstream()
    await js.add_stream(name="STATE", subjects=["state.>"])
    for i in range(8):
        await js.publish(f"state.{i % 2}", b"x")
    sub = await js.pull_subscribe("state.>", durable="w",
                                  config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=300))
    mine, theirs = _same(await consumer_state(js, "STATE", "w"), await js.consumer_info("STATE", "w"))
    assert mine == theirs == (8, 0, 0, 0)
    msgs = await sub.fetch(5, timeout=5)
    for msg in msgs[:3]:
        await msg.ack_sync()
    mine, theirs = _same(await consumer_state(js, "STATE", "w"), await js.consumer_info("STATE", "w"))
    assert mine == theirs == (3, 2, 0, 3)  # three acked (the floor), two in flight, three not delivered
    for msg in msgs[3:]:
        await msg.ack_sync()
    for msg in await sub.fetch(3, timeout=5):
        await msg.ack_sync()
    mine, theirs = _same(await consumer_state(js, "STATE", "w"), await js.consumer_info("STATE", "w"))
    assert mine == theirs == (0, 0, 0, 8)


async def test_no_such_consumer_or_stream_raises_as_consumer_info_does(nc: Client) -> None:
    js = nc.jetstream()
    await js.add_stream(name="STATE2", subjects=["state2.>"])
    for stream, consumer in (("STATE2", "nobody"), ("NOSTREAM", "w")):
        with pytest.raises(nats.js.errors.NotFoundError) as theirs:
            await js.consumer_info(stream, consumer)
        with pytest.raises(nats.js.errors.NotFoundError) as mine:
            await consumer_state(js, stream, consumer)
        assert (mine.value.code, mine.value.err_code) == (theirs.value.code, theirs.value.err_code)
