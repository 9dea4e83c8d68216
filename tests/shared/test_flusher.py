"""``shared.connection._CortexClient._flusher``: the commands of the tasks one turn of the event
loop makes ready go out in one socket write, in order, against a real server."""

from __future__ import annotations

import asyncio
from typing import Any

import nats

from shared.config import load_settings
from shared.connection import _CortexClient, connect


def _count_writes(nc: _CortexClient) -> list[int]:
    """The connection's socket writes, each as its number of commands (the real transport's
    ``writelines``, counted on the way through)."""
    writes: list[int] = []
    transport: Any = nc._transport
    writelines = transport.writelines

    def counted(buffers: list[bytes]) -> None:
        writes.append(sum(bytes(b).count(b"PUB ") for b in buffers))
        writelines(buffers)

    transport.writelines = counted
    return writes


async def test_commands_of_tasks_made_ready_after_the_flusher_was_woken_share_its_write(nats_url: str) -> None:
    """A publish wakes the flusher; the tasks a ``gather`` starts right after run in the next
    turn, after it: nats-py wrote the first command alone and the others in a second write (a
    ``send`` each, a read of the server each). They are one write now, and arrive in order."""
    nc = await connect(load_settings({"CORTEX_NATS_URL": nats_url}), "t")
    reader = await nats.connect(nats_url)
    try:
        assert isinstance(nc, _CortexClient)
        sub = await reader.subscribe("flush.>")
        await reader.flush()
        writes = _count_writes(nc)

        async def publish(i: int) -> None:
            await nc.publish(f"flush.{i}", str(i).encode())

        await nc.publish("flush.first", b"first")
        await asyncio.gather(*(publish(i) for i in range(5)))
        await nc.flush()  # its PING goes out after them: every command above was written by then
        assert writes[0] == 6, writes
        got = [(await sub.next_msg(timeout=5)).data for _ in range(6)]
        assert got == [b"first", b"0", b"1", b"2", b"3", b"4"]
    finally:
        await reader.close()
        await nc.close()


async def test_a_flush_and_a_request_still_complete_through_the_flusher(nats_url: str) -> None:
    """The waiters the flusher answers (``flush``'s force, a request's publish) all return: a
    burst of requests from many tasks is answered, every one, and the wake-ups asked while it
    wrote are not left waiting."""
    nc = await connect(load_settings({"CORTEX_NATS_URL": nats_url}), "t")
    responder = await nats.connect(nats_url)
    try:
        assert isinstance(nc, _CortexClient)

        async def echo(msg: Any) -> None:
            await msg.respond(msg.data)

        await responder.subscribe("echo", cb=echo)
        await responder.flush()
        answers = await asyncio.gather(*(nc.request("echo", str(i).encode(), timeout=5) for i in range(50)))
        assert [a.data for a in answers] == [str(i).encode() for i in range(50)]
        await asyncio.wait_for(nc.flush(), 5)
        assert nc._flush_queue is not None and nc._flush_queue.empty()
    finally:
        await responder.close()
        await nc.close()
