"""Consolidation: near-duplicates folded at session starts, in event time (issue 23).

The rules are the semantic-memory design's lifecycle ``consolidate`` (cosine > 0.92 among
``permanent`` memories, the more confident one kept), ported case for case, and ours where
we go further (provenance kept, hits added, turns folded by exact repeat only, memories
created after the session start left for the next one). The last tests run the applier on
the real embedded store: a session start merges, and applying the same events again — to
a fresh store in other batches, or over the existing store as ``cortex replay`` does —
ends in the same points, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from schemas.events import MessageEvent, SessionEvent
from shared.codec import Envelope
from shared.config import RecallSettings
from workers.recall.apply import StoreApplier
from workers.recall.capture import is_turn_memory, reply_memory, window_memory
from workers.recall.consolidation import consolidate, merge_duplicate, repeat_key, takes_part
from workers.recall.embedders import HashingEmbedder
from workers.recall.lifecycle import LifecyclePolicy, apply_lifecycle, plan_lifecycle
from workers.recall.models import MAX_PROVENANCE, Memory, memory_id
from workers.recall.store import MemoryPoint, MemoryStore

MakeMemory = Callable[..., Memory]
OpenStore = Callable[..., Any]


def vectors_of(embedder: HashingEmbedder, memories: Sequence[Memory]) -> dict[str, Any]:
    return dict(zip([m.id for m in memories], embedder.embed_documents([m.content for m in memories]), strict=True))


def plan(memories: Sequence[Memory], embedder: HashingEmbedder, now: datetime, **kw: Any) -> Any:
    return plan_lifecycle(memories, now, LifecyclePolicy(), vectors_of(embedder, memories), **kw)


def test_near_duplicates_fold_into_the_oldest_which_keeps_their_provenance_and_hits(
    make_memory: MakeMemory, embedder: HashingEmbedder, now: datetime
) -> None:
    old = make_memory("The staging database runs on port 5433", hours_ago=50, access_count=2, position=1,
                      source_event="evt-old")
    dup = make_memory("The staging database runs on port 5433.", hours_ago=5, access_count=3, position=2,
                      source_event="evt-dup")
    other = make_memory("Lunch is at noon on Fridays", hours_ago=5, position=3)
    report = plan([dup, other, old], embedder, now)
    assert [m.removed for m in report.merged] == [dup.id]
    assert report.merged[0].similarity >= 0.92
    (kept,) = report.rewrites
    assert (kept.id, kept.content, kept.source_event) == (old.id, old.content, "evt-old")
    assert kept.access_count == 5 and kept.last_seen == dup.created_at
    assert (kept.merged_from, kept.sources, kept.merged) == ((dup.id,), ("evt-dup",), 1)
    assert kept.supersedes_id is None  # that field is for contradictions, not duplicates


def test_the_more_confident_memory_survives_and_a_pinned_one_is_never_folded(
    make_memory: MakeMemory, embedder: HashingEmbedder, now: datetime
) -> None:
    """Reference case: the survivor is the more confident of the two; ours: a pinned
    memory survives whatever its confidence and age."""
    unsure = make_memory("Backups run nightly at 2am", hours_ago=50, confidence=0.6, position=1)
    sure = make_memory("Backups run nightly at 2am.", hours_ago=5, confidence=0.9, position=2)
    assert [(m.kept.id, m.removed) for m in plan([unsure, sure], embedder, now).merged] == [(sure.id, unsure.id)]
    pinned = msgspec.structs.replace(unsure, pinned=True)
    assert [(m.kept.id, m.removed) for m in plan([pinned, sure], embedder, now).merged] == [(pinned.id, sure.id)]


def test_only_durable_memories_of_one_type_scope_and_project_are_compared(
    make_memory: MakeMemory, embedder: HashingEmbedder, now: datetime
) -> None:
    same = "The release checklist lives in the wiki"
    memories = [
        make_memory(same, scope="session", position=1), make_memory(same, scope="session", position=2),
        make_memory(same, scope="ttl", position=3), make_memory(same, scope="ttl", position=4),
        make_memory(same, scope="project", project="atlas", position=5),
        make_memory(same, scope="project", project="zeus", position=6),
        make_memory(same, type="rule", position=7), make_memory(same, type="episode", position=8),
    ]
    assert plan(memories, embedder, now).merged == ()
    twin = make_memory(same, scope="project", project="atlas", position=9)
    assert [m.removed for m in plan([*memories, twin], embedder, now).merged] == [twin.id]


def turn(agent: str, event_id: str, sender: str, text: str, minutes: int, session: str = "s1") -> Memory:
    t = datetime(2026, 2, 17, 9, 0, tzinfo=UTC) + timedelta(minutes=minutes)
    return Memory(id=memory_id(agent, event_id, 0), agent=agent, content=f"{sender}: {text}", type="episode",
                  scope="permanent", confidence=1.0, source_event=event_id, created_at=t, last_accessed=t,
                  last_seen=t, sender=sender, session=session)


def test_turns_fold_only_into_an_exact_repeat_from_the_same_sender(now: datetime) -> None:
    """No vectors needed: a turn is a record of what was said, so only the same words from
    the same sender fold (case, punctuation and spacing aside); windows never fold."""
    first = turn("a", "m1", "Mel", "Thanks!", 1)
    again = turn("a", "m2", "Mel", "thanks", 2, session="s2")
    third = turn("a", "m3", "Mel", "Thanks !!", 3)
    theirs = turn("a", "m4", "Caro", "Thanks!", 4)
    longer = turn("a", "m5", "Mel", "Thanks, that helps!", 5)
    windows = [window_memory(t, []) for t in (first, again)]
    report = plan_lifecycle([third, longer, theirs, again, first, *windows], now)
    assert [m.removed for m in report.merged] == [again.id, third.id]
    (kept,) = report.rewrites
    assert kept.id == first.id and is_turn_memory(kept)
    assert kept.sources == ("m2", "m3") and kept.merged == 2
    assert repeat_key("🙏🙏") == "🙏🙏" and repeat_key("🙏") != repeat_key("🙏🙏")
    # a reply window (a turn and the next one) quotes its neighbours too: never a participant
    assert not any(takes_part(m) for m in (*windows, reply_memory(first, "Caro: You're welcome")))


def test_a_turn_said_again_in_other_words_folds_but_one_that_says_something_else_does_not(now: datetime) -> None:
    """Courtesies set aside, the same words in some form fold ("Thanks!" / "Thank you so
    much!", "I finished the migration." / "Finished the migration!"); a turn whose content
    words are the same but whose other words change what it says does not: a plan and a past
    event, a question and an answer, 'now' and 'done'."""
    said = [("Thanks!", "Thank you so much!"), ("I finished the migration.", "Finished the migration!"),
            ("I will deploy tomorrow.", "I deployed yesterday."), ("Can you deploy?", "I can deploy."),
            ("Deploying now.", "Deploy done.")]
    for i, (first, second) in enumerate(said):
        pair = [turn("a", f"m{i}a", "Mel", first, 1), turn("a", f"m{i}b", "Mel", second, 2)]
        folded = [m.removed for m in plan_lifecycle(pair, now).merged]
        assert folded == ([pair[1].id] if i < 2 else []), (first, second)


def test_a_merge_is_idempotent_and_its_provenance_bounded(make_memory: MakeMemory) -> None:
    kept = make_memory("x", position=0, source_event="e0")
    dup = make_memory("x", position=1, source_event="e1", access_count=2)
    once = merge_duplicate(kept, dup)
    assert merge_duplicate(once, dup) == once  # a redelivered merge adds nothing
    for i in range(2, MAX_PROVENANCE + 10):
        once = merge_duplicate(once, make_memory("x", position=i, source_event=f"e{i}"))
    assert once.merged == MAX_PROVENANCE + 9
    assert len(once.merged_from) == len(once.sources) == MAX_PROVENANCE
    assert once.sources[-1] == f"e{MAX_PROVENANCE + 9}"  # the newest are kept


def test_the_plan_does_not_depend_on_the_order_memories_are_listed_in(
    make_memory: MakeMemory, embedder: HashingEmbedder, now: datetime
) -> None:
    memories = [make_memory(f"The deploy window is Tuesday{'!' * i}", hours_ago=i % 3, position=i) for i in range(6)]
    assert plan(memories, embedder, now) == plan(list(reversed(memories)), embedder, now)
    assert len(plan(memories, embedder, now).merged) == 5


def test_memories_created_after_the_session_start_wait_for_the_next_one(now: datetime) -> None:
    before = msgspec.structs.replace(turn("a", "m1", "Mel", "Thanks!", 1), first_seq=3)
    after = msgspec.structs.replace(turn("a", "m2", "Mel", "Thanks!", 2), first_seq=9)
    assert plan_lifecycle([before, after], now, before_seq=5).merged == ()
    assert len(plan_lifecycle([before, after], now, before_seq=10).merged) == 1


def test_applying_a_plan_rewrites_the_survivor_and_deletes_the_duplicate(
    open_store: OpenStore, embedder: HashingEmbedder, make_memory: MakeMemory, now: datetime
) -> None:
    store = open_store()
    old = make_memory("Deploy window is Tuesday", hours_ago=10, position=1)
    dup = make_memory("Deploy window is Tuesday!", hours_ago=1, position=2)
    store.upsert([MemoryPoint(m, embedder.embed_query(m.content)) for m in (old, dup)])
    memories = list(store.scroll("alice"))
    report = plan_lifecycle(memories, now, LifecyclePolicy(), store.vectors("alice", [m.id for m in memories]))
    apply_lifecycle(store, "alice", report)
    (survivor,) = store.scroll("alice")
    assert survivor.id == old.id and survivor.merged_from == (dup.id,)


# --- through the applier, on the real store ---------------------------------------------

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def message(seq: int, sender: str, text: str, session: str = "s1") -> Envelope:
    event = MessageEvent(id=f"m{seq}", agent="alice", session=session, ts=T0 + timedelta(minutes=seq), role="user",
                         sender=sender, content=text)
    return Envelope(seq=seq, subject="cortex.msg.alice.received", family="msg", kind="received", agent="alice",
                    event=event)


def start(seq: int, session: str) -> Envelope:
    event = SessionEvent(id=f"start-{seq}", agent="alice", session=session, ts=T0 + timedelta(minutes=seq))
    return Envelope(seq=seq, subject="cortex.session.alice.start", family="session", kind="start", agent="alice",
                    event=event)


EVENTS = [
    message(1, "Mel", "Thanks!"), message(2, "Caro", "Thanks!"), message(3, "Mel", "thanks"),
    message(4, "Mel", "What did you paint last weekend?"), message(5, "Mel", "Thanks!!"),
    start(6, "s2"),
    message(7, "Mel", "Thanks!", session="s2"), message(8, "Caro", "The sunrise one, over the lake."),
]


def points(store: MemoryStore) -> list[bytes]:
    return sorted(msgspec.json.encode(m) for m in store.scroll("alice"))


def test_a_session_start_folds_repeats_and_applying_the_events_again_changes_nothing(open_store: OpenStore) -> None:
    store = open_store()
    applier = StoreApplier(store, HashingEmbedder(256), RecallSettings(), ("en",))
    outcome = applier.apply_batch(EVENTS[:6])
    assert outcome.consolidated == 2
    (thanks,) = [m for m in store.scroll("alice") if is_turn_memory(m) and m.sender == "Mel" and "hank" in m.content]
    assert (thanks.source_event, thanks.sources, thanks.last_seq) == ("m1", ("m3", "m5"), 6)
    assert applier.apply_batch(EVENTS[6:]).consolidated == 0  # m7 waits for the next session start
    final = points(store)

    applier.apply_batch(EVENTS)  # a redelivery, or a replay over the store: the folded turns come back
    assert points(store) == final  # and fold again at the same session start; m7 stays

    store.delete_agent("alice")  # from scratch, in other batches, by a new process's applier
    again = StoreApplier(store, HashingEmbedder(256), RecallSettings(), ("en",))
    for batch in (EVENTS[:2], EVENTS[2:]):  # m8's window is made after the session start's merges
        again.apply_batch(batch)
    assert points(store) == final


def test_statements_that_differ_in_a_number_a_name_or_a_word_never_consolidate(make_memory: MakeMemory) -> None:
    """However close their vectors (here: identical), distinct statements stay apart at a
    session start; a restatement in other forms of the same words folds (issue 44)."""
    texts = ["Server alpha has the IP address 10.0.0.11", "Server beta has the IP address 10.0.0.12",
             "Server alpha is in rack 3", "Server beta is in rack 3", "Alice prefers tea", "Alice prefers coffee",
             "We deploy on Fridays", "We never deploy on Fridays"]
    memories = [make_memory(text, hours_ago=len(texts) - i) for i, text in enumerate(texts)]
    same = {m.id: [1.0, 0.0, 0.0] for m in memories}
    assert consolidate(memories, same, 0.92) == ()
    restated = [make_memory("Always run the migrations before the deploy.", hours_ago=2),
                make_memory("Always run the migrations before deploying!", hours_ago=1)]
    (merge,) = consolidate(restated, {m.id: [1.0, 0.0, 0.0] for m in restated}, 0.92)
    assert (merge.kept.id, merge.removed) == (restated[0].id, restated[1].id)
