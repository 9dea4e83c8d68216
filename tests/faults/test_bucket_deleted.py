"""A document bucket deleted under a running worker (``js.delete_key_value("cortex_channels")``).

The contract's promise: the worker recreates the bucket or fails its readiness with a clear
reason — it never drops an event silently:

* while the bucket is missing nothing is acked, nothing is dead-lettered, the checkpoint
  stands still and ``/readyz`` answers 503 naming the bucket and ``cortex init``;
* once the bucket is back (empty) the worker rebuilds: it rewinds to sequence 1 and derives
  the lost documents again, so they equal a clean run.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import nats
import pytest
from nats.js.client import JetStreamContext

from shared.names import EVENTS_STREAM

pytestmark = pytest.mark.faults

AGENTS = 3
FIRST, SECOND = 300, 300


async def start_then_delete(nats_url: str, faults: Any, events: list[Any]) -> tuple[JetStreamContext, Any, int]:
    """A channels worker that applied FIRST events; then its bucket is deleted and SECOND more
    events are published. Returns once the worker has fetched some of them and reports not ready."""
    faults.init(nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    port = faults.http_port()
    proc = faults.procs.start("channels", nats_url, CORTEX_METRICS_PORT=str(port))
    await faults.publish_all(js, events[:FIRST])
    await faults.wait_caught_up(js, ["channels"], within=60)
    await faults.wait_http(port, "/readyz", 200)

    await js.delete_key_value("cortex_channels")
    await faults.publish_all(js, events[FIRST:])
    # not ready: the worker fetched events after the deletion and cannot commit them
    await faults.wait_http(port, "/readyz", 503, "channels: not ready", within=30)
    return js, proc, port


async def test_deleted_bucket_blocks_acks_and_readiness_and_nothing_is_dead_lettered(
    nats_url: str, faults: Any, make_chat_events: Any
) -> None:
    events = make_chat_events(FIRST + SECOND, AGENTS, seed=31)
    js, proc, port = await start_then_delete(nats_url, faults, events)

    info = await js.consumer_info(EVENTS_STREAM, "channels")
    assert info.ack_floor.stream_seq == FIRST, "events after the deletion must not be acked"
    assert await faults.checkpoint(js, "channels") == FIRST
    assert await faults.dead_letters(js) == []
    assert proc.poll() is None

    faults.init(nats_url)  # the operator's fix: recreate the buckets
    await faults.wait_http(port, "/readyz", 200, within=60)
    await faults.wait_caught_up(js, ["channels"], within=60)
    assert await faults.dead_letters(js) == []
    assert await faults.stop(proc, signal.SIGTERM) == 0


async def test_readiness_reason_names_the_deleted_bucket(nats_url: str, faults: Any, make_chat_events: Any) -> None:
    events = make_chat_events(FIRST + SECOND, AGENTS, seed=32)
    _, _, port = await start_then_delete(nats_url, faults, events)
    body = await faults.wait_http(port, "/readyz", 503, "cortex_channels", within=5)
    assert "cortex init" in body


async def test_after_the_bucket_is_recreated_documents_equal_a_clean_run_or_the_worker_stays_not_ready(
    nats_url: str, faults: Any, make_chat_events: Any
) -> None:
    events = make_chat_events(FIRST + SECOND, AGENTS, seed=33)
    expected = await faults.clean_documents(events, ["channels"], ["cortex_channels"])
    js, _, port = await start_then_delete(nats_url, faults, events)

    faults.init(nats_url)
    try:
        await faults.wait_caught_up(js, ["channels"], within=20)
    except AssertionError:  # acceptable: the worker refuses to go on without a rebuild
        status, body = await asyncio.to_thread(faults.http_get, port, "/readyz")
        assert status == 503 and "cortex_channels" in body, body
        return
    got = await faults.documents(js, ["cortex_channels"], faults.agents(events))
    assert got == expected, faults.differences(got, expected)


@pytest.mark.timeout(300)
async def test_a_bucket_deleted_while_the_worker_was_stopped_is_rebuilt_when_it_starts(
    nats_url: str, faults: Any, make_chat_events: Any
) -> None:
    """Issue 44 item 9: the bucket gone while the worker was stopped, made again (empty) by the
    restart's provisioning (`cortex up`, the init Job): the worker went on from its checkpoint,
    every other agent's document silently gone (~65 keys became 1) while readiness said ready.
    A bucket younger than the checkpoint now makes the worker derive everything again from
    sequence 1: the documents equal a clean run's."""
    events = make_chat_events(FIRST + SECOND, AGENTS, seed=34)
    quiet = events[:FIRST] + [e for e in events[FIRST:] if faults.agent_of(e[0]) == faults.agents(events)[0]]
    expected = await faults.clean_documents(quiet, ["channels"], ["cortex_channels"])
    faults.init(nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        proc = faults.procs.start("channels", nats_url)
        await faults.publish_all(js, events[:FIRST])
        await faults.wait_caught_up(js, ["channels"], within=60)
        assert await faults.stop(proc, signal.SIGTERM) == 0

        await js.delete_key_value("cortex_channels")
        faults.init(nats_url)  # the restart's provisioning makes it again, empty
        await faults.publish_all(js, quiet[FIRST:])  # only one agent speaks after the restart
        proc = faults.procs.start("channels", nats_url)
        await faults.wait_caught_up(js, ["channels"], within=120)
        got = await faults.documents(js, ["cortex_channels"], faults.agents(quiet))
        assert got == expected, faults.differences(got, expected)
        assert await faults.stop(proc, signal.SIGTERM) == 0
    finally:
        await nc.close()
