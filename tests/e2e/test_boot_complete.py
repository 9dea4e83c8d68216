"""The session-start briefing right after a session end, through the whole pipeline (issue 18):
the narrative made at the session's end is in it, and a source still behind at the wait
bound (the recall worker, paused here) is completed into it once it catches up — as of
the same trigger, in KV and in the workspace file."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import nats
from cortex_testkit import caught_up
from nats.js.client import JetStreamContext

from schemas.docs import BootDoc
from shared.config import Settings, load_settings
from shared.kv import kv_read
from shared.names import EVENTS_STREAM
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs
from workers.render import join_names

T0 = datetime(2026, 3, 4, 14, 0, tzinfo=UTC)
LINES = [
    ("user", "albert", "Let's talk about the billing rewrite: the invoice generator is too slow for month end."),
    ("assistant", "claudia", "We decided to move invoice rendering to a queue because month end blocks the API."),
    ("user", "albert", "Agreed. Also the search latency regression is back, p95 doubled since Monday."),
    ("assistant", "claudia", "I'll profile the search service tomorrow and send you the flame graph."),
    ("user", "albert", "We decided to roll back the tokenizer change because it caused the regression."),
    ("assistant", "claudia", "Rolled back. The billing queue is next; waiting for the payments team on the schema."),
]
LAG_LINE = "the recall worker is lagging"


def conversation(agent: str) -> list[tuple[str, bytes]]:
    """A working session, its end, and the next session's start a moment (seconds) later."""

    def at(seconds: int) -> str:
        return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def session(kind: str, name: str, seconds: int) -> tuple[str, bytes]:
        body = {"id": f"{agent}-{name}-{kind}", "agent": agent, "session": name, "ts": at(seconds)}
        return f"cortex.session.{agent}.{kind}", msgspec.json.encode(body)

    events = [session("start", "s1", 0)]
    for i, (role, sender, content) in enumerate(LINES):
        body = {"id": f"{agent}-m{i}", "agent": agent, "session": "s1", "ts": at(60 * (i + 1)), "role": role,
                "sender": sender, "channel": "webchat", "content": content}
        events.append((f"cortex.msg.{agent}.{'received' if role == 'user' else 'sent'}", msgspec.json.encode(body)))
    return [*events, session("end", "s1", 400), session("start", "s2", 403)]


def settings_for(url: str, tmp: Path, **extra: str) -> Settings:
    # a bound far below what the paused recall worker needs: the first document is made without it
    return load_settings({"CORTEX_NATS_URL": url, "CORTEX_DATA_DIR": str(tmp / "data"), "CORTEX_EMBEDDER": "hashing",
                          "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_BOOT_WAIT_MS": "300",
                          "CORTEX_WORKSPACE": str(tmp / "ws"), **extra})


@contextlib.asynccontextmanager
async def hosted(settings: Settings, names: list[str]) -> AsyncIterator[WorkerHost]:
    specs = all_specs()
    host = WorkerHost(settings, [specs[n] for n in names], __version__)
    task = asyncio.create_task(host.run())
    try:
        yield host
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=60)


async def stored_boot(js: JetStreamContext, agent: str) -> BootDoc | None:
    raw, _ = await kv_read(await js.key_value("cortex_boot"), agent)
    return msgspec.json.decode(raw, type=BootDoc) if raw is not None else None


async def publish(js: JetStreamContext, events: list[tuple[str, bytes]]) -> list[int]:
    return [(await js.publish(subject, data)).seq for subject, data in events]


async def test_the_session_start_after_a_session_end_has_its_narrative_and_is_completed_once_recall_catches_up(
    nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    settings = settings_for(nats_url, tmp_path)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        await provision(js, settings, consumer_specs())
        await js.pause_consumer(EVENTS_STREAM, "recall", "2099-01-01T00:00:00Z")
        seqs = await publish(js, conversation("ada"))  # published at once: the next session starts right away
        async with hosted(settings, list(all_specs())):

            async def made_for_s2() -> BootDoc | None:
                doc = await stored_boot(js, "ada")
                return doc if doc is not None and doc.session == "s2" else None

            first = await wait_for(made_for_s2, within=60)
            assert first.trigger == "session_start" and "recall" in first.lagging
            # made at the bound without the paused recall worker (on a busy machine another source may
            # lag beside it: the staleness line then names them all)
            assert f"Data staleness: the {join_names(first.lagging)} worker" in first.markdown

            await js.resume_consumer(EVENTS_STREAM, "recall")

            async def completed() -> BootDoc | None:
                doc = await stored_boot(js, "ada")
                return doc if doc is not None and not doc.lagging else None

            done = await wait_for(completed, within=60)
        workspace = (tmp_path / "ws" / "ada" / "BOOTSTRAP.md").read_text(encoding="utf-8")
    finally:
        await nc.close()
    # still the session start's document, as of that event: same trigger, time and watermark
    assert (done.trigger, done.session, done.integrity.last_seq) == ("session_start", "s2", seqs[-1])
    assert done.generated_at == T0 + timedelta(seconds=403) == first.generated_at
    assert done.integrity == msgspec.structs.replace(first.integrity, producer=done.integrity.producer)
    assert "⚠️ Data staleness" not in done.markdown, done.markdown
    assert "No data" not in done.markdown, done.markdown
    assert "## 📖 Narrative (last 24h)" in done.markdown  # made at the session's end, just before
    assert workspace == done.markdown  # the workspace file follows


async def test_the_narrative_of_the_session_that_just_ended_is_in_the_next_session_start(
    nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    """The narrative worker takes the session end and the next start in one batch (they came
    together); the narrative made for the end must still be a revision of its own."""
    settings = settings_for(nats_url, tmp_path, CORTEX_BOOT_WAIT_MS="10000")
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        await provision(js, settings, consumer_specs())
        await publish(js, conversation("bea"))
        async with hosted(settings, list(all_specs())):

            async def made_for_s2() -> BootDoc | None:
                doc = await stored_boot(js, "bea")
                return doc if doc is not None and doc.session == "s2" else None

            doc = await wait_for(made_for_s2, within=60)
    finally:
        await nc.close()
    assert doc.lagging == []
    assert "No data" not in doc.markdown, doc.markdown  # nor for the snapshot: no compaction, none expected
    narrative = doc.markdown.split("## 📖 Narrative (last 24h)\n", 1)[1]
    assert "billing rewrite" in narrative.lower() or "invoice" in narrative.lower(), narrative


async def test_a_completion_outstanding_when_the_boot_worker_restarts_is_not_lost(
    nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    """The boot worker stops while its document waits for recall; the next instance has no
    event left to apply, finds the lagging document in its bucket and completes it."""
    settings = settings_for(nats_url, tmp_path)
    others = [n for n in all_specs() if n != "boot"]
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        await provision(js, settings, consumer_specs())
        await js.pause_consumer(EVENTS_STREAM, "recall", "2099-01-01T00:00:00Z")
        seqs = await publish(js, conversation("cy"))
        async with hosted(settings, others):
            async with hosted(settings, ["boot"]):

                async def lagging_s2() -> BootDoc | None:
                    # recall alone: under load another source can lag at first, and boot completes it
                    # while it runs (that document is then written over, and names two workers)
                    doc = await stored_boot(js, "cy")
                    return doc if doc is not None and doc.session == "s2" and doc.lagging == ["recall"] else None

                first = await wait_for(lagging_s2, within=60)
                await wait_for(lambda: _consumer_idle(js, "boot"), within=60)  # nothing left to apply
                assert (await js.consumer_info(EVENTS_STREAM, "boot")).delivered.stream_seq == seqs[-1]
            await js.resume_consumer(EVENTS_STREAM, "recall")
            await wait_for(lambda: _consumer_idle(js, "recall"), within=60)
            assert (await stored_boot(js, "cy")) == first  # nobody completes it while boot is down
            async with hosted(settings, ["boot"]):

                async def completed() -> BootDoc | None:
                    doc = await stored_boot(js, "cy")
                    return doc if doc is not None and not doc.lagging else None

                done = await wait_for(completed, within=60)
        workspace = (tmp_path / "ws" / "cy" / "BOOTSTRAP.md").read_text(encoding="utf-8")
    finally:
        await nc.close()
    assert (done.trigger, done.session, done.generated_at) == (first.trigger, first.session, first.generated_at)
    assert done.integrity.last_seq == first.integrity.last_seq == seqs[-1]
    assert LAG_LINE in first.markdown and LAG_LINE not in done.markdown
    assert workspace == done.markdown


async def _consumer_idle(js: JetStreamContext, name: str) -> bool:
    return await caught_up(js, name)
