"""Knowledge facts as recall memories (issue 23): the knowledge-engine design's embeddings
sync ("Atlas is a sub-agent.", the fact id kept with the vector), here a mirror of the
agent's KnowledgeDoc as of each session start. Pure cases first, then the recall worker's
handler against a real nats-server (the knowledge bucket) and the embedded store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest
from nats.aio.client import Client

from schemas.api import RecallRequest
from schemas.docs import Entity, Fact, Integrity, KnowledgeDoc
from schemas.events import SessionEvent
from shared.codec import Envelope
from shared.config import load_settings
from shared.health import Health
from shared.llm import LlmClient
from shared.projection import ProjectionHandler
from shared.provision import provision
from shared.runtime import WorkerContext
from workers.recall.apply import StoreApplier
from workers.recall.embedders import HashingEmbedder
from workers.recall.facts import MAX_FACT_MEMORIES, fact_memories, fact_memory_id, fact_text, mirrored, settle
from workers.recall.store import MemoryFilter
from workers.recall.worker import HOLDER, answer, recall_handler

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
MARIA = Entity(id="person:maria", type="person", value="Maria", mentions=["Maria"], count=2, importance=0.5,
               last_seen=T0, source=["regex"])


def fact(fid: str, subject: str, predicate: str, obj: str, *, relevance: float = 1.0, hours: int = 0) -> Fact:
    t = T0 + timedelta(hours=hours)
    return Fact(id=fid, subject=subject, predicate=predicate, object=obj, relevance=relevance, created_at=t,
                last_accessed=t, source="extracted-regex")


def knowledge(facts: list[Fact], last_seq: int = 5) -> KnowledgeDoc:
    return KnowledgeDoc(updated=T0, entities=[MARIA], facts=facts,
                        integrity=Integrity(last_seq=last_seq, last_event_ts=T0, events=last_seq, producer="test"))


ACME = fact("f-acme", "person:maria", "works-at", "organization:acme", relevance=0.6)
GLOBEX = fact("f-globex", "person:maria", "works-at", "organization:globex", hours=5)
DEV = fact("f-dev", "person:maria", "is-a", "developer", hours=1)
LEAD = fact("f-lead", "person:maria", "is-a", "team lead", hours=6)


def test_a_fact_reads_as_a_sentence_and_the_newest_value_of_a_functional_predicate_is_current() -> None:
    assert fact_text(ACME, {"person:maria": "Maria"}) == "Maria works at organization:acme"
    by_fact = {m.fact_id: m for m in fact_memories("alice", knowledge([ACME, GLOBEX, DEV, LEAD]))}
    assert by_fact["f-acme"].superseded_by == fact_memory_id("alice", "f-globex")
    assert by_fact["f-globex"].supersedes_id == fact_memory_id("alice", "f-acme")
    assert by_fact["f-globex"].superseded_by is None
    assert by_fact["f-dev"].superseded_by is None  # is-a holds many values at once
    assert {m.type for m in by_fact.values()} == {"fact"} and by_fact["f-acme"].confidence == 0.6
    assert by_fact["f-dev"].source_event == "fact:f-dev"
    assert fact_memories("alice", None) == []


def test_only_the_most_relevant_facts_are_mirrored() -> None:
    many = [fact(f"f{i:05d}", "person:maria", "is-a", f"thing {i}", relevance=1.0 - i / 10_000)
            for i in range(MAX_FACT_MEMORIES + 5)]
    kept = mirrored(reversed(many))
    assert [f.id for f in kept] == [f.id for f in many[:MAX_FACT_MEMORIES]]


def test_a_sync_keeps_the_hits_updates_what_changed_and_removes_what_is_gone() -> None:
    first = settle(fact_memories("alice", knowledge([ACME, DEV])), [], seq=7)
    assert {m.fact_id for m in first.new} == {"f-acme", "f-dev"} and all(m.first_seq == 7 for m in first.new)
    stored = [msgspec.structs.replace(m, access_count=3, tier="cold") if m.fact_id == "f-dev" else m
              for m in first.new]
    assert settle(fact_memories("alice", knowledge([ACME, DEV])), stored, seq=9) == type(first)()  # no change
    promoted = msgspec.structs.replace(DEV, relevance=0.9)
    second = settle(fact_memories("alice", knowledge([promoted, GLOBEX])), stored, seq=9)
    assert [m.fact_id for m in second.new] == ["f-globex"]
    (dev,) = second.changed
    assert (dev.confidence, dev.access_count, dev.tier, dev.first_seq, dev.last_seq) == (0.9, 3, "cold", 7, 9)
    assert second.removed == (fact_memory_id("alice", "f-acme"),)


# --- the handler, on the real bucket and store -----------------------------------------


def start(seq: int) -> Envelope:
    event = SessionEvent(id=f"s{seq}", agent="alice", session=f"s{seq}", ts=T0 + timedelta(hours=seq))
    return Envelope(seq=seq, subject="cortex.session.alice.start", family="session", kind="start", agent="alice",
                    event=event)


@pytest.fixture
async def handler(nc: Client, tmp_path: Path) -> AsyncIterator[ProjectionHandler]:
    settings = load_settings({"CORTEX_DATA_DIR": str(tmp_path)})
    js = nc.jetstream()
    from workers.registry import doc_buckets  # every worker's document buckets

    await provision(js, settings, [], doc_buckets())
    ctx = WorkerContext(nc=nc, js=js, settings=settings, worker="recall", consumer="recall", producer="recall@test",
                        health=Health("recall"), extras={"embedder": HashingEmbedder(256)})
    store, embedder = await asyncio.to_thread(HOLDER.acquire, ctx)
    made = recall_handler(ctx, StoreApplier(store, embedder, settings.recall, ("en",)), LlmClient(settings, js))
    yield made
    await made.aclose()


async def test_a_session_start_mirrors_the_facts_as_of_it_and_recall_finds_them(
    handler: ProjectionHandler, nc: Client
) -> None:
    kv = await nc.jetstream().key_value("cortex_knowledge")
    await kv.put("alice", msgspec.json.encode(knowledge([ACME, DEV], last_seq=5)))
    await kv.put("alice", msgspec.json.encode(knowledge([GLOBEX, DEV], last_seq=12)))  # after the start: unseen
    await handler.apply(start(10))
    await handler.commit()
    store = HOLDER.store
    assert store is not None
    assert sorted(m.fact_id or "" for m in store.scroll("alice")) == ["f-acme", "f-dev"]

    reply = answer(RecallRequest(query="Where does Maria work?"), "alice", load_settings({}))
    assert reply.memories[0].fact_id == "f-acme" and reply.memories[0].type == "fact"

    await handler.apply(start(20))  # now the newer document: Globex supersedes, Acme is gone from the doc
    await handler.commit()
    assert sorted(m.fact_id or "" for m in store.scroll("alice", flt=MemoryFilter(current=True))) == ["f-dev",
                                                                                                        "f-globex"]
