"""Multi-factor ranking: the reference numbers and orderings.

Cases ported from the semantic-memory design's Go tests (ajitpratap0/openclaw-cortex
``tests/recall_test.go``: ``TestRecaller_Rank``, ``TestRecaller_RankWithProjectBoost``,
``TestRecaller_RecencyDecay``, ``TestRecaller_TypePriority``); the exact scores 0.8049 and
0.8838 are the acceptance numbers of issue 5.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from schemas.types import MemoryScope, MemoryType
from workers.recall.models import Memory, SearchHit
from workers.recall.ranking import (
    DEFAULT_WEIGHTS,
    TYPE_MULTIPLIER,
    calibrate_similarity,
    frequency_score,
    named_senders,
    names_sender,
    rank,
    recency_score,
    scope_boost,
    score_hit,
)

NOW = datetime(2026, 2, 17, 10, 30, tzinfo=UTC)


def hit(
    mid: str,
    mtype: MemoryType,
    similarity: float,
    *,
    hours_ago: float,
    accesses: int,
    scope: MemoryScope = "permanent",
    project: str | None = None,
) -> SearchHit:
    accessed = NOW - timedelta(hours=hours_ago)
    memory = Memory(
        id=mid, agent="a", content=mid, type=mtype, scope=scope, confidence=0.9, source_event="e1",
        created_at=accessed, last_accessed=accessed, access_count=accesses, project=project,
    )
    return SearchHit(memory=memory, similarity=similarity)


def test_reference_fact_scores_0_8049() -> None:
    ranked = score_hit(hit("r-1", "fact", 0.85, hours_ago=48, accesses=2), now=NOW)
    assert round(ranked.score, 4) == 0.8049


def test_reference_rule_scores_0_8838() -> None:
    ranked = score_hit(hit("r-2", "rule", 0.80, hours_ago=1, accesses=10), now=NOW)
    assert round(ranked.score, 4) == 0.8838


def test_rule_ranks_first_despite_lower_similarity() -> None:
    hits = [
        hit("r-1", "fact", 0.85, hours_ago=48, accesses=2),
        hit("r-2", "rule", 0.80, hours_ago=1, accesses=10),
        hit("r-3", "episode", 0.90, hours_ago=168, accesses=1),
    ]
    ranked = rank(hits, now=NOW)
    assert [r.memory.id for r in ranked] == ["r-2", "r-1", "r-3"]
    assert round(ranked[2].score, 4) == 0.74  # 0.45 + 0.2·0.5 + 0.1·0.1 + 0.1·0.8 + 0.1


def test_matching_project_outranks_a_more_similar_permanent_memory() -> None:
    hits = [
        hit("p-1", "fact", 0.80, hours_ago=0, accesses=1, scope="project", project="cortex"),
        hit("p-2", "fact", 0.82, hours_ago=0, accesses=1, scope="permanent"),
    ]
    assert rank(hits, now=NOW, project="cortex")[0].memory.id == "p-1"
    # Without a project in the query the scope factor is the same for both.
    assert rank(hits, now=NOW)[0].memory.id == "p-2"


def test_scope_boost_is_normalised_to_the_best_scope_in_context() -> None:
    project_memory = hit("p", "fact", 0.5, hours_ago=0, accesses=0, scope="project", project="cortex").memory
    permanent = hit("q", "fact", 0.5, hours_ago=0, accesses=0, scope="permanent").memory
    session = hit("s", "fact", 0.5, hours_ago=0, accesses=0, scope="session").memory
    other_project = hit("o", "fact", 0.5, hours_ago=0, accesses=0, scope="project", project="other").memory
    assert scope_boost(project_memory, "cortex") == 1.0
    assert scope_boost(permanent, "cortex") == pytest.approx(0.667, abs=1e-3)
    assert scope_boost(session, "cortex") == pytest.approx(0.533, abs=1e-3)
    assert scope_boost(other_project, "cortex") == pytest.approx(0.533, abs=1e-3)
    assert {scope_boost(m, None) for m in (project_memory, permanent, session)} == {1.0}


@pytest.mark.parametrize(
    ("hours", "above", "below"),
    [(0, 0.99, 1.01), (1, 0.99, 1.0), (24, 0.85, 0.95), (168, 0.45, 0.55), (720, 0.01, 0.15)],
)
def test_recency_halves_every_seven_days(hours: float, above: float, below: float) -> None:
    assert above < recency_score(NOW - timedelta(hours=hours), NOW) < below


def test_recency_of_a_future_access_counts_as_now() -> None:
    assert recency_score(NOW + timedelta(hours=5), NOW) == 1.0


def test_frequency_is_log_scaled_and_capped() -> None:
    assert frequency_score(0) == 0.0
    assert frequency_score(1) == pytest.approx(0.1)
    assert frequency_score(10**6) == 1.0


def test_type_multipliers_are_the_designs() -> None:
    assert TYPE_MULTIPLIER == {"rule": 1.5, "procedure": 1.3, "fact": 1.0, "episode": 0.8, "preference": 0.7}


def test_equal_scores_order_by_similarity_then_id() -> None:
    twins = [hit(mid, "fact", 0.5, hours_ago=1, accesses=1) for mid in ("b", "a", "c")]
    assert [r.memory.id for r in rank(twins, now=NOW)] == ["a", "b", "c"]


def test_rank_respects_limit() -> None:
    hits = [hit(str(i), "fact", i / 10, hours_ago=1, accesses=1) for i in range(10)]
    assert [r.memory.id for r in rank(hits, now=NOW, limit=3)] == ["9", "8", "7"]


def test_calibration_with_floor_zero_is_the_raw_cosine() -> None:
    assert calibrate_similarity(0.85) == 0.85
    raw = score_hit(hit("r-1", "fact", 0.85, hours_ago=48, accesses=2), now=NOW)
    assert raw.similarity == raw.cosine == 0.85


def test_calibration_stretches_a_narrow_cosine_band() -> None:
    assert calibrate_similarity(0.7, 0.7) == 0.0
    assert calibrate_similarity(0.55, 0.7) == 0.0
    assert calibrate_similarity(0.85, 0.7) == pytest.approx(0.5)
    assert calibrate_similarity(1.0, 0.7) == pytest.approx(1.0)


def test_with_e5_like_cosines_a_relevant_episode_beats_an_unrelated_rule() -> None:
    """Raw e5 cosines (0.79 relevant vs 0.73 unrelated) let the rule's type boost win;
    the e5 floor restores the similarity signal the design's weights expect."""
    hits = [
        hit("episode", "episode", 0.794, hours_ago=24, accesses=0),
        hit("rule", "rule", 0.725, hours_ago=24, accesses=0),
    ]
    assert rank(hits, now=NOW)[0].memory.id == "rule"
    ranked = rank(hits, now=NOW, similarity_floor=0.7)
    assert ranked[0].memory.id == "episode"
    assert ranked[0].cosine == 0.794


def test_fused_access_lifts_a_memory_only_as_far_as_it_is_relevant() -> None:
    """A reply marks what it returned as accessed; with the hybrid relevance the recency and
    frequency terms are scaled by it, so a memory used a minute ago for another question
    no longer outranks a month-old one that matches (docs/recall-eval.md, "live" traffic:
    recall@10 0.72 → 0.82 on LoCoMo)."""
    def fused(mid: str, score: float, *, hours_ago: float, accesses: int) -> SearchHit:
        return SearchHit(memory=hit(mid, "episode", 0.5, hours_ago=hours_ago, accesses=accesses).memory,
                         similarity=0.5, fused=score)

    month = 24 * 30
    used = fused("used", 0.22, hours_ago=0.01, accesses=3)  # relevance 0.2, returned a minute ago
    match, middle, low = (fused("match", 0.3, hours_ago=month, accesses=0),  # relevance 1.0
                          fused("mid", 0.25, hours_ago=month, accesses=0),  # 0.5
                          fused("low", 0.2, hours_ago=month, accesses=0))  # 0.0
    ranked = rank([used, match, middle, low], now=NOW, fused=True)
    assert [r.memory.id for r in ranked] == ["match", "mid", "used", "low"]  # ungated: "used" second
    assert ranked[2].recency == pytest.approx(0.2, abs=1e-3) and ranked[2].frequency == pytest.approx(0.04)
    # among equally relevant memories the recently and often used one still wins
    twin = SearchHit(memory=used.memory, similarity=0.5, fused=0.3)
    assert rank([match, twin, low], now=NOW, fused=True)[0].memory.id == "used"
    # the design's formula without the hybrid relevance is untouched: access decides there
    assert rank([used, match], now=NOW)[0].memory.id == "used"


def test_a_query_naming_a_sender_favours_that_senders_memories() -> None:
    """"What did Melanie paint?" is mostly answered by Melanie's own turn (docs/recall-eval.md:
    LoCoMo R@10 0.820 → 0.833 with this term)."""
    def said(mid: str, sender: str, score: float) -> SearchHit:
        memory = Memory(id=mid, agent="a", content=f"{sender}: {mid}", type="episode", scope="permanent",
                        confidence=1.0, source_event=mid, created_at=NOW, last_accessed=NOW, sender=sender)
        return SearchHit(memory=memory, similarity=0.5, fused=score)

    hits = [said("caroline-on-it", "Caroline", 0.30), said("melanie-on-it", "Melanie", 0.29),
            said("other", "Caroline", 0.20)]
    named = named_senders("What did Melanie paint last weekend?", (h.memory for h in hits))
    assert named == frozenset({"Melanie"})
    ranked = rank(hits, now=NOW, fused=True, named=named)
    assert [r.memory.id for r in ranked] == ["melanie-on-it", "caroline-on-it", "other"]
    assert [r.sender_boost for r in ranked] == [1.0, 0.0, 0.0]
    # without the name (or naming both) the fused order stands
    assert rank(hits, now=NOW, fused=True)[0].memory.id == "caroline-on-it"
    # the cosine-only path is the design's formula: no sender term there
    assert {r.sender_boost for r in rank(hits, now=NOW, named=named)} == {0.0}
    nobody = named_senders("Who painted?", (h.memory for h in hits))
    assert nobody == frozenset() and rank(hits, now=NOW, fused=True, named=nobody)[0].memory.id == "caroline-on-it"


def test_a_query_naming_two_senders_favours_the_one_it_names_first() -> None:
    """"What does Melanie think about Caroline's …" is about Melanie: on LoCoMo's dev
    conversations 62 of the 67 questions naming both speakers have their evidence from the
    one named first (docs/recall-eval.md)."""
    hits = [_turn("caroline-on-it", "Caroline", "my decision to adopt", 0.30),
            _turn("melanie-on-it", "Melanie", "you will be an awesome mom", 0.29),
            _turn("other", "Caroline", "lunch?", 0.20)]
    memories = [h.memory for h in hits]
    named = named_senders("What does Melanie think about Caroline's decision to adopt?", memories)
    assert named == frozenset({"Melanie"})
    assert [r.memory.id for r in rank(hits, now=NOW, fused=True, named=named)][:2] == \
        ["melanie-on-it", "caroline-on-it"]
    assert named_senders("Did Caroline or Melanie paint?", memories) == frozenset({"Caroline"})
    # a name inside a longer one at the same place: both are named there
    ana = [_turn("a", "Ana", "x", 0.1).memory, _turn("b", "Ana Lopez", "y", 0.1).memory,
           _turn("c", "Bo", "z", 0.1).memory]
    assert named_senders("Did Ana Lopez call Bo?", ana) == frozenset({"Ana", "Ana Lopez"})
    assert named_senders("王伟和李娜说了什么？", [_turn("w", "李娜", "x", 0.1).memory,
                                              _turn("l", "王伟", "y", 0.1).memory]) == frozenset({"王伟"})


def test_a_named_senders_turn_outranks_a_closer_match_by_up_to_two_units() -> None:
    """With the lexical term beside it, the sender term is worth 0.2 (docs/recall-eval.md:
    LoCoMo R@10 0.850 → 0.853, R@1 0.445 → 0.460 against 0.1)."""
    def said(mid: str, sender: str, score: float) -> SearchHit:
        memory = Memory(id=mid, agent="a", content=f"{sender}: {mid}", type="episode", scope="permanent",
                        confidence=1.0, source_event=mid, created_at=NOW, last_accessed=NOW, sender=sender)
        return SearchHit(memory=memory, similarity=0.5, fused=score)

    # relevance 1.0 / 0.75 / 0.0: Caroline's turn leads the similarity term by 0.125
    hits = [said("caroline-on-it", "Caroline", 0.30), said("melanie-on-it", "Melanie", 0.25),
            said("other", "Caroline", 0.10)]
    named = named_senders("What did Melanie paint?", (h.memory for h in hits))
    assert [r.memory.id for r in rank(hits, now=NOW, fused=True, named=named)][:2] == \
        ["melanie-on-it", "caroline-on-it"]


@pytest.mark.parametrize(("query", "sender", "named"), [
    ("What did melanie PAINT?", "Melanie", True),
    ("What is Melanie's dog called?", "Melanie", True),
    ("Where does Ana Lopez live?", "Ana Lopez", True),
    ("Where does Ana live?", "Ana Lopez", False),  # part of a name is not the name
    ("What did Melanies say?", "Melanie", False),
    ("Was hat Jürgen gesagt?", "Jürgen", True),
    ("王伟说了什么？", "王伟", True),  # no spaces to split on: a substring
    ("What did the user ask?", "user", True),
    ("anything", "  ", False),
])
def test_a_sender_is_named_by_its_words(query: str, sender: str, named: bool) -> None:
    assert names_sender(query, sender) is named


def _turn(mid: str, sender: str, text: str, fused: float, source: str | None = None) -> SearchHit:
    memory = Memory(id=mid, agent="a", content=f"{sender}: {text}", type="episode", scope="permanent",
                    confidence=1.0, source_event=source or mid, created_at=NOW, last_accessed=NOW, sender=sender)
    return SearchHit(memory=memory, similarity=0.5, fused=fused)


def _stored(mid: str, text: str, fused: float, mtype: MemoryType = "preference") -> SearchHit:
    """A remembered memory: no sender, the id of its event's own memory."""
    from workers.recall.capture import remembered_id

    memory = Memory(id=remembered_id("a", mid), agent="a", content=text, type=mtype, scope="permanent",
                    confidence=1.0, source_event=mid, created_at=NOW, last_accessed=NOW)
    return SearchHit(memory=memory, similarity=0.5, fused=fused)


def test_a_stored_memory_outranks_a_message_found_through_all_its_memories() -> None:
    """Issue 41: a message pools up to six memories, a stored memory has one; the query names
    Bob, the turns' sender; a preference weighs 0.7 to an episode's 0.8. A stored memory as
    good a match as any single memory now pools as well as the best message, takes the
    sender term for naming Bob and gains the explicit term."""
    from workers.recall.ranking import is_explicit_memory, pool_by_message

    query = "Bob prefers code reviews on Friday afternoons."
    turn = [_turn("t", "Bob", "I like reviews on Friday afternoons.", f, source="m1") for f in (0.18, 0.15, 0.12)]
    turn = [msgspec.structs.replace(h, memory=msgspec.structs.replace(h.memory, id=f"t{i}"))
            for i, h in enumerate(turn)]
    stored = _stored("rem-1", "Bob prefers code reviews on Friday afternoons.", 0.18)
    other = _turn("o", "Alice", "Lunch?", 0.02)
    hits = pool_by_message([*turn, stored, other])
    assert is_explicit_memory(stored.memory) and not is_explicit_memory(turn[0].memory)
    assert [h.fused for h in hits if h.memory.sender == "Bob"] == pytest.approx([0.45] * 3)
    assert next(h.fused for h in hits if h.memory.sender is None) == pytest.approx(0.45)  # 0.18 × 0.45 / 0.18
    named = named_senders(query, (h.memory for h in hits))
    ranked = rank(hits, now=NOW, fused=True, named=named, query=query)
    assert ranked[0].memory.id == stored.memory.id
    assert (ranked[0].sender_boost, ranked[0].explicit) == (1.0, 1.0)
    # without the explicit terms the message's turn wins, as it did
    plain = rank(hits, now=NOW, fused=True, named=named, query=query,
                 weights=msgspec.structs.replace(DEFAULT_WEIGHTS, explicit=0.0))
    assert plain[0].memory.sender == "Bob"


def test_a_fact_with_every_word_of_the_question_is_fully_relevant() -> None:
    """"Where does Maria work?" is answered by the fact that has all its content words, even
    when conversation mentioning them was found higher by the hybrid search."""
    fact = msgspec.structs.replace(_stored("f", "Maria works at Acme Analytics GmbH", 0.05, "fact").memory,
                                   id="fact-memory", fact_id="f1")
    hits = [_turn("t", "Jonas", "Maria will work on the GmbH paperwork next week.", 0.30),
            SearchHit(memory=fact, similarity=0.5, fused=0.05), _turn("o", "Jonas", "Hello", 0.01)]
    ranked = rank(hits, now=NOW, fused=True, query="where does Maria work?")
    assert ranked[0].memory.id == "fact-memory" and ranked[0].similarity == 1.0
    # a conversation memory is never lifted so: only what was stored on purpose
    assert rank(hits, now=NOW, fused=True, query="the paperwork next week")[0].memory.id == "t"
