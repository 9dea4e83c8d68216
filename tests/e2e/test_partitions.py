"""CORTEX_PARTITIONS=2 on a real nats-server: consumers ``<worker>-<k>``, the same documents
as one partition, a lease (and a standby) per partition consumer, replay and forget per
partition, and composed workers waiting on the source consumer of the agent's partition.

Workers run in-process (``WorkerHost``, as ``cortex up`` runs them: every partition in one
process) unless a test is about separate instances.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import nats
from cortex_testkit import CONSUMING, OWNED_BUCKETS, cortex, demo_file, differences, drained, snapshot_docs
from nats.js.client import JetStreamContext

from schemas.api import RecallReply, StatusReply
from schemas.docs import BootDoc, ChannelsDoc, SnapshotDoc
from shared.config import Settings, load_settings
from shared.embedded import EmbeddedNats
from shared.kv import kv_keys, kv_read
from shared.names import BUCKET_CHECKPOINTS, BUCKET_LEASES, EVENTS_STREAM, consumers_of, early_consumer, partition_of
from shared.provision import ConsumerSpec, provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs

# two agents on different partitions of 2 (FNV-1a: alice → 1, bob → 0)
ALICE, BOB = "alice", "bob"
PARTITIONED = {"CORTEX_PARTITIONS": "2"}


def test_the_agents_sit_on_different_partitions() -> None:
    assert (partition_of(ALICE, 2), partition_of(BOB, 2)) == (1, 0)


async def acortex(*args: str, url: str, **env: str) -> Any:
    """``cortex …`` without blocking the event loop the in-process workers run on."""
    return await asyncio.to_thread(cortex, *args, url=url, **env)


def settings_for(url: str, tmp: Path, partitions: int, **extra: str) -> Settings:
    return load_settings({"CORTEX_NATS_URL": url, "CORTEX_DATA_DIR": str(tmp / "data"),
                          "CORTEX_PARTITIONS": str(partitions), "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100",
                          "CORTEX_RUNTIME_LEASE_TTL_S": "2", "CORTEX_BOOT_WAIT_MS": "10000",
                          "CORTEX_EMBEDDER": "hashing", **extra})


@contextlib.asynccontextmanager
async def hosted(settings: Settings, names: list[str] | None = None) -> AsyncIterator[WorkerHost]:
    specs = all_specs()
    host = WorkerHost(settings, [specs[n] for n in (names or list(specs))], __version__)
    task = asyncio.create_task(host.run())
    try:
        yield host
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=60)


def consumers(partitions: int, names: list[str] | None = None) -> list[str]:
    return [c for w in (names or CONSUMING) for c in consumers_of(w, partitions)]


async def checkpoint(js: JetStreamContext, consumer: str) -> int:
    raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), consumer)
    return int(raw) if raw else 0


async def lease_holder(js: JetStreamContext, consumer: str) -> str | None:
    raw, _ = await kv_read(await js.key_value(BUCKET_LEASES), consumer)
    return raw.decode() if raw else None


async def own_events(js: JetStreamContext, worker: str, partition: int, partitions: int) -> list[int]:
    """The stream sequences of partition k's events in the worker's filter (read by the subject)."""
    filters = ConsumerSpec(name=worker, families=all_specs()[worker].families, partition=partition,
                           partitions=partitions).filter_subjects("cortex")
    info = await js.stream_info(EVENTS_STREAM)
    seqs = []
    for seq in range(1, info.state.last_seq + 1):
        subject = (await js.get_msg(EVENTS_STREAM, seq)).subject or ""
        if any(subject_matches(subject, f) for f in filters):
            seqs.append(seq)
    return seqs


def subject_matches(subject: str, pattern: str) -> bool:
    tokens, wanted = subject.split("."), pattern.split(".")
    if wanted[-1] == ">":
        return len(tokens) >= len(wanted) and all(w in ("*", t) for w, t in zip(wanted[:-1], tokens, strict=False))
    return len(tokens) == len(wanted) and all(w in ("*", t) for w, t in zip(wanted, tokens, strict=True))


def interleaved(tmp: Path) -> Path:
    """The demo conversation for alice and bob, their events interleaved."""
    a = demo_file(tmp, ALICE).read_text().splitlines()
    b = [line.replace("auth migration", "billing export").replace("kubernetes", "terraform")
         for line in demo_file(tmp, BOB).read_text().splitlines()]
    path = tmp / "mixed.jsonl"
    path.write_text("\n".join(x for pair in zip(a, b, strict=True) for x in pair) + "\n")
    return path


@contextlib.asynccontextmanager
async def pipeline(url: str, tmp: Path, partitions: int, events: Path, wait_for: Any) -> AsyncIterator[Any]:
    """`cortex init`, publish, every worker in one process; yields the connection once drained."""
    init = cortex("init", url=url, CORTEX_PARTITIONS=str(partitions))
    assert init.returncode == 0, init.stderr
    assert cortex("publish", str(events), url=url).returncode == 0
    nc = await nats.connect(url)
    try:
        async with hosted(settings_for(url, tmp, partitions)):
            await wait_for(lambda: drained(nc.jetstream(), consumers(partitions)), within=120)
            yield nc
    finally:
        await nc.close()


# the documents these conversations make none of: no tool is called, no model configured
NO_TOOL_NO_MODEL = sorted(f"{b}/{a}" for b in ("cortex_operations", "cortex_extraction") for a in (ALICE, BOB))


async def test_two_partitions_make_the_same_documents_as_one(
    nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    events = interleaved(tmp_path)
    with EmbeddedNats(str(tmp_path / "nats-one")) as single:
        async with pipeline(single.url, tmp_path / "one", 1, events, wait_for) as nc:
            one = await snapshot_docs(nc.jetstream(), [ALICE, BOB])
    assert sorted(k for k, v in one.items() if v is None) == NO_TOOL_NO_MODEL
    async with pipeline(nats_url, tmp_path / "two", 2, events, wait_for) as nc:
        js = nc.jetstream()
        assert await snapshot_docs(js, [ALICE, BOB]) == one  # byte for byte, every owned bucket, both agents
        early = {early_consumer(c) for c in consumers(2)}  # boot's ephemeral trigger readers (workers.boot.early)
        names = {c.name for c in await js.consumers_info(EVENTS_STREAM)} - early
        assert names == set(consumers(2))  # `cortex init`: <worker>-0 and <worker>-1, no <worker>
        # the server filters: each partition consumer was delivered exactly its agent's events of
        # its families, and its checkpoint is its own last event's sequence
        settings = load_settings({})  # no model: extraction's consumer reads only its feedback kinds (none here)
        idle = {n for n, s in all_specs().items() if s.idle is not None and s.idle(settings)}
        assert idle == {"extraction"}
        for worker in sorted(set(CONSUMING) - idle):
            mine = {k: await own_events(js, worker, k, 2) for k in (0, 1)}
            for k in (0, 1):
                info = await js.consumer_info(EVENTS_STREAM, f"{worker}-{k}")
                assert info.delivered.stream_seq == max(mine[k]), (worker, k)  # its last, not the stream's
                assert await checkpoint(js, f"{worker}-{k}") == max(mine[k]), (worker, k)
        status = msgspec.json.decode((await nc.request(f"cortex.api.status.{ALICE}", b"{}", timeout=5)).data,
                                     type=StatusReply)
        assert {w.consumer for w in status.workers} == {f"{w}-1" for w in CONSUMING}  # alice's partition


async def test_boot_waits_on_the_threads_consumer_of_the_agents_partition(
    nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    init = cortex("init", url=nats_url, **PARTITIONED)
    assert init.returncode == 0, init.stderr
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    names = CONSUMING  # boot reads (and waits on) every source
    try:
        async with hosted(settings_for(nats_url, tmp_path, 2)):
            warm = demo_file(tmp_path, "dave")  # partition 1 as well: every loop is running after this
            assert partition_of("dave", 2) == 1
            assert (await acortex("publish", str(warm), url=nats_url)).returncode == 0
            await wait_for(lambda: drained(js, consumers(2, names)), within=60)

            await js.pause_consumer(EVENTS_STREAM, "threads-1", "2099-01-01T00:00:00Z")
            assert (await acortex("publish", str(demo_file(tmp_path, ALICE)), url=nats_url)).returncode == 0
            # boot-1 and snapshot-1 now wait on threads-1 (threads-0 is idle and must not count)
            await wait_for(lambda: drained(js, ["decisions-1", "threads-0"]), within=30)
            await js.resume_consumer(EVENTS_STREAM, "threads-1")
            # drained, and alice's BootDoc completed (a source that lagged at boot's bound under load)
            await wait_for(lambda: settled(js, (ALICE,)), within=60)
        boot = msgspec.json.decode((await kv_read(await js.key_value("cortex_boot"), ALICE))[0], type=BootDoc)
        assert boot.lagging == []
        snapshot = msgspec.json.decode((await kv_read(await js.key_value("cortex_snapshots"), ALICE))[0],
                                       type=SnapshotDoc)
        assert "- 2 open threads" in snapshot.markdown  # the threads state at the compaction
    finally:
        await nc.close()


async def test_one_active_instance_per_partition_consumer_and_a_standby_each(
    nats_url: str, tmp_path: Path, wait_for: Any, make_chat_events: Any
) -> None:
    init = cortex("init", url=nats_url, **PARTITIONED)
    assert init.returncode == 0, init.stderr
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    events = make_chat_events(400, 2)  # agent-0 (partition 1) and agent-1 (partition 0)
    assert {partition_of(f"agent-{i}", 2) for i in (0, 1)} == {0, 1}
    first, second = events[:200], events[200:]
    try:
        async with contextlib.AsyncExitStack() as stack:
            p0 = settings_for(nats_url, tmp_path, 2, CORTEX_PARTITION="0")
            a = await stack.enter_async_context(hosted(p0, ["channels"]))
            await wait_for(lambda: _held_by(js, "channels-0", a), within=30)
            b = await stack.enter_async_context(hosted(p0, ["channels"]))
            c = await stack.enter_async_context(hosted(settings_for(nats_url, tmp_path, 2, CORTEX_PARTITION="1"),
                                                       ["channels"]))
            await wait_for(lambda: _held_by(js, "channels-1", c), within=30)
            for subject, data, msg_id in first:
                await js.publish(subject, data, headers={"Nats-Msg-Id": msg_id})
            await wait_for(lambda: drained(js, ["channels-0", "channels-1"]), within=60)
            assert await lease_holder(js, "channels-0") == a.instance  # b waits as the standby
            await wait_for(lambda: _standby(b, "channels-0"), within=30)
            assert "channels-1" not in b.registry.readiness()[1]  # b runs partition 0 only

            a.stop.set()  # the active instance of partition 0 goes away; partition 1 is untouched
            await wait_for(lambda: _held_by(js, "channels-0", b), within=30)
            assert await lease_holder(js, "channels-1") == c.instance
            for subject, data, msg_id in second:
                await js.publish(subject, data, headers={"Nats-Msg-Id": msg_id})
            await wait_for(lambda: drained(js, ["channels-0", "channels-1"]), within=60)

        kv = await js.key_value("cortex_channels")
        for i in (0, 1):
            agent = f"agent-{i}"
            n = sum(1 for s, _, _ in events if s.split(".")[2] == agent)
            doc = msgspec.json.decode((await kv_read(kv, agent))[0], type=ChannelsDoc)
            assert sum(ch.messages for ch in doc.channels) == n  # nothing lost, nothing doubled
            assert doc.integrity.events == n
    finally:
        await nc.close()


async def _held_by(js: JetStreamContext, consumer: str, host: WorkerHost) -> bool:
    return await lease_holder(js, consumer) == host.instance


async def _no_replay_lease(js: JetStreamContext) -> bool:
    """No consumer's lease is held by a replay (forget refuses to run beside one)."""
    holders = [await lease_holder(js, key) for key in await kv_keys(js, BUCKET_LEASES)]
    return not any(h and "replay-" in h for h in holders)


async def _standby(host: WorkerHost, consumer: str) -> bool:
    ok, text = host.registry.readiness()
    return ok and f"{consumer}: ready (standby" in text


async def settled(js: JetStreamContext, agents: tuple[str, ...] = (ALICE, BOB)) -> bool:
    """Every partition consumer drained, and no agent's BootDoc waits for a lagging source."""
    if not await drained(js, consumers(2)):
        return False
    for agent in agents:
        raw, _ = await kv_read(await js.key_value("cortex_boot"), agent)
        if raw is None or msgspec.json.decode(raw, type=BootDoc).lagging:
            return False
    return True


async def test_replay_and_forget_with_partitions(nats_url: str, tmp_path: Path, wait_for: Any) -> None:
    """Live, alice's recall consumer (recall-1) is paused at first: her session-start document is
    made at the boot worker's (short) bound without it and completed once it catches up; the
    replays, made without lag, reproduce it byte for byte."""
    init = cortex("init", url=nats_url, **PARTITIONED)
    assert init.returncode == 0, init.stderr
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await js.pause_consumer(EVENTS_STREAM, "recall-1", "2099-01-01T00:00:00Z")
    assert cortex("publish", str(interleaved(tmp_path)), url=nats_url).returncode == 0
    workers = [n for n in all_specs() if n != "boot"]
    try:
        async with (hosted(settings_for(nats_url, tmp_path, 2), workers) as host,
                    hosted(settings_for(nats_url, tmp_path, 2, CORTEX_BOOT_WAIT_MS="1000"), ["boot"])):

            async def made_without_recall() -> bool:
                raw, _ = await kv_read(await js.key_value("cortex_boot"), ALICE)
                doc = msgspec.json.decode(raw, type=BootDoc) if raw is not None else None
                return doc is not None and doc.session == "s-demo-2" and "recall" in doc.lagging

            await wait_for(made_without_recall, within=120)
            await js.resume_consumer(EVENTS_STREAM, "recall-1")
            await wait_for(lambda: settled(js), within=120)
            before = await snapshot_docs(js, [ALICE, BOB])
            assert msgspec.json.decode(before[f"cortex_boot/{ALICE}"] or b"", type=BootDoc).trigger == "session_start"
            assert sorted(k for k, v in before.items() if v is None) == NO_TOOL_NO_MODEL
            bob_revisions = {b: (await (await js.key_value(b)).get(BOB)).revision for b in OWNED_BUCKETS
                             if before[f"{b}/{BOB}"] is not None}
            bob_checkpoints = {c: await checkpoint(js, c) for c in consumers_of("threads", 2)}

            # the replay runs its own recall worker: the hashing embedder, its own embedded store
            # its own leases with the default TTL: 2 s (the live hosts', for a short fence) is a
            # pause of 1.6 s in a loaded run, and a replay that loses a lease fails, as it should
            replay_env = {**PARTITIONED, "CORTEX_RUNTIME_LEASE_TTL_S": "10", "CORTEX_EMBEDDER": "hashing",
                          "CORTEX_BOOT_WAIT_MS": "10000",
                          "CORTEX_DATA_DIR": str(tmp_path / "replay-data")}
            one = await acortex("replay", "--agent", ALICE, url=nats_url, **replay_env)
            assert one.returncode == 0, one.stderr
            await wait_for(lambda: settled(js), within=120)
            after = await snapshot_docs(js, [ALICE, BOB])
            assert after == before, differences(before, after)
            for bucket, revision in bob_revisions.items():  # bob's partition was not replayed at all
                assert (await (await js.key_value(bucket)).get(BOB)).revision == revision
            assert await checkpoint(js, "threads-0") == bob_checkpoints["threads-0"]

            for bucket in OWNED_BUCKETS:  # wipe everything, then rebuild every partition
                kv = await js.key_value(bucket)
                for agent in (ALICE, BOB):
                    await kv.delete(agent)
            full = await acortex("replay", url=nats_url, **replay_env)
            assert full.returncode == 0, full.stderr
            await wait_for(lambda: settled(js), within=120)
            after = await snapshot_docs(js, [ALICE, BOB])
            assert after == before, differences(before, after)

            # forget goes through the recall consumer of alice's partition (recall-1), active again here
            await wait_for(lambda: _held_by(js, "recall-1", host), within=30)
            assert await _no_replay_lease(js)  # every lease the replay took is given back before it exits
            gone = await acortex("forget", ALICE, "--yes", url=nats_url, **PARTITIONED)
            assert gone.returncode == 0, gone.stderr
            assert "memories deleted by the recall worker" in gone.stdout
            reply = await nc.request(f"cortex.api.recall.{ALICE}", b'{"query":"auth migration"}', timeout=10)
            assert msgspec.json.decode(reply.data, type=RecallReply).memories == []
            kept = await nc.request(f"cortex.api.recall.{BOB}", b'{"query":"billing export"}', timeout=10)
            assert msgspec.json.decode(kept.data, type=RecallReply).memories
        for bucket in OWNED_BUCKETS:
            assert (await kv_read(await js.key_value(bucket), ALICE))[0] is None, bucket
    finally:
        await nc.close()


async def test_four_partition_processes_are_each_delivered_only_their_agents_events(
        nats_url: str, tmp_path: Path, workers_procs: Any, make_chat_events: Any, wait_for: Any) -> None:
    """CORTEX_PARTITIONS=4: each ``threads-<k>`` has exactly its agents' events pending (summed:
    the events published, not 4×), and four ``cortex worker threads --partition k`` processes
    derive every agent's document from exactly its events."""
    assert cortex("init", url=nats_url, CORTEX_PARTITIONS="4").returncode == 0
    events = make_chat_events(240, 12)
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        for subject, data, event_id in events:
            await js.publish(subject, data, headers={"Nats-Msg-Id": event_id})
        agents = sorted({subject.split(".")[2] for subject, _, _ in events})
        per_agent = {a: sum(1 for subject, _, _ in events if subject.split(".")[2] == a) for a in agents}
        mine = [sum(n for a, n in per_agent.items() if partition_of(a, 4) == k) for k in range(4)]

        async def counted() -> list[int] | None:
            # a consumer's pending count can trail the stream's ack of the last publish by a moment
            pending = [(await js.consumer_info(EVENTS_STREAM, f"threads-{k}")).num_pending for k in range(4)]
            return pending if sum(pending) >= len(events) else None

        pending = await wait_for(counted, within=30)
        assert pending == mine and sum(pending) == len(events) and all(mine)

        procs = [workers_procs.start("threads", nats_url, args=("--partition", str(k)), CORTEX_PARTITIONS="4")
                 for k in range(4)]
        await wait_for(lambda: drained(js, [f"threads-{k}" for k in range(4)]), within=120)
        for k, proc in enumerate(procs):  # process k runs threads-k (the lease names the instance's pid)
            assert f"-{proc.pid}-" in (await lease_holder(js, f"threads-{k}") or ""), k
        kv = await js.key_value("cortex_threads")
        for agent in agents:
            raw, _ = await kv_read(kv, agent)
            assert raw is not None, agent
            integrity = msgspec.json.decode(raw)["integrity"]
            assert integrity["events"] == per_agent[agent], agent
            assert integrity["producer"].startswith("threads@")
    finally:
        await nc.close()


async def test_re_partitioning_loses_and_doubles_nothing(
        nats_url: str, tmp_path: Path, wait_for: Any, make_chat_events: Any) -> None:
    """docs/BENCHMARKS.md, Re-partitioning, with workers: 4 → 2 while channels-2 had consumed
    nothing (paused) — the merged channels-0 starts at the lower checkpoint although the
    server keeps an updated consumer's position past channels-2's events (the loop rewinds
    it), and the per-agent watermarks skip what channels-0 had applied — then 2 → 3 (slots
    regrouped: every new consumer reads slots of both old ones). Every agent's count exact."""
    events = make_chat_events(360, 12)
    assert any(partition_of(s.split(".")[2], 4) == 2 for s, _, _ in events)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    published: list[tuple[str, bytes, str]] = []

    async def publish(part: list[tuple[str, bytes, str]]) -> None:
        for subject, data, event_id in part:
            await js.publish(subject, data, headers={"Nats-Msg-Id": event_id})
        published.extend(part)

    async def counted() -> bool:
        kv = await js.key_value("cortex_channels")
        for agent in {s.split(".")[2] for s, _, _ in published}:
            n = sum(1 for s, _, _ in published if s.split(".")[2] == agent)
            raw, _ = await kv_read(kv, agent)
            doc = msgspec.json.decode(raw, type=ChannelsDoc) if raw is not None else None
            if doc is None or (doc.integrity.events, sum(ch.messages for ch in doc.channels)) != (n, n):
                return False
        return True

    def channels_specs(n: int) -> list[ConsumerSpec]:
        return [s for s in consumer_specs(False, n) if s.name.startswith("channels")]

    try:
        await provision(js, settings_for(nats_url, tmp_path, 4), channels_specs(4))
        await js.pause_consumer(EVENTS_STREAM, "channels-2", "2099-01-01T00:00:00Z")
        await publish(events[:120])
        async with hosted(settings_for(nats_url, tmp_path, 4), ["channels"]):
            await wait_for(lambda: drained(js, ["channels-0", "channels-1", "channels-3"]), within=60)
        assert (await js.consumer_info(EVENTS_STREAM, "channels-2")).num_pending > 0

        report = await provision(js, settings_for(nats_url, tmp_path, 2), channels_specs(2))
        assert report["checkpoint channels-0 (re-partitioned: starts after sequence 0)"] == "seeded"
        assert {c.name for c in await js.consumers_info(EVENTS_STREAM)} == {"channels-0", "channels-1"}
        await publish(events[120:240])
        async with hosted(settings_for(nats_url, tmp_path, 2), ["channels"]):
            await wait_for(counted, within=60)
            await wait_for(lambda: drained(js, ["channels-0", "channels-1"]), within=60)

        await provision(js, settings_for(nats_url, tmp_path, 3), channels_specs(3))
        await publish(events[240:])
        async with hosted(settings_for(nats_url, tmp_path, 3), ["channels"]):
            await wait_for(counted, within=60)
            await wait_for(lambda: drained(js, [f"channels-{k}" for k in range(3)]), within=60)
        assert await counted()  # nothing applied twice by the time every consumer is drained
    finally:
        await nc.close()
