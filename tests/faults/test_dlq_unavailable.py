"""The dead-letter stream unavailable while a worker must dead-letter an event.

Publishing a dead letter is I/O like any other: while ``CORTEX_DLQ`` cannot take it the
event must stay unacked, the worker must report not ready and retry — and carry on by
itself once the stream is back (``cortex init``). The same failure class
(``nats.js.errors.NoStreamResponseError``, "no response from stream") is what a worker sees
for any JetStream publish while a nats-server is shutting down.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import nats
import pytest

from shared.names import DLQ_STREAM, EVENTS_STREAM

pytestmark = pytest.mark.faults


async def test_a_missing_dlq_stream_blocks_the_bad_event_until_it_is_back(
    nats_url: str, faults: Any
) -> None:
    faults.init(nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    port = faults.http_port()
    proc = faults.procs.start("channels", nats_url, CORTEX_METRICS_PORT=str(port))
    await faults.wait_http(port, "/readyz", 200)
    await js.delete_stream(DLQ_STREAM)
    await js.publish("cortex.msg.alice.received", b'{"id": "broken', headers={"Nats-Msg-Id": "bad-1"})

    async def not_ready_or_dead() -> str | None:
        if proc.poll() is not None:
            return f"exited {proc.returncode}"
        status, body = await asyncio.to_thread(faults.http_get, port, "/readyz")
        return body if status == 503 and "dead_letter" in body else None

    outcome = await faults.wait_for(not_ready_or_dead, within=30, interval=0.1)
    assert proc.poll() is None, f"the worker died instead of retrying ({outcome})"
    info = await js.consumer_info(EVENTS_STREAM, "channels")
    assert info.ack_floor.stream_seq == 0, "the bad event must not be acked before it is dead-lettered"

    faults.init(nats_url)  # the stream is back
    await faults.wait_caught_up(js, ["channels"], within=60)
    assert [d.stream_seq for d in await faults.dead_letters(js)] == [1]
    assert await faults.stop(proc, signal.SIGTERM) == 0
    await nc.close()
