"""Change documents: at most one per agent per ``boot.change_interval_ms`` of *event* time,
always one at a session's end; the same documents however the stream is batched."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from nats.js.client import JetStreamContext
from prometheus_client import REGISTRY

from schemas.docs import BootDoc
from shared.config import load_settings
from shared.kv import kv_read
from shared.names import EVENTS_STREAM
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NAMES = ("threads", "decisions", "boot")
Wait = Callable[..., Awaitable[Any]]


Event = tuple[str, bytes, str]


def event(agent: str, n: int, kind: str, at: timedelta, content: str = "") -> Event:
    body: dict[str, Any] = {"id": f"{agent}-{n}", "agent": agent, "session": "s1",
                            "ts": (T0 + at).strftime("%Y-%m-%dT%H:%M:%SZ")}
    if kind == "msg":
        body |= {"role": "user", "content": content}
        return f"cortex.msg.{agent}.received", msgspec.json.encode(body), body["id"]
    return f"cortex.session.{agent}.{kind}", msgspec.json.encode(body), body["id"]


def conversation(agent: str) -> list[Event]:
    return [
        event(agent, 1, "start", timedelta(0)),
        event(agent, 2, "msg", timedelta(seconds=10), "Let's talk about the billing export, it is still broken."),
        event(agent, 3, "msg", timedelta(seconds=70), "We decided to rebuild the billing export on the new queue."),
        event(agent, 4, "msg", timedelta(seconds=80), "Let's talk about the staging database migration now."),
        event(agent, 5, "end", timedelta(seconds=90)),
        event(agent, 6, "msg", timedelta(seconds=95), "Back again: the billing export still needs a test."),
    ]


EVENTS = conversation("ada")


class Pipeline:
    def __init__(self, js: JetStreamContext, host: WorkerHost) -> None:
        self.js = js
        self.host = host

    async def publish(self, events: list[Event]) -> None:
        for subject, data, event_id in events:
            await self.js.publish(subject, data, headers={"Nats-Msg-Id": event_id})

    async def drained(self) -> bool:
        for name in NAMES:
            info = await self.js.consumer_info(EVENTS_STREAM, name)
            if info.num_pending or info.num_ack_pending:
                return False
        return True

    async def boot(self, agent: str = "ada") -> BootDoc:
        raw, _ = await kv_read(await self.js.key_value("cortex_boot"), agent)
        assert raw is not None
        return msgspec.json.decode(raw, type=BootDoc)


async def start(nats_url: str, tmp_path: Path, backlog: list[Event] | None = None,
                **env: str) -> tuple[Pipeline, asyncio.Task[None], Any]:
    """The workers in-process; ``backlog`` is published before they start."""
    # a stream cut at every sequence: a change document shows the state just before its event
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_BOOT_WAIT_MS": "200", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100",
                              "CORTEX_RUNTIME_CUT_EVERY": "1", **env})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, [all_specs()[n] for n in NAMES], __version__)
    pipe = Pipeline(js, host)
    await pipe.publish(backlog or [])
    return pipe, asyncio.create_task(host.run()), nc


@pytest.fixture
async def pipeline(nats_url: str, tmp_path: Path) -> AsyncIterator[Pipeline]:
    pipe, task, nc = await start(nats_url, tmp_path)
    yield pipe
    pipe.host.stop.set()
    await asyncio.wait_for(task, timeout=30)
    await nc.close()


async def test_a_change_makes_a_document_only_an_interval_of_event_time_after_the_last(
    pipeline: Pipeline, wait_for: Wait
) -> None:
    async def step(events: list[Event]) -> BootDoc:
        await pipeline.publish(events)
        await wait_for(pipeline.drained, within=60)
        return await pipeline.boot()

    started = await step(EVENTS[:2])  # the message 10 s after the session start: not due
    assert (started.trigger, started.generated_at, started.integrity.last_seq) == ("session_start", T0, 1)
    assert "billing export" not in started.markdown

    changed = await step(EVENTS[2:3])  # 70 s after the last document: due, as of the cut before it
    assert (changed.trigger, changed.generated_at, changed.integrity.last_seq) == (
        "change", T0 + timedelta(seconds=70), 3)
    assert "billing export" in changed.markdown.lower()  # the message at 10 s
    assert "(2026-03-02T09:00:10Z)" in changed.markdown.split("Last activity:", 1)[1].split("\n", 1)[0]
    assert "| 0 recent decisions |" in changed.markdown  # its own decision comes after the cut

    quiet = await step(EVENTS[3:4])  # 10 s after that one: the stored document stays
    assert quiet == changed

    ended = await step(EVENTS[4:5])  # a session's end always makes one, with everything before it
    assert (ended.trigger, ended.generated_at, ended.integrity.last_seq) == (
        "change", T0 + timedelta(seconds=90), 5)
    assert "Last activity: just now (2026-03-02T09:01:20Z)" in ended.markdown  # the message at 80 s


async def test_the_documents_do_not_depend_on_how_the_stream_is_batched(
    nats_url: str, tmp_path: Path, wait_for: Wait
) -> None:
    """ada's conversation is a backlog taken in one batch; bob's, the same conversation, comes
    one event per batch. Their last documents say the same."""
    pipe, task, nc = await start(nats_url, tmp_path, backlog=conversation("ada"))  # one batch
    try:
        await wait_for(pipe.drained, within=60)
        for one in conversation("bob"):
            await pipe.publish([one])
            await wait_for(pipe.drained, within=60)
        ada, bob = await pipe.boot("ada"), await pipe.boot("bob")
    finally:
        pipe.host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()
    assert (ada.trigger, ada.generated_at) == ("change", T0 + timedelta(seconds=90))  # the end; 95 s: not due
    assert ada.integrity.last_seq == 5 and bob.integrity.last_seq == 11
    assert (ada.markdown, ada.trigger, ada.generated_at, ada.session, ada.lagging) == (
        bob.markdown, bob.trigger, bob.generated_at, bob.session, bob.lagging)


async def test_an_interval_of_zero_makes_a_document_for_every_batch_with_a_change(
    nats_url: str, tmp_path: Path, wait_for: Wait
) -> None:
    pipe, task, nc = await start(nats_url, tmp_path, CORTEX_BOOT_CHANGE_INTERVAL_MS="0")
    try:
        await pipe.publish(EVENTS[:2])
        await wait_for(pipe.drained, within=60)
        doc = await pipe.boot()
        assert (doc.trigger, doc.generated_at, doc.integrity.last_seq) == ("change", T0 + timedelta(seconds=10), 2)
    finally:
        pipe.host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()


def boot_events(outcome: str) -> float:
    return REGISTRY.get_sample_value("cortex_events_total", {"worker": "boot", "outcome": outcome}) or 0.0


async def test_the_applied_count_is_the_events_that_make_a_document(pipeline: Pipeline, wait_for: Wait) -> None:
    """The session's start, the message 70 s after it and the session's end make documents;
    the messages 10 s after a document do not, and count as skipped. All in one batch, the
    message's document is replaced by the end's before it is written: it counts all the same,
    so the count does not depend on how the stream is batched."""
    applied, skipped = boot_events("applied"), boot_events("skipped")
    await pipeline.publish(EVENTS[:5])
    await wait_for(pipeline.drained, within=60)
    assert (await pipeline.boot()).integrity.last_seq == 5
    assert (boot_events("applied") - applied, boot_events("skipped") - skipped) == (3, 2)
