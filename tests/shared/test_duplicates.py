"""The duplicate window: a second copy of an OpenClaw store event within the span is skipped,
decided from the stream's content alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
from nats.aio.client import Client
from nats.js import api
from nats.js.client import JetStreamContext

from schemas.docs import Integrity
from schemas.events import MessageEvent
from shared.codec import Envelope
from shared.config import load_settings
from shared.consume import ConsumeLoop, LoopConfig
from shared.duplicates import DuplicateWindow
from shared.health import Health
from shared.kv import kv_read
from shared.names import EVENTS_STREAM
from shared.projection import EventProjection, ProjectionHandler
from shared.provision import ConsumerSpec, ensure_bucket, provision


def test_a_second_copy_within_the_span_is_a_duplicate_and_the_first_is_not() -> None:
    window = DuplicateWindow(span=100)
    assert not window.seen(b"a", 10)
    assert not window.seen(b"b", 11)
    assert window.seen(b"a", 60)
    assert window.seen(b"a", 160)  # the copy at 60 is within 100 of 160


def test_a_copy_further_than_the_span_is_applied_again() -> None:
    window = DuplicateWindow(span=100)
    assert not window.seen(b"a", 10)
    assert window.seen(b"a", 110)  # exactly the span apart: still a duplicate
    assert not window.seen(b"b", 300)
    assert not window.seen(b"a", 211)  # 101 after the last copy: out of the window
    assert len(window) <= 2


def test_the_same_message_again_is_a_redelivery_not_a_duplicate() -> None:
    window = DuplicateWindow(span=100)
    assert not window.seen(b"a", 10)
    assert not window.seen(b"a", 10)
    assert window.seen(b"a", 11)
    assert not window.seen(b"a", 11)


def test_a_window_refilled_from_the_stream_decides_as_the_one_that_saw_it_all() -> None:
    """Restart at checkpoint C: the loop re-reads the span before C; the decisions after C
    are the ones an uninterrupted run makes."""
    stream = [(seq, bytes([seq % 7])) for seq in range(1, 400)]
    whole = DuplicateWindow(span=50)
    decisions = {seq: whole.seen(key, seq) for seq, key in stream}
    checkpoint = 250
    restarted = DuplicateWindow(span=50)
    for seq, key in stream[checkpoint - 50:checkpoint]:  # the refill: sequences C-span+1 .. C
        restarted.seen(key, seq)
    assert {seq: restarted.seen(key, seq) for seq, key in stream[checkpoint:]} == {
        seq: d for seq, d in decisions.items() if seq > checkpoint}


def test_keys_decided_ahead_of_older_messages_decide_as_in_stream_order() -> None:
    """The scout decides a quiet agent's events before another agent's older ones
    (``ahead``): each key still in its own order, the decisions are those of the stream's
    order — the older ones are still compared with copies the later ones would have pushed
    out of the window."""
    stream = [(b"n", 10), (b"n", 500), (b"q", 1200), (b"q", 1300), (b"n", 900), (b"q", 2400)]
    in_order = DuplicateWindow(span=1000)
    expected = {(key, seq): in_order.seen(key, seq) for key, seq in sorted(stream, key=lambda item: item[1])}
    assert expected == {(b"n", 10): False, (b"n", 500): True, (b"n", 900): True, (b"q", 1200): False,
                        (b"q", 1300): True, (b"q", 2400): False}
    window = DuplicateWindow(span=1000)
    decided = {(b"n", 10): window.seen(b"n", 10), (b"n", 500): window.seen(b"n", 500)}
    decided |= {(b"q", seq): window.seen(b"q", seq, ahead=True) for seq in (1200, 1300, 2400)}
    decided[(b"n", 900)] = window.seen(b"n", 900)  # the copy at 500 is 400 before it, whatever came ahead
    assert decided == expected


def test_span_zero_turns_the_window_off() -> None:
    window = DuplicateWindow(span=0)
    assert not window.seen(b"a", 1) and not window.seen(b"a", 2)


# --------------------------------------------------------------------------- in the consume loop, on a real server

WaitFor = Callable[..., Awaitable[Any]]
BUCKET = "test_seen"


class SeenDoc(msgspec.Struct, kw_only=True):
    contents: list[str]
    integrity: Integrity = msgspec.field(default_factory=Integrity)


class Seen(EventProjection[SeenDoc]):
    """Every message's content, in applied order: a duplicate applied shows up twice."""

    bucket = BUCKET
    doc_type = SeenDoc

    def accepts(self, env: Envelope) -> bool:
        return isinstance(env.event, MessageEvent)

    def apply(self, doc: SeenDoc | None, env: Envelope) -> SeenDoc:
        assert isinstance(env.event, MessageEvent)
        return SeenDoc(contents=[*(doc.contents if doc else []), env.event.content])


def store_message(event_id: str, content: str, ts: int) -> bytes:
    """What the npm plugin 0.2.1 publishes for message_received (tests/fixtures/openclaw/v0.2.jsonl)."""
    return msgspec.json.encode({"id": event_id, "ts": ts, "agent": "main", "session": "main:webchat:albert",
                                "type": "msg.in", "payload": {"from": "albert", "content": content,
                                                              "channel": "webchat", "metadata": {}}})


@contextlib.asynccontextmanager
async def running(js: JetStreamContext, span: int) -> AsyncIterator[ConsumeLoop]:
    handler = ProjectionHandler(js, "seen", "seen@test", [Seen()])
    config = LoopConfig(batch_size=50, fetch_timeout_s=0.1, drain_timeout_s=5.0, duplicate_window=span)
    loop = ConsumeLoop(js, worker="seen", consumer="seen", handler=handler, config=config, health=Health("seen"))
    task = asyncio.create_task(loop.run())
    try:
        yield loop
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)


async def contents(js: JetStreamContext) -> list[str]:
    raw, _ = await kv_read(await js.key_value(BUCKET), "main")
    return msgspec.json.decode(raw, type=SeenDoc).contents if raw else []


async def sourced(nc: Client) -> JetStreamContext:
    js = nc.jetstream()
    await js.add_stream(api.StreamConfig(name="openclaw-events", subjects=["openclaw.events.>"]))
    await provision(js, load_settings({"CORTEX_OPENCLAW_STREAM": "openclaw-events"}),
                    [ConsumerSpec(name="seen", families=("msg",))])
    await ensure_bucket(js, BUCKET)
    return js


async def copied(js: JetStreamContext, n: int) -> bool:
    return (await js.stream_info(EVENTS_STREAM)).state.messages >= n


async def test_the_same_store_event_stored_twice_is_applied_once_even_across_a_restart(
        nc: Client, wait_for: WaitFor) -> None:
    """The plugin publishes without Nats-Msg-Id: a copy of an event is stored again (here a
    re-fired hook: same id and payload, a new ts). Whether the copy comes in the same run, or
    after a restart that resumed past the original, it changes nothing."""
    js = await sourced(nc)
    first = [("e1", "one", 1000), ("e2", "two", 2000), ("e1", "one", 2500), ("e3", "three", 3000)]
    for event_id, content, ts in first:
        await js.publish("openclaw.events.main.msg_in", store_message(event_id, content, 1771318800000 + ts))
    async with running(js, span=100):
        await wait_for(lambda: _equals(contents(js), ["one", "two", "three"]), within=15)
    # a restart: the checkpoint is past e1 and e2; their copies come after it
    for event_id, content, ts in [("e2", "two", 4000), ("e4", "four", 5000), ("e1", "one", 6000)]:
        await js.publish("openclaw.events.main.msg_in", store_message(event_id, content, 1771318800000 + ts))
    await wait_for(lambda: copied(js, 7), within=20)
    async with running(js, span=100):
        await wait_for(lambda: _equals(contents(js), ["one", "two", "three", "four"]), within=15)
        info = await js.consumer_info(EVENTS_STREAM, "seen")
        assert info.num_pending == 0


async def test_a_changed_payload_under_the_same_id_and_a_copy_beyond_the_span_are_applied(
        nc: Client, wait_for: WaitFor) -> None:
    js = await sourced(nc)
    items = [("e1", "one"), ("e1", "one, edited"), ("e2", "two"), ("e3", "three"), ("e4", "four"), ("e2", "two")]
    for i, (event_id, content) in enumerate(items):
        await js.publish("openclaw.events.main.msg_in", store_message(event_id, content, 1771318800000 + i))
    async with running(js, span=2):  # e2's copy is 3 sequences after it: outside a span of 2
        await wait_for(lambda: _equals(contents(js), ["one", "one, edited", "two", "three", "four", "two"]),
                       within=15)


async def _equals(value: Awaitable[Any], expected: Any) -> bool:
    return await value == expected
