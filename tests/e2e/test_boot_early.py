"""A session start behind a backlog the boot worker has not applied (issue 39, "No cliff"):
its briefing is made at once by the early path (``workers.boot.early``) — the sources
still behind named in ``lagging`` — while the boot worker's own consumer (paused here) has
not even been delivered the backlog; once everything catches up the completed document
is byte for byte the one an in-order run (the consume loop alone) makes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from cortex_testkit import caught_up
from nats.js.client import JetStreamContext

from schemas.docs import BootDoc
from shared.config import Settings, load_settings
from shared.embedded import EmbeddedNats
from shared.kv import checkpoint_value, kv_keys, kv_read
from shared.names import BUCKET_BOOT, BUCKET_CHECKPOINTS, EVENTS_STREAM
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.boot.early import EarlyTriggers
from workers.registry import all_specs, consumer_specs
from workers.render import join_names

T0 = datetime(2026, 3, 9, 9, 0, tzinfo=UTC)
AGENTS = ("ada", "bo", "cy", "dee")
LINES = ("We decided to move invoice rendering to a queue because month end blocks the API.",
         "I'll profile the search service tomorrow and send you the flame graph.",
         "The billing export is late again; the payments team owes us the schema.",
         "Agreed, we roll back the tokenizer change because it caused the regression.")
Event = tuple[str, bytes]


def at(seconds: int) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def session(agent: str, kind: str, name: str, seconds: int) -> Event:
    body = {"id": f"{agent}-{name}-{kind}", "agent": agent, "session": name, "ts": at(seconds)}
    return f"cortex.session.{agent}.{kind}", msgspec.json.encode(body)


def message(agent: str, i: int, session_name: str, seconds: int) -> Event:
    role = "user" if i % 2 else "assistant"
    body = {"id": f"{agent}-m{i}", "agent": agent, "session": session_name, "ts": at(seconds), "role": role,
            "sender": "albert" if role == "user" else "claudia", "channel": "webchat",
            "content": f"{LINES[i % len(LINES)]} (item {i})"}
    return f"cortex.msg.{agent}.{'received' if role == 'user' else 'sent'}", msgspec.json.encode(body)


def first_sessions() -> list[Event]:
    """Every agent's first session: a start and a few messages (the agents' first documents)."""
    return [e for agent in AGENTS for e in (session(agent, "start", "s1", 0),
                                            *(message(agent, i, "s1", 10 + i) for i in range(4)))]


def backlog(others: int, own: int) -> list[Event]:
    """``others`` messages of the other agents and ``own`` of ada's, interleaved, then ada's next
    session start (the last event)."""
    events = [message(AGENTS[1 + i % 3], 100 + i, "s1", 100 + i) for i in range(others)]
    for i in range(own):
        events.insert(i * others // max(1, own), message("ada", 100 + i, "s1", 100 + i))
    return [*events, session("ada", "start", "s2", 100 + others + own)]


def settings_for(url: str, tmp: Path) -> Settings:
    # a short bound: the early briefing does not wait long for the sources the backlog holds up;
    # cuts every 100 sequences: the loop makes change documents of ada before the start too
    return load_settings({"CORTEX_NATS_URL": url, "CORTEX_DATA_DIR": str(tmp / "data"), "CORTEX_EMBEDDER": "hashing",
                          "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_BOOT_WAIT_MS": "300",
                          "CORTEX_RUNTIME_CUT_EVERY": "100"})


@contextlib.asynccontextmanager
async def hosted(settings: Settings) -> AsyncIterator[None]:
    host = WorkerHost(settings, list(all_specs().values()), __version__)
    task = asyncio.create_task(host.run())
    try:
        yield
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=60)


async def publish(js: JetStreamContext, events: list[Event]) -> list[int]:
    return [(await js.publish(subject, data)).seq for subject, data in events]


async def boot_docs(js: JetStreamContext) -> dict[str, bytes | None]:
    kv = await js.key_value(BUCKET_BOOT)
    return {agent: (await kv_read(kv, agent))[0] for agent in sorted(await kv_keys(js, BUCKET_BOOT))}


async def settled(js: JetStreamContext) -> bool:
    """Every consumer has applied everything, and no briefing waits for a source."""
    for spec in consumer_specs():
        if not await caught_up(js, spec.name):
            return False
    docs = await boot_docs(js)
    return len(docs) == len(AGENTS) and all(
        raw is not None and not msgspec.json.decode(raw, type=BootDoc).lagging for raw in docs.values())


async def stored(js: JetStreamContext, agent: str) -> BootDoc | None:
    raw, _ = await kv_read(await js.key_value(BUCKET_BOOT), agent)
    return msgspec.json.decode(raw, type=BootDoc) if raw is not None else None


@pytest.mark.timeout(300)
async def test_a_session_start_behind_an_unapplied_backlog_is_briefed_at_once_and_completed_as_in_order(
    nats_url: str, tmp_path: Path, wait_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = first_sessions()
    late = backlog(others=600, own=150)
    settings = settings_for(nats_url, tmp_path / "live")
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        await provision(js, settings, consumer_specs())
        await publish(js, events)
        async with hosted(settings):
            await wait_for(lambda: settled(js), within=120)  # every agent has a document
            for consumer in ("boot", "recall"):  # boot's loop gets nothing of what follows; recall lags
                await js.pause_consumer(EVENTS_STREAM, consumer, "2099-01-01T00:00:00Z")
            start = (await publish(js, late))[-1]

            async def briefed() -> BootDoc | None:
                doc = await stored(js, "ada")
                return doc if doc is not None and doc.integrity.last_seq == start else None

            early = await wait_for(briefed, within=60)
            # made while the loop had not been delivered any of the backlog, let alone applied it
            boot = await js.consumer_info(EVENTS_STREAM, "boot")
            assert (boot.delivered.stream_seq or 0) < start - len(late) + 1
            checkpoint = checkpoint_value((await kv_read(await js.key_value(BUCKET_CHECKPOINTS), "boot"))[0])
            assert (checkpoint or 0) < start - len(late) + 1
            assert (early.trigger, early.session) == ("session_start", "s2")
            # recall is paused, so it is behind; another source may be too on a busy machine, and the
            # staleness line then names them all
            assert "recall" in early.lagging
            assert f"Data staleness: the {join_names(early.lagging)} worker" in early.markdown

            for consumer in ("boot", "recall"):
                await js.resume_consumer(EVENTS_STREAM, consumer)
            await wait_for(lambda: settled(js), within=180)
            live = await boot_docs(js)
    finally:
        await nc.close()
    done = msgspec.json.decode(live["ada"] or b"", type=BootDoc)
    assert (done.integrity.last_seq, done.lagging, done.generated_at) == (start, [], early.generated_at)
    assert done.integrity.events == early.integrity.events == 2  # both session starts, whoever wrote them

    # the same events, in order, on a fresh server: the consume loop alone makes every document
    monkeypatch.setattr(EarlyTriggers, "start", lambda self: None)
    with EmbeddedNats(str(tmp_path / "nats-in-order")) as server:
        settings = settings_for(server.url, tmp_path / "in-order")
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        try:
            await provision(js, settings, consumer_specs())
            assert (await publish(js, events + late))[-1] == start
            async with hosted(settings):
                await wait_for(lambda: settled(js), within=180)
                in_order = await boot_docs(js)
        finally:
            await nc.close()
    assert live == in_order  # byte for byte, every agent's briefing
