"""Backups of the KV buckets (docs/operations.md, "Backups"): a bucket is the stream
KV_<bucket>, so `nats stream backup` / `nats stream restore` apply. The nats CLI is not
installable here; this test drives the same JetStream API it uses ($JS.API.STREAM.SNAPSHOT
and $JS.API.STREAM.RESTORE) with nats-py, restores into a fresh server and compares."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import producer
import pytest
from cortex_testkit import NotMet, bucket_keys, kv_history, wait_for
from nats.aio.client import Client
from nats.aio.msg import Msg

from shared.embedded import EmbeddedNats
from shared.names import BUCKET_CHANNELS, BUCKET_CHECKPOINTS, BUCKET_COMMITMENTS, BUCKET_DECISIONS, BUCKET_THREADS

CHUNK = 64 * 1024
BUCKETS = (BUCKET_THREADS, BUCKET_DECISIONS, BUCKET_COMMITMENTS, BUCKET_CHANNELS, BUCKET_CHECKPOINTS)
WORKERS = ("threads", "decisions", "channels")
AGENTS = ("agent-a", "agent-b")


def _api_error(body: dict[str, Any]) -> None:
    assert "error" not in body, body["error"]


async def snapshot(nc: Client, stream: str) -> tuple[bytes, dict[str, Any]]:
    """`nats stream backup`: the server streams chunks to an inbox (acked where it asks for an
    ack: flow control); an empty message (status 204 EOF) ends it."""
    inbox = nc.new_inbox()
    chunks: list[bytes] = []
    done = asyncio.Event()

    async def on_chunk(msg: Msg) -> None:
        if not msg.data:
            done.set()
            return
        chunks.append(msg.data)
        if msg.reply:
            await nc.publish(msg.reply, b"")

    sub = await nc.subscribe(inbox, cb=on_chunk)
    try:
        request = {"deliver_subject": inbox, "chunk_size": CHUNK}
        reply = await nc.request(f"$JS.API.STREAM.SNAPSHOT.{stream}", json.dumps(request).encode(), timeout=10)
        meta = json.loads(reply.data)
        _api_error(meta)
        await asyncio.wait_for(done.wait(), timeout=30)
    finally:
        await sub.unsubscribe()
    return b"".join(chunks), meta


async def restore(nc: Client, stream: str, data: bytes, meta: dict[str, Any]) -> dict[str, Any]:
    """`nats stream restore`: announce config and state, send the chunks, an empty message ends it."""
    request = {"config": meta["config"], "state": meta["state"]}
    reply = json.loads((await nc.request(f"$JS.API.STREAM.RESTORE.{stream}", json.dumps(request).encode(),
                                         timeout=10)).data)
    _api_error(reply)
    for start in range(0, len(data), CHUNK):
        await nc.request(reply["deliver_subject"], data[start:start + CHUNK], timeout=10)
    done: dict[str, Any] = json.loads((await nc.request(reply["deliver_subject"], b"", timeout=30)).data)
    _api_error(done)
    return done


async def bucket_contents(nc: Client, bucket: str) -> dict[str, tuple[bytes | None, int]]:
    kv = await nc.jetstream().key_value(bucket)
    out = {}
    for key in await bucket_keys(kv):
        entry = await kv.get(key)
        out[key] = (entry.value, entry.revision or 0)
    return out


async def _feed(url: str) -> None:
    nc = await nats.connect(url)
    try:
        for agent in AGENTS:
            gateway = producer.Gateway(nc, agent)
            await gateway.session_start("s1", channel="webchat")
            await gateway.message("s1", "user", "We decided to use Redis for the cache because the DB is slow.")
            await gateway.message("s1", "assistant", "I'll benchmark the cache tomorrow.", channel="webchat")
        await _wait_for_checkpoints(nc, last_seq=3 * len(AGENTS))
    finally:
        await nc.close()


@pytest.fixture
def derived(tmp_path: Path) -> Iterator[EmbeddedNats]:
    """A server whose buckets hold documents derived by real workers."""
    server = EmbeddedNats(str(tmp_path / "source"))
    server.start()
    env = {**os.environ, "CORTEX_NATS_URL": server.url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
           "CORTEX_LOG_LEVEL": "WARNING", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100"}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        subprocess.run([sys.executable, "-m", "workers", "init"], env=env, check=True, capture_output=True,
                       timeout=60)
        procs = [subprocess.Popen([sys.executable, "-m", "workers", "worker", name], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
                 for name in WORKERS]
        asyncio.run(_feed(server.url))
        yield server
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(10)
        server.stop()


async def _wait_for_checkpoints(nc: Client, last_seq: int) -> None:
    """Every worker has applied the stream up to ``last_seq``."""
    kv = await nc.jetstream().key_value(BUCKET_CHECKPOINTS)
    values: list[int] = []

    async def caught_up() -> bool:
        values.clear()
        for worker in WORKERS:
            try:
                values.append(int((await kv.get(worker)).value or b"0"))
            except Exception:
                values.append(0)
        return min(values) >= last_seq

    try:
        await wait_for(caught_up, within=30, interval=0.05)
    except NotMet:
        raise AssertionError(f"workers did not catch up: checkpoints {values}") from None


async def test_kv_buckets_restore_into_a_fresh_server_with_the_same_documents(
        derived: EmbeddedNats, tmp_path: Path) -> None:
    source = await nats.connect(derived.url)
    backups: dict[str, tuple[bytes, dict[str, Any]]] = {}
    try:
        before = {b: await bucket_contents(source, b) for b in BUCKETS}
        for bucket in BUCKETS:
            backups[bucket] = await snapshot(source, f"KV_{bucket}")
    finally:
        await source.close()
    assert all(before[b] for b in (BUCKET_THREADS, BUCKET_DECISIONS, BUCKET_CHANNELS, BUCKET_CHECKPOINTS))

    with EmbeddedNats(str(tmp_path / "fresh")) as fresh:
        target = await nats.connect(fresh.url)
        try:
            for bucket, (data, meta) in backups.items():
                await restore(target, f"KV_{bucket}", data, meta)
            after = {b: await bucket_contents(target, b) for b in BUCKETS}
            history = await kv_history(target.jetstream(), BUCKET_THREADS, AGENTS[0])
        finally:
            await target.close()
    assert after == before  # every key: the same bytes at the same revision
    assert len(history) >= 1 and history[-1] == before[BUCKET_THREADS][AGENTS[0]][0]
