"""split_doc / join_parts: a large KnowledgeDoc over several KV values of at most 512 KiB."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from schemas.docs import Entity, Integrity, KnowledgeDoc
from workers.knowledge.extract import MAX_MENTIONS
from workers.knowledge.facts import Triple, upsert_facts
from workers.knowledge.split import MAX_VALUE_BYTES, join_parts, split_doc

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


def test_a_small_document_is_one_value_with_the_plain_encoding() -> None:
    doc = big_doc(3, 3)
    assert split_doc(doc) == {"": msgspec.json.encode(doc)}
    assert join_parts(split_doc(doc)) == doc


def test_a_large_document_splits_into_bounded_self_describing_parts() -> None:
    doc = big_doc(5000, 10000)  # the default caps, every entity at its mention cap
    assert len(msgspec.json.encode(doc)) > 2 * MAX_VALUE_BYTES
    parts = split_doc(doc)
    assert list(parts) == ["", *(f"part{i}" for i in range(1, len(parts)))]
    for value in parts.values():
        assert len(value) <= MAX_VALUE_BYTES
        part = msgspec.json.decode(value, type=KnowledgeDoc)
        assert part.updated == doc.updated
        assert part.integrity == doc.integrity
    assert join_parts(parts) == doc


def test_packing_is_exact_at_the_limit() -> None:
    doc = big_doc(40, 40)
    for limit in (3000, 4096, 10_000):
        parts = split_doc(doc, limit)
        assert all(len(v) <= limit for v in parts.values())
        assert join_parts(parts) == doc
        assert split_doc(doc, limit) == parts  # deterministic


def test_the_reader_stops_at_the_first_missing_part() -> None:
    parts = split_doc(big_doc(40, 0), 4096)
    last = f"part{len(parts) - 1}"
    stale = {**parts, f"part{len(parts) + 1}": parts[last]}  # a leftover behind a gap
    assert join_parts(stale) == join_parts(parts)


def test_an_item_that_cannot_fit_is_an_error() -> None:
    with pytest.raises(ValueError, match="over the part budget"):
        split_doc(big_doc(2, 0), 600)
