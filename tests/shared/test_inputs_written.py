"""A composed reading against a real nats-server ends its wait for a source as soon as the
agent's document of that source holds the event before the trigger or a later one — long
before the source's checkpoint passes the trigger (it moves only once the rest of the
source's batch is committed) — and reads the same revision the checkpoint would have given
it: nothing is reported lagging."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.docs import Integrity
from schemas.events import SessionEvent
from shared.asof import DOC_HISTORY, DocReader
from shared.codec import Envelope
from shared.config import load_settings
from shared.footprint import Source
from shared.inputs import Inputs
from shared.provision import ConsumerSpec, ensure_bucket, provision

BUCKET = "test_written"


class Doc(msgspec.Struct, kw_only=True):
    note: str
    integrity: Integrity


SOURCE = Source("doc", "slow", BUCKET, Doc)
MADE_FOR_TRIGGER = Source("doc", "slow", BUCKET, Doc, as_of="made_for_trigger")  # read before S + 1


def doc(last_seq: int) -> bytes:
    return msgspec.json.encode(Doc(note=f"at {last_seq}", integrity=Integrity(last_seq=last_seq)))


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="slow", families=("msg",))])
    await ensure_bucket(js, BUCKET, history=DOC_HISTORY)
    for i in range(3):  # "slow" has them pending for good: its checkpoint never reaches the trigger
        payload = {"id": f"e{i}", "agent": "a", "session": "s", "ts": "2026-03-01T10:00:00Z",
                   "role": "user", "content": "x"}
        await js.publish("cortex.msg.a.received", msgspec.json.encode(payload))
    return js


def session_start(seq: int) -> Envelope:
    event = SessionEvent(id="t", agent="a", session="s", ts=datetime(2026, 3, 1, 10, 1, tzinfo=UTC))
    return Envelope(seq=seq, subject="cortex.session.a.start", family="session", kind="start", agent="a",
                    event=event)


async def test_a_document_holding_a_later_event_ends_the_wait_with_the_revision_before_the_trigger(
    js: JetStreamContext,
) -> None:
    kv = await js.key_value(BUCKET)
    await kv.put("a", doc(2))
    inputs = Inputs(js, load_settings({"CORTEX_BOOT_WAIT_MS": "60000"}))
    try:
        reading = asyncio.create_task(inputs.at_trigger("boot", [SOURCE], session_start(10)))
        await kv.put("a", doc(7))  # still below the trigger: the source has not got there
        done, _ = await asyncio.wait({reading}, timeout=1.0)
        assert not done
        await kv.put("a", doc(10))  # the document made for the trigger: every revision before it is written
        await kv.put("a", doc(12))
        found = await asyncio.wait_for(reading, timeout=30)  # the bound is a minute away
        assert found.lagging == []
        assert found.docs["doc"].note == "at 7"
    finally:
        await inputs.stop()


async def test_a_document_made_for_the_trigger_ends_the_wait_as_soon_as_it_is_written(js: JetStreamContext) -> None:
    kv = await js.key_value(BUCKET)
    await kv.put("a", doc(7))
    inputs = Inputs(js, load_settings({"CORTEX_BOOT_WAIT_MS": "60000"}))
    try:
        reading = asyncio.create_task(inputs.at_trigger("boot", [MADE_FOR_TRIGGER], session_start(10)))
        done, _ = await asyncio.wait({reading}, timeout=1.0)
        assert not done
        await kv.put("a", doc(10))  # the channel summaries made for the trigger: no later revision can be below S + 1
        found = await asyncio.wait_for(reading, timeout=30)
        assert found.lagging == [] and found.docs["doc"].note == "at 10"
    finally:
        await inputs.stop()


async def test_a_patient_wait_ends_once_the_document_holds_the_event_before_the_trigger(js: JetStreamContext) -> None:
    """The channel summaries wait for their sources without a bound (``Inputs.patiently``): a
    source's document proving the read final ends that wait too, its consumer still busy."""
    kv = await js.key_value(BUCKET)
    inputs = Inputs(js, load_settings({}))
    try:
        sub = await js.pull_subscribe_bind("slow", stream="CORTEX_EVENTS")
        await sub.fetch(1, timeout=10)  # in flight, never acked: a worker is at it, and nothing is applied
        waiting = asyncio.create_task(inputs.patiently([SOURCE], session_start(10)))
        await kv.put("a", doc(7))
        done, _ = await asyncio.wait({waiting}, timeout=1.0)
        assert not done
        await kv.put("a", doc(9))  # the event just before the trigger: nothing below 10 can follow
        await asyncio.wait_for(waiting, timeout=30)
    finally:
        await inputs.stop()


async def test_a_read_is_final_once_the_document_holds_the_event_before_it_and_never_when_gone_or_unreadable(
    js: JetStreamContext,
) -> None:
    kv = await js.key_value(BUCKET)
    reader = DocReader(js)
    assert not await reader.final_before(BUCKET, "a", 1)  # never written
    await kv.put("a", doc(5))
    assert await reader.final_before(BUCKET, "a", 5)
    assert await reader.final_before(BUCKET, "a", 6)  # the next revision holds a later event: 6 or more
    assert not await reader.final_before(BUCKET, "a", 7)  # event 6 may still come
    await kv.put("a", b"\xff not a document")
    assert not await reader.final_before(BUCKET, "a", 1)
    await kv.put("a", doc(9))
    await kv.delete("a")  # an agent forgotten, a document being rebuilt: its old revisions prove nothing
    assert not await reader.final_before(BUCKET, "a", 1)
    assert not await reader.final_before("no_such_bucket", "a", 1)
