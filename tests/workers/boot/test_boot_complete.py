"""The boot worker's completions (``workers.boot.complete``) against a real nats-server: the
consume loop's handler is driven event by event, and the sources' progress is their
checkpoints in ``cortex_checkpoints`` (what the watermark tracker follows; the source
workers themselves run in tests/e2e/test_boot_complete.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext
from prometheus_client import REGISTRY

from schemas.docs import BootDoc, Integrity
from shared.codec import Envelope, Limits, decode_event
from shared.config import load_settings
from shared.errors import TransientError
from shared.health import Health
from shared.kv import kv_read
from shared.names import BUCKET_BOOT, BUCKET_CHECKPOINTS, stored_form
from shared.provision import provision
from shared.runtime import WorkerContext
from shared.tasks import cancel_and_wait
from shared.watermarks import WatermarkTracker
from workers.boot import complete
from workers.boot.sources import BootSources, Reading
from workers.boot.worker import BootHandler
from workers.registry import all_specs, consumer_specs

T0 = datetime(2026, 3, 6, 8, 0, tzinfo=UTC)


@dataclass
class Rig:
    js: JetStreamContext
    handler: BootHandler
    workspace: Path
    tracker: WatermarkTracker

    async def publish(self, agent: str, family: str, kind: str, seconds: int, **extra: Any) -> Envelope:
        subject = f"cortex.{family}.{agent}.{kind}"
        body = {"id": f"{agent}-{family}-{kind}-{seconds}", "agent": agent, "session": "s1",
                "ts": (T0 + timedelta(seconds=seconds)).isoformat(), **extra}
        data = msgspec.json.encode(body)
        seq = (await self.js.publish(subject, data)).seq
        env = decode_event("cortex", stored_form("cortex", subject), seq, data, Limits())
        assert isinstance(env, Envelope), env
        return env

    async def make(self, env: Envelope) -> None:
        """One event through the handler as the consume loop runs it: apply, commit, on_committed."""
        await self.handler.apply(env)
        await self.handler.commit()
        await self.handler.on_committed(env.seq)

    async def caught_up(self, consumer: str, seq: int) -> None:
        await (await self.js.key_value(BUCKET_CHECKPOINTS)).put(consumer, str(seq).encode())
        # and the handler's tracker has seen it: on a busy machine its watch can be later than the
        # 50 ms bound, and a caught-up source was then reported lagging
        self.tracker.follow((consumer,))
        while self.tracker.checkpoint(consumer) < seq:
            changed = self.tracker.changed()
            if self.tracker.checkpoint(consumer) < seq:
                await asyncio.wait_for(changed.wait(), timeout=30)

    async def stored(self, agent: str) -> BootDoc:
        raw, _ = await kv_read(await self.js.key_value(BUCKET_BOOT), agent)
        assert raw is not None
        return msgspec.json.decode(raw, type=BootDoc)


@contextlib.asynccontextmanager
async def boot_rig(nc: Client, tmp_path: Path, *, early: bool = False, env: dict[str, str] | None = None,
                   fence: Callable[[], None] | None = None) -> AsyncIterator[Rig]:
    """A boot handler on a provisioned server (its early path started if ``early``), with two
    sources: threads (caught up at every trigger here) and recall (behind until told);
    ``fence``: the context's lease check (none by default)."""
    settings = load_settings({"CORTEX_NATS_URL": "nats://unused", "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_BOOT_WAIT_MS": "50", "CORTEX_WORKSPACE": str(tmp_path / "ws"), **(env or {})})
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    ctx = WorkerContext(nc=nc, js=js, settings=settings, worker="boot", consumer="boot", producer="boot@test",
                        health=Health("boot"), catalog=all_specs())
    if fence is not None:
        ctx.fence = fence
    tracker = await ctx.inputs.tracker()
    handler = BootHandler(ctx, tracker, BootSources(ctx, {"threads", "recall"}))
    if early:
        handler.early.start()
    try:
        yield Rig(js, handler, tmp_path / "ws", tracker)
    finally:
        await handler.aclose()


@pytest.fixture
async def rig(nc: Client, tmp_path: Path) -> AsyncIterator[Rig]:
    async with boot_rig(nc, tmp_path) as made:
        yield made


def sample(name: str, source: str = "recall") -> float:
    return REGISTRY.get_sample_value(name, {"source": source}) or 0.0


async def test_a_lagging_document_is_completed_as_of_its_trigger_and_the_cache_and_file_follow(
    rig: Rig, wait_for: Any
) -> None:
    lagged = REGISTRY.get_sample_value("cortex_composed_lagging_total", {"worker": "boot", "source": "recall"}) or 0
    # the registry is the process's: other tests in this process may have counted threads lagging
    threads_lagged = REGISTRY.get_sample_value("cortex_composed_lagging_total",
                                               {"worker": "boot", "source": "threads"}) or 0
    start = await rig.publish("ada", "session", "start", 0)
    await rig.caught_up("threads", start.seq)
    await rig.make(start)
    first = await rig.stored("ada")
    assert first.lagging == ["recall"] and rig.handler.completer.outstanding == 1
    # the shared reader counts the reading's lagging source (shared.inputs), the caught-up one not
    assert REGISTRY.get_sample_value("cortex_composed_lagging_total", {"worker": "boot", "source": "recall"}) \
        == lagged + 1
    assert (REGISTRY.get_sample_value("cortex_composed_lagging_total", {"worker": "boot", "source": "threads"})
            or 0) == threads_lagged
    completed = sample("cortex_boot_completed_total")

    await rig.caught_up("recall", start.seq)

    async def done() -> BootDoc | None:
        doc = await rig.stored("ada")
        return doc if not doc.lagging else None

    doc = await wait_for(done)
    assert (doc.generated_at, doc.trigger, doc.integrity) == (first.generated_at, first.trigger, first.integrity)
    assert "lagging" in first.markdown and "lagging" not in doc.markdown
    assert rig.handler.cached(BUCKET_BOOT, "ada") == doc  # adopted: the next write needs no rebase
    assert (rig.workspace / "ada" / "BOOTSTRAP.md").read_text(encoding="utf-8") == doc.markdown
    assert sample("cortex_boot_completed_total") == completed + 1
    assert rig.handler.completer.outstanding == 0


async def test_a_completion_written_first_is_the_base_of_the_next_document_without_a_conflict(
    rig: Rig, wait_for: Any
) -> None:
    start = await rig.publish("ada", "session", "start", 0)
    await rig.caught_up("threads", start.seq)
    await rig.make(start)
    await rig.caught_up("recall", start.seq)
    await wait_for(lambda: _completed(rig, "ada"))
    conflicts = REGISTRY.get_sample_value("cortex_kv_conflicts_total", {"worker": "boot"}) or 0.0

    compaction = await rig.publish("ada", "compaction", "before", 60, message_count=3)
    await rig.caught_up("threads", compaction.seq)
    await rig.caught_up("recall", compaction.seq)
    await rig.make(compaction)
    doc = await rig.stored("ada")
    assert (doc.trigger, doc.lagging, doc.integrity.last_seq) == ("compaction", [], compaction.seq)
    assert doc.integrity.events == 2  # stamped on the completed document: as if nothing had lagged
    assert (REGISTRY.get_sample_value("cortex_kv_conflicts_total", {"worker": "boot"}) or 0.0) == conflicts


async def test_a_newer_document_of_the_consume_loop_supersedes_an_outstanding_completion(
    rig: Rig, wait_for: Any
) -> None:
    start = await rig.publish("ada", "session", "start", 0)
    await rig.caught_up("threads", start.seq)
    await rig.make(start)
    compaction = await rig.publish("ada", "compaction", "before", 60, message_count=3)
    await rig.caught_up("threads", compaction.seq)
    await rig.handler.apply(compaction)  # made, not yet written (the consume loop is mid-batch)

    await rig.caught_up("recall", start.seq)  # the session start's completion is due now
    await wait_for(lambda: _none_outstanding(rig))  # dropped: the newer document replaces it
    stored = await rig.stored("ada")
    assert (stored.integrity.last_seq, stored.lagging) == (start.seq, ["recall"])  # not rewritten behind it

    await rig.handler.commit()
    await rig.handler.on_committed(compaction.seq)
    assert (await rig.stored("ada")).trigger == "compaction" and rig.handler.completer.outstanding == 1
    await rig.caught_up("recall", compaction.seq)
    doc = await wait_for(lambda: _completed(rig, "ada"))
    assert (doc.trigger, doc.integrity.last_seq, doc.integrity.events) == ("compaction", compaction.seq, 2)


async def test_a_source_that_stays_behind_is_counted_stuck_once(
    rig: Rig, wait_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(complete, "STUCK_AFTER_S", 0.0)
    stuck = sample("cortex_boot_lagging_total")
    start = await rig.publish("ada", "session", "start", 0)
    await rig.caught_up("threads", start.seq)
    await rig.make(start)

    async def counted() -> bool:
        return sample("cortex_boot_lagging_total") == stuck + 1

    await wait_for(counted)
    for _ in range(3):
        await rig.handler.completer.tick()
    assert sample("cortex_boot_lagging_total") == stuck + 1  # once per document, not per look
    assert (await rig.stored("ada")).lagging == ["recall"]  # still waiting: completed if it ever catches up
    await rig.caught_up("recall", start.seq)
    await wait_for(lambda: _completed(rig, "ada"))


async def test_outstanding_completions_are_bounded(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(complete, "MAX_HELD", 2)
    monkeypatch.setattr(complete, "MAX_OUTSTANDING", 3)
    stuck = sample("cortex_boot_lagging_total")
    completer = rig.handler.completer
    for i in range(5):
        env = await rig.publish(f"agent-{i}", "session", "start", i)
        doc = BootDoc(agent=env.agent, session="s1", generated_at=env.event.ts, trigger="session_start", chars=0,
                      markdown="", lagging=["recall"], integrity=Integrity(last_seq=env.seq))
        completer.register(env.agent, doc, Reading(env, {"threads": None, "recall": None}, ["recall"]))
    assert completer.outstanding == 3
    assert sample("cortex_boot_lagging_total") == stuck + 2  # the two oldest given up, counted as stuck
    held = [e.agent for e in completer._entries.values() if e.docs is not None]
    assert held == ["agent-3", "agent-4"]  # the oldest kept entry re-reads its sources when it completes


async def test_a_change_whose_sources_fail_at_commit_is_made_by_the_retried_commit(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's due changes are read at commit: a store that fails then fails the commit,
    which the consume loop retries — and the retry still makes the change's document."""
    start = await rig.publish("ada", "session", "start", 0)
    await rig.caught_up("threads", start.seq)
    await rig.make(start)
    end = await rig.publish("ada", "session", "end", 60)  # a session's end: always a change document
    await rig.caught_up("threads", end.seq)
    sources = rig.handler._sources
    read = sources.at_trigger
    failures = [TransientError("cortex_threads not answering")]

    async def flaky(env: Envelope, fields: Any = None, until: float | None = None) -> Reading:
        if failures:
            raise failures.pop()
        return await read(env, fields, until)

    monkeypatch.setattr(sources, "at_trigger", flaky)
    assert await rig.handler.apply(end)
    with pytest.raises(TransientError):
        await rig.handler.commit()
    await rig.handler.commit()
    doc = await rig.stored("ada")
    assert (doc.trigger, doc.integrity.last_seq) == ("change", end.seq)


async def _completed(rig: Rig, agent: str) -> BootDoc | None:
    doc = await rig.stored(agent)
    return doc if not doc.lagging else None


async def _none_outstanding(rig: Rig) -> bool:
    return rig.handler.completer.outstanding == 0


async def test_a_tick_looks_at_each_lagging_source_once_however_many_documents_wait_for_it(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above capacity every session start waits for recall for seconds, and a tick runs at every
    checkpoint move: it asks the tracker about each lagging source once (with the furthest
    trigger waiting for it), not once a document, and nothing when only another consumer moved
    (within ``POLL_S`` of the last look) — and still completes exactly the documents whose
    triggers the source has reached."""
    monkeypatch.setattr(complete, "POLL_S", 60.0)  # however slow the machine, every tick here is within it
    completer = rig.handler.completer
    assert completer._task is not None
    await cancel_and_wait(completer._task)  # ticked here alone, one by one
    starts = []
    for i in range(6):
        start = await rig.publish(f"agent-{i}", "session", "start", i)
        await rig.caught_up("threads", start.seq)
        await rig.make(start)
        starts.append(start)
    assert completer.outstanding == 6
    asked: list[dict[str, int]] = []
    lagging_now = rig.tracker.lagging_now

    async def counted(needs: dict[str, int], **kwargs: Any) -> list[str]:
        asked.append(dict(needs))
        return await lagging_now(needs, **kwargs)

    monkeypatch.setattr(rig.tracker, "lagging_now", counted)
    await completer.tick()
    assert asked == [{"recall": starts[-1].seq}]  # once, not once a document (6 times)
    assert completer.outstanding == 6
    await rig.caught_up("threads", starts[-1].seq + 5)  # another consumer moved: the tick that wakes looks no further
    await completer.tick()
    assert len(asked) == 1 and completer.outstanding == 6
    await rig.caught_up("recall", starts[2].seq)  # recall reached the third start, not the fourth
    await completer.tick()
    assert completer.outstanding == 3
    for start in starts[:3]:
        assert await _completed(rig, start.agent)
    for start in starts[3:]:
        assert (await rig.stored(start.agent)).lagging == ["recall"]
    await rig.caught_up("recall", starts[-1].seq)
    await completer.tick()
    assert completer.outstanding == 0 and len(asked) == 3
    for start in starts:
        assert await _completed(rig, start.agent)
