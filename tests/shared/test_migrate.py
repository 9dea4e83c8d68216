"""``cortex init --migrate`` on a real nats-server: a CORTEX_EVENTS of stored layout 1 (subjects
as published) becomes layout 2 (the slot token) with every event at its old stream sequence —
gaps kept, the OpenClaw source resumed where it stopped — and until then nothing consumes it."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import nats.js.errors
import pytest
from nats.aio.client import Client
from nats.js import api
from nats.js.client import JetStreamContext

from shared.config import load_settings
from shared.lease import Lease
from shared.migrate import BACKUP_STREAM, MigrationError, migrate, staging_subject
from shared.names import (
    EVENTS_STREAM,
    FAMILIES,
    LAYOUT,
    consumer_name,
    openclaw_transform,
    stored_subject,
)
from shared.provision import LayoutError, layout_problem, provision, stream_layout
from workers.registry import consumer_specs

SETTINGS = load_settings({"CORTEX_OPENCLAW_STREAM": "openclaw-events"})


def event(i: int, agent: str) -> bytes:
    return msgspec.json.encode({"id": f"e{i}", "agent": agent, "session": "s", "ts": "2026-02-17T10:30:00Z",
                                "role": "user", "content": f"message {i}"})


async def layout_1(js: JetStreamContext) -> None:
    """CORTEX_EVENTS as the first layout's ``cortex init`` made it, with the OpenClaw store wired."""
    await js.add_stream(api.StreamConfig(name="openclaw-events", subjects=["openclaw.events.>"]))
    src, dest = openclaw_transform("cortex", "openclaw.events")
    await js.add_stream(api.StreamConfig(
        name=EVENTS_STREAM, subjects=[f"cortex.{f}.>" for f in FAMILIES], duplicate_window=120.0,
        sources=[api.StreamSource(name="openclaw-events",
                                  subject_transforms=[api.SubjectTransform(src=src, dest=dest)])]))


async def stored(js: JetStreamContext, stream: str) -> dict[int, tuple[str, bytes]]:
    info = await js.stream_info(stream)
    out = {}
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        try:
            msg = await js.get_msg(stream, seq)
        except nats.js.errors.NotFoundError:
            continue
        out[seq] = (msg.subject, msg.data or b"")
    return out


async def test_a_layout_1_stream_is_migrated_with_every_sequence_kept(nc: Client, wait_for: Any) -> None:
    js = nc.jetstream()
    await layout_1(js)
    for i in range(6):
        await js.publish(f"cortex.msg.{('alice', 'bob')[i % 2]}.received", event(i, ("alice", "bob")[i % 2]))
    await js.publish("cortex.notes.alice", b'{"note": 1}')  # layout 1's notes subject, no kind
    await js.publish("cortex.msg.a.b.c", b"junk")  # bad input layout 1 captured (a dead letter then)
    await js.publish("openclaw.events.main.msg_in", b'{"store": 1}')

    async def sourced(n: int) -> bool:
        return (await js.stream_info(EVENTS_STREAM)).state.messages >= n

    await wait_for(lambda: sourced(9), within=10)
    await js.delete_msg(EVENTS_STREAM, 4)  # a forget's gap
    await js.purge_stream(EVENTS_STREAM, seq=2)  # retention: the stream starts at 2
    before = await stored(js, EVENTS_STREAM)
    assert min(before) == 2 and 4 not in before

    # no silent mix: init refuses with the steps, a worker does not consume
    with pytest.raises(LayoutError, match="cortex init --migrate"):
        await provision(js, SETTINGS, consumer_specs())
    assert "cortex init --migrate" in str(await layout_problem(js, "cortex"))
    # and the migration refuses while a worker runs
    lease = Lease(js, consumer_name("threads"), "someone", 30)
    await js.create_key_value(bucket="cortex_leases", ttl=30)
    assert await lease.acquire(asyncio.Event())
    with pytest.raises(MigrationError, match="workers are running"):
        await migrate(js, SETTINGS, lambda _: None)
    await lease.release()

    said: list[str] = []
    assert await migrate(js, SETTINGS, said.append)
    after = await stored(js, EVENTS_STREAM)
    info = await js.stream_info(EVENTS_STREAM)
    assert stream_layout(info.config, "cortex") == LAYOUT and not (info.config.metadata or {}).get("cortex_migrating")
    assert (info.state.first_seq, info.state.last_seq) == (2, max(before))
    for seq, (subject, data) in before.items():
        if subject == "cortex.msg.a.b.c":
            assert seq not in after  # no layout-2 shape: a gap (its dead letter keeps it)
            continue
        tokens = subject.split(".")
        family, agent = tokens[1], tokens[2]
        kind = tokens[3] if len(tokens) == 4 else "section"
        assert after[seq] == (stored_subject("cortex", family, agent, kind), data), seq
    assert 4 not in after and set(after) == {s for s, (subj, _) in before.items() if subj != "cortex.msg.a.b.c"}
    assert any("copied" in line for line in said)
    with pytest.raises(nats.js.errors.NotFoundError):
        await js.stream_info(BACKUP_STREAM)

    # producers publish again; the OpenClaw source resumes where the old stream stopped
    ack = await js.publish("cortex.msg.carol.received", event(99, "carol"))
    assert ack.seq == max(before) + 1
    await js.publish("openclaw.events.main.msg_out", b'{"store": 2}')
    await wait_for(lambda: sourced(len(after) + 2), within=10)
    await provision(js, SETTINGS, consumer_specs())
    subjects = [s for s, _ in (await stored(js, EVENTS_STREAM)).values()]
    assert subjects.count("cortex.openclaw.8.main.msg_in") == 1  # not copied a second time
    assert subjects.count("cortex.openclaw.8.main.msg_out") == 1
    assert not await migrate(js, SETTINGS, said.append)  # nothing left to do


def test_layout_1_subjects_map_to_the_staging_form_or_nowhere() -> None:
    assert staging_subject("cortex", "cortex.msg.alice.received") == "cortex_migrating.msg.alice.received"
    assert staging_subject("cortex", "cortex.notes.alice") == "cortex_migrating.notes.alice.section"
    assert staging_subject("cortex", "cortex.openclaw.main.msg_in") == "cortex_migrating.openclaw.main.msg_in"
    assert staging_subject("cortex", "cortex.msg.a.b.c") is None
    assert staging_subject("cortex", "cortex.dlq.threads") is None
