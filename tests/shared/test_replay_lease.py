"""A replay whose lease is lost part-way (a pause past the TTL, another instance taking it)
fails with one line saying where it stopped and what to do — it never reports a replay
that stopped short as done. A real nats-server; the threads worker, held inside its first
event until the lease is gone."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client

from shared.config import load_settings
from shared.lease import Lease
from shared.provision import provision
from shared.replay import ReplayError, ReplayProgress, run_replay
from shared.runtime import WorkerContext, WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs


class LeaseLostLog(logging.Handler):
    """Sets ``lost`` when the lease of ``consumer`` is reported lost (the keeper's own line)."""

    def __init__(self, consumer: str) -> None:
        super().__init__()
        self.consumer = consumer
        self.lost = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() == "lease_lost" and getattr(record, "consumer", None) == self.consumer:
            self.lost.set()


async def test_a_replay_that_loses_its_lease_fails_and_says_where_it_stopped(nc: Client, tmp_path: Path) -> None:
    settings = load_settings({"CORTEX_NATS_URL": "nats://unused", "CORTEX_DATA_DIR": str(tmp_path),
                              "CORTEX_RUNTIME_LEASE_TTL_S": "3"})
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    for i in range(5):
        event = {"id": f"m{i}", "agent": "alice", "session": "s", "ts": f"2026-03-01T10:0{i}:00Z",
                 "role": "user", "content": f"We decided to ship feature {i}."}
        await js.publish("cortex.msg.alice.received", json.dumps(event).encode())

    spec = all_specs()["threads"]
    assert spec.build is not None
    build = spec.build
    entered, lost = asyncio.Event(), LeaseLostLog("threads")

    async def held_build(ctx: WorkerContext) -> Any:
        handler = await build(ctx)
        apply = handler.apply

        async def held(env: Any) -> bool:  # the first event waits until the lease is gone
            entered.set()
            await lost.lost.wait()
            return await apply(env)

        handler.apply = held  # type: ignore[method-assign]
        return handler

    logging.getLogger("shared.lease").addHandler(lost)
    progress: list[ReplayProgress] = []
    try:
        host = WorkerHost(settings, [spec], __version__)
        replay = asyncio.create_task(run_replay(host, js, [dataclasses.replace(spec, build=held_build)], None,
                                                False, lambda p: progress.extend(p[len(progress):])))
        await asyncio.wait_for(entered.wait(), timeout=30)
        await Lease(js, "threads", "another-instance", 30).take_over()  # the replay's lease is taken
        with pytest.raises(ReplayError) as failed:
            await asyncio.wait_for(replay, timeout=60)
    finally:
        logging.getLogger("shared.lease").removeHandler(lost)
    message = str(failed.value)
    assert message.startswith("threads: lost the lease at sequence 0 of 5 (not renewed within 10 s, "), message
    assert message.endswith("run the replay again for a complete one"), message
    assert [(p.worker, p.done, p.phase) for p in progress] == [("threads", False, "lost the lease")]


async def test_a_lease_is_held_no_longer_than_the_leases_bucket_keeps_a_key(nc: Client, tmp_path: Path) -> None:
    """cortex_leases' max age removes a key whatever TTL it was written with: a replay's 10 s,
    or a worker configured longer than init, renews at a third of the bucket's age instead
    (else a standby takes the expired key and the holder loses it). A bucket made by an
    older init with the workers' 2 s keeps capping a replay to 2 s."""
    from shared.lease import holdable_ttl
    from shared.provision import ensure_bucket

    js = nc.jetstream()
    await ensure_bucket(js, "cortex_leases", 2.0)  # as init made it before leases outlived the workers' TTL
    assert await holdable_ttl(js, 10) == 2
    assert await holdable_ttl(js, 2) == 2
    assert await holdable_ttl(js, 1) == 1


async def test_workers_with_a_short_lease_leave_a_replay_its_ten_seconds(nc: Client, tmp_path: Path) -> None:
    """Provisioned for workers with a 2 s lease, cortex_leases keeps a key 10 s, so a replay
    beside them holds its lease 10 s (a replay beside a test fleet under load lost its 2 s
    lease to a pause while it compiled its patterns); a worker's own key still lapses at its
    2 s (the key is written with its holder's TTL), so a standby takes over as quickly."""
    from shared.lease import holdable_ttl

    js = nc.jetstream()
    await provision(js, load_settings({"CORTEX_DATA_DIR": str(tmp_path), "CORTEX_RUNTIME_LEASE_TTL_S": "2"}), [])
    assert (await js.stream_info("KV_cortex_leases")).config.max_age == 10
    assert await holdable_ttl(js, 10) == 10
    assert await holdable_ttl(js, 30) == 10
    worker = Lease(js, "threads", "worker-1", await holdable_ttl(js, 2))
    assert await worker.acquire(asyncio.Event())
    stored = await js.get_last_msg("KV_cortex_leases", "$KV.cortex_leases.threads")
    assert stored.headers is not None and stored.headers.get("Nats-TTL") == "2", stored.headers
    await worker.release()


async def test_a_replay_that_cannot_take_one_lease_changes_nothing_and_ends(nc: Client, tmp_path: Path) -> None:
    """Another replay holds (and renews) the decisions worker's lease. Before: the threads
    worker of this replay deleted its documents, reset its checkpoint and then waited at the
    start line for decisions for ever — `cortex replay` hung, holding the threads lease, and
    the live threads worker never got it back. Now every lease is taken before anything is
    deleted; one refused ends the whole replay with the reason, the others' leases go back."""
    from shared.kv import kv_read
    from shared.names import BUCKET_CHECKPOINTS, BUCKET_LEASES

    settings = load_settings({"CORTEX_NATS_URL": "nats://unused", "CORTEX_DATA_DIR": str(tmp_path),
                              "CORTEX_RUNTIME_LEASE_TTL_S": "2"})
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    await js.publish("cortex.msg.alice.received", json.dumps({
        "id": "m0", "agent": "alice", "session": "s", "ts": "2026-03-01T10:00:00Z", "role": "user",
        "content": "We decided to ship it."}).encode())
    checkpoints = await js.key_value(BUCKET_CHECKPOINTS)
    await checkpoints.put("threads", b"1")  # where the live threads worker is
    other = Lease(js, "decisions", "replay-other", 2)
    assert await other.acquire(asyncio.Event())
    keeper = asyncio.create_task(other.keep_alive(lambda: None))  # the other replay is alive: it renews
    specs = [all_specs()["threads"], all_specs()["decisions"]]
    progress: list[ReplayProgress] = []
    try:
        with pytest.raises(ReplayError) as failed:  # bounded: before the fix this waited for ever
            await asyncio.wait_for(run_replay(WorkerHost(settings, specs, __version__), js, specs, None, False,
                                              lambda p: progress.extend(p[len(progress):])), timeout=60)
    finally:
        keeper.cancel()
        await asyncio.gather(keeper, return_exceptions=True)
    assert str(failed.value) == "decisions: another replay is running (replay-other)"  # the cause alone
    leases = await js.key_value(BUCKET_LEASES)
    assert (await kv_read(leases, "threads"))[0] is None  # given back to the live worker
    assert (await kv_read(leases, "decisions"))[0] == b"replay-other"  # the other replay's, untouched
    assert (await kv_read(checkpoints, "threads"))[0] == b"1"  # nothing reset
    assert {p.worker: p.phase for p in progress}["threads"] == "not replayed"
    await other.release()
