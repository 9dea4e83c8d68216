"""Stored documents that cannot be read (issue 15, item 4), against a real nats-server.

Garbage, JSON of the wrong shape or a time no worker writes in an agent's document used to
crash or stall the worker for every agent: the threads worker dead-lettered every later
event of that agent, a wrong-shaped document met by a compare-and-set rebase was retried as
"transient" forever. Now the owner deletes the document and rewinds to the agent's first
event, so it is derived again exactly as a replay would; other agents' documents skip by
their watermarks and are never touched; readers of other workers' documents read it as
missing meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
import pytest
from nats.js.client import JetStreamContext
from prometheus_client import REGISTRY

from schemas.docs import Integrity
from schemas.events import MessageEvent
from shared.asof import DocReader
from shared.codec import Envelope, Limits
from shared.config import load_settings
from shared.consume import ConsumeLoop, LoopConfig
from shared.errors import RebuildRequired
from shared.health import Health
from shared.kv import checkpoint_value, kv_read
from shared.names import BUCKET_CHECKPOINTS, DLQ_STREAM
from shared.projection import EventProjection, ProjectionHandler
from shared.provision import ConsumerSpec, ensure_bucket, provision
from shared.repair import invalid_times

WaitFor = Callable[..., Awaitable[Any]]
BUCKET = "test_ledger"
CONFIG = LoopConfig(batch_size=50, fetch_timeout_s=0.1, max_attempts=3, retry_base_s=0.01, retry_max_s=0.05,
                    drain_timeout_s=5.0, limits=Limits())


class LedgerDoc(msgspec.Struct, kw_only=True):
    ids: list[str]
    integrity: Integrity = msgspec.field(default_factory=Integrity)


class Ledger(EventProjection[LedgerDoc]):
    """The ids of an agent's messages in applied order; counts every application."""

    bucket = BUCKET
    doc_type = LedgerDoc

    def __init__(self, applied: Counter[str]) -> None:
        self.applied = applied

    def accepts(self, env: Envelope) -> bool:
        return isinstance(env.event, MessageEvent)

    def apply(self, doc: LedgerDoc | None, env: Envelope) -> LedgerDoc:
        self.applied[env.event.id] += 1
        return LedgerDoc(ids=[*(doc.ids if doc else []), env.event.id])


@pytest.fixture
async def js(nc: Any) -> JetStreamContext:
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="ledger", families=("msg",))])
    await ensure_bucket(js, BUCKET, history=16)
    return js


@contextlib.asynccontextmanager
async def hosted(js: JetStreamContext, applied: Counter[str]) -> AsyncIterator[list[ConsumeLoop]]:
    """The consume loop as the worker host runs it: a fresh handler and loop after every
    rebuild request."""
    stop = asyncio.Event()
    loops: list[ConsumeLoop] = []

    async def run() -> None:
        while not stop.is_set():
            handler = ProjectionHandler(js, "ledger", "ledger@test", [Ledger(applied)])
            loops.append(ConsumeLoop(js, worker="ledger", consumer="ledger", handler=handler, config=CONFIG,
                                     health=Health("ledger")))
            try:
                await loops[-1].run()
                return
            except RebuildRequired:
                continue

    task = asyncio.create_task(run())
    try:
        yield loops
    finally:
        stop.set()
        if loops:
            loops[-1].stop()
        await asyncio.wait_for(task, timeout=15)


def msg(event_id: str, agent: str) -> tuple[str, bytes]:
    payload = {"id": event_id, "agent": agent, "session": "s", "ts": "2026-02-17T10:00:00Z", "role": "user",
               "content": f"message {event_id}"}
    return f"cortex.msg.{agent}.received", msgspec.json.encode(payload)


async def publish(js: JetStreamContext, items: list[tuple[str, bytes]]) -> None:
    for subject, data in items:
        await js.publish(subject, data)


async def ledger(js: JetStreamContext, agent: str) -> list[str] | None:
    raw, _ = await kv_read(await js.key_value(BUCKET), agent)
    try:
        return msgspec.json.decode(raw, type=LedgerDoc).ids if raw else None
    except msgspec.MsgspecError:
        return None


async def caught_up(js: JetStreamContext, want: dict[str, list[str]], seq: int) -> bool:
    raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), "ledger")
    if (checkpoint_value(raw) or 0) < seq:
        return False
    return all([await ledger(js, agent) == ids for agent, ids in want.items()])


def rebuilt() -> float:
    return REGISTRY.get_sample_value("cortex_documents_rebuilt_total", {"worker": "ledger", "bucket": BUCKET}) or 0.0


GARBAGE = {
    "garbage bytes": b"\x00\xff\xfe not a document \x80",
    "wrong shape": b'{"version":1}',
    "wrong types": b'{"ids": "e1", "integrity": {"last_seq": "high"}}',
    "deep nesting": b'{"ids":' + b"[" * 5000 + b"]" * 5000 + b"}",
    "overflowing time": msgspec.json.encode(
        {"ids": ["x"], "integrity": {"last_seq": 1, "last_event_ts": "9999-12-31T23:59:59-12:00"}}),
}


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
async def test_an_unreadable_document_met_on_load_is_rebuilt_from_the_agents_events(
        js: JetStreamContext, wait_for: WaitFor, garbage: str) -> None:
    applied: Counter[str] = Counter()
    await publish(js, [msg("b1", "bob"), msg("b2", "bob"), msg("a1", "alice"), msg("a2", "alice")])
    async with hosted(js, applied):
        await wait_for(lambda: caught_up(js, {"alice": ["a1", "a2"], "bob": ["b1", "b2"]}, 4))
    await (await js.key_value(BUCKET)).put("alice", GARBAGE[garbage])  # between two runs: met on load
    before = rebuilt()
    await publish(js, [msg("a3", "alice"), msg("b3", "bob")])
    async with hosted(js, applied):
        await wait_for(lambda: caught_up(js, {"alice": ["a1", "a2", "a3"], "bob": ["b1", "b2", "b3"]}, 6))
    assert rebuilt() == before + 1
    raw, _ = await kv_read(await js.key_value(BUCKET), "alice")
    assert msgspec.json.decode(raw, type=LedgerDoc).integrity.events == 3  # as a replay counts them
    assert applied["a1"] == 2 and applied["a3"] == 1  # alice's events again, from her first one
    assert applied["b1"] == 1 and applied["b3"] == 1  # bob's before alice's first event: not even re-read
    assert (await js.stream_info(DLQ_STREAM)).state.messages == 0  # nothing dead-lettered


async def test_a_wrong_shaped_document_met_by_a_conflict_rebase_is_rebuilt_not_retried_forever(
        js: JetStreamContext, wait_for: WaitFor) -> None:
    """The document is cached by the running worker; the garbage written under it makes the
    next compare-and-set fail, and the rebase reads it: that used to be a 'transient'
    ValidationError retried forever, for every agent."""
    applied: Counter[str] = Counter()
    await publish(js, [msg("a1", "alice"), msg("b1", "bob")])
    async with hosted(js, applied) as loops:
        await wait_for(lambda: caught_up(js, {"alice": ["a1"], "bob": ["b1"]}, 2))
        await (await js.key_value(BUCKET)).put("alice", b'{"version":1}')
        await publish(js, [msg("a2", "alice"), msg("b2", "bob")])
        await wait_for(lambda: caught_up(js, {"alice": ["a1", "a2"], "bob": ["b1", "b2"]}, 4))
        assert len(loops) == 2  # one rebuild, then a fresh loop from alice's first event
    assert applied["b1"] == 1


async def test_readers_of_another_workers_document_read_an_unreadable_one_as_missing(js: JetStreamContext) -> None:
    kv = await js.key_value(BUCKET)
    good = LedgerDoc(ids=["a1"], integrity=Integrity(last_seq=3))
    await kv.put("alice", msgspec.json.encode(good))
    await kv.put("alice", b"\xff garbage")
    await kv.put("bob", b'{"version":1}')
    reader = DocReader(js)
    before = REGISTRY.get_sample_value("cortex_documents_unreadable_total", {"bucket": BUCKET}) or 0.0
    assert await reader.latest(BUCKET, "alice", LedgerDoc) is None
    assert await reader.latest(BUCKET, "bob", LedgerDoc) is None
    assert await reader.as_of(BUCKET, "bob", LedgerDoc, 10) == (None, True)
    # as of a sequence: the garbage revision on top is passed over, the good one below it found
    assert await reader.as_of(BUCKET, "alice", LedgerDoc, 10) == (good, True)
    assert REGISTRY.get_sample_value("cortex_documents_unreadable_total", {"bucket": BUCKET}) == before + 4


def test_invalid_times_finds_a_time_anywhere_in_a_document() -> None:
    from datetime import UTC, datetime, timedelta, timezone

    fine = LedgerDoc(ids=[], integrity=Integrity(last_event_ts=datetime(2026, 2, 17, tzinfo=UTC)))
    assert invalid_times(fine) is None
    far = datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=-12)))
    assert invalid_times(LedgerDoc(ids=[], integrity=Integrity(last_event_ts=far))) == \
        "integrity.last_event_ts 9999-12-31T23:59:00-12:00 overflows"


def test_invalid_times_names_the_first_wrong_time_deep_in_a_document_and_passes_a_good_one() -> None:
    """The usual document (every time fine) is checked on the fields that can hold a time
    only; a wrong one is still found anywhere, with its path, in field order."""
    from datetime import UTC, datetime, timedelta, timezone

    from schemas.docs import Thread, ThreadsDoc

    def thread(i: int, created: datetime) -> Thread:
        return Thread(id=f"t{i}", title="x", status="open", priority="medium", summary="", decisions=[],
                      waiting_for=None, mood="neutral", last_activity=datetime(2026, 2, 17, tzinfo=UTC),
                      created=created)

    ok = datetime(2026, 2, 17, tzinfo=UTC)
    doc = ThreadsDoc(updated=ok, session_mood="neutral", threads=[thread(i, ok) for i in range(4)],
                     integrity=Integrity(last_event_ts=ok))
    assert invalid_times(doc) is None
    doc.threads[2] = thread(2, datetime(9500, 1, 1, tzinfo=UTC))
    doc.threads[3] = thread(3, datetime(1800, 1, 1, tzinfo=UTC))
    assert invalid_times(doc) == "threads[2].created 9500-01-01T00:00:00+00:00 out of range"
    east = timezone(timedelta(hours=2))  # not UTC: converted, as before
    doc.threads[2] = thread(2, datetime(9000, 1, 1, 1, 0, tzinfo=east))  # 8999-12-31 23:00 UTC: in range
    assert invalid_times(doc) == "threads[3].created 1800-01-01T00:00:00+00:00 out of range"


async def test_an_unreadable_checkpoint_starts_over_from_the_first_event(js: JetStreamContext,
                                                                        wait_for: WaitFor) -> None:
    """Garbage in cortex_checkpoints made the rewind raise ValueError at start-up: the worker
    could not start at all. The checkpoint only says where to resume: from the start is
    always right (watermarks skip what documents hold)."""
    applied: Counter[str] = Counter()
    await publish(js, [msg("a1", "alice"), msg("b1", "bob")])
    async with hosted(js, applied):
        await wait_for(lambda: caught_up(js, {"alice": ["a1"], "bob": ["b1"]}, 2))
    await (await js.key_value(BUCKET_CHECKPOINTS)).put("ledger", b"\xffnot a number")
    await publish(js, [msg("a2", "alice")])
    async with hosted(js, applied):
        await wait_for(lambda: caught_up(js, {"alice": ["a1", "a2"], "bob": ["b1"]}, 3))
    assert applied["a1"] == 1 and applied["b1"] == 1  # read again, skipped by their watermarks
