"""Partitions in the server, on a real nats-server: CORTEX_EVENTS stores every event with the
slot the stream computes (NATS's own partition function), and a partition consumer is
delivered exactly its agents' events, in stream order."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from nats.aio.client import Client
from nats.js.api import StreamConfig

from shared.codec import Envelope
from shared.config import load_settings
from shared.consume import ConsumeLoop, Handler, LoopConfig
from shared.health import Health
from shared.kv import kv_read
from shared.names import (
    BUCKET_CHECKPOINTS,
    DLQ_STREAM,
    EVENTS_STREAM,
    NOTES_STREAM,
    consumer_filter_subjects,
    consumer_name,
    consumers_of,
    partition_ids,
    partition_of,
    partition_slots,
    slot_of,
    stored_subject,
)
from shared.provision import ConsumerSpec, provision

WaitFor = Callable[..., Awaitable[Any]]
AGENTS = [f"agent-{i}" for i in range(12)]


async def test_the_slot_is_the_nats_servers_own_partition_function(nc: Client) -> None:
    """CORTEX_EVENTS stores each publish with the slot the stream computes, where slot_of puts it
    (``stored_subject``), for every family — notes included — and for any agent id."""
    js = nc.jetstream()
    await provision(js, load_settings({}), [])
    agents = [*AGENTS, "alice", "bob", "main", "a", "Z_9-x"]
    sent = [(f"cortex.msg.{a}.received", ("msg", a, "received")) for a in agents]
    sent += [("cortex.notes.alice.section", ("notes", "alice", "section")),
             ("cortex.feedback.bob.memory_pin", ("feedback", "bob", "memory_pin"))]
    for subject, _ in sent:
        await js.publish(subject, b"{}")
    for seq, (_, (family, agent, kind)) in enumerate(sent, start=1):
        stored = (await js.get_msg(EVENTS_STREAM, seq)).subject
        assert stored == stored_subject("cortex", family, agent, kind), stored
    assert stored_subject("cortex", "msg", "alice", "received") == "cortex.msg.39.alice.received"  # NOTES.md
    # the contract's three-token notes subject: CORTEX_NOTES takes it, the server's copy is stored alike
    assert (await js.publish("cortex.notes.alice", b"{}")).stream == NOTES_STREAM



class Recorder(Handler):
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


async def test_each_partition_consumer_is_delivered_only_its_agents_in_stream_order(nc: Client,
                                                                                  wait_for: WaitFor) -> None:
    """The server filters on the slot token: a partition consumer's pending count is exactly its
    agents' events (summed over the partitions: the events published, not N times), and the loop
    is handed nothing else."""
    js = nc.jetstream()
    settings = load_settings({"CORTEX_PARTITIONS": "4"})
    names = consumers_of("tally", 4)
    assert names == ["tally-0", "tally-1", "tally-2", "tally-3"]
    await provision(js, settings, [ConsumerSpec(name=n, families=("msg",), partition=k, partitions=4)
                                   for k, n in enumerate(names)])
    published = [(f"e{i}", AGENTS[(i * 7) % len(AGENTS)]) for i in range(300)]
    for i, agent in published:
        subject, data = message(int(i[1:]), agent)
        await js.publish(subject, data)
    await js.publish("cortex.session.agent-1.start", msgspec.json.encode(
        {"id": "s1", "agent": "agent-1", "session": "s", "ts": "2026-02-17T10:00:00Z"}))  # not in the filter
    last = int((await js.stream_info(EVENTS_STREAM)).state.last_seq)

    mine = [sum(1 for _, a in published if partition_of(a, 4) == k) for k in range(4)]
    pending = [(await js.consumer_info(EVENTS_STREAM, n)).num_pending for n in names]
    assert pending == mine and sum(pending) == len(published)
    assert all(mine), "every partition should hold an agent of the twelve"

    recorders = [Recorder() for _ in names]
    loops = [ConsumeLoop(js, worker="tally", consumer=names[k], handler=recorders[k],
                         config=LoopConfig(batch_size=40, fetch_timeout_s=0.1), health=Health(names[k]),
                         label=names[k]) for k in range(4)]
    tasks = [asyncio.create_task(loop.run()) for loop in loops]

    async def caught_up() -> bool:
        return all(len(r.applied) == n for r, n in zip(recorders, mine, strict=True))

    try:
        await wait_for(caught_up, within=30)
    finally:
        for loop in loops:
            loop.stop()
        await asyncio.gather(*tasks)

    for k, recorder in enumerate(recorders):
        assert {partition_of(agent, 4) for agent, _ in recorder.applied} == {k}
    # every event applied exactly once, and each agent's events in the order they were published
    assert sorted(a for r in recorders for a in r.applied) == sorted((a, i) for i, a in published)
    for agent in AGENTS:
        owner = recorders[partition_of(agent, 4)].applied
        assert [i for a, i in owner if a == agent] == [i for i, a in published if a == agent]
    # a checkpoint is its own last event's sequence; nothing is left on any consumer
    ckpt = await js.key_value(BUCKET_CHECKPOINTS)
    for k, name in enumerate(names):
        raw, _ = await kv_read(ckpt, name)
        own_last = max(seq for seq, (_, a) in enumerate(published, start=1) if partition_of(a, 4) == k)
        assert raw is not None and int(raw) == own_last < last

        async def drained(name: str = name) -> bool:  # the stop's acks: applied by the server after it
            info = await js.consumer_info(EVENTS_STREAM, name)
            return not info.num_pending and not info.num_ack_pending

        await wait_for(drained, within=10)


def store_event(i: int, token: str, store_agent: str, agent: str) -> tuple[str, bytes]:
    """One event as the OpenClaw store 0.2.1 publishes it under OpenClaw 2026.9 (the session
    key `agent:<id>:main`), on the subject CORTEX_EVENTS sources it to."""
    kind = {"msg_in": "msg.in", "run_start": "run.start"}[token]
    payload = {"from": "albert", "content": f"message {i}"} if token == "msg_in" else {"prompt": f"prompt {i}"}
    data = {"id": f"o{i}", "ts": 1771318803000 + i, "agent": store_agent, "session": f"agent:{agent}:main",
            "type": kind, "payload": payload}
    return f"openclaw.events.{store_agent}.{token}", msgspec.json.encode(data)


async def test_the_store_s_session_token_is_read_by_every_partition_and_applied_by_its_agent_s(
        nc: Client, wait_for: WaitFor) -> None:
    """OpenClaw 2026.9 with the store 0.2.1: an agent's messages arrive under the token `agent`
    (slot 38), its runs under its own id — two slots, often two partitions. Each of its events is
    still applied by its own partition only, once, in stream order: the partitions that own any
    agent read the token's events and apply their own agents' of them."""
    js = nc.jetstream()
    await js.add_stream(StreamConfig(name="openclaw-events", subjects=["openclaw.events.>"]))
    settings = load_settings({"CORTEX_PARTITIONS": "4", "CORTEX_OPENCLAW_STREAM": "openclaw-events"})
    names = consumers_of("tally", 4)
    await provision(js, settings, [ConsumerSpec(name=n, families=("msg", "run"), partition=k, partitions=4)
                                   for k, n in enumerate(names)])
    agents = AGENTS[:8]
    assert {partition_of(a, 4) for a in agents} - {partition_of("agent", 4)}, "some agent lives elsewhere"
    published = []
    for i in range(160):
        agent = agents[(i * 5) % len(agents)]
        token, store_agent = ("msg_in", "agent") if i % 3 else ("run_start", agent)
        subject, data = store_event(i, token, store_agent, agent)
        await js.publish(subject, data)
        published.append((f"o{i}", agent))
    # a session key that names no valid agent: one dead letter, whichever partitions read it
    bad = {"id": "bad", "ts": 1771318803000, "agent": "agent", "session": "agent:b@d:main", "type": "msg.in",
           "payload": {"from": "albert", "content": "lost"}}
    await js.publish("openclaw.events.agent.msg_in", msgspec.json.encode(bad))

    recorders = [Recorder() for _ in names]
    loops = [ConsumeLoop(js, worker="tally", consumer=names[k], handler=recorders[k],
                         config=LoopConfig(batch_size=30, fetch_timeout_s=0.1, partition=k, partitions=4),
                         health=Health(names[k]), label=names[k]) for k in range(4)]
    tasks = [asyncio.create_task(loop.run()) for loop in loops]

    async def copied() -> bool:
        return (await js.stream_info(EVENTS_STREAM)).state.messages == len(published) + 1

    await wait_for(copied, within=30)

    async def caught_up() -> bool:
        if sum(len(r.applied) for r in recorders) < len(published):
            return False
        if not (await js.stream_info(DLQ_STREAM)).state.messages:
            return False
        return all([not (await js.consumer_info(EVENTS_STREAM, n)).num_pending for n in names])

    try:
        await wait_for(caught_up, within=30)
    finally:
        for loop in loops:
            loop.stop()
        await asyncio.gather(*tasks)

    assert (await js.stream_info(DLQ_STREAM)).state.messages == 1, "dead-lettered by one partition only"
    for k, recorder in enumerate(recorders):
        assert {partition_of(agent, 4) for agent, _ in recorder.applied} <= {k}
    assert sorted(a for r in recorders for a in r.applied) == sorted((a, i) for i, a in published)
    for agent in agents:
        owner = recorders[partition_of(agent, 4)].applied
        assert [i for a, i in owner if a == agent] == [i for i, a in published if a == agent]


def test_partition_k_of_n_takes_the_slots_s_with_s_mod_n_equal_k() -> None:
    assert partition_slots(1, 4) == list(range(1, 64, 4))
    for n in (1, 2, 3, 4, 7, 64):
        slots = [s for k in range(n) for s in partition_slots(k, n)]
        assert sorted(slots) == list(range(64))  # every slot in exactly one partition
    for agent in AGENTS:
        assert slot_of(agent) in partition_slots(partition_of(agent, 3), 3)
    assert consumer_filter_subjects("cortex", ("msg",), 1, 32) == [
        "cortex.msg.1.*.*", "cortex.openclaw.1.*.conversation_message_in",
        "cortex.openclaw.1.*.conversation_message_out", "cortex.openclaw.1.*.msg_in", "cortex.openclaw.1.*.msg_out",
        "cortex.msg.33.*.*", "cortex.openclaw.33.*.conversation_message_in",
        "cortex.openclaw.33.*.conversation_message_out", "cortex.openclaw.33.*.msg_in", "cortex.openclaw.33.*.msg_out",
        # the OpenClaw store's session token `agent` (slot 38): its events may be any partition's agents'
        "cortex.openclaw.38.agent.conversation_message_in", "cortex.openclaw.38.agent.conversation_message_out",
        "cortex.openclaw.38.agent.msg_in", "cortex.openclaw.38.agent.msg_out"]
    # the only consumer, or partition 0, also reads what the stream stored without a slot
    assert consumer_filter_subjects("cortex", ("notes",)) == ["cortex.notes.*.*.*", "cortex.notes.*.*"]
    assert consumer_filter_subjects("cortex", ("notes",), 0, 2) == [
        *(f"cortex.notes.{s}.*.*" for s in range(0, 64, 2)), "cortex.notes.*.*"]


async def test_changing_the_partition_count_carries_the_checkpoints_over(nc: Client) -> None:
    """Split: both halves start at the partition's checkpoint. Merge: the lower one, and the
    consumers the layout no longer names are deleted with their checkpoints. One partition
    again: the lowest of all."""
    js = nc.jetstream()

    def specs(n: int) -> list[ConsumerSpec]:
        return [ConsumerSpec(name=consumer_name("tally", k), families=("msg",), partition=k, partitions=n)
                for k in partition_ids(n)]

    async def checkpoints() -> dict[str, int]:
        kv = await js.key_value(BUCKET_CHECKPOINTS)
        names = sorted({i.name for i in await js.consumers_info(EVENTS_STREAM)} | {f"tally-{k}" for k in range(4)})
        return {n: int(raw) for n in names if (raw := (await kv_read(kv, n))[0]) is not None}

    async def put(**values: int) -> None:
        kv = await js.key_value(BUCKET_CHECKPOINTS)
        for name, seq in values.items():
            await kv.put(name.replace("_", "-"), str(seq).encode())

    await provision(js, load_settings({}), specs(2))
    await put(tally_0=100, tally_1=50)
    report = await provision(js, load_settings({}), specs(4))
    assert await checkpoints() == {"tally-0": 100, "tally-1": 50, "tally-2": 100, "tally-3": 50}
    assert report["consumer tally-2"] == "created" and report["consumer tally-0"] == "updated"
    info = await js.consumer_info(EVENTS_STREAM, "tally-2")
    assert info.config.filter_subjects == consumer_filter_subjects("cortex", ("msg",), 2, 4)

    await put(tally_0=120, tally_1=60, tally_2=110, tally_3=70)
    report = await provision(js, load_settings({}), specs(2))
    assert await checkpoints() == {"tally-0": 110, "tally-1": 60}
    assert any(what.startswith("consumer tally-3") and outcome == "deleted" for what, outcome in report.items())

    await provision(js, load_settings({}), specs(1))
    assert await checkpoints() == {"tally": 60}
    assert set((await provision(js, load_settings({}), specs(1))).values()) == {"unchanged"}
