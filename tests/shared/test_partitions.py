"""Partitions at the loop level, on a real nats-server: the partition function is NATS's own,
and a partition consumer applies exactly its agents' events, in stream order."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from nats.aio.client import Client
from nats.js import api

from shared.codec import Envelope
from shared.config import load_settings
from shared.consume import ConsumeLoop, LoopConfig
from shared.health import Health
from shared.kv import kv_read
from shared.names import BUCKET_CHECKPOINTS, EVENTS_STREAM, PartitionFilter, consumers_of, partition_of
from shared.provision import ConsumerSpec, provision

WaitFor = Callable[..., Awaitable[Any]]
AGENTS = [f"agent-{i}" for i in range(12)]


async def test_the_partition_function_is_the_nats_servers_own(nc: Client) -> None:
    """A stream subject transform with ``{{partition(N,1)}}`` puts each agent where partition_of does."""
    js = nc.jetstream()
    transform = api.SubjectTransform(src="p.*", dest="q.{{partition(4,1)}}.{{wildcard(1)}}")
    await js.add_stream(api.StreamConfig(name="PTEST", subjects=["p.*"], subject_transform=transform))
    agents = [*AGENTS, "alice", "bob", "main", "a", "Z_9-x"]
    for agent in agents:
        await js.publish(f"p.{agent}", b"")
    for seq, agent in enumerate(agents, start=1):
        subject = (await js.get_msg("PTEST", seq)).subject
        assert subject == f"q.{partition_of(agent, 4)}.{agent}", (agent, subject)


class Recorder:
    """A handler that records what it applies (agent, event id), in order."""

    def __init__(self) -> None:
        self.applied: list[tuple[str, str]] = []

    async def apply(self, env: Envelope) -> bool:
        self.applied.append((env.agent, env.event.id))
        return True

    async def commit(self) -> None:
        return None

    def reset(self) -> None:
        return None


def message(i: int, agent: str) -> tuple[str, bytes]:
    payload = {"id": f"e{i}", "agent": agent, "session": "s", "ts": f"2026-02-17T10:{i % 60:02d}:00Z",
               "role": "user", "content": f"message {i}"}
    return f"cortex.msg.{agent}.received", msgspec.json.encode(payload)


async def test_each_partition_consumer_applies_only_its_agents_in_stream_order(nc: Client, wait_for: WaitFor) -> None:
    js = nc.jetstream()
    settings = load_settings({"CORTEX_PARTITIONS": "2"})
    names = consumers_of("tally", 2)
    assert names == ["tally-0", "tally-1"]
    await provision(js, settings, [ConsumerSpec(name=n, families=("msg",)) for n in names])
    published = [(f"e{i}", AGENTS[(i * 7) % len(AGENTS)]) for i in range(300)]
    for i, agent in published:
        subject, data = message(int(i[1:]), agent)
        await js.publish(subject, data)
    last = int((await js.stream_info(EVENTS_STREAM)).state.last_seq)

    recorders = [Recorder(), Recorder()]
    loops = [ConsumeLoop(js, worker="tally", consumer=names[k], handler=recorders[k],
                         config=LoopConfig(batch_size=40, fetch_timeout_s=0.1), health=Health(names[k]),
                         owns=PartitionFilter(k, 2), label=names[k]) for k in (0, 1)]
    tasks = [asyncio.create_task(loop.run()) for loop in loops]

    async def caught_up() -> bool:
        return all(loop.checkpoint >= last for loop in loops)

    try:
        await wait_for(caught_up, within=30)
    finally:
        for loop in loops:
            loop.stop()
        await asyncio.gather(*tasks)

    for k, recorder in enumerate(recorders):
        assert recorder.applied, f"partition {k} applied nothing"
        assert {partition_of(agent, 2) for agent, _ in recorder.applied} == {k}
    # every event applied exactly once, and each agent's events in the order they were published
    assert sorted(recorders[0].applied + recorders[1].applied) == sorted((a, i) for i, a in published)
    for agent in AGENTS:
        owner = recorders[partition_of(agent, 2)].applied
        assert [i for a, i in owner if a == agent] == [i for i, a in published if a == agent]
    # every partition's checkpoint covers the whole stream, other partitions' events included,
    # and nothing is left unacked on either consumer
    ckpt = await js.key_value(BUCKET_CHECKPOINTS)
    for name in names:
        raw, _ = await kv_read(ckpt, name)
        assert raw is not None and int(raw) == last
        info = await js.consumer_info(EVENTS_STREAM, name)
        assert not info.num_pending and not info.num_ack_pending


def test_partition_filter_reads_the_agent_token_of_every_family() -> None:
    owns = [PartitionFilter(k, 3) for k in range(3)]
    for subject, agent in [("cortex.msg.alice.received", "alice"), ("cortex.notes.bob", "bob"),
                           ("x.feedback.carol.memory_pin", "carol")]:
        assert [f(subject) for f in owns] == [partition_of(agent, 3) == k for k in range(3)]
