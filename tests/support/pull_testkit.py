"""What the pull fetcher's tests share: a ``puller`` consumer on the events stream, events
published to it, and the server's own counts of what it holds."""

from __future__ import annotations

import msgspec
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from shared.config import load_settings
from shared.names import EVENTS_STREAM
from shared.provision import ConsumerSpec, provision


async def puller(js: JetStreamContext) -> JetStreamContext:
    """``js`` with the events stream and a ``puller`` consumer of the message family."""
    await provision(js, load_settings({}), [ConsumerSpec(name="puller", families=("msg",))])
    return js


async def publish(js: JetStreamContext, first: int, count: int) -> None:
    for i in range(first, first + count):
        payload = {"id": f"e{i}", "agent": "main", "session": "s", "ts": "2026-03-01T10:00:00Z",
                   "role": "user", "content": f"message {i}"}
        await js.publish("cortex.msg.main.received", msgspec.json.encode(payload))


def seqs(msgs: list[Msg]) -> list[int]:
    return [m.metadata.sequence.stream for m in msgs]


async def held(js: JetStreamContext) -> tuple[int, int]:
    """(delivered and not acked, not delivered yet) on the consumer, as the server counts them."""
    info = await js.consumer_info(EVENTS_STREAM, "puller")
    return info.num_ack_pending, info.num_pending
