"""``cortex_testkit.caught_up``: what tests wait on after publishing — true only once the
consumer has acked every stored message of its filter (its pending count alone lags a
publish for a moment), and messages outside its filter do not hold it back."""

from __future__ import annotations

from cortex_testkit import caught_up
from nats.aio.client import Client

from shared.config import load_settings
from shared.names import EVENTS_STREAM
from shared.provision import ConsumerSpec, provision


async def test_caught_up_follows_the_stream_past_the_ack_floor(nc: Client) -> None:
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="t", families=("msg",))])
    assert await caught_up(js, "t")  # an empty stream
    await js.publish("cortex.session.a.start", b"{}")  # not in its filter
    assert await caught_up(js, "t")
    await js.publish("cortex.msg.a.received", b"{}")
    assert not await caught_up(js, "t")
    sub = await js.pull_subscribe_bind("t", stream=EVENTS_STREAM)
    (msg,) = await sub.fetch(1, timeout=5)
    assert not await caught_up(js, "t")  # delivered, not acked
    await msg.ack_sync()
    assert await caught_up(js, "t")
