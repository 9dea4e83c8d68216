"""Conflicts and supersession (issue 23): a newer memory that contradicts an older one
supersedes it (``supersedes_id`` / ``superseded_by``); the old one drops out of recall
unless history is asked for. The clear cases need no model: one frame ("the deploy day
is") with another value, or the same statement negated. Ours throughout (the
semantic-memory design names ``SupersedesID`` and leaves detection to Claude); the applier
cases run on the real embedded store.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import msgspec
import pytest

from schemas.events import FeedbackEvent, MessageEvent, SessionEvent
from shared.codec import Envelope
from shared.config import RecallSettings
from workers.recall.apply import StoreApplier
from workers.recall.conflicts import claim_of, conflicts, statement_of
from workers.recall.consolidation import consolidate
from workers.recall.embedders import HashingEmbedder
from workers.recall.models import Memory
from workers.recall.store import CollectionInfo, LexicalEncoder, MemoryFilter, MemoryStore
from workers.recall.store_edge import EdgeMemoryStore

MakeMemory = Callable[..., Memory]


@pytest.mark.parametrize(("old", "new"), [
    ("The deploy day is Tuesday.", "Our deploy day is now Thursday."),
    ("Der Deploy-Tag ist Dienstag.", "Der Deploy-Tag ist jetzt Donnerstag."),
    ("The standup is at 9:30.", "The standup is at 10:00."),
    ("The team lead is Maria.", "The team lead is John Smith."),
    ("Deploys are allowed on Fridays.", "Deploys are not allowed on Fridays."),
    ("We deploy on Fridays.", "We never deploy on Fridays."),
    ("I prefer dark mode.", "I no longer prefer dark mode."),
    ("The staging cluster isn't ready.", "The staging cluster is ready."),
])
def test_a_newer_statement_of_the_same_frame_contradicts_the_older(old: str, new: str) -> None:
    assert conflicts(claim_of(new, "al"), claim_of(old, "al"))


@pytest.mark.parametrize(("old", "new"), [
    ("The staging port is 5433.", "The staging port is 5433!"),  # the same: a duplicate, not a change
    ("The meeting is in Berlin.", "The meeting is at 10."),  # another frame
    ("The capital of France is Paris.", "The capital of Italy is Rome."),
    ("I was in Paris.", "I was in Rome."),  # the past: two trips, no change
    ("We use Postgres.", "We use Redis."),  # no value after a copula: both hold
    ("The dog is called Biscuit.", "The dog is afraid of thunder."),
    ("It is Tuesday.", "It is Monday."),  # a pronoun: about what?
    ("Is the deploy day Tuesday?", "The deploy day is Thursday."),  # a question claims nothing
    ("The deploy day is Tuesday. The release is Monday.", "The deploy day is Thursday."),  # not one statement
])
def test_what_is_no_clear_contradiction(old: str, new: str) -> None:
    assert not conflicts(claim_of(new, "al"), claim_of(old, "al"))


def test_a_first_person_frame_is_the_speakers_own() -> None:
    assert not conflicts(claim_of("My dog is called Rex.", "Caro"), claim_of("My dog is called Max.", "Mel"))
    assert conflicts(claim_of("My dog is called Rex.", "Mel"), claim_of("My dog is called Max.", "Mel"))
    assert claim_of("My dog is called Rex.") is None  # whose?


def test_consolidation_never_merges_two_memories_that_contradict(
    make_memory: MakeMemory, embedder: HashingEmbedder
) -> None:
    tuesday = make_memory("The deploy day is Tuesday", position=1, hours_ago=2)
    thursday = make_memory("The deploy day is Thursday", position=2, hours_ago=1)
    vectors = {m.id: embedder.embed_query(m.content) for m in (tuesday, thursday)}
    assert consolidate([tuesday, thursday], vectors, 0.5) == ()
    same = make_memory("The deploy day is Tuesday!", position=3)
    vectors[same.id] = embedder.embed_query(same.content)
    assert [m.removed for m in consolidate([tuesday, same], vectors, 0.5)] == [same.id]


# --- through the applier, on the real store ---------------------------------------------

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def said(seq: int, text: str, sender: str = "al") -> Envelope:
    event = MessageEvent(id=f"m{seq}", agent="alice", session="s1", ts=T0 + timedelta(minutes=seq), role="user",
                         sender=sender, content=text)
    return Envelope(seq=seq, subject="cortex.msg.alice.received", family="msg", kind="received", agent="alice",
                    event=event)


def forget(seq: int, ids: list[str]) -> Envelope:
    event = FeedbackEvent(id=f"f{seq}", agent="alice", ts=T0 + timedelta(minutes=seq), kind="memory_forget",
                          value=ids)
    return Envelope(seq=seq, subject="cortex.feedback.alice.memory_forget", family="feedback", kind="memory_forget",
                    agent="alice", event=event)


def applier(store: MemoryStore) -> StoreApplier:
    return StoreApplier(store, HashingEmbedder(256), RecallSettings(), ("en",))


def by_event(store: MemoryStore) -> dict[str, list[Memory]]:
    out: dict[str, list[Memory]] = {}
    for memory in store.scroll("alice"):
        out.setdefault(memory.source_event, []).append(memory)
    return out


def points(store: MemoryStore) -> list[bytes]:
    return sorted(msgspec.json.encode(m) for m in store.scroll("alice"))


EVENTS = [said(1, "The deploy day is Tuesday."), said(2, "Lunch is at noon."),
          said(3, "Our deploy day is now Thursday."), said(4, "The deploy day is Tuesday.")]


def test_a_contradiction_supersedes_and_saying_it_again_brings_it_back(store: MemoryStore) -> None:
    first = applier(store)
    first.apply_batch(EVENTS[:2])
    outcome = first.apply_batch(EVENTS[2:3])
    memories = by_event(store)
    # the turn, its window, its reply window (m1 and m2), its cue sentence; and m2's window,
    # which quotes m1 (the old value, as context)
    assert len(memories["m1"]) == 4 and outcome.superseded == 5
    (turn,) = [m for m in memories["m3"] if m.supersedes_id]
    assert {m.superseded_by for m in memories["m1"]} == {turn.id}
    assert {m.superseded_at for m in memories["m1"]} == {T0 + timedelta(minutes=3)}  # in event time
    assert [m.content.split("\n")[-1] for m in memories["m2"] if m.superseded_by] == ["al: Lunch is at noon."]
    assert all(m.superseded_by is None for m in memories["m3"])
    current = {m.source_event for m in store.scroll("alice", flt=MemoryFilter(current=True))}
    assert current == {"m2", "m3"}

    first.apply_batch(EVENTS[3:])  # Tuesday again: Thursday is superseded, Tuesday's cue current again
    current = [statement_of(m) for m in store.scroll("alice", flt=MemoryFilter(current=True))]
    # m4's window still quotes m3, as context; m3's reply window, made with m4, is superseded as m3 is
    assert not any("Thursday" in text for text in current)
    assert current.count("The deploy day is Tuesday.") == 3  # m1's cue, revived; m4's turn and window
    assert [m.merged_from for m in by_event(store)["m1"] if m.merged_from]  # m4's cue folded into m1's
    final = points(store)

    first.apply_batch(EVENTS)  # a redelivery, or a replay over the store
    assert points(store) == final
    store.delete_agent("alice")
    applier(store).apply_batch(EVENTS)  # from scratch, in one batch
    assert points(store) == final


def test_forgetting_the_correction_brings_back_what_it_corrected(store: MemoryStore) -> None:
    run = applier(store)
    run.apply_batch(EVENTS[:3])
    correction = [m.id for m in by_event(store)["m3"]]
    run.apply_batch([forget(5, correction)])
    current = {m.source_event for m in store.scroll("alice", flt=MemoryFilter(current=True))}
    assert current == {"m1", "m2"}
    assert all(m.superseded_by is None for m in store.scroll("alice"))


def test_a_pinned_memory_is_not_superseded(store: MemoryStore) -> None:
    run = applier(store)
    run.apply_batch(EVENTS[:1])
    pinned = [msgspec.structs.replace(m, pinned=True) for m in store.scroll("alice")]
    store.update_payloads(pinned)
    assert run.apply_batch(EVENTS[2:3]).superseded == 0


class CountingStore:
    """The real store, counting the calls a batch makes to it (nothing is faked)."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if not callable(attribute):
            return attribute

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            return attribute(*args, **kwargs)

        return counted


CONVERSATION = [said(i + 1, text, sender) for i, (sender, text) in enumerate([
    ("al", "The deploy day is Tuesday."), ("bo", "Lunch is at noon."), ("al", "Always run the tests before a merge."),
    ("bo", "Our deploy day is now Thursday."), ("al", "Thanks!"), ("bo", "Thanks!"),
    ("al", "The deploy day is Tuesday."), ("bo", "Lunch is at one now."),
    ("al", "Always run the tests before a merge."),
])]


def _edge(directory: Path) -> MemoryStore:
    lexical = LexicalEncoder(("en",))
    return EdgeMemoryStore(str(directory), CollectionInfo(embedder="hashing-v1-256", dim=256,
                                                          lexical=lexical.signature), lexical)


def test_what_is_stored_does_not_depend_on_how_the_events_were_batched(tmp_path: Path) -> None:
    """A step's writes are held and made together (``PendingWrites``): a batch of all the
    events stores byte for byte what one event at a time does, supersessions and merges
    included."""
    one_by_one, together = _edge(tmp_path / "one"), _edge(tmp_path / "together")
    single = applier(one_by_one)
    for env in CONVERSATION:
        single.apply_batch([env])
    applier(together).apply_batch(CONVERSATION)
    assert points(together) == points(one_by_one)
    assert any(m.superseded_by for m in one_by_one.scroll("alice"))  # the case is exercised
    one_by_one.close()
    together.close()


def test_what_is_stored_is_the_same_when_the_agents_memo_answers_the_claim_reads(tmp_path: Path) -> None:
    """After a session start's upkeep the agent's memo knows its memories' claims, and a step
    reads what a statement may supersede from it (one lookup by id) instead of two scrolls:
    the store ends byte for byte as without memos (every read a scroll), in one batch and
    event by event."""
    start = Envelope(seq=1, subject="cortex.session.alice.start", family="session", kind="start", agent="alice",
                     event=SessionEvent(id="s1", agent="alice", session="s1", ts=T0))
    events = [start, *(msgspec.structs.replace(e, seq=e.seq + 1) for e in CONVERSATION)]
    stores = []
    for name, memo in (("scrolls", False), ("memo", True), ("memo-one-by-one", True)):
        store = _edge(tmp_path / name)
        app = applier(store)
        answered: list[bool] = []
        real = app.tracked.claimed_ids

        def claimed_ids(agent: str, claims: Any, by: Any, real: Any = real, memo: bool = memo,
                        answered: list[bool] = answered) -> Any:
            found = real(agent, claims, by) if memo else None  # None: the two scrolls
            answered.append(found is not None)
            return found

        app.tracked.claimed_ids = claimed_ids  # type: ignore[method-assign,assignment]
        for batch in ([[e] for e in events] if name.endswith("one-by-one") else [events]):
            app.apply_batch(batch)
        assert answered and all(answered) == memo  # the memo answered every claim read
        stores.append(store)
    assert any(m.superseded_by for m in stores[0].scroll("alice"))  # the case is exercised
    assert points(stores[1]) == points(stores[0]) and points(stores[2]) == points(stores[0])
    for store in stores:
        store.close()


def test_a_batch_reads_and_writes_the_store_a_few_times_not_once_per_memory(store: MemoryStore) -> None:
    counting = CountingStore(store)
    chatter = [said(i + 1, f"Message number {i} about the weather and nothing else") for i in range(40)]
    applier(cast(MemoryStore, counting)).apply_batch(chatter)
    assert len(list(store.scroll("alice"))) >= 40 * 2  # every turn and its windows were stored
    assert counting.calls.get("upsert", 0) == 1
    assert counting.calls.get("get", 0) + counting.calls.get("get_many", 0) == 1  # one lookup by id, for all its agents
    assert counting.calls.get("update_payloads", 0) == 0
