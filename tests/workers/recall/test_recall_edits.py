"""Edits with history (issue 41): a ``memory_update`` changes a memory's statement in place,
keeps the version it replaces, replays and redelivers safely, and supersedes what it contradicts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from schemas.events import FeedbackEvent, MessageEvent
from shared.codec import Envelope
from shared.config import RecallSettings
from workers.recall.apply import StoreApplier
from workers.recall.capture import remembered_id
from workers.recall.edits import as_it_was, history
from workers.recall.embedders import HashingEmbedder
from workers.recall.store import MemoryFilter, MemoryStore

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def feedback(seq: int, kind: str, **fields: Any) -> Envelope:
    event = FeedbackEvent(id=f"fb-{seq}", agent="alice", ts=T0 + timedelta(hours=seq), kind=kind, **fields)
    return Envelope(seq=seq, subject=f"cortex.feedback.alice.{kind}", family="feedback", kind=kind, agent="alice",
                    event=event)


def said(seq: int, text: str) -> Envelope:
    event = MessageEvent(id=f"m{seq}", agent="alice", session="s1", ts=T0 + timedelta(hours=seq), role="user",
                         sender="al", content=text)
    return Envelope(seq=seq, subject="cortex.msg.alice.received", family="msg", kind="received", agent="alice",
                    event=event)


def applier(store: MemoryStore) -> StoreApplier:
    return StoreApplier(store, HashingEmbedder(256), RecallSettings(), ("en",))


def test_an_update_changes_the_statement_in_place_and_keeps_the_old_one(store: MemoryStore) -> None:
    app = applier(store)
    memory_id = remembered_id("alice", "fb-1")
    events = [feedback(1, "remember", value={"content": "The staging database lives on db-2.", "type": "fact"}),
              feedback(2, "memory_update", target=memory_id, value={"content": "The staging database lives on db-7."})]
    outcome = app.apply_batch(events)
    assert outcome.updated == 1
    (memory,) = store.get("alice", [memory_id])
    assert (memory.content, memory.type, memory.source_event, memory.revised_by) == (
        "The staging database lives on db-7.", "fact", "fb-1", "fb-2")
    assert [(v.content, v.event) for v in history(memory)] == [
        ("The staging database lives on db-2.", "fb-1"), ("The staging database lives on db-7.", "fb-2")]
    assert as_it_was(memory, T0 + timedelta(hours=1, minutes=30)).content == "The staging database lives on db-2."
    query = "staging database db-7"
    (best, *_) = store.search("alice", app.embedder.embed_query(query), text=query, limit=3)
    assert best.memory.id == memory_id  # embedded again: found by its new words
    stored = sorted(store.scroll("alice"), key=lambda m: m.id)
    assert applier(store).apply_batch(events).updated == 0  # a redelivery, a replay over the store
    assert sorted(store.scroll("alice"), key=lambda m: m.id) == stored


def test_an_update_supersedes_what_its_new_statement_contradicts(store: MemoryStore) -> None:
    app = applier(store)
    app.apply_batch([said(1, "Our deploy day is Tuesday."),
                     feedback(2, "remember", value={"content": "The release train leaves weekly."})])
    memory_id = remembered_id("alice", "fb-2")
    app.apply_batch([feedback(3, "memory_update", target=memory_id, value={"content": "Our deploy day is Thursday."})])
    current = [m.content for m in store.scroll("alice", flt=MemoryFilter(current=True))]
    assert "Our deploy day is Thursday." in current and not any("Tuesday" in c for c in current)


def test_an_update_of_an_unknown_or_folded_id(store: MemoryStore) -> None:
    app = applier(store)
    app.apply_batch([feedback(1, "remember", value={"content": "Bob prefers Friday reviews."}),
                     feedback(2, "remember", value={"content": "Bob prefers Friday reviews."})])  # 1 folds into 2
    outcome = app.apply_batch([
        feedback(3, "memory_update", target="1b4e28ba-2fa1-11d2-883f-0016d3cca427", value={"content": "x"}),
        feedback(4, "memory_update", target=remembered_id("alice", "fb-1"),
                 value={"content": "Bob prefers Monday reviews."})])
    assert (outcome.updated, outcome.skipped) == (1, 1)
    (memory,) = store.scroll("alice")
    assert memory.id == remembered_id("alice", "fb-2") and memory.content == "Bob prefers Monday reviews."
