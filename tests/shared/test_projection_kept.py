"""A write keeps the encoded items of a projection's ``kept_items`` lists (issue 39, sixteenth
round): between two writes of an agent's document most of its threads are the same objects, and
a write encodes only the changed ones (``ProjectionHandler._encode_kept``). The bytes written are
the document's plain encoding, whatever was kept: a changed item is encoded again, an agent's
state forgotten (a reset, a document ended) keeps nothing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from operator import is_
from typing import Any

import msgspec
import nats
import pytest
from nats.js.client import JetStreamContext

from schemas.docs import Integrity
from schemas.events import MessageEvent
from shared.codec import Envelope, Limits
from shared.config import load_settings
from shared.consume import ConsumeLoop, LoopConfig
from shared.embedded import EmbeddedNats
from shared.health import Health
from shared.kv import kv_read
from shared.names import BUCKET_CHECKPOINTS
from shared.projection import EventProjection, ProjectionHandler, _Slot
from shared.provision import ConsumerSpec, ensure_bucket, provision

WaitFor = Callable[..., Awaitable[Any]]
BUCKET = "test_tallies"
CONFIG = LoopConfig(batch_size=1, fetch_timeout_s=0.1, max_attempts=3, retry_base_s=0.01, retry_max_s=0.05,
                    drain_timeout_s=5.0, limits=Limits())


class Tally(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    count: int
    said: list[str] = msgspec.field(default_factory=list)


class TalliesDoc(msgspec.Struct, frozen=True, kw_only=True):
    tallies: list[Tally]
    last: str = ""
    integrity: Integrity = msgspec.field(default_factory=Integrity)


def tallied(doc: TalliesDoc | None, content: str) -> TalliesDoc:
    """The word counted: its tally a new object, every other one the same object (as the threads
    core shares the threads a message does not change); "end" ends the document."""
    tallies = list(doc.tallies) if doc else []
    for i, t in enumerate(tallies):
        if t.name == content:
            tallies[i] = msgspec.structs.replace(t, count=t.count + 1, said=[*t.said, content])
            break
    else:
        tallies.append(Tally(name=content, count=1, said=[content]))
    return TalliesDoc(tallies=tallies, last=content)


class Tallies(EventProjection[TalliesDoc]):
    bucket = BUCKET
    doc_type = TalliesDoc
    kept_items = ("tallies",)

    def accepts(self, env: Envelope) -> bool:
        return isinstance(env.event, MessageEvent)

    def resets(self, env: Envelope) -> bool:
        return isinstance(env.event, MessageEvent) and env.event.content == "end"

    def apply(self, doc: TalliesDoc | None, env: Envelope) -> TalliesDoc:
        assert isinstance(env.event, MessageEvent)
        return tallied(doc, env.event.content)


@pytest.fixture
async def js(nats_server: EmbeddedNats) -> AsyncIterator[JetStreamContext]:
    nc = await nats.connect(nats_server.url)
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="tallies", families=("msg",))])
    await ensure_bucket(js, BUCKET)
    yield js
    await nc.close()


def msg(n: int, agent: str, content: str) -> tuple[str, bytes]:
    payload = {"id": f"e{n}", "agent": agent, "session": "s", "ts": "2026-02-17T10:00:00Z", "role": "user",
               "content": content}
    return f"cortex.msg.{agent}.received", msgspec.json.encode(payload)


async def checkpoint_reached(js: JetStreamContext, seq: int) -> bool:
    raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), "tallies")
    return bool(raw) and int(raw) >= seq


@contextlib.asynccontextmanager
async def running(js: JetStreamContext, handler: ProjectionHandler) -> AsyncIterator[None]:
    loop = ConsumeLoop(js, worker="tallies", consumer="tallies", handler=handler, config=CONFIG,
                       health=Health("tallies"))
    task = asyncio.create_task(loop.run())
    try:
        yield
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)


async def test_every_write_is_the_plain_encoding_and_a_changed_item_is_encoded_again(
        js: JetStreamContext, wait_for: WaitFor) -> None:
    """Batches of one event: every event writes its document. Each word counted again changes one
    tally (a new object); the value read back after each is the document's plain encoding, with
    the changed tally's new count — a kept encoding of the old object would show the old one."""
    words = ["alpha", "beta", "gamma", "beta", "alpha", "beta", "delta", "gamma", "beta"]
    handler = ProjectionHandler(js, "tallies", "tallies@test", [Tallies()])
    kv = await js.key_value(BUCKET)
    expected: TalliesDoc | None = None
    async with running(js, handler):
        for n, word in enumerate(words, 1):
            expected = tallied(expected, word)
            subject, data = msg(n, "alice", word)
            await js.publish(subject, data)
            await wait_for(lambda n=n: checkpoint_reached(js, n), within=30)  # type: ignore[misc]
            raw, _ = await kv_read(kv, "alice")
            stored = msgspec.json.decode(raw, type=TalliesDoc)
            assert raw == msgspec.json.encode(stored)
            plain = msgspec.structs.replace(expected, integrity=stored.integrity)
            assert raw == msgspec.json.encode(plain)
            assert {t.name: t.count for t in stored.tallies} == {t.name: t.count for t in expected.tallies}
        # what the slot keeps is the last write's tallies, each the very object written, and its bytes
        slot = handler._cache[(BUCKET, "alice")]
        assert slot.doc is not None
        assert all(map(is_, slot.held, slot.doc.tallies)) and len(slot.held) == len(slot.doc.tallies)
        assert [bytes(slot.encoded[id(t)]) for t in slot.doc.tallies] == [msgspec.json.encode(t) for t in
                                                                          slot.doc.tallies]


async def test_a_write_reuses_the_unchanged_items_bytes_and_encodes_the_changed_one(js: JetStreamContext) -> None:
    handler = ProjectionHandler(js, "tallies", "tallies@test", [Tallies()])
    first = TalliesDoc(tallies=[Tally(name=w, count=1) for w in ("a", "b", "c")])
    slot = _Slot(first, 0)
    assert handler._values(BUCKET, first, slot) == [msgspec.json.encode(first)]
    before = dict(slot.encoded)
    second = tallied(first, "b")  # "a" and "c" the same objects, "b" a new one
    assert handler._values(BUCKET, second, slot) == [msgspec.json.encode(second)]
    assert slot.encoded[id(second.tallies[0])] is before[id(first.tallies[0])]  # kept, not encoded again
    assert slot.encoded[id(second.tallies[2])] is before[id(first.tallies[2])]
    changed = slot.encoded[id(second.tallies[1])]
    assert id(second.tallies[1]) not in before and bytes(changed) == msgspec.json.encode(second.tallies[1])
    assert id(first.tallies[1]) not in slot.encoded  # the replaced object is no longer kept
    assert all(map(is_, slot.held, second.tallies)) and len(slot.held) == 3  # referenced: ids never reused
    # without a slot (a size check, a refit) the plain encoding, nothing kept
    assert handler._values(BUCKET, second, None) == [msgspec.json.encode(second)]


async def test_an_agents_state_forgotten_keeps_no_encoded_item(js: JetStreamContext, wait_for: WaitFor) -> None:
    """A document ended (``resets``: deleted at its write) and the handler's reset (a failure, a
    lease lost) leave nothing kept; the agent's next document is written whole and plain."""
    handler = ProjectionHandler(js, "tallies", "tallies@test", [Tallies()])
    kv = await js.key_value(BUCKET)
    async with running(js, handler):
        for n, word in enumerate(["alpha", "beta", "alpha"], 1):
            await js.publish(*msg(n, "alice", word))
        await wait_for(lambda: checkpoint_reached(js, 3), within=30)
        assert len(handler._cache[(BUCKET, "alice")].encoded) == 2
        await js.publish(*msg(4, "alice", "end"))
        await wait_for(lambda: checkpoint_reached(js, 4), within=30)
        slot = handler._cache[(BUCKET, "alice")]
        assert slot.doc is None and slot.encoded == {} and slot.held == []
        raw, _ = await kv_read(kv, "alice")
        assert not raw  # deleted
        await js.publish(*msg(5, "alice", "gamma"))
        await wait_for(lambda: checkpoint_reached(js, 5), within=30)
        raw, _ = await kv_read(kv, "alice")
        stored = msgspec.json.decode(raw, type=TalliesDoc)
        assert [t.name for t in stored.tallies] == ["gamma"]
        assert raw == msgspec.json.encode(stored)
    handler.reset()
    assert (BUCKET, "alice") not in handler._cache
