"""SIGKILL a worker mid-batch under load, restart it: its documents equal an uninterrupted run's."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.js.client import JetStreamContext

from shared.embedded import EmbeddedNats
from shared.kv import kv_read
from shared.names import BUCKET_CHECKPOINTS, EVENTS_STREAM

pytestmark = pytest.mark.faults

N_EVENTS = 6000
AGENTS = 8
WORKERS = ("channels",)
BUCKETS = ("cortex_channels",)


def init(url: str) -> None:
    import os

    result = subprocess.run([sys.executable, "-m", "workers", "init"], capture_output=True, text=True,
                            env={**os.environ, "CORTEX_NATS_URL": url}, timeout=60)
    assert result.returncode == 0, result.stderr


async def publish_all(js: JetStreamContext, events: list[tuple[str, bytes, str]]) -> None:
    futures = [await js.publish_async(s, d, headers={"Nats-Msg-Id": i}) for s, d, i in events]
    await asyncio.gather(*futures)


async def checkpoint(js: JetStreamContext, consumer: str) -> int:
    raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), consumer)
    return int(raw) if raw else 0


async def caught_up(js: JetStreamContext, consumers: tuple[str, ...], last_seq: int) -> bool:
    for name in consumers:
        info = await js.consumer_info(EVENTS_STREAM, name)
        if info.num_pending or info.num_ack_pending or await checkpoint(js, name) < last_seq:
            return False
    return True


async def documents(js: JetStreamContext, agents: int) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for bucket in BUCKETS:
        kv = await js.key_value(bucket)
        for a in range(agents):
            raw, _ = await kv_read(kv, f"agent-{a}")
            out[f"{bucket}/agent-{a}"] = raw
    return out


async def clean_run(tmp: Path, events: list[Any], procs: Any, wait_for: Any) -> dict[str, bytes | None]:
    with EmbeddedNats(str(tmp / "clean")) as server:
        init(server.url)
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await publish_all(js, events)
        for name in WORKERS:
            procs.start(name, server.url)
        await wait_for(lambda: caught_up(js, WORKERS, len(events)), within=120)
        docs = await documents(js, AGENTS)
        await nc.close()
        procs.stop_all()
        return docs


async def test_sigkill_mid_batch_then_restart_equals_an_uninterrupted_run(
    nats_url: str, tmp_path: Path, workers_procs: Any, make_chat_events: Any, wait_for: Any
) -> None:
    events = make_chat_events(N_EVENTS, AGENTS)
    expected = await clean_run(tmp_path, events, workers_procs, wait_for)
    assert all(expected.values())

    init(nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    env = {"CORTEX_RUNTIME_BATCH_SIZE": "100"}
    procs = {name: workers_procs.start(name, nats_url, **env) for name in WORKERS}
    # under load: the first half still being published when the kills land; the second half
    # only after every worker is dead, so each is killed before it caught up, however fast it is
    first, rest = events[:N_EVENTS // 2], events[N_EVENTS // 2:]
    publisher = asyncio.create_task(publish_all(js, first))
    for name, proc in procs.items():
        await wait_for(lambda name=name: _above(checkpoint(js, name), 300), within=60)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        print(f"{name} killed at checkpoint {await checkpoint(js, name)}")
    await publisher
    await publish_all(js, rest)
    for name in WORKERS:
        workers_procs.start(name, nats_url, **env)
    await wait_for(lambda: caught_up(js, WORKERS, len(events)), within=120)
    assert await documents(js, AGENTS) == expected
    await nc.close()


async def _above(value: Any, floor: int) -> bool:
    return bool(await value > floor)
