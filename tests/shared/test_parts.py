"""Split documents on a real nats-server: the write order and revision-consistent reads."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

import msgspec
import nats
import pytest
from cortex_testkit import bucket_keys
from nats.aio.client import Client
from nats.js.kv import KeyValue

from schemas.docs import Integrity
from schemas.events import MessageEvent
from shared import parts
from shared.asof import DOC_HISTORY, DocReader
from shared.backup import export_buckets, import_buckets
from shared.codec import Envelope
from shared.config import load_settings
from shared.embedded import EmbeddedNats
from shared.kv import kv_cas, kv_read
from shared.names import BUCKET_KNOWLEDGE
from shared.projection import EventProjection, ProjectionHandler
from shared.provision import ensure_bucket, provision

BUCKET = "test_split"
LIMIT = 300
T0 = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)


class ListDoc(msgspec.Struct, kw_only=True):
    SPLIT_LISTS: ClassVar[tuple[str, ...]] = ("items",)

    items: list[str]
    integrity: Integrity = msgspec.field(default_factory=Integrity)


def doc(seq: int, n: int) -> ListDoc:
    return ListDoc(items=[f"item {i:03d} of version {seq}" for i in range(n)],
                   integrity=Integrity(last_seq=seq, events=seq, producer="test"))


class Store:
    """One agent's document written the way ProjectionHandler writes it."""

    def __init__(self, kv: KeyValue, agent: str = "alice") -> None:
        self.kv, self.agent = kv, agent
        self.revision = 0
        self.stored = 0

    async def write(self, document: ListDoc, cleanup: bool = True) -> list[bytes]:
        values = parts.encode_parts(document, LIMIT)
        await parts.put_parts(self.kv, self.agent, values)
        self.stored = max(self.stored, len(values) - 1)
        self.revision = await kv_cas(self.kv, self.agent, values[0], self.revision)
        if cleanup:
            await parts.delete_parts(self.kv, self.agent, len(values) - 1, self.stored)
            self.stored = len(values) - 1
        return values


@pytest.fixture
async def kv(nc: Client) -> KeyValue:
    js = nc.jetstream()
    await ensure_bucket(js, BUCKET, history=DOC_HISTORY)
    return await js.key_value(BUCKET)


async def keys(kv: KeyValue) -> list[str]:
    return await bucket_keys(kv)


async def test_a_large_document_is_written_as_parts_and_read_back_whole(kv: KeyValue, nc: Client) -> None:
    store = Store(kv)
    values = await store.write(doc(10, 20))
    assert len(values) >= 3
    assert await keys(kv) == ["alice", *(f"alice.part{i}" for i in range(1, len(values)))]
    assert (await parts.read_latest(kv, "alice")) == (values, store.revision)
    assert await DocReader(nc.jetstream()).latest(BUCKET, "alice", ListDoc) == doc(10, 20)


async def test_a_small_document_is_one_key_with_its_plain_encoding(kv: KeyValue) -> None:
    store = Store(kv)
    await store.write(doc(10, 20))
    await store.write(doc(11, 2))  # shrinks: the stale parts are deleted
    assert await keys(kv) == ["alice"]
    assert (await kv_read(kv, "alice"))[0] == msgspec.json.encode(doc(11, 2))


async def test_a_reader_between_the_writers_parts_and_head_gets_the_heads_version(kv: KeyValue) -> None:
    store = Store(kv)
    old = await store.write(doc(10, 20))
    await parts.put_parts(kv, "alice", parts.encode_parts(doc(11, 30), LIMIT))  # the head is not written yet
    values, _ = await parts.read_latest(kv, "alice")
    assert values == old


async def test_parts_deleted_after_a_shrink_are_read_below_the_older_head(kv: KeyValue) -> None:
    store = Store(kv)
    old = await store.write(doc(10, 20))
    old_revision = store.revision
    new = await store.write(doc(11, 3))
    assert len(new) < len(old)
    assert await parts.values_at(kv, "alice", old[0], old_revision) == old
    assert (await parts.read_latest(kv, "alice"))[0] == new


async def test_a_leftover_of_an_older_longer_version_ends_the_document(kv: KeyValue) -> None:
    store = Store(kv)
    old = await store.write(doc(10, 20))
    new = await store.write(doc(11, 12), cleanup=False)  # interrupted before the stale parts were deleted
    assert len(old) > len(new) > 1
    assert (await parts.read_latest(kv, "alice"))[0] == new


async def test_another_writers_part_below_the_head_is_passed_over(kv: KeyValue) -> None:
    store = Store(kv)
    mine = parts.encode_parts(doc(10, 20), LIMIT)
    await parts.put_parts(kv, "alice", mine)
    await parts.put_parts(kv, "alice", parts.encode_parts(doc(12, 20), LIMIT))  # a deposed instance, late
    store.revision = await kv_cas(kv, "alice", mine[0], 0)
    assert (await parts.read_latest(kv, "alice"))[0] == mine


async def test_a_part_pushed_out_of_the_history_makes_the_read_torn(kv: KeyValue) -> None:
    store = Store(kv)
    values = await store.write(doc(10, 20))
    for seq in range(11, 11 + DOC_HISTORY):  # parts of versions whose head never came
        await kv.put("alice.part1", parts.encode_parts(doc(seq, 20), LIMIT)[1])
    assert await parts.values_at(kv, "alice", values[0], store.revision) is None


async def test_reading_an_older_version_leaves_no_consumer_on_the_server(kv: KeyValue, nc: Client) -> None:
    """Parts rewritten since the head are looked up below it with direct gets: nats-py's history
    watcher, used before, left a consumer on the bucket's stream for five minutes per read (a
    reader of older versions ran the server into its consumer limit) and could end the history
    early, which read a document short and as consistent."""
    store = Store(kv)
    older = await store.write(doc(10, 20))
    older_revision = store.revision
    await store.write(doc(20, 6))
    await store.write(doc(30, 25))  # every part of version 10 rewritten since its head
    for _ in range(5):
        assert await parts.values_at(kv, "alice", older[0], older_revision) == older
    info = await nc.jetstream().stream_info(f"KV_{BUCKET}")
    assert info.state.consumer_count == 0


async def test_as_of_picks_each_part_at_the_chosen_heads_version(kv: KeyValue, nc: Client) -> None:
    store = Store(kv)
    for seq, n in ((10, 20), (20, 6), (30, 25)):
        await store.write(doc(seq, n))
    reader = DocReader(nc.jetstream())
    assert await reader.as_of(BUCKET, "alice", ListDoc, 15) == (doc(10, 20), True)
    assert await reader.as_of(BUCKET, "alice", ListDoc, 25) == (doc(20, 6), True)
    assert await reader.as_of(BUCKET, "alice", ListDoc, 35) == (doc(30, 25), True)
    assert await reader.as_of(BUCKET, "alice", ListDoc, 5) == (None, True)


class Lists(EventProjection[ListDoc]):
    bucket = BUCKET
    doc_type = ListDoc
    max_value_bytes = LIMIT

    def accepts(self, env: Envelope) -> bool:
        return True

    def apply(self, document: ListDoc | None, env: Envelope) -> ListDoc:
        assert isinstance(env.event, MessageEvent)
        return ListDoc(items=[*(document.items if document else []), *env.event.content.split()])


def message(seq: int, content: str) -> Envelope:
    event = MessageEvent(id=f"m{seq}", agent="alice", session="s", ts=T0, role="user", content=content)
    return Envelope(seq=seq, subject="cortex.msg.alice.received", family="msg", kind="received", agent="alice",
                    event=event)


async def test_the_handler_splits_and_cleans_up_after_an_interrupted_write(kv: KeyValue, nc: Client) -> None:
    store = Store(kv)
    await store.write(doc(1, 60))
    await store.write(doc(2, 1), cleanup=False)  # part keys 1…n left behind by a crash
    assert len(await keys(kv)) >= 8
    handler = ProjectionHandler(nc.jetstream(), "lists", "lists@test", [Lists()])
    words = " ".join(f"word-number-{i:02d}" for i in range(30))
    assert await handler.apply(message(3, words))
    await handler.commit()
    expected = ListDoc(items=[*doc(2, 1).items, *words.split()],
                       integrity=Integrity(last_seq=3, last_event_ts=T0, events=3, producer="lists@test"))
    values = parts.encode_parts(expected, LIMIT)
    assert 1 < len(values) < 5
    assert await keys(kv) == ["alice", *(f"alice.part{i}" for i in range(1, len(values)))]
    assert (await parts.read_latest(kv, "alice"))[0] == values
    assert not await handler.apply(message(3, words))  # a redelivery changes nothing
    fresh = ProjectionHandler(nc.jetstream(), "lists", "lists@test", [Lists()])
    assert not await fresh.apply(message(2, "old"))  # the joined head's watermark holds


async def test_a_backup_holds_one_consistent_version_and_restores_parts_before_the_head(
    nc: Client, tmp_path: Path
) -> None:
    js = nc.jetstream()
    await provision(js, load_settings({}), [], [BUCKET_KNOWLEDGE])
    store = Store(await js.key_value(BUCKET_KNOWLEDGE))
    await store.write(doc(10, 30))
    current = await store.write(doc(11, 20), cleanup=False)  # an older version's parts are left behind
    await parts.put_parts(store.kv, "alice", parts.encode_parts(doc(12, 40), LIMIT))  # the next head is not written
    records = await export_buckets(js, [BUCKET_KNOWLEDGE])
    assert [r.key for r in records] == [*(f"alice.part{i}" for i in range(1, len(current))), "alice"]
    assert [base64.b64decode(r.value) for r in records] == [*current[1:], current[0]]

    target = EmbeddedNats(str(tmp_path / "target"))
    target.start()
    try:
        other = await nats.connect(target.url)
        await provision(other.jetstream(), load_settings({}), [], [BUCKET_KNOWLEDGE])
        await import_buckets(other.jetstream(), reversed(records))  # whatever the file's order
        restored = await DocReader(other.jetstream()).latest(BUCKET_KNOWLEDGE, "alice", ListDoc)
        assert restored == doc(11, 20)
        await other.close()
    finally:
        target.stop()
