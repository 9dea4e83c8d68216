"""encode_parts / join_parts: a large KnowledgeDoc over several KV values of at most 512 KiB."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import nats.errors
import pytest
from cortex_testkit import bucket_keys
from nats.aio.client import Client

from schemas.docs import Entity, Integrity, KnowledgeDoc
from schemas.events import MessageEvent
from shared.asof import DocReader
from shared.codec import Envelope
from shared.config import load_settings
from shared.kv import kv_read
from shared.names import BUCKET_KNOWLEDGE, shadow_bucket
from shared.parts import MAX_VALUE_BYTES, encode_parts, join_parts, put_parts
from shared.projection import EventProjection, ProjectionHandler
from shared.provision import provision
from workers.cli.diff import diff_bucket
from workers.knowledge.extract import MAX_MENTIONS
from workers.knowledge.facts import Triple, upsert_facts
from workers.knowledge.worker import fit

T0 = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)


def big_doc(n_entities: int, n_facts: int) -> KnowledgeDoc:
    entities = [
        Entity(
            id=f"unknown:name-{i}", type="unknown", value=f"Name {i}",
            mentions=[f"Name {i} variant {k}" for k in range(MAX_MENTIONS)],
            count=i + 1, importance=0.5, last_seen=T0 + timedelta(seconds=i), source=["regex"],
        )
        for i in range(n_entities)
    ]
    triples = [Triple(f"unknown:name-{i}", "is-a", f"thing number {i}") for i in range(n_facts)]
    facts = upsert_facts([], triples, "extracted-regex", T0)
    integrity = Integrity(last_seq=99, last_event_ts=T0, events=99, producer="knowledge@0.1.0+cfg")
    return KnowledgeDoc(updated=T0, entities=entities, facts=facts, integrity=integrity)


def split_doc(doc: KnowledgeDoc, max_bytes: int = MAX_VALUE_BYTES) -> list[bytes]:
    return encode_parts(doc, max_bytes)


def joined(values: list[bytes]) -> KnowledgeDoc:
    return join_parts([msgspec.json.decode(v, type=KnowledgeDoc) for v in values])


def test_a_small_document_is_one_value_with_the_plain_encoding() -> None:
    doc = big_doc(3, 3)
    assert split_doc(doc) == [msgspec.json.encode(doc)]
    assert joined(split_doc(doc)) == doc


def test_a_large_document_splits_into_bounded_self_describing_parts() -> None:
    doc = big_doc(5000, 10000)  # the default caps, every entity at its mention cap
    assert len(msgspec.json.encode(doc)) > 2 * MAX_VALUE_BYTES
    parts = split_doc(doc)
    assert len(parts) >= 11
    for value in parts:
        assert len(value) <= MAX_VALUE_BYTES
        part = msgspec.json.decode(value, type=KnowledgeDoc)
        assert part.updated == doc.updated
        assert part.integrity == doc.integrity
    assert joined(parts) == doc
    assert msgspec.json.encode(joined(parts)) == msgspec.json.encode(doc)


def test_packing_is_exact_at_the_limit() -> None:
    doc = big_doc(40, 40)
    for limit in (3000, 4096, 10_000):
        parts = split_doc(doc, limit)
        assert all(len(v) <= limit for v in parts)
        assert limit - 600 < len(parts[0]) <= limit  # full up to the last item (540 bytes) that fits
        assert joined(parts) == doc
        assert split_doc(doc, limit) == parts  # deterministic


def test_entities_come_before_facts_and_keep_their_order() -> None:
    doc = big_doc(30, 30)
    parts = [msgspec.json.decode(v, type=KnowledgeDoc) for v in split_doc(doc, 4096)]
    assert parts[0].entities and not parts[-1].entities and parts[-1].facts
    assert [e.id for p in parts for e in p.entities] == [e.id for e in doc.entities]
    assert all(p.llm_pending == doc.llm_pending and p.version == doc.version for p in parts)


def test_an_item_that_cannot_fit_is_an_error() -> None:
    with pytest.raises(ValueError, match="over the part budget"):
        split_doc(big_doc(2, 0), 600)


def test_the_ceiling_prunes_only_a_document_over_it() -> None:
    doc = big_doc(200, 200)
    size = len(msgspec.json.encode(doc))
    assert size > MAX_VALUE_BYTES // 8
    assert fit(doc, size) is doc  # no longer pruned to fit one value
    pruned = fit(doc, size // 2)
    assert len(msgspec.json.encode(pruned)) <= size // 2
    assert 0 < len(pruned.facts) < len(doc.facts) and 0 < len(pruned.entities) < len(doc.entities)


class Preset(EventProjection[KnowledgeDoc]):
    """A knowledge projection that sets the document to a prepared one, as the worker's
    projection would after many messages."""

    bucket = BUCKET_KNOWLEDGE
    doc_type = KnowledgeDoc

    def __init__(self, doc: KnowledgeDoc) -> None:
        self.doc = doc

    def accepts(self, env: Envelope) -> bool:
        return True

    def apply(self, doc: KnowledgeDoc | None, env: Envelope) -> KnowledgeDoc:
        return msgspec.structs.replace(self.doc)  # a copy: the handler stamps its integrity


async def test_a_real_multi_megabyte_document_round_trips_through_the_provisioned_bucket(nc: Client) -> None:
    js = nc.jetstream()
    await provision(js, load_settings({}), [], [BUCKET_KNOWLEDGE])
    doc = big_doc(5000, 10000)
    whole = msgspec.json.encode(doc)
    with pytest.raises(nats.errors.MaxPayloadError):  # one value could not even be sent
        await (await js.key_value(BUCKET_KNOWLEDGE)).put("whole", whole)
    event = MessageEvent(id="m1", agent="alice", session="s", ts=T0, role="user", content="x")
    env = Envelope(seq=7, subject="cortex.msg.alice.received", family="msg", kind="received", agent="alice",
                   event=event)
    handler = ProjectionHandler(js, "knowledge", "knowledge@test", [Preset(doc)])
    assert await handler.apply(env)
    await handler.commit()

    kv = await js.key_value(BUCKET_KNOWLEDGE)
    keys = await bucket_keys(kv)
    assert len(keys) == len(encode_parts(doc)) >= 11 and "alice.part10" in keys
    sizes = [len((await kv_read(kv, key))[0] or b"") for key in keys]
    assert max(sizes) <= MAX_VALUE_BYTES and sum(sizes) > len(whole)
    read = await DocReader(js).latest(BUCKET_KNOWLEDGE, "alice", KnowledgeDoc)
    assert read is not None and read.integrity.last_seq == 7
    assert msgspec.json.encode(msgspec.structs.replace(read, integrity=doc.integrity)) == whole
    assert await DocReader(js).as_of(BUCKET_KNOWLEDGE, "alice", KnowledgeDoc, 8) == (read, True)


async def test_the_shadow_diff_compares_split_documents_whole(nc: Client) -> None:
    js = nc.jetstream()
    await provision(js, load_settings({"CORTEX_MODE": "shadow"}), [], [BUCKET_KNOWLEDGE])
    live = big_doc(30, 30)
    changed = list(live.facts)
    changed[-1] = msgspec.structs.replace(changed[-1], object="thing number forty-two")
    shadow = msgspec.structs.replace(live, facts=changed)
    for bucket, doc in ((BUCKET_KNOWLEDGE, live), (shadow_bucket(BUCKET_KNOWLEDGE), shadow)):
        kv = await js.key_value(bucket)
        values = encode_parts(doc, 4096)
        await put_parts(kv, "alice", values)
        await kv.put("alice", values[0])
    lines = await diff_bucket(js, BUCKET_KNOWLEDGE, None)
    assert lines == [f'{BUCKET_KNOWLEDGE}/alice:\n    facts[29].object: "thing number 29" → "thing number forty-two"']
    assert await diff_bucket(js, BUCKET_KNOWLEDGE, "alice") == lines
