"""Context windows and per-turn retrievability (the levers measured in docs/recall-eval.md):
every message keeps its own turn memory (never folded into another), gets a dated window
of the turns before it and, once the next turn arrives, a reply window (the turn and that
reply), built in stream order and rebuilt identically after a restart; forgetting a turn
removes the windows that quote it; replies count each message once.
And how the applier embeds a batch: once per distinct text, outside the store lock, and
not at all for what the store already holds (a redelivery or a replay)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from schemas.events import FeedbackEvent, MessageEvent, SessionEvent
from shared.codec import Envelope
from shared.config import RecallSettings
from workers.recall.apply import StoreApplier
from workers.recall.capture import (
    REPLY_POSITION,
    WINDOW_POSITION,
    capture_message,
    is_context_memory,
    is_reply_memory,
    is_turn_memory,
    is_window_memory,
    reply_memory,
    window_date,
    window_memory,
)
from workers.recall.embedders import HashingEmbedder
from workers.recall.models import Memory, RankedMemory, SearchHit, memory_id
from workers.recall.ranking import (
    DEFAULT_WEIGHTS,
    adjacent_turns,
    asks,
    by_matching_turn,
    fused_relevance,
    lexical_relevance,
    matching_turn,
    message_key,
    named_senders,
    pool_by_message,
    rank,
    with_neighbours,
)
from workers.recall.store import MemoryFilter, MemoryStore, StoreUnavailable

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
TURNS = [
    ("Melanie", "What did you paint last weekend?"),
    ("Caroline", "The sunrise one, over the lake!"),
    ("Melanie", "Thanks!"),
    ("Caroline", "Thanks!"),
    ("Melanie", "Are you going to the pottery class on Friday?"),
]


def envelopes(turns: Sequence[tuple[str, str]] = TURNS, *, agent: str = "alice", session: str = "s1",
              first_seq: int = 1, start: datetime = T0, first_id: int = 0) -> list[Envelope]:
    out = []
    for i, (sender, text) in enumerate(turns):
        event = MessageEvent(id=f"{session}-m{first_id + i}", agent=agent, session=session,
                             ts=start + timedelta(seconds=30 * i), role="user", sender=sender, content=text)
        out.append(Envelope(seq=first_seq + i, subject=f"cortex.msg.{agent}.received", family="msg",
                            kind="received", agent=agent, event=event))
    return out


def applier(store: MemoryStore) -> StoreApplier:
    return StoreApplier(store, HashingEmbedder(256), RecallSettings(), ("en", "de"))


def windows(store: MemoryStore, agent: str = "alice") -> dict[str, str]:
    return {m.source_event: m.content for m in store.scroll(agent) if is_window_memory(m)}


def replies(store: MemoryStore, agent: str = "alice") -> dict[str, str]:
    return {m.source_event: m.content for m in store.scroll(agent) if is_reply_memory(m)}


def test_a_window_is_the_dated_turn_after_the_turns_before_it() -> None:
    (episode,) = capture_message(MessageEvent(id="m-3", agent="a", session="s", ts=T0, role="user",
                                              sender="Caroline", content="The sunrise  one,\nover the lake!"))
    window = window_memory(episode, ["x: too old", "Melanie: What did you paint?", "Caroline: Hi"])
    assert window.id == memory_id("a", "m-3", WINDOW_POSITION) and window.source_event == "m-3"
    assert window.content == "On 8 May 2023:\nMelanie: What did you paint?\nCaroline: Hi\n" \
                             "Caroline: The sunrise one, over the lake!"
    assert is_window_memory(window) and not is_turn_memory(window) and is_turn_memory(episode)
    assert window_memory(episode, []).content == "On 8 May 2023:\nCaroline: The sunrise one, over the lake!"
    assert window_date(datetime(2024, 12, 31, 23, 59, tzinfo=UTC)) == "On 31 December 2024:"


def test_a_reply_window_is_the_dated_turn_and_the_next_one_with_fresh_metadata() -> None:
    (turn,) = capture_message(MessageEvent(id="m-1", agent="a", session="s", ts=T0, role="user",
                                           sender="Melanie", content="What did you\npaint?"))
    used = msgspec.structs.replace(turn, access_count=7, pinned=True, last_seq=3)  # the turn's history
    reply = reply_memory(used, "Caroline: The sunrise   one!")
    assert reply.id == memory_id("a", "m-1", REPLY_POSITION) and reply.source_event == "m-1"
    assert reply.content == "On 8 May 2023:\nMelanie: What did you paint?\nCaroline: The sunrise one!"
    assert (reply.access_count, reply.pinned, reply.last_seq, reply.sender) == (0, False, 0, "Melanie")
    assert is_reply_memory(reply) and is_context_memory(reply) and not is_window_memory(reply)
    assert not is_reply_memory(turn) and not is_context_memory(turn)


def test_every_turn_gets_a_reply_window_when_its_reply_arrives(store: MemoryStore) -> None:
    app = applier(store)
    app.apply_batch(envelopes()[:1])
    assert replies(store) == {}  # no reply yet
    app.apply_batch(envelopes()[1:])
    got = replies(store)
    assert sorted(got) == ["s1-m0", "s1-m1", "s1-m2", "s1-m3"]  # the last turn has none (yet)
    assert got["s1-m0"] == ("On 8 May 2023:\nMelanie: What did you paint last weekend?\n"
                            "Caroline: The sunrise one, over the lake!")
    # not across sessions: a new session's first turn is nobody's reply
    app.apply_batch(envelopes(TURNS[:1], session="s2", first_seq=10))
    assert "s1-m4" not in replies(store)
    # the same after a restart: a fresh applier seeds the session from the store
    applier(store).apply_batch(envelopes([("Caroline", "Sure, Friday.")], first_seq=11, first_id=5,
                                         start=T0 + timedelta(minutes=3)))
    assert replies(store)["s1-m4"].splitlines()[1:] == ["Melanie: Are you going to the pottery class on Friday?",
                                                       "Caroline: Sure, Friday."]


def test_every_turn_is_kept_and_windowed_in_stream_order(store: MemoryStore) -> None:
    outcome = applier(store).apply_batch(envelopes())
    assert outcome.merged == 0  # the two "Thanks!" are two turns, not one memory
    turns = sorted(m.source_event for m in store.scroll("alice") if is_turn_memory(m))
    assert turns == [f"s1-m{i}" for i in range(5)]
    got = windows(store)
    assert got["s1-m0"] == "On 8 May 2023:\nMelanie: What did you paint last weekend?"
    assert got["s1-m2"] == ("On 8 May 2023:\nMelanie: What did you paint last weekend?\n"
                            "Caroline: The sunrise one, over the lake!\nMelanie: Thanks!")
    assert got["s1-m4"].splitlines()[1:] == ["Melanie: Thanks!", "Caroline: Thanks!",
                                             "Melanie: Are you going to the pottery class on Friday?"]


def test_windows_do_not_cross_sessions_or_agents(store: MemoryStore) -> None:
    app = applier(store)
    app.apply_batch(envelopes(TURNS[:2]) + envelopes(TURNS[:1], agent="bob", first_seq=3)
                    + envelopes(TURNS[2:3], session="s2", first_seq=4))
    assert windows(store)["s2-m0"] == "On 8 May 2023:\nMelanie: Thanks!"
    assert windows(store, "bob") == {"s1-m0": "On 8 May 2023:\nMelanie: What did you paint last weekend?"}


def test_batches_and_a_restart_give_the_same_windows(store: MemoryStore) -> None:
    applier(store).apply_batch(envelopes())
    expected = windows(store)
    store.delete_agent("alice")

    applier(store).apply_batch(envelopes()[:2])
    applier(store).apply_batch(envelopes()[2:3])  # a fresh applier: the session is seeded from the store
    applier(store).apply_batch(envelopes()[3:])
    assert windows(store) == expected


class FailingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(256)
        self.fail = True

    def embed_documents(self, texts: Sequence[str]) -> object:  # type: ignore[override]
        if self.fail:
            raise StoreUnavailable("embedding service down")
        return super().embed_documents(texts)


def test_a_failed_batch_is_retried_with_the_same_context(store: MemoryStore) -> None:
    reference = applier(store)
    reference.apply_batch(envelopes())
    expected = windows(store)
    store.delete_agent("alice")

    embedder = FailingEmbedder()
    embedder.fail = False
    app = StoreApplier(store, embedder, RecallSettings(), ("en", "de"))
    app.apply_batch(envelopes()[:2])
    embedder.fail = True
    with pytest.raises(StoreUnavailable):
        app.apply_batch(envelopes()[2:])  # nothing applied; the turn context is rolled back
    embedder.fail = False
    app.apply_batch(envelopes()[2:])
    assert windows(store) == expected


def test_a_replay_changes_nothing(store: MemoryStore) -> None:
    app = applier(store)
    app.apply_batch(envelopes())
    before = sorted((m.id, m.content) for m in store.scroll("alice"))
    outcome = applier(store).apply_batch(envelopes())
    assert outcome.added == 0 and sorted((m.id, m.content) for m in store.scroll("alice")) == before


def test_forgetting_a_turn_removes_the_windows_that_quote_it(store: MemoryStore) -> None:
    app = applier(store)
    app.apply_batch(envelopes())
    target = memory_id("alice", "s1-m1", 0)  # "Caroline: The sunrise one, over the lake!"
    forget = FeedbackEvent(id="f-1", agent="alice", ts=T0 + timedelta(minutes=5), kind="memory_forget",
                           target=target)
    app.apply_batch([Envelope(seq=10, subject="cortex.feedback.alice.memory_forget", family="feedback",
                              kind="memory_forget", agent="alice", event=forget)])
    left = list(store.scroll("alice"))
    assert all("sunrise" not in m.content for m in left)
    assert sorted(windows(store)) == ["s1-m0", "s1-m4"]  # m1, m2, m3 quoted it
    assert sorted(replies(store)) == ["s1-m2", "s1-m3"]  # m0's reply was it, m1's was its own
    # The next turn's window is built from what is left.
    app.apply_batch(envelopes([("Caroline", "Yes, see you there.")], first_seq=11, first_id=9,
                              start=T0 + timedelta(minutes=10)))
    assert windows(store)["s1-m9"].splitlines() == ["On 8 May 2023:", "Caroline: Thanks!",
                                                    "Melanie: Are you going to the pottery class on Friday?",
                                                    "Caroline: Yes, see you there."]


def test_a_session_start_keeps_every_turn(store: MemoryStore) -> None:
    app = applier(store)
    app.apply_batch(envelopes())
    start = SessionEvent(id="s2-start", agent="alice", session="s2", ts=T0 + timedelta(days=40))
    app.apply_batch([Envelope(seq=20, subject="cortex.session.alice.start", family="session", kind="start",
                              agent="alice", event=start)])
    assert len([m for m in store.scroll("alice") if is_turn_memory(m)]) == 5
    assert len(windows(store)) == 5


def _hit(mid: str, source: str, fused: float, *, sender: str | None = "Caroline", lexical: float = 0.0) -> SearchHit:
    memory = Memory(id=memory_id("a", mid, 0), agent="a", content=mid, type="episode", scope="permanent",
                    confidence=1.0, source_event=source, created_at=T0, last_accessed=T0, sender=sender)
    return SearchHit(memory=memory, similarity=0.5, fused=fused, lexical=lexical)


def test_fused_relevance_is_min_max_scaled() -> None:
    assert fused_relevance([_hit("a", "e1", 0.3), _hit("b", "e2", 0.2), _hit("c", "e3", 0.1)]) == \
        pytest.approx([1.0, 0.5, 0.0])
    assert fused_relevance([_hit("a", "e1", 0.3)]) == [1.0]
    assert fused_relevance([]) == []


def test_ranking_on_fused_relevance_orders_by_the_hybrid_score_when_all_else_ties() -> None:
    hits = [_hit("low", "e1", 0.1), _hit("high", "e2", 0.3), _hit("mid", "e3", 0.2)]
    assert [r.memory.content for r in rank(hits, now=T0, fused=True)] == ["high", "mid", "low"]
    assert all(r.cosine == 0.5 for r in rank(hits, now=T0, fused=True))  # the reply still reports the cosine


def one_per_message(ranked: Sequence[RankedMemory], limit: int | None = None) -> list[RankedMemory]:
    """The best-ranked memory of each message (``message_key``) and nothing else: what
    ``by_matching_turn`` is where no window matches another turn (no production path calls
    this model; it lived in workers/recall/ranking.py until issue 42)."""
    out: list[RankedMemory] = []
    seen: set[str] = set()
    for r in ranked:
        if message_key(r.memory) not in seen:
            seen.add(message_key(r.memory))
            out.append(r)
    return out if limit is None else out[:limit]


def test_one_memory_per_message_but_never_folding_notes_or_llm_memories() -> None:
    def ranked(hit: SearchHit) -> RankedMemory:
        return RankedMemory(memory=hit.memory, score=hit.fused, similarity=0, cosine=0, recency=0, frequency=0,
                            type_boost=0, scope_boost=0)

    rows = [ranked(h) for h in (_hit("w1", "e1", 0.9), _hit("t1", "e1", 0.8), _hit("t2", "e2", 0.7),
                                _hit("llm-a", "batch", 0.6, sender=None), _hit("llm-b", "batch", 0.5, sender=None))]
    for fold in (one_per_message, by_matching_turn):  # the model below, and recall's own
        assert [r.memory.content for r in fold(rows)] == ["w1", "t2", "llm-a", "llm-b"]
        assert [r.memory.content for r in fold(rows, limit=2)] == ["w1", "t2"]


def _ranked(memory: Memory, score: float, cosine: float) -> RankedMemory:
    return RankedMemory(memory=memory, score=score, similarity=score, cosine=cosine, recency=0, frequency=0,
                        type_boost=0, scope_boost=0)


def _turns() -> list[Memory]:
    """The turn memories of TURNS[:3] (m0 asks, m1 answers, m2 thanks)."""
    return [capture_message(env.event)[0] for env in envelopes(TURNS[:3]) if isinstance(env.event, MessageEvent)]


def test_a_window_matching_through_a_neighbours_line_brings_that_turn_first() -> None:
    m0, m1, m2 = _turns()
    window = window_memory(m2, [m0.content, m1.content])  # quotes m0 and m1, credited to m2
    rows = [_ranked(window, 0.9, 0.5), _ranked(m1, 0.6, 0.7), _ranked(m2, 0.5, 0.1), _ranked(m0, 0.4, 0.3)]
    # m1's own line matches best (cosine 0.7 of its turn memory): m1 comes first, at the
    # window's score, then the window for its own turn; m0 at its place
    got = by_matching_turn(rows)
    assert [(r.memory.id, r.score) for r in got] == [(m1.id, 0.9), (window.id, 0.9), (m0.id, 0.4)]
    assert matching_turn(rows[0], {"x": (1.0, "y")}) == "msg\x1fs1-m2"  # no line judged: its own turn
    assert [r.memory.id for r in by_matching_turn(rows, limit=1)] == [m1.id]


def test_a_window_whose_own_line_matches_best_keeps_its_place() -> None:
    m0, m1, m2 = _turns()
    window = window_memory(m2, [m0.content, m1.content])
    rows = [_ranked(window, 0.9, 0.5), _ranked(m2, 0.6, 0.8), _ranked(m1, 0.5, 0.7)]
    assert [r.memory.id for r in by_matching_turn(rows)] == [window.id, m1.id]
    # a quoted turn that is not a candidate is not judged (its cosine is unknown)
    rows = [_ranked(window, 0.9, 0.5), _ranked(m2, 0.6, 0.1)]
    assert [r.memory.id for r in by_matching_turn(rows)] == [window.id]


def test_a_reply_window_matching_through_the_reply_brings_the_reply_first() -> None:
    m0, m1, _ = _turns()
    reply = reply_memory(m0, m1.content)  # "What did you paint…" / "The sunrise one…", credited to m0
    rows = [_ranked(reply, 0.9, 0.6), _ranked(m1, 0.7, 0.65), _ranked(m0, 0.3, 0.2)]
    assert [r.memory.id for r in by_matching_turn(rows)] == [m1.id, reply.id]


def test_a_message_found_through_several_memories_pools_their_scores() -> None:
    hits = [_hit("w-e1", "e1", 0.30), _hit("t-e2", "e2", 0.25), _hit("t-e1", "e1", 0.20),
            _hit("note", "n", 0.26, sender=None), _hit("note2", "n", 0.24, sender=None)]
    pooled = pool_by_message(hits)
    assert [h.fused for h in pooled] == pytest.approx([0.5, 0.25, 0.5, 0.26, 0.24])  # notes pool with nothing
    assert [h.memory.id for h in pooled] == [h.memory.id for h in hits]
    # alone, e1's window and e2 are close; pooled, e1 (found twice) leads clearly, and
    # a message found once ranks below one found twice even when its best memory is better
    ranked = one_per_message(rank(pool_by_message([_hit("t-e2", "e2", 0.3), _hit("w-e1", "e1", 0.2),
                                                   _hit("t-e1", "e1", 0.2)]), now=T0, fused=True))
    assert [r.memory.source_event for r in ranked] == ["e1", "e2"]
    assert pool_by_message([]) == []


def test_the_message_whose_words_match_better_wins_between_close_fused_ranks() -> None:
    """The fused score is a rank: the first BM25 hit gets as much as the first dense hit,
    however far ahead of the next its words match. The lexical term adds each message's
    best BM25 score as a share of the best candidate's (docs/recall-eval.md: LoCoMo R@10
    0.839 → 0.850)."""
    hits = [_hit("t-e1", "e1", 0.30, lexical=2.0), _hit("w-e2", "e2", 0.28, lexical=1.0),
            _hit("t-e2", "e2", 0.01, lexical=9.0), _hit("t-e3", "e3", 0.10)]
    pooled = pool_by_message(hits)
    assert [h.lexical for h in pooled] == [2.0, 9.0, 9.0, 0.0]  # a message's best
    assert lexical_relevance(pooled) == pytest.approx([2 / 9, 1.0, 1.0, 0.0])
    assert lexical_relevance([_hit("a", "e1", 0.3)]) == [0.0]  # no shared term anywhere
    ranked = one_per_message(rank(pooled, now=T0, fused=True))
    assert [r.memory.source_event for r in ranked] == ["e2", "e1", "e3"]
    assert ranked[0].lexical == pytest.approx(1.0)
    # without the term, e1's higher fused rank would win (0.30 against 0.28 + 0.01)
    no_lexical = msgspec.structs.replace(DEFAULT_WEIGHTS, lexical=0.0)
    assert one_per_message(rank(pooled, now=T0, fused=True, weights=no_lexical))[0].memory.source_event == "e1"
    # the cosine-only path is the design's formula: no lexical term there
    assert {r.lexical for r in rank(pooled, now=T0)} == {0.0}


def test_a_turn_that_asks_ranks_below_the_answer_that_matches_nearly_as_well() -> None:
    m0, m1, _ = _turns()  # "What did you paint last weekend?" / "The sunrise one, over the lake!"
    window0, window1 = window_memory(m0, []), window_memory(m1, [m0.content])
    reply0, reply1 = reply_memory(m0, m1.content), reply_memory(m1, "Melanie: Thanks!")
    assert [asks(m) for m in (m0, window0, reply0)] == [True, True, True]  # its own turn asks
    assert [asks(m) for m in (m1, window1, reply1)] == [False, False, False]  # quoting a question is not asking
    note = msgspec.structs.replace(m0, sender=None)
    assert not asks(note)  # notes and LLM memories are never judged
    assert asks(msgspec.structs.replace(m0, content="Lena: 你画了什么？"))
    hits = [SearchHit(memory=m0, similarity=0.5, fused=0.30), SearchHit(memory=m1, similarity=0.5, fused=0.29),
            SearchHit(memory=reply1, similarity=0.5, fused=0.10)]
    ranked = rank(hits, now=T0, fused=True)
    assert [r.memory.id for r in ranked][:2] == [m1.id, m0.id]
    assert (ranked[0].asks, ranked[1].asks) == (0.0, 1.0)
    assert {r.asks for r in rank(hits, now=T0)} == {0.0}  # the cosine-only path is the design's formula


def test_without_windows_matching_turns_is_one_memory_per_message() -> None:
    rows = [_ranked(h.memory, h.fused, 0.5) for h in (_hit("w1", "e1", 0.9), _hit("t1", "e1", 0.8),
                                                      _hit("t2", "e2", 0.7), _hit("n", "b", 0.6, sender=None))]
    assert by_matching_turn(rows) == one_per_message(rows)


def test_turns_are_next_to_each_other_as_their_windows_quote_them() -> None:
    m0, m1, m2 = _turns()
    window2 = window_memory(m2, [m0.content, m1.content])  # m2 with the two turns before it
    reply0 = reply_memory(m0, m1.content)  # m0 and the turn after it
    key = {m.id: message_key(m) for m in (m0, m1, m2)}
    got = adjacent_turns([m0, m1, m2, window2, reply0])
    assert {frozenset(pair) for pair in got} == {frozenset({key[m2.id], key[m0.id]}),
                                                 frozenset({key[m2.id], key[m1.id]}),
                                                 frozenset({key[m0.id], key[m1.id]})}
    # a turn is placed only through a candidate carrying its own line, and one session's
    # line is not another's
    assert adjacent_turns([window2]) == []
    elsewhere = msgspec.structs.replace(m1, session="s9", id=memory_id("alice", "s9-m1", 0), source_event="s9-m1")
    assert adjacent_turns([window2, m2, elsewhere]) == []


def test_a_turn_is_pulled_toward_a_better_found_neighbour_but_never_past_it() -> None:
    m0, m1, m2 = _turns()
    far = msgspec.structs.replace(m2, id=memory_id("alice", "s1-m7", 0), source_event="s1-m7",
                                  content="Caroline: Pottery on Friday.")
    rows = [_ranked(m0, 1.0, 0.9), _ranked(far, 0.8, 0.5), _ranked(m1, 0.7, 0.2), _ranked(m2, 0.1, 0.1)]
    adjacent = [(message_key(m1), message_key(m0)), (message_key(m2), message_key(m1))]
    got = with_neighbours(rows, adjacent, weight=0.5)
    # m1 gains half its gap to m0 (0.7 + 0.15) and passes `far`; m2 gains half its gap to
    # m1's own score (0.1 + 0.3); m0 has no better neighbour and stays first
    assert [(r.memory.id, round(r.score, 6)) for r in got] == [(m0.id, 1.0), (m1.id, 0.85), (far.id, 0.8),
                                                             (m2.id, 0.4)]
    assert with_neighbours(rows, adjacent, weight=0.0) == rows
    assert with_neighbours(rows, [], weight=0.5) == rows
    assert with_neighbours([], adjacent) == []


def test_the_answer_next_to_the_matched_turn_comes_up_from_a_real_store(store: MemoryStore) -> None:
    """End to end on the embedded engine: the question's words match the turn that names
    the ice cream; the answer is two turns before it and shares no word with the question,
    so no window of its own quotes the match. Pulled toward its neighbour, it passes the
    turns of another session that share words with the question into the top ten; the
    matched turn stays first."""
    talk = [("Nate", "Tried a new recipe last night: so rich and creamy, my new favourite snack!"),
            ("Joanna", "Ooh, what was it?"),
            ("Nate", "Coconut milk ice cream, I made it myself."),
            ("Joanna", "Nice, see you soon.")]
    noise = [("Nate", f"I made {topic} ice cream for the kids.") for topic in
             ("oat", "almond", "soy", "rice", "goat", "cow", "hemp", "pea", "cashew", "camel", "flax", "corn")]
    app = applier(store)
    app.apply_batch(envelopes(noise, agent="jo", session="s0", start=T0 - timedelta(days=3)))
    app.apply_batch(envelopes(talk, agent="jo", session="s1", first_seq=100))
    query = "What did Nate think of the coconut milk ice cream he made?"
    hits = pool_by_message(store.search("jo", HashingEmbedder(256).embed_query(query), text=query, limit=50,
                                        flt=MemoryFilter(current=True)))
    named = named_senders(query, (h.memory for h in hits))
    ranked = by_matching_turn(rank(hits, now=T0, fused=True, query=query, named=named))
    pulled = with_neighbours(ranked, adjacent_turns(h.memory for h in hits))
    events = [[r.memory.source_event for r in rows] for rows in (ranked, pulled)]
    assert events[0][0] == events[1][0] == "s1-m2"
    assert events[0].index("s1-m0") >= 10 > events[1].index("s1-m0")


class RecordingEmbedder(HashingEmbedder):
    """Records each ``embed_documents`` call and whether ``lock`` was held during it."""

    def __init__(self, lock: threading.Lock | None = None) -> None:
        super().__init__(256)
        self.lock = lock
        self.calls: list[list[str]] = []
        self.locked: list[bool] = []

    def embed_documents(self, texts: Sequence[str]) -> object:  # type: ignore[override]
        self.calls.append(list(texts))
        self.locked.append(self.lock is not None and self.lock.locked())
        return super().embed_documents(texts)


def snapshot(store: MemoryStore, agent: str = "alice") -> list[tuple[str, bytes, list[float]]]:
    memories = sorted(store.scroll(agent), key=lambda m: m.id)
    vectors = store.vectors(agent, [m.id for m in memories])
    return [(m.id, msgspec.json.encode(m), [round(float(x), 6) for x in vectors[m.id]]) for m in memories]


def test_a_batch_embeds_each_distinct_text_once_in_one_call_outside_the_lock(store: MemoryStore) -> None:
    lock = threading.Lock()
    embedder = RecordingEmbedder(lock)
    turns = [*TURNS, ("Melanie", "Thanks!")]  # "Melanie: Thanks!" twice in the batch
    StoreApplier(store, embedder, RecallSettings(), ("en", "de")).apply_batch(envelopes(turns), lock)
    [texts] = embedder.calls
    assert embedder.locked == [False]
    assert len(texts) == len(set(texts)) and texts.count("Melanie: Thanks!") == 1
    thanks = [m.id for m in store.scroll("alice") if is_turn_memory(m) and m.content == "Melanie: Thanks!"]
    assert len(thanks) == 2  # both turns kept, with the same vector
    vectors = store.vectors("alice", thanks)
    assert vectors[thanks[0]].tolist() == vectors[thanks[1]].tolist()
    # The same texts and vectors as when every message is a batch of its own.
    app = StoreApplier(store, RecordingEmbedder(), RecallSettings(), ("en", "de"))
    for env in envelopes(turns, agent="bob"):
        app.apply_batch([env])

    def vectors_by_text(agent: str) -> dict[str, list[float]]:
        memories = list(store.scroll(agent))
        found = store.vectors(agent, [m.id for m in memories])
        return {m.content: found[m.id].tolist() for m in memories}

    assert vectors_by_text("alice") == vectors_by_text("bob")


def test_a_long_batch_is_staged_and_written_in_steps_of_at_most_step_events(store: MemoryStore) -> None:
    """The recall worker fetches up to 256 events; the store lock is held for one step's
    staging or writing at most (STEP_EVENTS events), so a query never waits for a whole
    batch (a step boundary is a batch boundary less the flush: the tests above show the
    memories do not depend on batches)."""
    from workers.recall.apply import STEP_EVENTS

    lock = threading.Lock()
    embedder = RecordingEmbedder(lock)
    turns = [("Melanie" if i % 2 else "Caroline", f"turn number {i} about the pottery class")
             for i in range(STEP_EVENTS + 6)]
    StoreApplier(store, embedder, RecallSettings(), ("en", "de")).apply_batch(envelopes(turns), lock)
    assert len(embedder.calls) == 2 and len(embedder.calls[1]) == 3 * 6  # the last 6: turn, window, reply each
    assert embedder.locked == [False, False]


def test_a_batchs_steps_ask_the_store_for_a_memory_once(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a step read or wrote is known to the batch's next steps: a reply window made at a
    step's first turn restates the turn the step before wrote, and no lookup asks for it again
    (each memory of a batch is asked for once, found or not); what is stored is as one step
    each event would store it."""
    from workers.recall.apply import STEP_EVENTS

    asked: list[str] = []
    get, get_many = store.get, store.get_many
    inside: list[bool] = []

    def counting(agent: str, ids: Sequence[str]) -> list[Memory]:
        if not inside:  # a backend's get_many may ask get itself
            asked.extend(ids)
        return get(agent, ids)

    def counting_many(wanted: Mapping[str, Sequence[str]]) -> dict[str, list[Memory]]:
        asked.extend(i for ids in wanted.values() for i in ids)
        inside.append(True)
        try:
            return get_many(wanted)
        finally:
            inside.pop()

    monkeypatch.setattr(store, "get", counting)
    monkeypatch.setattr(store, "get_many", counting_many)
    turns = [("Melanie" if i % 2 else "Caroline", f"turn number {i} about the pottery class")
             for i in range(2 * STEP_EVENTS + 5)]
    events = envelopes(turns)
    applier(store).apply_batch(events)
    assert asked and len(asked) == len(set(asked))
    assert {memory_id("alice", e.event.id, 0) for e in events} <= set(asked)  # every turn asked once
    batched = snapshot(store)
    store.delete_agent("alice")
    one_by_one = applier(store)
    for env in events:
        one_by_one.apply_batch([env])
    assert snapshot(store) == batched


def test_a_step_over_several_agents_looks_their_memories_up_in_one_call(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A step's lookups by id are one store call for all the step's agents (``get_many``),
    not one per agent: the candidates (a redelivery's are held) in one, the stored memories
    making the step's claims in another — whatever the number of agents; what is stored is
    as when each agent's events are applied one at a time."""
    agents = [f"agent{i}" for i in range(6)]
    starts = [Envelope(seq=1 + i, subject=f"cortex.session.{a}.start", family="session", kind="start", agent=a,
                       event=SessionEvent(id=f"{a}-start", agent=a, session="s1", ts=T0))
              for i, a in enumerate(agents)]

    def said(text: str, first_seq: int, minutes: int) -> list[Envelope]:
        # the agents' turns interleaved in one step (each agent's memo knows its memories: the session start)
        return [envelopes([("Caroline", text)], agent=a, first_seq=first_seq + i, first_id=minutes,
                          start=T0 + timedelta(minutes=minutes))[0] for i, a in enumerate(agents)]

    first = said("I live in Berlin", 10, 1)
    second = said("I live in Paris now", 20, 2)
    calls: list[list[str]] = []  # the agents each lookup by id asked for
    get, get_many = store.get, store.get_many
    inside: list[bool] = []

    def one(agent: str, ids: Sequence[str]) -> list[Memory]:
        if not inside:
            calls.append([agent])
        return get(agent, ids)

    def many(wanted: Mapping[str, Sequence[str]]) -> dict[str, list[Memory]]:
        calls.append(sorted(wanted))
        inside.append(True)
        try:
            return get_many(wanted)
        finally:
            inside.pop()

    app = applier(store)
    app.apply_batch(starts)
    app.apply_batch(first)
    monkeypatch.setattr(store, "get", one)
    monkeypatch.setattr(store, "get_many", many)
    # one step: the candidates and the turns the reply windows restate in one lookup, the
    # stored "I live in Berlin" the new statements supersede (the agents' memos name them) in one
    app.apply_batch(second)
    assert calls == [agents, agents]
    del calls[:]
    app.apply_batch(second)  # a redelivery: every candidate held, as many calls
    assert calls == [agents, agents]
    monkeypatch.undo()
    batched = {a: snapshot(store, a) for a in agents}
    assert all(any(b"Paris" in payload for _, payload, _ in batched[a]) for a in agents)
    for a in agents:
        store.delete_agent(a)
    alone = applier(store)
    for env in [*starts, *first, *second]:
        alone.apply_batch([env])
    assert {a: snapshot(store, a) for a in agents} == batched


def test_what_the_upkeep_call_writes_is_read_again_by_the_next_steps(store: MemoryStore) -> None:
    """The ``at_upkeep`` call (the worker's fact mirror and the model's judgement) writes the
    agent's memories between two steps: the next steps read them again, not what they knew.
    Here it pins the turn upkeep ran at; the reply window its next turn makes takes the pin."""
    settings = msgspec.structs.replace(RecallSettings(), upkeep_events=4)
    app = StoreApplier(store, HashingEmbedder(256), settings, ("en", "de"))
    pinned: list[str] = []

    def pin(env: Envelope) -> None:
        (turn,) = app.store.get(env.agent, [memory_id(env.agent, env.event.id, 0)])
        app.store.update_payloads([msgspec.structs.replace(turn, pinned=True)])
        pinned.append(env.event.id)

    turns = [("Melanie" if i % 2 else "Caroline", f"turn number {i} about the pottery class") for i in range(10)]
    outcome = app.apply_batch(envelopes(turns), at_upkeep=pin)
    assert pinned and len(outcome.upkeep) == len(pinned)
    reply_windows = {m.source_event: m for m in store.scroll("alice") if is_reply_memory(m)}
    assert all(reply_windows[event].pinned for event in pinned)
    assert not any(m.pinned for event, m in reply_windows.items() if event not in pinned)


def test_a_redelivered_batch_embeds_nothing_and_changes_nothing(store: MemoryStore) -> None:
    applier(store).apply_batch(envelopes())
    before = snapshot(store)
    embedder = RecordingEmbedder()
    outcome = StoreApplier(store, embedder, RecallSettings(), ("en", "de")).apply_batch(envelopes())
    assert embedder.calls == []
    assert outcome.added == outcome.merged == 0 and outcome.skipped == len(before)
    assert snapshot(store) == before


def test_a_held_memory_removed_earlier_in_the_batch_is_embedded_when_written(store: MemoryStore) -> None:
    forget = FeedbackEvent(id="f-all", agent="alice", ts=T0 + timedelta(minutes=5), kind="memory_forget",
                           value="all")
    batch = [*envelopes(TURNS[:2]),
             Envelope(seq=3, subject="cortex.feedback.alice.memory_forget", family="feedback",
                      kind="memory_forget", agent="alice", event=forget),
             *envelopes(TURNS[2:3], first_seq=4, first_id=2, start=T0 + timedelta(minutes=6))]
    applier(store).apply_batch(batch)
    before = snapshot(store)
    assert {m.source_event for m in store.scroll("alice")} == {"s1-m2"}
    # A replay of the batch: s1-m2's memories are held when staged (not embedded then),
    # deleted by the forget before them, so they are embedded when written, as before.
    embedder = RecordingEmbedder()
    StoreApplier(store, embedder, RecallSettings(), ("en", "de")).apply_batch(batch)
    assert all("Thanks" not in t for t in embedder.calls[0])
    assert embedder.calls[1] == ["Melanie: Thanks!"] and len(embedder.calls) == 3  # its turn, then its window
    assert snapshot(store) == before


@pytest.mark.parametrize("everything", [False, True], ids=["one turn", "all"])
def test_a_forgotten_turn_is_quoted_by_no_later_window_wherever_the_batch_ends(
    store: MemoryStore, everything: bool
) -> None:
    forget = FeedbackEvent(id="f-1", agent="alice", ts=T0 + timedelta(minutes=1), kind="memory_forget",
                           value="all" if everything else None,
                           target=None if everything else memory_id("alice", "s1-m1", 0))
    stream = [*envelopes(TURNS[:2]),
              Envelope(seq=3, subject="cortex.feedback.alice.memory_forget", family="feedback",
                       kind="memory_forget", agent="alice", event=forget),
              *envelopes(TURNS[2:], first_seq=4, first_id=2, start=T0 + timedelta(minutes=2))]
    results = []
    for cut in range(len(stream) + 1):  # every split into two batches, incl. one batch
        store.delete_agent("alice")
        app = applier(store)
        for part in (stream[:cut], stream[cut:]):
            if part:
                app.apply_batch(part)
        assert all("sunrise" not in m.content for m in store.scroll("alice")), cut
        results.append(windows(store))
    assert all(r == results[0] for r in results)
    first = "" if everything else "Melanie: What did you paint last weekend?\n"
    assert results[0]["s1-m2"] == f"On 8 May 2023:\n{first}Melanie: Thanks!"


# --- to whom a message is said (rules are the agent's: issue 37) ---------------------------


def _rules(store: MemoryStore, agent: str = "alice") -> list[str]:
    return sorted(m.content for m in store.scroll(agent) if m.type == "rule")


def _said(turns: Sequence[tuple[str, str, str]], session: str = "s1", first_seq: int = 1) -> list[Envelope]:
    """(role, sender, text) turns as envelopes of one session."""
    out = []
    for i, (role, sender, text) in enumerate(turns):
        event = MessageEvent(id=f"{session}-r{i}", agent="alice", session=session, ts=T0 + timedelta(seconds=30 * i),
                             role="assistant" if role == "assistant" else "user", sender=sender, content=text)
        out.append(Envelope(seq=first_seq + i, subject="cortex.msg.alice.received", family="msg",
                            kind="sent" if role == "assistant" else "received", agent="alice", event=event))
    return out


def test_a_person_answering_another_gives_the_agent_no_rule(store: MemoryStore) -> None:
    """Two people (or a meeting) with the agent listening: "Never close your laptop" is said to
    the other person, not a standing instruction to the agent; the same words said to the agent
    (after its turn, or opening the session) are one."""
    applier(store).apply_batch(_said([
        ("user", "Marketing", "Okay, let's begin with the presentations."),
        ("user", "User Interface", "Never close your laptop."),  # answers Marketing
        ("user", "User Interface", "Remember that the staging DB is shared."),  # still to Marketing
    ]))
    assert _rules(store) == []
    turns = {m.content for m in store.scroll("alice") if is_turn_memory(m)}
    assert "User Interface: Never close your laptop." in turns  # what was said is kept, as an episode
    applier(store).apply_batch(_said([
        ("user", "albert", "Never deploy on Fridays."),  # the session's first message
        ("assistant", "claudia", "Noted."),
        ("user", "albert", "And remember our rule: never push to main."),  # after the agent's turn
    ], session="s2", first_seq=10))
    assert _rules(store) == ["And remember our rule: never push to main.", "Never deploy on Fridays."]


def test_who_a_message_answers_is_read_from_the_turns_before_it() -> None:
    from workers.recall.people import answers_another

    def turn(sender: str, person: str | None) -> Memory:
        (m,) = capture_message(MessageEvent(id=f"t-{sender}", agent="a", session="s", ts=T0, role="user",
                                            sender=sender, content="Hi there"))
        return msgspec.structs.replace(m, person=person)

    said = MessageEvent(id="m", agent="a", session="s", ts=T0, role="user", sender="bob", content="Never x.")
    assert not answers_another(said, [])  # opens the session
    assert answers_another(said, [turn("alice", "alice")])  # another user
    assert answers_another(said, [turn("alice", "alice"), turn("bob", "bob")])  # bob goes on answering alice
    assert not answers_another(said, [turn("alice", "alice"), turn("claudia", "alice")])  # the agent answered alice
    assert not answers_another(said, [turn("bob", "bob")])  # only bob so far
    assert not answers_another(msgspec.structs.replace(said, role="assistant"), [turn("alice", "alice")])
