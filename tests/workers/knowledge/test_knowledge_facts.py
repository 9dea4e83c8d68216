"""Fact rules: relevance, decay in event time, promotion, caps, regex-derived statements.

Parity cases are ported from ``packages/openclaw-knowledge-engine/test/fact-store.test.ts``
(alberthild/vainplex-openclaw); each docstring names the ``describe``/``it`` case. The
reference's store is a stateful class over a file; here the same rules are functions
over lists, so ``addFact`` is ``upsert_facts``, ``getFact`` is ``access_facts``,
``decayFacts(rate)`` is ``decay_facts(facts, rate, 1)``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.docs import Entity, Fact
from workers.knowledge.facts import (
    RELEVANCE_FLOOR,
    Statement,
    Triple,
    access_facts,
    decay_facts,
    decay_steps,
    decayed,
    derive_statements,
    fact_id,
    promote,
    prune_entities,
    prune_facts,
    query_facts,
    reference_index,
    resolve_statement,
    upsert_facts,
)

T0 = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)


def add(facts: list[Fact], s: str, p: str, o: str, ts: datetime = T0) -> list[Fact]:
    return upsert_facts(facts, [Triple(s, p, o)], "ingested", ts)


def only(facts: list[Fact]) -> Fact:
    assert len(facts) == 1
    return facts[0]


def test_adds_a_new_fact() -> None:
    """fact-store.test.ts: 'should add a new fact to the store'."""
    facts = add([], "s1", "p1", "o1")
    assert len(query_facts(facts)) == 1
    assert only(facts).relevance == 1.0
    assert only(facts).created_at == only(facts).last_accessed == T0


def test_deduplicates_identical_facts_by_boosting_relevance() -> None:
    """fact-store.test.ts: 'should deduplicate identical facts by boosting relevance'."""
    facts = add([], "s", "p", "o")
    first = only(facts)
    assert first.relevance == 1.0
    facts = access_facts(decay_facts(facts, 0.5, 1), [first.id], T0)
    pre_boost = only(facts).relevance
    facts = add(facts, "s", "p", "o", T0 + timedelta(hours=1))
    again = only(facts)
    assert again.id == first.id
    assert again.relevance >= pre_boost
    assert again.created_at == T0
    assert again.last_accessed == T0 + timedelta(hours=1)


def test_retrieves_a_fact_by_id() -> None:
    """fact-store.test.ts: getFact / 'should retrieve a fact by ID'."""
    added = only(add([], "s", "p", "o"))
    retrieved = only([f for f in access_facts([added], [added.id], T0) if f.id == added.id])
    assert (retrieved.subject, retrieved.predicate, retrieved.object) == ("s", "p", "o")


def test_access_with_an_unknown_id_changes_nothing() -> None:
    """fact-store.test.ts: getFact / 'should return undefined for non-existent ID'."""
    facts = add([], "s", "p", "o")
    assert access_facts(facts, ["non-existent-id"], T0) == facts


def test_boosts_relevance_on_access() -> None:
    """fact-store.test.ts: getFact / 'should boost relevance on access'."""
    facts = decay_facts(add([], "s", "p", "o"), 0.5, 1)
    decayed_relevance = query_facts(facts, subject="s")[0].relevance
    accessed = only(access_facts(facts, [facts[0].id], T0))
    assert accessed.relevance > decayed_relevance


def test_access_updates_last_accessed() -> None:
    """fact-store.test.ts: getFact / 'should update lastAccessed timestamp'."""
    fact = only(add([], "s", "p", "o"))
    later = T0 + timedelta(minutes=5)
    assert only(access_facts([fact], [fact.id], later)).last_accessed == later
    # An access stamped earlier never moves the time back.
    assert only(access_facts([fact], [fact.id], T0 - timedelta(days=1))).last_accessed == T0


def _three() -> list[Fact]:
    facts = add([], "a", "p1", "o1")
    facts = add(facts, "a", "p2", "o2")
    return add(facts, "b", "p1", "o1")


def test_queries_by_subject() -> None:
    """fact-store.test.ts: query / 'should query by subject'."""
    facts = add(add([], "alice", "knows", "bob"), "charlie", "knows", "bob")
    assert [f.subject for f in query_facts(facts, subject="alice")] == ["alice"]


def test_queries_by_predicate() -> None:
    """fact-store.test.ts: query / 'should query by predicate'."""
    facts = add(add([], "a", "is-a", "b"), "c", "works-at", "d")
    assert [f.predicate for f in query_facts(facts, predicate="is-a")] == ["is-a"]


def test_queries_by_object() -> None:
    """fact-store.test.ts: query / 'should query by object'."""
    facts = add(add([], "a", "p", "target"), "b", "p", "other")
    assert [f.object for f in query_facts(facts, object_="target")] == ["target"]


def test_queries_with_multiple_filters() -> None:
    """fact-store.test.ts: query / 'should query with multiple filters'."""
    assert [f.object for f in query_facts(_three(), subject="a", predicate="p1")] == ["o1"]


def test_empty_query_returns_all_facts() -> None:
    """fact-store.test.ts: query / 'should return all facts when query is empty'."""
    assert len(query_facts(_three())) == 3


def test_query_sorts_by_relevance_descending() -> None:
    """fact-store.test.ts: query / 'should sort results by relevance descending'."""
    facts = add(add([], "b", "p", "o2"), "a", "p", "o1")
    facts = decay_facts(facts, 0.5, 1)
    facts = access_facts(facts, [fact_id("a", "p", "o1")], T0)
    assert query_facts(facts)[0].subject == "a"


def test_decay_reduces_relevance_of_all_facts() -> None:
    """fact-store.test.ts: decayFacts / 'should reduce relevance of all facts'."""
    facts = decay_facts(add([], "a", "p", "o"), 0.5, 1)
    assert RELEVANCE_FLOOR <= only(facts).relevance < 1.0


def test_decay_never_goes_below_the_floor() -> None:
    """fact-store.test.ts: decayFacts / 'should not decay below the minimum relevance of 0.1'."""
    facts = add([], "a", "p", "o")
    for _ in range(100):
        facts = decay_facts(facts, 0.99, 1)
    assert only(facts).relevance == RELEVANCE_FLOOR
    assert decayed(1.0, 0.5, 10_000) == RELEVANCE_FLOOR


def test_decay_of_no_facts_is_no_facts() -> None:
    """fact-store.test.ts: decayFacts / 'should return 0 when no facts exist'."""
    assert decay_facts([], 0.1, 1) == []


def test_pruning_removes_the_least_recently_accessed() -> None:
    """fact-store.test.ts: 'should remove the least recently accessed facts when pruning'."""
    facts: list[Fact] = []
    for i in range(11):
        facts = prune_facts(add(facts, "s", "p", f"o{i}", T0 + timedelta(seconds=i)), 10)
    objects = [f.object for f in query_facts(facts)]
    assert len(objects) == 10
    assert "o0" not in objects
    assert "o1" in objects


# --- Cortex additions ----------------------------------------------------------------


def test_decay_multiplies_by_one_minus_rate_per_interval() -> None:
    assert decayed(1.0, 0.02, 1) == 0.98
    assert decayed(1.0, 0.02, 2) == 0.9604
    assert decayed(0.5, 0.0, 5) == 0.5
    assert decayed(0.5, 0.5, 0) == 0.5


def test_promotion_moves_halfway_to_one() -> None:
    assert promote(0.5) == 0.75
    assert promote(0.1) == 0.55
    assert promote(1.0) == 1.0


def test_decay_steps_count_grid_boundaries_in_event_time() -> None:
    midnight = datetime(2026, 2, 17, tzinfo=UTC)
    assert decay_steps(None, midnight, 24) == 0
    assert decay_steps(midnight, midnight + timedelta(hours=23, minutes=59), 24) == 0
    assert decay_steps(midnight + timedelta(hours=23), midnight + timedelta(hours=25), 24) == 1
    assert decay_steps(midnight, midnight + timedelta(days=3), 24) == 3
    assert decay_steps(midnight, midnight + timedelta(hours=5), 1) == 5
    assert decay_steps(midnight + timedelta(days=2), midnight, 24) == 0  # time never runs backwards


def test_decay_steps_ignore_the_offset_of_equal_instants() -> None:
    berlin = timezone(timedelta(hours=1))
    # 01:00+01:00 is midnight UTC: one boundary to the next midnight, whatever the offset.
    assert decay_steps(datetime(2026, 2, 17, 1, 0, tzinfo=berlin), datetime(2026, 2, 18, 0, 0, tzinfo=UTC), 24) == 1
    # 00:30+01:00 is 23:30 UTC the day before: the same step as 00:00 UTC crosses midnight.
    assert decay_steps(datetime(2026, 2, 17, 0, 30, tzinfo=berlin), datetime(2026, 2, 17, 0, 0, tzinfo=UTC), 24) == 1


def test_fact_ids_are_deterministic_and_unambiguous() -> None:
    assert fact_id("a", "b", "c") == fact_id("a", "b", "c")
    assert fact_id("a|b", "c", "d") != fact_id("a", "b|c", "d")
    assert len(fact_id("a", "b", "c")) == 36


def test_fact_cap_drops_lowest_relevance_before_oldest_access() -> None:
    facts = add(add([], "old", "p", "o"), "new", "p", "o", T0 + timedelta(days=1))
    facts = decay_facts(facts[1:], 0.5, 1) + facts[:1]  # the newer fact is the weaker one
    assert [f.subject for f in prune_facts(facts, 1)] == ["old"]


def test_fact_cap_keeps_list_order_of_survivors() -> None:
    facts = [f for i in range(5) for f in add([], f"s{i}", "p", "o", T0 + timedelta(seconds=i))]
    assert [f.subject for f in prune_facts(facts, 3)] == ["s2", "s3", "s4"]


def test_entity_cap_drops_least_important_then_least_recent() -> None:
    def ent(name: str, importance: float, seen: datetime) -> Entity:
        return Entity(id=f"unknown:{name}", type="unknown", value=name, mentions=[name], count=1,
                      importance=importance, last_seen=seen, source=["regex"])

    entities = [ent("a", 0.3, T0), ent("b", 0.8, T0), ent("c", 0.3, T0 + timedelta(hours=1))]
    assert [e.value for e in prune_entities(entities, 2)] == ["b", "c"]


def test_upsert_and_access_never_modify_their_input() -> None:
    facts = decay_facts(add([], "s", "p", "o"), 0.5, 1)
    before = msgspec.json.encode(facts)
    add(facts, "s", "p", "o")
    access_facts(facts, [facts[0].id], T0)
    decay_facts(facts, 0.5, 3)
    assert msgspec.json.encode(facts) == before


def test_statements_from_works_at_and_is_a() -> None:
    text = "Claude Keller works at Acme GmbH. Atlas is a sub-agent. Forge arbeitet bei Globex."
    assert derive_statements(text) == [
        Statement("Claude Keller", "works-at", "Acme", "organization"),
        Statement("Atlas", "is-a", "sub-agent", None),
        Statement("Forge", "works-at", "Globex", "unknown"),
    ]


def test_statements_in_german_and_multi_word_kinds() -> None:
    assert derive_statements("Atlas ist ein Agent.\nForge is a coding agent") == [
        Statement("Atlas", "is-a", "Agent", None),
        Statement("Forge", "is-a", "coding agent", None),
    ]


def test_statements_are_conservative() -> None:
    for text in (
        "He works at Acme GmbH.",  # no name
        "Atlas is a sub-agent of Forge and handles the build queue",  # clause goes on
        "Atlas works at the bank.",  # no named employer
        "atlas is a sub-agent.",  # no capitalised name
        "Atlas, who is a sub-agent.",  # the name is not the subject
    ):
        assert derive_statements(text) == [], text


def test_statement_names_resolve_to_typed_entities_when_known() -> None:
    person = Entity(id="person:claude-keller", type="person", value="Claude Keller", mentions=["Claude Keller"],
                    count=1, importance=0.7, last_seen=T0, source=["llm"])
    unknown = msgspec.structs.replace(person, id="unknown:claude-keller", type="unknown", source=["regex"])
    statement = Statement("Claude Keller", "works-at", "Globex", "unknown")
    assert resolve_statement(statement, reference_index([unknown])) == Triple(
        "unknown:claude-keller", "works-at", "unknown:globex"
    )
    assert resolve_statement(statement, reference_index([unknown, person])) == Triple(
        "person:claude-keller", "works-at", "unknown:globex"
    )
    org = Statement("Atlas", "works-at", "Acme", "organization")
    assert resolve_statement(org, {}) == Triple("unknown:atlas", "works-at", "organization:acme")


def _statements_unguarded(text: str) -> list[object]:
    """derive_statements without its pre-check (the word after a name must be a statement's verb)."""
    from workers.conversation.patterns import prepare_text
    from workers.knowledge import facts as kf
    from workers.knowledge import patterns as kp
    from workers.knowledge.personal import DEFAULT_LANGUAGES, get_personal_patterns

    head = text[: kf.MAX_SCAN_CHARS]
    spans = [m.span() for m in kp.PROPER_NOUN.finditer(head)]
    return list(kf._name_statements(prepare_text(head), get_personal_patterns(DEFAULT_LANGUAGES), spans,
                                    guarded=False))


def test_the_statement_pre_check_changes_no_result() -> None:
    """A name not followed by a statement's verb is tried for no statement; the statements
    are those of trying every name (the bench's messages and edge cases)."""
    from workers.bench.events import EventSource

    source = EventSource(8, 3)
    texts = [msgspec.json.decode(source.message(agent).data)["content"] for agent in source.agents * 40]
    texts += ["Atlas works at Acme GmbH.", "Forge worked for Vainplex", "Lena is working at Bosch AG",
              "Jürgen arbeitete bei Siemens AG.", "Atlas ist ein Agent.", "Forge\tis  an\tassistant.",
              "Atlas is a", "Atlas is agile.", "Atlas Works At Acme", "Maria lives in Porto.",
              "Jonas ist allergisch gegen Nüsse.", "Yes, Lena has two kids.", "Anna  works as a nurse"]
    assert any(derive_statements(t) for t in texts)
    for text in texts:
        assert derive_statements(text) == _statements_unguarded(text), text


@given(st.text(alphabet="AFiswaenrkt \tbGmH.ü", max_size=40))
@settings(max_examples=200, deadline=None)
def test_no_statement_without_its_hint(text: str) -> None:
    assert derive_statements(text) == _statements_unguarded(text), text
