"""A practice under way said with an open verb (issue 37, sixteenth round): "I'm starting a dance
studio", "just started doing aerial yoga". Any "-ing" word is read there, so the knowledge core keeps
such a statement out of the facts until the listener's reply took it up and its speaker says it again
at a later sitting; then it is a fact Known Facts shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from schemas.docs import KnowledgeDoc
from schemas.events import MessageEvent
from shared.config import KnowledgeSettings
from workers.conversation.patterns import prepare_text
from workers.knowledge.briefing import fact_sentences, showable
from workers.knowledge.core import AGAIN_AFTER, MAX_UNDER_WAY, apply_message
from workers.knowledge.personal import get_personal_patterns, self_statements, under_way
from workers.render import entity_names

T0 = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)
SETTINGS = KnowledgeSettings()
NEXT_DAY = timedelta(days=1)


def talk(turns: list[tuple[str, str]], doc: KnowledgeDoc | None = None,
         start: timedelta = timedelta(0)) -> KnowledgeDoc:
    """``(sender, text)`` turns as user messages a minute apart, from ``T0 + start``."""
    for n, (sender, text) in enumerate(turns):
        event = msgspec.convert({"id": f"e{int(start.total_seconds())}-{n}", "agent": "a1", "session": "s1",
                                 "ts": T0 + start + timedelta(minutes=n), "role": "user", "sender": sender,
                                 "content": text}, MessageEvent)
        doc = apply_message(doc, event, SETTINGS)
    assert doc is not None
    return doc


def read(text: str) -> list[tuple[str, str]]:
    packs = get_personal_patterns(("en", "de"))
    return [(s.predicate, s.object) for s in self_statements(prepare_text(text), "Ana", packs)]


def shown(doc: KnowledgeDoc) -> list[str]:
    return sorted(fact_sentences(showable(doc), entity_names(doc.entities)))


def stored(doc: KnowledgeDoc) -> list[str]:
    return sorted(f"{f.predicate} {f.object}" for f in doc.facts)


@pytest.mark.parametrize(("text", "said"), [
    ("I'm starting a dance studio 'cause I'm passionate about dancing.", [("is-starting", "a dance studio")]),
    ("Just started doing aerial yoga, it's great.", [("started-doing", "aerial yoga")]),
    ("I've been taking pottery classes for a while.", [("is-taking", "pottery classes")]),
    ("Wanted to let you know that I'm running for office again!", [("is-running", "for office")]),
    ("I'm doing kickboxing and it's giving me so much energy.", [("is-doing", "kickboxing")]),
])
def test_a_practice_under_way_is_read_with_any_verb(text: str, said: list[tuple[str, str]]) -> None:
    assert read(text) == said
    assert all(under_way(predicate) for predicate, _ in said)


@pytest.mark.parametrize("text", [
    "I'm going to the gym.",  # a state, a plan, a feeling, talk: no practice
    "I'm thinking about a new job.",
    "I'm doing great, thanks!",  # how it goes, not what is done
    "I'm keeping busy.",
    "I'm reading a fantasy novel.",  # what one does at the moment
    "I'm starting to realize how much it matters.",  # an infinitive
    "I'm living my dream.",  # the speaker's own self
    "I'm organizing a gaming party next month.",  # a time to come
    "I'm helping her find a new place.",  # someone the object does not name
    "I'm playing for about four months.",
    "Are you starting a dance studio?",
])
def test_what_is_no_practice_under_way_is_not_read(text: str) -> None:
    assert read(text) == []


def test_closed_phrases_of_that_shape_are_facts_as_before() -> None:
    assert read("I'm learning German now.") == [("is-learning", "German")]
    assert not under_way("is-learning") and not under_way("is-writing") and not under_way("joined")
    doc = talk([("Ana", "I'm learning German now."), ("Ben", "Nice.")])
    assert stored(doc) == ["is-learning German"]


def test_taken_up_and_said_again_at_a_later_sitting_it_is_a_fact_shown() -> None:
    doc = talk([("Ana", "I'm starting a dance studio!"), ("Ben", "A studio, wow! Tell me more.")])
    assert stored(doc) == [] and [f.object for f in doc.under_way] == ["a dance studio"]
    doc = talk([("Ana", "The studio is coming along, dance classes start soon.")], doc, NEXT_DAY)
    assert stored(doc) == ["is-starting a dance studio"] and doc.under_way == []
    assert shown(doc) == ["Ana is starting a dance studio"]


def test_taken_up_but_never_said_again_it_waits_out_of_the_facts() -> None:
    doc = talk([("Ana", "I'm starting a dance studio!"), ("Ben", "A studio, wow!"),
                ("Ana", "Anyway, how was your trip?")])
    doc = talk([("Ana", "Hi Ben, the weather is lovely today.")], doc, NEXT_DAY)
    assert stored(doc) == [] and shown(doc) == [] and len(doc.under_way) == 1


def test_said_again_at_the_same_sitting_is_not_said_again() -> None:
    doc = talk([("Ana", "I'm starting a dance studio!"), ("Ben", "A studio, wow!"),
                ("Ana", "Yes, the dance studio is my dream.")])
    assert stored(doc) == [] and len(doc.under_way) == 1
    doc = talk([("Ana", "The dance studio opens next week.")], doc, AGAIN_AFTER)
    assert stored(doc) == ["is-starting a dance studio"]


def test_not_taken_up_it_is_dropped_and_said_again_keeps_nothing() -> None:
    doc = talk([("Ana", "I'm starting a dance studio!"), ("Ben", "Cool. What else is new?")])
    assert doc.under_way == [] and doc.unanswered == []
    doc = talk([("Ana", "The dance studio is coming along.")], doc, NEXT_DAY)
    assert stored(doc) == [] and shown(doc) == []


def test_the_agents_reply_judges_a_practice_under_way_too() -> None:
    first = msgspec.convert({"id": "u", "agent": "a1", "session": "s1", "ts": T0, "role": "user",
                             "content": "I've been taking pottery classes."}, MessageEvent)
    doc = apply_message(None, first, SETTINGS)
    reply = msgspec.convert({"id": "a", "agent": "a1", "session": "s1", "ts": T0 + timedelta(minutes=1),
                             "role": "assistant", "content": "Pottery sounds relaxing!"}, MessageEvent)
    doc = apply_message(doc, reply, SETTINGS)
    assert len(doc.under_way) == 1 and doc.taken_up == [doc.under_way[0].id]
    again = msgspec.convert({"id": "u2", "agent": "a1", "session": "s2", "ts": T0 + NEXT_DAY, "role": "user",
                             "content": "My pottery classes went well this week."}, MessageEvent)
    assert stored(apply_message(doc, again, SETTINGS)) == ["is-taking pottery classes"]


def test_at_most_the_newest_practices_wait() -> None:
    doc = None
    for n in range(MAX_UNDER_WAY + 8):
        boat = f"zq{chr(97 + n % 26)}{chr(97 + n // 26)}boat"  # no two alike: none is said again
        doc = talk([("Ana", f"I'm restoring a {boat}."), ("Ben", f"A {boat}, nice!")], doc, timedelta(hours=n))
    assert doc is not None and len(doc.under_way) == MAX_UNDER_WAY
    assert doc.under_way[-1].object == f"a zq{chr(97 + 39 % 26)}{chr(97 + 39 // 26)}boat"
    assert stored(doc) == []
