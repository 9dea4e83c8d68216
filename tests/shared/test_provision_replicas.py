"""``CORTEX_REPLICAS``: `cortex init` makes every stream, bucket and durable consumer with that
many copies on a cluster, raises existing ones in place (a consumer's position kept), never
lowers them, and refuses more copies than there are servers in one line."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import nats
import nats.js.errors
import pytest
from cortex_testkit import NatsCluster
from nats.js import api
from nats.js.client import JetStreamContext

from shared.config import load_settings
from shared.errors import is_transient
from shared.names import BUCKET_CHECKPOINTS, BUCKET_FORGETS, DLQ_STREAM, EVENTS_STREAM
from shared.provision import (
    ConsumerSpec,
    ReplicasError,
    ReplicasUnavailable,
    _refusal,
    consumer_replicas,
    ensure_bucket,
    ensure_consumer,
    provision,
    recreate_at_checkpoint,
)
from workers.registry import all_buckets, consumer_specs

R3 = load_settings({"CORTEX_REPLICAS": "3"})
STREAMS = [EVENTS_STREAM, DLQ_STREAM, *(f"KV_{b}" for b in all_buckets())]


async def replicas(js: JetStreamContext) -> dict[str, int]:
    """Copies of every stream (its config) and consumer (its leader and peers)."""
    out = {name: (await js.stream_info(name)).config.num_replicas or 1 for name in STREAMS}
    for info in await js.consumers_info(EVENTS_STREAM):
        out[f"consumer {info.name}"] = consumer_replicas(info)
    return out


async def test_init_makes_everything_with_three_replicas_on_a_cluster(nats_cluster: NatsCluster, wait_for: Any) -> None:
    nc = await nats.connect(nats_cluster.servers)
    try:
        js = nc.jetstream()
        report = await provision(js, R3, consumer_specs())
        assert set(report.values()) == {"created"}
        got = await replicas(js)
        assert len(got) == len(STREAMS) + len(consumer_specs())
        assert set(got.values()) == {3}, got
        assert set((await provision(js, R3, consumer_specs())).values()) == {"unchanged"}
    finally:
        await nc.close()


async def test_init_raises_what_it_made_with_one_replica_and_every_consumer_keeps_its_position(
        nats_cluster: NatsCluster, wait_for: Any) -> None:
    """The issue's trap: streams raised by hand, consumers left at one copy on one node."""
    nc = await nats.connect(nats_cluster.servers)
    try:
        js = nc.jetstream()
        await provision(js, load_settings({}), consumer_specs())
        await ensure_bucket(js, BUCKET_FORGETS)  # made by a forget, outside init's list
        for i in range(20):
            await js.publish(f"cortex.msg.a{i % 3}.received", b"{}")
        sub = await js.pull_subscribe_bind("threads", stream=EVENTS_STREAM)
        for msg in await sub.fetch(7, timeout=5):
            await msg.ack_sync()
        before = await js.consumer_info(EVENTS_STREAM, "threads")
        assert set((await replicas(js)).values()) == {1}
        with pytest.raises(ReplicasError, match=r"^CORTEX_REPLICAS=3: CORTEX_EVENTS has fewer copies, and consumer "
                                                r"threads cannot have more than its stream .* run `cortex init`"):
            await ensure_consumer(js, ConsumerSpec(name="threads", families=("msg",)), R3)  # a worker: no recreate


        report = await provision(js, R3, consumer_specs())
        assert report[f"stream {EVENTS_STREAM}"] == report[f"stream {DLQ_STREAM}"] == "updated"
        assert {report[f"bucket {b}"] for b in all_buckets()} == {"raised"}
        assert report[f"bucket {BUCKET_FORGETS}"] == "raised"
        assert {report[f"consumer {s.name}"] for s in consumer_specs()} == {"updated"}
        assert set((await replicas(js)).values()) == {3}
        assert (await js.stream_info(f"KV_{BUCKET_FORGETS}")).config.num_replicas == 3

        async def placed() -> Any:
            # the raised consumer's new copies answer once its state reached them: right after the
            # raise, a loaded machine's first answer said (0, 0) once (a full run after this session)
            info = await js.consumer_info(EVENTS_STREAM, "threads")
            return info if (info.ack_floor.stream_seq, info.num_pending) == (7, 13) else None

        after = await wait_for(placed, within=30)
        assert (after.ack_floor.stream_seq, after.num_pending) == (before.ack_floor.stream_seq, before.num_pending)
        assert after.ack_floor.stream_seq == 7 and (await js.stream_info(EVENTS_STREAM)).state.messages == 20
        [msg] = await sub.fetch(1, timeout=5)
        assert msg.metadata.sequence.stream == 8  # it goes on where it was
    finally:
        await nc.close()


async def test_a_process_without_the_setting_never_lowers_the_replicas(nats_cluster: NatsCluster) -> None:
    """`cortex up` or `cortex restore` from a laptop against the cluster must not take copies away."""
    nc = await nats.connect(nats_cluster.servers)
    try:
        js = nc.jetstream()
        await provision(js, R3, consumer_specs())
        report = await provision(js, load_settings({"CORTEX_RETENTION": "90d"}), consumer_specs())
        assert report[f"stream {EVENTS_STREAM}"] == "updated"  # the retention, not the copies
        assert set((await replicas(js)).values()) == {3}
    finally:
        await nc.close()


async def test_more_replicas_than_servers_is_refused_in_one_line_before_anything_changes(
        nats_cluster: NatsCluster) -> None:
    nc = await nats.connect(nats_cluster.servers)
    try:
        js = nc.jetstream()
        with pytest.raises(ReplicasError) as refused:
            await provision(js, load_settings({"CORTEX_REPLICAS": "5"}), consumer_specs())
        assert str(refused.value).startswith("CORTEX_REPLICAS=5: the NATS cluster has 3 servers, it cannot hold 5 "
                                             "copies of CORTEX_EVENTS (the server says: ")
        assert "\n" not in str(refused.value)
        assert (await js.account_info()).streams == 0
    finally:
        await nc.close()


def test_cortex_init_refuses_replicas_on_a_single_server_in_one_line(nats_url: str) -> None:
    result = subprocess.run([sys.executable, "-m", "workers", "init", "--nats-url", nats_url],
                            capture_output=True, text=True, timeout=60, env={**_env(), "CORTEX_REPLICAS": "3"})
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("cortex: CORTEX_REPLICAS=3: the NATS server is not part of a cluster and holds one copy "
                           "of CORTEX_EVENTS (the server says: replicas > 1 not supported in non-clustered mode)"), line


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "CORTEX_NATS_URL"}


async def test_a_worker_asking_for_more_replicas_than_the_server_holds_gets_the_same_line(nc: Any) -> None:
    """A worker creates its consumer when init has not: ``ReplicasError`` is a ``WorkerCannotRun``
    (it stops with the line; the other workers of the process go on)."""
    js = nc.jetstream()
    await provision(js, load_settings({}), [])
    with pytest.raises(ReplicasError, match=r"^CORTEX_REPLICAS=3: the NATS server is not part of a cluster .* "
                                            r"consumer threads"):
        await ensure_consumer(js, ConsumerSpec(name="threads", families=("msg",)), R3)


async def test_recreating_a_consumer_resumes_after_the_lower_of_its_ack_floor_and_its_checkpoint(nc: Any) -> None:
    """The fallback where a server cannot change a consumer's replicas in place: delete it and
    create it again where its worker stands — nothing after that skipped."""
    js = nc.jetstream()
    settings = load_settings({})
    spec = ConsumerSpec(name="threads", families=("msg",))
    await provision(js, settings, [spec])
    for i in range(10):
        await js.publish("cortex.msg.a.received", f'{{"n":{i}}}'.encode())
    sub = await js.pull_subscribe_bind("threads", stream=EVENTS_STREAM)
    for msg in await sub.fetch(6, timeout=5):
        await msg.ack_sync()
    await (await js.key_value(BUCKET_CHECKPOINTS)).put("threads", b"4")  # applied durably up to 4
    await sub.unsubscribe()

    config = (await js.consumer_info(EVENTS_STREAM, "threads")).config
    assert await recreate_at_checkpoint(js, config) == 5
    info = await js.consumer_info(EVENTS_STREAM, "threads")
    assert (info.config.deliver_policy, info.num_pending) == (api.DeliverPolicy.BY_START_SEQUENCE, 6)
    sub = await js.pull_subscribe_bind("threads", stream=EVENTS_STREAM)
    assert [m.metadata.sequence.stream for m in await sub.fetch(6, timeout=5)] == [5, 6, 7, 8, 9, 10]
    assert await ensure_consumer(js, spec, settings) == "unchanged"  # init afterwards leaves it as it is
    longer = load_settings({"CORTEX_RUNTIME_ACK_WAIT_S": "90"})  # and can still change what may change
    assert await ensure_consumer(js, spec, longer) == "updated"
    assert (await js.consumer_info(EVENTS_STREAM, "threads")).config.opt_start_seq == 5


def test_no_room_on_a_cluster_with_enough_servers_is_a_retryable_line_not_a_setting_to_change() -> None:
    """"no suitable peers" also comes from a cluster of three whose third server is still
    joining (met right after the nodes start) or down (the cluster keeps announcing it):
    telling the operator to lower CORTEX_REPLICAS then is wrong, and a worker must wait, not stop."""
    no_room = nats.js.errors.BadRequestError(code=400, err_code=10005, description="no suitable peers for placement")
    joining = _refusal(no_room, 3, "CORTEX_EVENTS", servers=3)
    assert isinstance(joining, ReplicasUnavailable) and is_transient(joining)
    assert str(joining) == ("CORTEX_REPLICAS=3: the NATS cluster has 3 servers, but fewer than 3 can take a copy of "
                            "CORTEX_EVENTS now (the server says: no suitable peers for placement); a server is "
                            "still joining, down or out of JetStream storage: try again when every server is up")
    too_many = _refusal(no_room, 5, "CORTEX_EVENTS", servers=3)
    assert isinstance(too_many, ReplicasError) and not is_transient(too_many)
    unknown = _refusal(no_room, 3, "CORTEX_EVENTS", servers=None)  # no_advertise: the count is not known
    assert isinstance(unknown, ReplicasError) and "has fewer servers" in str(unknown)
