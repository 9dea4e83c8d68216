"""A durable consumer that is gone from the server — deleted, or kept in the server's memory
(``CORTEX_RUNTIME_CONSUMER_STATE_IN_MEMORY``) by a server that restarted — is created again by
its worker, which goes on from its checkpoint; the setting makes consumers whose state the server
keeps in memory instead of a file it rewrites up to every 10 ms (docs/BENCHMARKS.md, issue 39,
twenty-second round). A real nats-server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nats.js.errors
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from shared.config import load_settings
from shared.consume import ConsumeLoop, LoopConfig
from shared.errors import ConsumerLost
from shared.health import Health
from shared.kv import kv_read
from shared.names import BUCKET_THREADS, EVENTS_STREAM
from shared.projection import ProjectionHandler
from shared.provision import ConsumerSpec, provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs

MEMORY = {"CORTEX_RUNTIME_CONSUMER_STATE_IN_MEMORY": "true"}


async def _publish(js: JetStreamContext, first: int, last: int) -> None:
    for i in range(first, last + 1):
        event = {"id": f"m{i}", "agent": "alice", "session": "s", "ts": f"2026-03-01T10:{i:02d}:00Z",
                 "role": "user", "content": f"Message number {i} about the launch plan."}
        await js.publish("cortex.msg.alice.received", json.dumps(event).encode())


async def _events_in_threads_doc(js: JetStreamContext) -> int:
    raw, _ = await kv_read(await js.key_value(BUCKET_THREADS), "alice")
    return int(json.loads(raw)["integrity"]["events"]) if raw else 0


async def test_the_setting_makes_consumers_whose_state_the_server_keeps_in_memory(nc: Client) -> None:
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="on-file", families=("msg",))])
    await provision(js, load_settings(MEMORY), [ConsumerSpec(name="in-memory", families=("msg",))])
    assert not (await js.consumer_info(EVENTS_STREAM, "on-file")).config.mem_storage
    assert (await js.consumer_info(EVENTS_STREAM, "in-memory")).config.mem_storage is True


async def test_a_loop_whose_consumer_is_deleted_ends_with_consumer_lost(nc: Client, wait_for: Any) -> None:
    """Without it the loop fetched from a consumer that no longer exists for ever ("fetch failed")."""
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="lost", families=("msg",))])
    handler = ProjectionHandler(js, "lost", "lost@test", [])
    loop = ConsumeLoop(js, worker="lost", consumer="lost", handler=handler,
                       config=LoopConfig(fetch_timeout_s=0.1, retry_base_s=0.01, retry_max_s=0.05),
                       health=Health("lost"))
    task = asyncio.create_task(loop.run())
    try:
        await _publish(js, 1, 3)
        await wait_for(lambda: _true(loop.checkpoint == 3), within=15)
        await js.delete_consumer(EVENTS_STREAM, "lost")
        with pytest.raises(ConsumerLost):
            await asyncio.wait_for(task, timeout=20)
    finally:
        loop.stop()
        if not task.done():
            await asyncio.wait_for(task, timeout=15)


async def test_a_worker_whose_memory_consumer_is_gone_creates_it_again_and_goes_on(
    nc: Client, tmp_path: Path, wait_for: Any
) -> None:
    """What a restarted server does to a consumer kept in memory (it forgets it), done by deleting it:
    the threads worker creates it again — in memory — rewinds it to its checkpoint and applies the
    events published after, each once (the document counts every event once)."""
    settings = load_settings({"CORTEX_NATS_URL": "nats://unused", "CORTEX_DATA_DIR": str(tmp_path), **MEMORY})
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, [all_specs()["threads"]], __version__)
    worker = asyncio.create_task(host.run_consumer(nc, all_specs()["threads"]))
    try:
        await _publish(js, 1, 5)
        await wait_for(lambda: _eq(_events_in_threads_doc(js), 5), within=30)
        await js.delete_consumer(EVENTS_STREAM, "threads")
        await _publish(js, 6, 8)
        await wait_for(lambda: _eq(_events_in_threads_doc(js), 8), within=60)
        assert (await js.consumer_info(EVENTS_STREAM, "threads")).config.mem_storage is True
    finally:
        host.stop.set()
        await asyncio.wait_for(worker, timeout=30)


async def test_a_consumer_on_file_is_not_lost(nc: Client) -> None:
    """The default: the consumer is the server's file, as before (its info is there after a lookup)."""
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="kept", families=("msg",))])
    with pytest.raises(nats.js.errors.NotFoundError):
        await js.consumer_info(EVENTS_STREAM, "not-made")
    assert (await js.consumer_info(EVENTS_STREAM, "kept")).name == "kept"


async def _true(value: bool) -> bool:
    return value


async def _eq(coro: Any, value: Any) -> bool:
    return bool(await coro == value)
