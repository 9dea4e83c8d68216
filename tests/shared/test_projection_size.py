"""Documents never outgrow what the server accepts (issue 15, item 3), against a real
nats-server whose max payload is 8 KiB.

Before: a 60 000-byte channel grew documents past the server's max payload, the write
failed with ``MaxPayloadError``, ``commit`` called every write failure transient, and three
workers retried forever — no other agent's events were applied, also after a restart.
Now a write is sized against the server's max payload before it is sent: a document with
``CAP_LISTS`` drops its oldest items to fit (counted, logged); one that cannot fit at all
is a permanent failure of the events that made it (dead letters), and the loop goes on."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import nats
import pytest
from cortex_testkit import ConfiguredNats
from nats.js.client import JetStreamContext
from prometheus_client import REGISTRY

from schemas.docs import Integrity
from schemas.events import MessageEvent
from shared import parts
from shared.codec import Envelope, Limits
from shared.config import load_settings
from shared.consume import ConsumeLoop, LoopConfig
from shared.errors import DocumentTooLarge, is_unwritable
from shared.health import Health
from shared.kv import kv_read
from shared.names import BUCKET_CHECKPOINTS, DLQ_STREAM
from shared.projection import EventProjection, ProjectionHandler
from shared.provision import ConsumerSpec, ensure_bucket, provision

WaitFor = Callable[..., Awaitable[Any]]
MAX_PAYLOAD = 8192
CONFIG = LoopConfig(batch_size=50, fetch_timeout_s=0.1, max_attempts=3, retry_base_s=0.01, retry_max_s=0.05,
                    drain_timeout_s=5.0, limits=Limits())


class NotesDoc(msgspec.Struct, kw_only=True):
    CAP_LISTS: ClassVar[tuple[str, ...]] = ("notes",)

    notes: list[str]
    integrity: Integrity = msgspec.field(default_factory=Integrity)


class BlobDoc(msgspec.Struct, kw_only=True):
    """No list to trim: a document that only grows."""

    text: str
    integrity: Integrity = msgspec.field(default_factory=Integrity)


class Notes(EventProjection[NotesDoc]):
    bucket = "test_notes"
    doc_type = NotesDoc

    def __init__(self, bucket: str = "test_notes") -> None:
        self.bucket = bucket

    def accepts(self, env: Envelope) -> bool:
        return isinstance(env.event, MessageEvent)

    def apply(self, doc: NotesDoc | None, env: Envelope) -> NotesDoc:
        assert isinstance(env.event, MessageEvent)
        return NotesDoc(notes=[*(doc.notes if doc else []), env.event.content])


class Blob(EventProjection[BlobDoc]):
    bucket = "test_blob"
    doc_type = BlobDoc

    def accepts(self, env: Envelope) -> bool:
        return isinstance(env.event, MessageEvent)

    def apply(self, doc: BlobDoc | None, env: Envelope) -> BlobDoc:
        assert isinstance(env.event, MessageEvent)
        return BlobDoc(text=(doc.text if doc else "") + env.event.content)


@pytest.fixture
def small_server(tmp_path: Path) -> Iterator[ConfiguredNats]:
    with ConfiguredNats(tmp_path / "nats", f"max_payload: {MAX_PAYLOAD}") as server:
        yield server


@pytest.fixture
async def js(small_server: ConfiguredNats) -> AsyncIterator[JetStreamContext]:
    nc = await nats.connect(small_server.url())
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="sized", families=("msg",)),
                                            ConsumerSpec(name="sized1", families=("msg",))])
    for bucket in ("test_notes", "test_notes1", "test_blob"):
        await ensure_bucket(js, bucket)
    yield js
    await nc.close()


@contextlib.asynccontextmanager
async def running(js: JetStreamContext, projection: Any, consumer: str = "sized",
                  config: LoopConfig = CONFIG) -> AsyncIterator[None]:
    handler = ProjectionHandler(js, "sized", "sized@test", [projection])
    loop = ConsumeLoop(js, worker="sized", consumer=consumer, handler=handler, config=config, health=Health("sized"))
    task = asyncio.create_task(loop.run())
    try:
        yield
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)


def msg(event_id: str, agent: str, size: int) -> tuple[str, bytes]:
    payload = {"id": event_id, "agent": agent, "session": "s", "ts": "2026-02-17T10:00:00Z", "role": "user",
               "content": event_id[0] * size}
    return f"cortex.msg.{agent}.received", msgspec.json.encode(payload)


async def publish(js: JetStreamContext, items: list[tuple[str, bytes]]) -> None:
    for subject, data in items:
        await js.publish(subject, data)


async def checkpoint_reached(js: JetStreamContext, seq: int, consumer: str = "sized") -> bool:
    raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), consumer)
    return bool(raw) and int(raw) >= seq


async def document(js: JetStreamContext, bucket: str, agent: str, doc_type: type[Any]) -> Any:
    raw, _ = await kv_read(await js.key_value(bucket), agent)
    return msgspec.json.decode(raw, type=doc_type) if raw else None


async def test_a_document_growing_past_the_servers_max_payload_drops_its_oldest_items(
        js: JetStreamContext, wait_for: WaitFor) -> None:
    before = REGISTRY.get_sample_value("cortex_documents_capped_total", {"worker": "sized", "bucket": "test_notes"})
    # twenty 1000-byte notes: 20 KB, far past the 8 KiB the server takes; bob's stay small
    await publish(js, [msg(f"a{i:02d}", "alice", 1000) for i in range(20)] + [msg("b1", "bob", 10)])
    async with running(js, Notes()):
        await wait_for(lambda: checkpoint_reached(js, 21), within=30)
    alice = await document(js, "test_notes", "alice", NotesDoc)
    assert alice.integrity.events == 20 and alice.integrity.last_seq == 20
    assert 0 < len(alice.notes) < 20 and alice.notes[-1] == "a" * 1000  # the newest kept, the oldest dropped
    assert len(msgspec.json.encode(alice)) <= MAX_PAYLOAD - parts.PAYLOAD_HEADROOM
    assert (await document(js, "test_notes", "bob", NotesDoc)).notes == ["b" * 10]
    after = REGISTRY.get_sample_value("cortex_documents_capped_total", {"worker": "sized", "bucket": "test_notes"})
    assert (after or 0) > (before or 0)
    assert (await js.stream_info(DLQ_STREAM)).state.messages == 0


async def test_what_is_dropped_to_fit_does_not_depend_on_the_batching(js: JetStreamContext, wait_for: WaitFor) -> None:
    """Batches of 50 and batches of one event make the same document byte for byte (a
    replay reproduces it): an overgrown document is derived again event by event."""
    await publish(js, [msg(f"a{i:02d}", "alice", 300 + 50 * i) for i in range(20)])
    async with running(js, Notes()):
        await wait_for(lambda: checkpoint_reached(js, 20), within=30)
    async with running(js, Notes("test_notes1"), "sized1", msgspec.structs.replace(CONFIG, batch_size=1)):
        await wait_for(lambda: checkpoint_reached(js, 20, "sized1"), within=30)
    batched, _ = await kv_read(await js.key_value("test_notes"), "alice")
    one_by_one, _ = await kv_read(await js.key_value("test_notes1"), "alice")
    assert batched == one_by_one
    assert 0 < len(msgspec.json.decode(batched, type=NotesDoc).notes) < 20


async def test_a_document_that_cannot_fit_dead_letters_its_events_and_other_agents_flow(
        js: JetStreamContext, wait_for: WaitFor) -> None:
    """The write that cannot succeed is no longer 'transient': it used to stall every agent."""
    await publish(js, [msg("a1", "alice", 5000), msg("b1", "bob", 10), msg("a2", "alice", 5000),
                       msg("b2", "bob", 10)])
    async with running(js, Blob()):
        await wait_for(lambda: checkpoint_reached(js, 4), within=30)
    assert (await document(js, "test_blob", "bob", BlobDoc)).text == "b" * 20
    alice = await document(js, "test_blob", "alice", BlobDoc)
    assert alice is not None and alice.text == "a" * 5000  # a1 fit; a1 + a2 could not
    info = await js.stream_info(DLQ_STREAM)
    assert info.state.messages == 1
    letter = await js.get_msg(DLQ_STREAM, info.state.last_seq)
    assert letter.headers and letter.headers["Cortex-Stream-Seq"] == "3"
    assert letter.headers["Cortex-Error"] == ("document test_blob/alice cannot be written: "
                                              "BlobDoc does not fit 7168 bytes even without any list")


def test_cap_drops_the_oldest_items_until_the_document_fits() -> None:
    doc = NotesDoc(notes=[f"{i:03d}" + "x" * 96 for i in range(10)])
    capped, dropped = parts.cap(doc, 600)
    assert len(msgspec.json.encode(capped)) <= 600
    assert capped.notes == doc.notes[dropped:] and dropped == 5
    assert parts.cap(doc, 10_000) == (doc, 0)


def test_cap_refuses_a_document_that_cannot_fit_without_its_lists() -> None:
    with pytest.raises(DocumentTooLarge):
        parts.cap(BlobDoc(text="x" * 1000), 500)


def test_a_value_is_budgeted_below_the_servers_max_payload() -> None:
    assert parts.value_budget(1024 * 1024) == parts.MAX_VALUE_BYTES
    assert parts.value_budget(8192) == 8192 - parts.PAYLOAD_HEADROOM
    assert parts.value_budget(8192, limit=300) == 300


def test_too_large_is_unwritable_and_nothing_else_is() -> None:
    import nats.errors
    import nats.js.errors

    assert is_unwritable(nats.errors.MaxPayloadError())
    assert is_unwritable(DocumentTooLarge("x"))
    assert is_unwritable(nats.js.errors.APIError(code=400, err_code=10054, description="message size exceeds"))
    assert not is_unwritable(nats.js.errors.APIError(code=500, err_code=10047, description="insufficient resources"))
    assert not is_unwritable(nats.errors.TimeoutError())
