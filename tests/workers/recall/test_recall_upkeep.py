"""Upkeep that runs (issue 41): consolidation, expiry and tiering also on a cadence in event
time — when a session's messages cross into the next period, or the next run of the stream's
events — deterministic in replay; near-
duplicates across statement types and paraphrased turns merge, keeping the provenance of both."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import msgspec

from schemas.events import FeedbackEvent, MessageEvent
from shared.codec import Envelope
from shared.config import RecallSettings
from workers.recall.apply import StoreApplier
from workers.recall.capture import is_turn_memory
from workers.recall.consolidation import consolidate
from workers.recall.embedders import make_embedder
from workers.recall.lifecycle import upkeep_counted, upkeep_due
from workers.recall.models import Memory, memory_id
from workers.recall.store import MemoryStore

OpenStore = Callable[..., MemoryStore]
T0 = datetime(2026, 3, 2, 22, 0, tzinfo=UTC)


def said(seq: int, text: str, hours: float, sender: str = "al") -> Envelope:
    event = MessageEvent(id=f"m{seq}", agent="alice", session="slack", ts=T0 + timedelta(hours=hours), role="user",
                         sender=sender, content=text)
    return Envelope(seq=seq, subject="cortex.msg.alice.received", family="msg", kind="received", agent="alice",
                    event=event)


def remembered(seq: int, text: str, hours: float, **value: str) -> Envelope:
    event = FeedbackEvent(id=f"r{seq}", agent="alice", ts=T0 + timedelta(hours=hours), kind="remember",
                          value={"content": text, **value})
    return Envelope(seq=seq, subject="cortex.feedback.alice.remember", family="feedback", kind="remember",
                    agent="alice", event=event)


def test_upkeep_is_due_when_a_message_starts_a_new_period() -> None:
    assert upkeep_due(T0, T0 + timedelta(hours=3), 24)  # 22:00 → 01:00 the next day (UTC periods)
    assert not upkeep_due(T0, T0 + timedelta(hours=1), 24)
    assert upkeep_due(T0, T0 + timedelta(hours=1), 1) and not upkeep_due(T0, T0 + timedelta(days=9), 0)


ENDLESS = [said(1, "Thanks!", 0), said(2, "I finished the migration.", 0.5), said(3, "thanks", 1),
           remembered(4, "Remember: always run the migrations before the deploy.", 1, type="procedure"),
           remembered(5, "Always run the migrations before deploying.", 1.2, type="rule"),
           remembered(6, "The demo link expires soon.", 1.3, scope="ttl"),
           said(7, "Finished the migration!", 1.5), said(8, "Good morning", 26), said(9, "Anything new?", 27),
           said(10, "Bye for now", 24 * 40)]


def _store(open_store: OpenStore) -> tuple[MemoryStore, StoreApplier]:
    embedder = make_embedder("default")
    store = open_store(embedder.name, embedder.dim)
    return store, StoreApplier(store, embedder, RecallSettings(), ("en", "de"))


def snapshot(store: MemoryStore) -> list[bytes]:
    return sorted(msgspec.json.encode(m) for m in store.scroll("alice"))


def test_one_endless_session_is_maintained_on_its_cadence(open_store: OpenStore) -> None:
    """No session start ever: the message that opens the next day consolidates the repeated
    thanks, the paraphrased turn and the procedure and rule that say the same; 40 days on,
    the ttl memory has expired."""
    store, app = _store(open_store)
    outcome = app.apply_batch(ENDLESS[:8])
    assert [env.seq for env in outcome.upkeep] == [8] and outcome.consolidated == 3
    memories = list(store.scroll("alice"))
    thanks = [m for m in memories if is_turn_memory(m) and "hank" in m.content]
    assert len(thanks) == 1 and thanks[0].sources == ("m3",)  # every event kept in provenance
    finished = [m for m in memories if is_turn_memory(m) and "migration" in m.content]
    assert len(finished) == 1 and finished[0].sources == ("m7",)  # said again in other words
    rules = [m for m in memories if not is_turn_memory(m) and "migrations" in m.content and m.sender is None]
    assert len(rules) == 1 and rules[0].merged == 1 and {rules[0].source_event, *rules[0].sources} == {"r4", "r5"}
    assert any("demo link" in m.content for m in memories)
    app.apply_batch(ENDLESS[8:])
    assert not any("demo link" in m.content for m in store.scroll("alice"))  # its 720 h are over


def test_upkeep_on_the_cadence_is_the_same_however_the_stream_is_batched_or_replayed(
    open_store: OpenStore
) -> None:
    store, app = _store(open_store)
    app.apply_batch(ENDLESS)
    whole = snapshot(store)
    store.delete_agent("alice")
    one_by_one = StoreApplier(store, app.embedder, RecallSettings(), ("en", "de"))  # a new process
    for env in ENDLESS:
        one_by_one.apply_batch([env])
    assert snapshot(store) == whole
    StoreApplier(store, app.embedder, RecallSettings(), ("en", "de")).apply_batch(ENDLESS)  # replay over it
    assert snapshot(store) == whole


def test_different_statement_types_and_paraphrased_turns_fold_but_episodes_and_distinct_ones_do_not(
    make_memory: Callable[..., Memory]
) -> None:
    procedure = make_memory("Remember: always run the migrations before the deploy.", type="procedure",
                            hours_ago=3)
    rule = make_memory("Always run the migrations before deploying.", type="rule", hours_ago=2)
    episode = make_memory("Always run the migrations before deploying!", type="episode", hours_ago=1)
    same = {m.id: [1.0, 0.0] for m in (procedure, rule, episode)}
    (merge,) = consolidate([procedure, rule, episode], same, 0.92)
    assert (merge.kept.id, merge.removed) == (procedure.id, rule.id)


def test_upkeep_is_counted_in_runs_of_the_streams_events() -> None:
    assert upkeep_counted(7, 8, 4) and upkeep_counted(3, 9, 4) and not upkeep_counted(5, 7, 4)
    assert not upkeep_counted(1, 10_000, 0)


def forgot(seq: int, event_id: str) -> Envelope:
    event = FeedbackEvent(id=f"f{seq}", agent="alice", ts=T0 + timedelta(minutes=seq), kind="memory_forget",
                          target=memory_id("alice", event_id, 0))
    return Envelope(seq=seq, subject="cortex.feedback.alice.memory_forget", family="feedback", kind="memory_forget",
                    agent="alice", event=event)


# one busy hour of one session, upkeep every 4 events of the stream: a repeat folded at the
# first run's start, a message forgotten (the session re-seeded from the store) before the next
BUSY = [said(1, "Thanks!", 0), said(2, "Is the build green?", 0.05), said(3, "thanks", 0.1),
        said(4, "Deploying the release.", 0.15), said(5, "The smoke tests pass.", 0.2), forgot(6, "m5"),
        said(7, "THANKS", 0.25), said(8, "Checking the logs.", 0.3), said(9, "Thanks!", 0.35),
        said(10, "Closing the ticket.", 0.4), said(11, "Bye.", 0.45)]
BY_EVENTS = RecallSettings(upkeep_hours=0, upkeep_events=4)


def test_a_busy_session_is_maintained_every_so_many_events_alike_however_batched(open_store: OpenStore) -> None:
    """Within one hour of event time, no session start: m4 (after m3) opens the stream's
    second run of 4 events and folds the thanks of m3; m8 (after m7; m5 is forgotten) the
    third, and folds the thanks of m7 — m9's wait for the next run. The same in one batch,
    event by event in a new process each time, or replayed over the store."""
    store, app = _store(open_store)
    app = StoreApplier(store, app.embedder, BY_EVENTS, ("en", "de"))
    outcome = app.apply_batch(BUSY)
    assert [env.seq for env in outcome.upkeep] == [4, 8] and outcome.consolidated == 2
    thanks = sorted((m.source_event, m.sources) for m in store.scroll("alice")
                    if is_turn_memory(m) and "hank" in m.content)
    assert thanks == [("m1", ("m3", "m7")), ("m9", ())]
    whole = snapshot(store)

    store.delete_agent("alice")
    ran = []
    for env in BUSY:
        ran += [e.seq for e in StoreApplier(store, app.embedder, BY_EVENTS, ("en", "de")).apply_batch([env]).upkeep]
    assert ran == [4, 8]
    assert snapshot(store) == whole
    StoreApplier(store, app.embedder, BY_EVENTS, ("en", "de")).apply_batch(BUSY)  # replay over it
    assert snapshot(store) == whole
