"""Explicit memories: a ``remember`` FeedbackEvent becomes a memory like a captured one —
typed by the value or the classifier, deduplicated, replay-safe, forgettable by its id."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from schemas.events import FeedbackEvent
from shared.codec import Envelope
from shared.config import RecallSettings
from workers.recall.apply import StoreApplier
from workers.recall.capture import capture_remember, is_turn_memory, remembered_id
from workers.recall.embedders import Embedder, HashingEmbedder, make_embedder
from workers.recall.models import memory_id
from workers.recall.store import MemoryStore

OpenStore = Callable[..., MemoryStore]

TS = datetime(2026, 2, 17, 10, 30, tzinfo=UTC)


def remember(content: str, *, event_id: str = "r-1", agent: str = "alice", **value: Any) -> FeedbackEvent:
    return FeedbackEvent(id=event_id, agent=agent, ts=TS, kind="remember", value={"content": content, **value},
                         actor="mcp")


def envelope(event: FeedbackEvent, seq: int) -> Envelope:
    return Envelope(seq=seq, subject=f"cortex.feedback.{event.agent}.{event.kind}", family="feedback",
                    kind=event.kind, agent=event.agent, event=event)


@functools.cache
def default_embedder() -> Embedder:
    return make_embedder("default")


def applier(store: MemoryStore) -> StoreApplier:
    return StoreApplier(store, HashingEmbedder(256), RecallSettings(), ("en", "de"))


def test_a_remembered_memory_keeps_the_type_and_scope_it_was_given() -> None:
    (memory,) = capture_remember(remember("Albert likes short answers", type="rule", scope="session"))
    assert (memory.type, memory.scope, memory.content) == ("rule", "session", "Albert likes short answers")
    assert memory.id == remembered_id("alice", "r-1") == memory_id("alice", "r-1", 0)
    assert memory.source_event == "r-1"
    assert memory.created_at == memory.last_accessed == memory.last_seen == TS  # event time, never the clock
    assert memory.confidence == 1.0


def test_without_a_type_the_classifier_decides_and_the_text_its_scope() -> None:
    (rule,) = capture_remember(remember("We must never deploy to production on Fridays."))
    assert (rule.type, rule.scope) == ("rule", "permanent")
    (preference,) = capture_remember(remember("For now I prefer tabs over spaces #style"))
    assert (preference.type, preference.scope, preference.tags) == ("preference", "session", ("style",))
    (plain,) = capture_remember(remember("The staging database lives on db-2."))
    assert plain.type == "fact"


def test_a_remembered_episode_is_not_a_conversation_turn() -> None:
    (memory,) = capture_remember(remember("We fixed the login bug yesterday", type="episode"))
    assert memory.sender is None and not is_turn_memory(memory)  # so dedup applies to it


def test_blank_content_remembers_nothing() -> None:
    assert capture_remember(remember("   \n ")) == []


def test_the_applier_stores_a_remembered_memory_under_its_id(store: MemoryStore) -> None:
    outcome = applier(store).apply_batch([envelope(remember("The staging database lives on db-2."), seq=3)])
    assert outcome.added == 1
    (stored,) = store.get("alice", [remembered_id("alice", "r-1")])
    assert (stored.content, stored.last_seq) == ("The staging database lives on db-2.", 3)


def test_remembering_the_same_thing_twice_keeps_one_memory_under_the_id_last_returned(store: MemoryStore) -> None:
    """The memory is stored under the id the second remember returned, and the first id
    still names it (it was folded in: a forget of it forgets the memory)."""
    app = applier(store)
    app.apply_batch([envelope(remember("The staging database lives on db-2."), seq=3)])
    later = FeedbackEvent(id="r-2", agent="alice", ts=TS + timedelta(hours=1), kind="remember",
                          value={"content": "The staging database lives on db-2."})
    outcome = app.apply_batch([envelope(later, seq=4)])
    assert (outcome.added, outcome.merged) == (0, 1)
    (kept,) = list(store.scroll("alice"))
    assert kept.id == remembered_id("alice", "r-2") and kept.last_seen == TS + timedelta(hours=1)
    assert kept.merged_from == (remembered_id("alice", "r-1"),) and kept.sources == ("r-1",)
    forget = FeedbackEvent(id="f-1", agent="alice", ts=TS, kind="memory_forget", target=remembered_id("alice", "r-1"))
    app.apply_batch([envelope(forget, seq=5)])
    assert list(store.scroll("alice")) == []


def test_a_remember_redelivered_after_it_was_restated_adds_nothing(store: MemoryStore) -> None:
    app = applier(store)
    first = envelope(remember("The staging database lives on db-2."), seq=3)
    later = FeedbackEvent(id="r-2", agent="alice", ts=TS + timedelta(hours=1), kind="remember",
                          value={"content": "The staging database lives on db-2."})
    app.apply_batch([first, envelope(later, seq=4)])
    outcome = applier(store).apply_batch([first])  # a replay over the store
    assert (outcome.added, outcome.merged, outcome.skipped) == (0, 0, 1)
    assert [m.id for m in store.scroll("alice")] == [remembered_id("alice", "r-2")]


def test_remembered_facts_that_differ_in_a_number_or_a_name_are_all_kept(open_store: OpenStore) -> None:
    """Issue 44: templated facts are near-duplicates to the embedder (cosine 0.92-0.94 with the
    default one) and were folded into the first; every remembered id must name its own fact."""
    embedder = default_embedder()
    store = open_store(embedder.name, embedder.dim)
    app = StoreApplier(store, embedder, RecallSettings(), ("en", "de"))
    facts = ["Server alpha has the IP address 10.0.0.11", "Server beta has the IP address 10.0.0.12",
             "Server gamma has the IP address 10.0.0.13", "Server alpha is in rack 3", "Server beta is in rack 3",
             "The release of version 2.4 is on 2026-03-05", "The release of version 2.5 is on 2026-03-19",
             "Maria's e-mail address is maria@acme.example", "Jonas's e-mail address is jonas@acme.example"]
    facts += [f"Host web-{i} has the IP address 10.1.{i // 250}.{i % 250}" for i in range(60)]
    events = [envelope(remember(text, event_id=f"r-{i}", type="fact"), seq=i + 1) for i, text in enumerate(facts)]
    outcome = app.apply_batch(events)
    assert (outcome.added, outcome.merged) == (len(facts), 0)
    stored = {m.id: m.content for m in store.scroll("alice")}
    assert stored == {remembered_id("alice", f"r-{i}"): text for i, text in enumerate(facts)}
    query = "server beta IP address"
    (best, *_) = store.search("alice", app.embedder.embed_query(query), text=query, limit=5)
    assert best.memory.content == "Server beta has the IP address 10.0.0.12"


def test_a_restated_fact_still_folds(open_store: OpenStore) -> None:
    """Saying the same again in other words (an added word, a word in another form) is one memory."""
    embedder = default_embedder()
    store = open_store(embedder.name, embedder.dim)
    app = StoreApplier(store, embedder, RecallSettings(), ("en", "de"))
    app.apply_batch([envelope(remember("Remember: always run the migrations before the deploy.", type="rule"), 3),
                     envelope(remember("Always run the migrations before deploying.", event_id="r-2", type="rule"),
                              4)])
    (kept,) = list(store.scroll("alice"))
    assert kept.id == remembered_id("alice", "r-2") and kept.merged_from == (remembered_id("alice", "r-1"),)


def test_a_redelivered_remember_changes_nothing(store: MemoryStore) -> None:
    app = applier(store)
    app.apply_batch([envelope(remember("The staging database lives on db-2."), seq=3)])
    outcome = applier(store).apply_batch([envelope(remember("The staging database lives on db-2."), seq=3)])
    assert (outcome.added, outcome.merged, outcome.skipped) == (0, 0, 1)
    assert len(list(store.scroll("alice"))) == 1


def test_a_forget_of_the_remembered_id_removes_it_and_other_agents_are_untouched(store: MemoryStore) -> None:
    app = applier(store)
    app.apply_batch([envelope(remember("The staging database lives on db-2."), seq=3),
                     envelope(remember("The staging database lives on db-2.", agent="bob"), seq=4)])
    forget = FeedbackEvent(id="f-1", agent="alice", ts=TS, kind="memory_forget", target=remembered_id("alice", "r-1"))
    app.apply_batch([envelope(forget, seq=5)])
    assert list(store.scroll("alice")) == []
    assert [m.id for m in store.scroll("bob")] == [remembered_id("bob", "r-1")]
