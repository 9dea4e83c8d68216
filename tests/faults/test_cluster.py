"""The production topology: a three-node NATS cluster, every stream, bucket and consumer at three
replicas (``CORTEX_REPLICAS=3``), workers given the whole server list. A node is lost under
load — the stream leader SIGKILLed, a follower killed and restarted, the node a worker is
connected to killed, a bucket's leader killed while boot assembles — and the documents equal
a clean run on one server, nothing is dead-lettered, every worker exits cleanly afterwards.

In the default run (10–25 s each, mostly waiting: worker processes starting, a Raft
election after a SIGKILL, an ack wait of 3 s; ``pytest -m faults`` runs them with the rest of
the fault suite). Quicker guards of the same properties: a connection follows the cluster
when its node dies (tests/shared/test_connection.py), init makes everything with three
replicas (tests/shared/test_provision_replicas.py), and an API request NATS cannot answer is
a 503 that says to ask again (tests/shared/test_service.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import nats
import nats.errors
import nats.js.errors
import pytest
from cortex_testkit import NatsCluster, wait_for
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from shared.names import EVENTS_STREAM

pytestmark = pytest.mark.faults

N_EVENTS = 3000
JS_TIMEOUT_S = 5  # the test's own JetStream requests: 2 s timed out once at load 8 right after a kill
AGENTS = 6
WORKERS = ("threads", "decisions")
BUCKETS = ("cortex_threads", "cortex_decisions", "cortex_commitments")
R3 = {"CORTEX_REPLICAS": "3"}
# a short ack wait: a message whose ack died with a node comes back within the test
ENV = {"CORTEX_RUNTIME_BATCH_SIZE": "100", "CORTEX_RUNTIME_ACK_WAIT_S": "3"}
UNAVAILABLE = (nats.errors.Error, nats.js.errors.Error, OSError)  # asked during an election or a reconnect

SEED = 19
_clean: list[dict[str, bytes | None]] = []  # the clean run of the events: made once, for every test here


async def clean(faults: Any, events: list[Any]) -> dict[str, bytes | None]:
    if not _clean:
        _clean.append(await faults.clean_documents(events, WORKERS, BUCKETS))
    return _clean[0]


def quietly(predicate: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    """The predicate, False while the cluster cannot answer (an election, a reconnect)."""
    async def attempt() -> Any:
        try:
            return await predicate()
        except UNAVAILABLE:
            return False
    return attempt


@contextlib.asynccontextmanager
async def connected(cluster: NatsCluster) -> AsyncIterator[Client]:
    nc = await nats.connect(cluster.servers, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
    try:
        yield nc
    finally:
        await nc.close()


async def leader_of(js: JetStreamContext, stream: str) -> str:
    async def known() -> str | None:
        cluster = (await js.stream_info(stream)).cluster
        return cluster.leader if cluster is not None else None

    return str(await wait_for(quietly(known), within=30, interval=0.1))


async def caught_up(faults: Any, js: JetStreamContext, last: int, within: float = 90) -> None:
    try:
        await faults.wait_for(quietly(lambda: faults.caught_up(js, WORKERS, last)), within=within, interval=0.1)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; {await faults.progress(js, WORKERS)}") from None


async def checkpoint_above(faults: Any, js: JetStreamContext, floor: int, within: float = 60) -> int:
    """Until the threads checkpoint passes ``floor`` (asked quietly: the test's own connection
    may be on the node just killed, and reconnecting)."""
    async def above() -> int:
        value = await faults.checkpoint(js, "threads")
        return int(value) if value > floor else 0

    return int(await faults.wait_for(quietly(above), within=within, interval=0.005))


async def start_loaded(faults: Any, cluster: NatsCluster, js: JetStreamContext, events: list[Any]) -> dict[str, Any]:
    """Init at three replicas, ``events`` published, the workers started on the server list."""
    faults.init(cluster.url, **R3)
    await faults.publish_all(js, events)
    assert (await js.stream_info(EVENTS_STREAM)).config.num_replicas == 3
    return {name: faults.procs.start(name, cluster.url, **ENV) for name in WORKERS}


async def finish(faults: Any, js: JetStreamContext, procs: dict[str, Any], expected: dict[str, bytes | None],
                 events: list[Any]) -> None:
    """Every event applied once, the documents of the clean run, no dead letter, clean exits."""
    await caught_up(faults, js, len(events))
    assert int((await asked(faults, lambda: js.stream_info(EVENTS_STREAM))).state.last_seq) == len(events)
    got = await asked(faults, lambda: faults.documents(js, BUCKETS, faults.agents(events)))
    assert got == expected, faults.differences(got, expected)
    assert await asked(faults, lambda: faults.dead_letters(js)) == []
    for name, proc in procs.items():
        assert proc.poll() is None, f"{name} exited with {proc.returncode}"
        assert await faults.stop(proc, signal.SIGTERM) == 0


async def asked(faults: Any, read: Callable[[], Awaitable[Any]], within: float = 30) -> Any:
    """``read()``'s answer, asked again while the cluster cannot answer (a stream whose leader
    was on the killed node is still electing one: the DLQ's once timed out here)."""
    async def attempt() -> tuple[Any]:
        return (await read(),)  # a tuple: an answer that is empty still ends the wait

    return (await faults.wait_for(quietly(attempt), within=within, interval=0.1))[0]


async def test_the_stream_leader_killed_under_load(nats_cluster: NatsCluster, faults: Any,
                                                   make_chat_events: Any) -> None:
    """SIGKILL the node leading CORTEX_EVENTS while threads and decisions apply the backlog:
    a new leader is elected among the two left, the workers go on where they were."""
    events = make_chat_events(N_EVENTS, AGENTS, seed=SEED)
    expected = await clean(faults, events)
    async with connected(nats_cluster) as nc:
        js = nc.jetstream(timeout=JS_TIMEOUT_S)
        procs = await start_loaded(faults, nats_cluster, js, events)
        leader = await leader_of(js, EVENTS_STREAM)
        at = await faults.wait_checkpoint_above(js, "threads", N_EVENTS // 5)
        nats_cluster.kill(nats_cluster.index(leader))
        print(f"killed the stream leader {leader} at threads checkpoint {at}")
        assert at < N_EVENTS, "the kill should land mid-stream"
        await wait_for(quietly(lambda: _new_leader(js, EVENTS_STREAM, leader)), within=30, interval=0.1)
        await finish(faults, js, procs, expected, events)


async def peers_current(js: JetStreamContext, stream: str, node: str) -> bool:
    """``node`` is a current replica of ``stream`` (the leader, or a peer that caught up)."""
    cluster = (await js.stream_info(stream)).cluster
    if cluster is None:
        return False
    if cluster.leader == node:
        return True
    return any(p.name == node and p.current and not p.offline and not p.lag for p in cluster.replicas or [])


async def make_leader(nc: Client, js: JetStreamContext, stream: str, node: str) -> bool:
    """Ask the leader of ``stream`` to step down in favour of ``node``; True once ``node`` leads."""
    if (await js.stream_info(stream)).cluster.leader != node:  # type: ignore[union-attr]
        await nc.request(f"$JS.API.STREAM.LEADER.STEPDOWN.{stream}",
                         json.dumps({"placement": {"preferred": node}}).encode(), timeout=2)
    return (await js.stream_info(stream)).cluster.leader == node  # type: ignore[union-attr]


async def test_a_follower_killed_and_restarted_catches_up_and_changes_nothing(
        nats_cluster: NatsCluster, faults: Any, make_chat_events: Any) -> None:
    """A follower of CORTEX_EVENTS dies under load and comes back on its store: it catches up
    on the events published while it was down and on the documents and checkpoints written
    meanwhile (made the stream's leader afterwards, it holds every event), the documents are
    the clean run's."""
    events = make_chat_events(N_EVENTS, AGENTS, seed=SEED)
    expected = await clean(faults, events)
    first, missed = events[:N_EVENTS // 2], events[N_EVENTS // 2:]
    async with connected(nats_cluster) as nc:
        js = nc.jetstream(timeout=JS_TIMEOUT_S)
        procs = await start_loaded(faults, nats_cluster, js, first)
        leader = await leader_of(js, EVENTS_STREAM)
        follower = next(name for name in nats_cluster.names if name != leader)
        at = await faults.wait_checkpoint_above(js, "threads", N_EVENTS // 5)
        nats_cluster.kill(nats_cluster.index(follower))

        async def published() -> bool:
            # an attempt whose acknowledgements were lost with the connection is bounded and made
            # again: the stream drops the copies by message id
            await asyncio.wait_for(faults.publish_all(js, missed), 15)
            return True

        # the follower misses the second half of the stream, whatever the workers' pace
        await faults.wait_for(quietly(published), within=60, interval=0.2)
        back = await checkpoint_above(faults, js, at)
        nats_cluster.start_node(nats_cluster.index(follower))
        print(f"follower {follower} killed at threads checkpoint {at} before {len(missed)} of the "
              f"{N_EVENTS} events were published, restarted at checkpoint {back}")
        await nats_cluster.node_ready(nats_cluster.index(follower))
        await finish(faults, js, procs, expected, events)
        for stream in (EVENTS_STREAM, *(f"KV_{b}" for b in BUCKETS), "KV_cortex_checkpoints"):
            await faults.wait_for(quietly(lambda s=stream: peers_current(js, s, follower)), within=30, interval=0.1)
        await faults.wait_for(quietly(lambda: make_leader(nc, js, EVENTS_STREAM, follower)), within=30, interval=0.2)
        state = (await js.stream_info(EVENTS_STREAM)).state
        assert (state.messages, state.first_seq, state.last_seq) == (N_EVENTS, 1, N_EVENTS)
        assert await faults.documents(js, BUCKETS, faults.agents(events)) == expected


async def test_the_node_a_worker_is_connected_to_killed(nats_cluster: NatsCluster, faults: Any,
                                                        make_chat_events: Any) -> None:
    """The worker's own connection dies with its node: it reconnects to another node of the
    list (or one the cluster announced) and goes on."""
    events = make_chat_events(N_EVENTS, AGENTS, seed=SEED)
    expected = await clean(faults, events)
    async with connected(nats_cluster) as nc:
        js = nc.jetstream(timeout=JS_TIMEOUT_S)
        procs = await start_loaded(faults, nats_cluster, js, events)
        at = await faults.wait_checkpoint_above(js, "threads", N_EVENTS // 5)
        node = await _holding(nats_cluster, "cortex-threads")
        assert node is not None, "the threads worker is connected to no node"
        nats_cluster.kill(nats_cluster.index(node))
        print(f"killed {node}, the threads worker's node, at threads checkpoint {at}")
        assert at < N_EVENTS, "the kill should land mid-stream"
        moved = await faults.wait_for(lambda: _holding(nats_cluster, "cortex-threads"), within=30, interval=0.1)
        assert moved != node
        await finish(faults, js, procs, expected, events)


BOOT_BUCKET = "KV_cortex_threads"  # boot reads it for every assembly


async def ask_boot_through_a_kill(cluster: NatsCluster, nc: Client, js: JetStreamContext, agent: str,
                                  boot_node: str) -> tuple[str, list[str]]:
    """Boot requests in a loop while the leader of the threads bucket is SIGKILLed, until three
    BootDocs came after the new leader was elected; returns the node killed and the replies
    from the kill on ("doc", "error {...}", "no answer: ...").

    The leader is moved first to a node neither the boot worker nor the asking client is on:
    a request in flight on a connection that dies is lost (core NATS) — the worker-connection
    fault's, not this one's."""
    target = next(name for name in cluster.names if name != boot_node)
    await wait_for(quietly(lambda: make_leader(nc, js, BOOT_BUCKET, target)), within=30, interval=0.2)
    replies: list[tuple[float, str]] = []
    stop = asyncio.Event()
    asker_nc = await nats.connect(cluster.node_url(cluster.index(boot_node)), max_reconnect_attempts=-1)

    async def ask() -> None:
        while not stop.is_set():
            try:
                msg = await asker_nc.request(f"cortex.api.boot.{agent}", b"{}", timeout=10)
            except nats.errors.Error as exc:
                replies.append((time.monotonic(), f"no answer: {exc!r}"))
                continue
            body = json.loads(msg.data)
            replies.append((time.monotonic(), "doc" if "markdown" in body else f"error {body.get('error')}"))

    async def docs_since(since: float, n: int) -> bool:
        return sum(1 for t, r in replies if t >= since and r == "doc") >= n

    asker = asyncio.create_task(ask())
    try:
        await wait_for(lambda: docs_since(0, 3), within=60, interval=0.05)
        killed_at = time.monotonic()
        cluster.kill(cluster.index(target))
        await wait_for(quietly(lambda: _new_leader(js, BOOT_BUCKET, target)), within=30, interval=0.1)
        elected_at = time.monotonic()
        await wait_for(lambda: docs_since(elected_at, 3), within=60, interval=0.05)
    finally:
        stop.set()
        await asyncio.wait_for(asker, timeout=30)
        await asker_nc.close()
    return target, [r for t, r in replies if t >= killed_at]


def answered_or_retryable(replies: list[str]) -> bool:
    return all(r == "doc" or r.startswith("error {'code': 503, 'message': 'temporarily unavailable: ") for r in replies)


async def test_a_bucket_leader_killed_while_boot_assembles(nats_cluster: NatsCluster, faults: Any,
                                                           make_chat_events: Any) -> None:
    """The boot worker process, with the documents threads and decisions made of a thousand
    events, asked in a loop while the threads bucket's leader is SIGKILLed: BootDocs or 503s,
    BootDocs again after the election, and every worker exits cleanly afterwards."""
    events = make_chat_events(N_EVENTS // 3, AGENTS, seed=SEED)
    async with connected(nats_cluster) as nc:
        js = nc.jetstream(timeout=JS_TIMEOUT_S)
        procs = await start_loaded(faults, nats_cluster, js, events)
        procs["boot"] = faults.procs.start("boot", nats_cluster.url, **ENV)
        await caught_up(faults, js, len(events))
        boot_node = await faults.wait_for(lambda: _holding(nats_cluster, "cortex-boot"), within=60, interval=0.1)
        killed, during = await ask_boot_through_a_kill(nats_cluster, nc, js, faults.agents(events)[0], boot_node)
        print(f"killed {killed}, the leader of {BOOT_BUCKET} (boot on {boot_node}): {Counter(during)}")
        assert answered_or_retryable(during), during
        assert sum(r == "doc" for r in during) >= 3
        for proc in procs.values():
            assert await faults.stop(proc, signal.SIGTERM) == 0


async def _holding(cluster: NatsCluster, client: str) -> str | None:
    """The name of the node the client named ``client`` is connected to (a name: node 0 is falsy)."""
    i = await asyncio.to_thread(cluster.node_holding, client)
    return None if i is None else cluster.names[i]


async def _new_leader(js: JetStreamContext, stream: str, old: str) -> bool:
    cluster = (await js.stream_info(stream)).cluster
    return cluster is not None and bool(cluster.leader) and cluster.leader != old




@pytest.mark.timeout(300)
async def test_a_replay_outlives_the_stream_leader_killed_under_it(nats_cluster: NatsCluster, faults: Any,
                                                                    make_chat_events: Any) -> None:
    """Issue 44 item 9: `cortex replay` died with a 40-line traceback when the stream's leader
    was killed under it (a JetStream request met the election). It asks again while NATS cannot
    answer, and ends rebuilt — the documents of the clean run — or, past its patience, with one
    line."""
    events = make_chat_events(N_EVENTS, AGENTS, seed=SEED)
    expected = await clean(faults, events)
    async with connected(nats_cluster) as nc:
        js = nc.jetstream(timeout=JS_TIMEOUT_S)
        faults.init(nats_cluster.url, **R3)  # the events only: the replay derives every document
        await faults.publish_all(js, events)
        leader = await leader_of(js, EVENTS_STREAM)
        replay = await faults.cortex_async("replay", "--worker", ",".join(WORKERS), url=nats_cluster.url,
                                           CORTEX_RUNTIME_BATCH_SIZE="100", **R3)
        await faults.wait_for(quietly(lambda: _replaying(faults, js, len(events))), within=60, interval=0.05)
        nats_cluster.kill(nats_cluster.index(leader))
        print(f"killed the stream leader {leader} during the replay")
        _, err = await asyncio.wait_for(replay.communicate(), timeout=240)
        said = err.decode()
        assert "Traceback" not in said, said[-6000:]
        if replay.returncode == 0:
            await caught_up(faults, js, len(events))
            got = await asked(faults, lambda: faults.documents(js, BUCKETS, faults.agents(events)))
            assert got == expected, faults.differences(got, expected)
        else:
            assert said.strip().splitlines()[-1].startswith("cortex: "), said[-3000:]


async def _replaying(faults: Any, js: JetStreamContext, last: int) -> bool:
    """The replay applies: the threads checkpoint is on its way up."""
    return 0 < await faults.checkpoint(js, "threads") < last
