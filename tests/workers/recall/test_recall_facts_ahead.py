"""A session start's knowledge read ahead of recall (issue 39, twenty-fifth round): once the
knowledge worker has passed a start that recall has not reached, recall reads the start's
KnowledgeDoc then — the revision below the start, while the bucket's history still holds it —
and the batch that reaches the start takes that reading, where it used to find the history
written past (more than ``DOC_HISTORY`` revisions since the start) and derive the document from
the agent's events, or read the latest one. Real nats-server (the events stream, the knowledge
and checkpoint buckets), the embedded store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.events import MessageEvent, SessionEvent
from shared.asof import DOC_HISTORY, HISTORY_SHORT
from shared.codec import Envelope
from shared.config import load_settings
from shared.derive import DERIVED
from shared.health import Health
from shared.llm import LlmClient
from shared.names import BUCKET_CHECKPOINTS
from shared.projection import ProjectionHandler
from shared.provision import provision
from shared.runtime import WorkerContext
from tests.workers.recall.test_recall_facts import ACME, DEV, GLOBEX, LEAD, T0, knowledge
from workers.recall.ahead import FactsAhead
from workers.recall.apply import StoreApplier
from workers.recall.embedders import HashingEmbedder
from workers.recall.store import MemoryFilter
from workers.recall.worker import HOLDER, RecallProjection, recall_handler


async def _published(js: JetStreamContext, subject: str, event: MessageEvent | SessionEvent, family: str,
                     kind: str) -> Envelope:
    ack = await js.publish(subject, msgspec.json.encode(event))
    return Envelope(seq=ack.seq, subject=subject, family=family, kind=kind, agent="alice", event=event)


async def message(js: JetStreamContext, n: int) -> Envelope:
    event = MessageEvent(id=f"m{n}", agent="alice", session="s1", ts=T0 + timedelta(minutes=n), role="user",
                         content=f"a note number {n}")
    return await _published(js, "cortex.msg.alice.received", event, "msg", "received")


async def session_start(js: JetStreamContext, n: int) -> Envelope:
    event = SessionEvent(id=f"s{n}", agent="alice", session=f"s{n}", ts=T0 + timedelta(minutes=n))
    return await _published(js, "cortex.session.alice.start", event, "session", "start")


async def knowledge_passed(js: JetStreamContext, seq: int, handler: ProjectionHandler) -> None:
    """The knowledge worker's checkpoint: it applied every event up to ``seq`` — once recall's
    checkpoint watch has seen it."""
    await (await js.key_value(BUCKET_CHECKPOINTS)).put("knowledge", str(seq).encode())
    tracker = await ahead_of(handler)._inputs.tracker()
    tracker.follow(["knowledge"])
    while tracker.checkpoint("knowledge") != seq:
        await asyncio.wait_for(tracker.changed().wait(), timeout=10)


@pytest.fixture
async def handler(nc: Client, tmp_path: Path) -> AsyncIterator[ProjectionHandler]:
    settings = load_settings({"CORTEX_DATA_DIR": str(tmp_path)})
    js = nc.jetstream()
    from workers.registry import all_specs, doc_buckets

    await provision(js, settings, [], doc_buckets())
    ctx = WorkerContext(nc=nc, js=js, settings=settings, worker="recall", consumer="recall", producer="recall@test",
                        health=Health("recall"), extras={"embedder": HashingEmbedder(256)},
                        catalog=all_specs())
    store, embedder = await asyncio.to_thread(HOLDER.acquire, ctx)
    made = recall_handler(ctx, StoreApplier(store, embedder, settings.recall, ("en",)), LlmClient(settings, js),
                          wait_for_knowledge=True)
    yield made
    await made.aclose()


def ahead_of(handler: ProjectionHandler) -> FactsAhead:
    projection = handler._projections[0]
    assert isinstance(projection, RecallProjection) and projection.ahead is not None
    return projection.ahead


def facts_in_store() -> list[str]:
    store = HOLDER.store
    assert store is not None
    return sorted(m.fact_id or "" for m in store.scroll("alice", flt=MemoryFilter(types=("fact",))))


def derived_or_short() -> float:
    return float(DERIVED.labels("cortex_knowledge")._value.get() + HISTORY_SHORT._value.get())


async def test_a_start_knowledge_passed_is_read_ahead_and_its_batch_takes_that_reading(
    handler: ProjectionHandler, nc: Client
) -> None:
    js = nc.jetstream()
    kv = await js.key_value("cortex_knowledge")
    first = await message(js, 1)
    await kv.put("alice", msgspec.json.encode(knowledge([ACME, DEV], last_seq=first.seq)))
    start = await session_start(js, 2)
    await knowledge_passed(js, start.seq, handler)
    ahead = ahead_of(handler)

    await handler.apply(first)  # recall's batch before the start
    await handler.commit()
    await ahead.look()  # (the look at knowledge's checkpoint moves waits for a gap of LOOK_GAP events)
    assert ahead.read == 1

    # knowledge goes on: more revisions of the agent than its history keeps, all past the start
    for i in range(DOC_HISTORY + 4):
        later = await message(js, 10 + i)
        await kv.put("alice", msgspec.json.encode(knowledge([GLOBEX, LEAD], last_seq=later.seq)))
    await knowledge_passed(js, later.seq, handler)

    before = derived_or_short()
    await handler.apply(start)
    await handler.commit()
    # the facts as of the start — the revision below it, gone from the bucket's history since — and
    # no derivation from the agent's events, no latest document in its place
    assert facts_in_store() == ["f-acme", "f-dev"]
    assert ahead.taken == 1
    assert derived_or_short() == before


async def test_a_start_knowledge_has_not_passed_is_not_read_ahead(handler: ProjectionHandler, nc: Client) -> None:
    js = nc.jetstream()
    kv = await js.key_value("cortex_knowledge")
    first = await message(js, 1)
    await kv.put("alice", msgspec.json.encode(knowledge([ACME, DEV], last_seq=first.seq)))
    start = await session_start(js, 2)
    await knowledge_passed(js, first.seq, handler)  # knowledge is short of the start: its reading could still change
    ahead = ahead_of(handler)

    await handler.apply(first)
    await handler.commit()
    assert await ahead.look() == 0
    assert ahead.read == 0

    await knowledge_passed(js, start.seq, handler)
    await handler.apply(start)  # read at the start, as before
    await handler.commit()
    assert facts_in_store() == ["f-acme", "f-dev"]
    assert ahead.taken == 0
