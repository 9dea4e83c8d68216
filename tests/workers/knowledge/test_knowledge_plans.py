"""A change of life under way or just begun (issue 37, twenty-fourth round): a move to a named place, a long
stay there, a course signed up for or started are facts about the speaker, shown whether or not the reply took
them up, as a change of life is; a trip, a plan in doubt, a question or a course said as "it" are not read.
Every sentence is made up for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import knowledge_testkit
from knowledge_testkit import said

from schemas.docs import KnowledgeDoc
from workers.knowledge.briefing import LIFE_CHANGES, fact_sentences, showable
from workers.render import entity_names

T0 = datetime(2026, 4, 7, 9, 0, tzinfo=UTC)


def talk(turns: list[tuple[str, str]], languages: tuple[str, ...] = ("en", "de", "fr", "es")) -> KnowledgeDoc:
    return knowledge_testkit.talk(turns, languages, T0)


# --- English ------------------------------------------------------------------------------------


def test_a_move_to_a_named_place_is_read() -> None:
    assert said("Big news: I'm moving to Denver next month.") == [("is-moving-to", "Denver")]
    assert said("We're relocating to Austin in the spring.") == [("is-moving-to", "Austin")]
    assert said("Honestly I'm finally moving back to Cork.") == [("is-moving-to", "Cork")]


def test_a_move_in_doubt_asked_or_not_to_a_place_is_not_read() -> None:
    assert said("I'm moving to Denver.") == [("is-moving-to", "Denver")]
    assert said("I'm not moving to Denver after all.") == []
    assert said("I'm gonna move to Denver maybe.") == []
    assert said("Are you moving to Denver?") == []
    assert said("I'm moving to the next level in my game.") == []  # no place named


def test_a_long_stay_is_read_and_a_trip_is_not() -> None:
    assert said("Next month, I'm off to Chile for a semester.") == [("is-off-to", "Chile for a semester")]
    assert said("I'm heading to Osaka for two years of grad school.") == [
        ("is-off-to", "Osaka for two years of grad school")]
    assert said("I'm off to Rome this weekend.") == []  # a trip: no stay said
    assert said("I'm off to go swimming with my nephew.") == []


def test_a_course_signed_up_for_or_started_is_read() -> None:
    assert said("I just signed up for a ceramics class yesterday.") == [("signed-up-for", "a ceramics class")]
    assert said("We enrolled in a salsa course last month.") == [("signed-up-for", "a salsa course")]
    assert said("Guess what, I started a weekend sailing course with my neighbour.") == [
        ("started", "a weekend sailing course with their neighbour")]
    assert said("I just started a new job at a law firm.") == [("started", "a new job at a law firm")]
    assert said("I signed up for it.") == []
    assert said("If I signed up for a class I'd go.") == []
    assert said("I started a fire in the garden.") == []  # no course


# --- German, French, Spanish ----------------------------------------------------------------------


def test_german_move_stay_and_course() -> None:
    assert said("Ich ziehe nächsten Monat nach Leipzig.", "de") == [("is-moving-to", "Leipzig")]
    assert said("Wir ziehen im März nach Bremen um.", "de") == [("is-moving-to", "Bremen")]
    assert said("Ich ziehe nicht nach Leipzig.", "de") == []
    assert said("Ich gehe für ein Semester nach Schweden.", "de") == [("is-off-to", "Schweden")]
    assert said("Ich habe mich gestern für einen Töpferkurs angemeldet.", "de") == [
        ("signed-up-for", "einen Töpferkurs")]
    assert said("Ich habe mich nicht für einen Töpferkurs angemeldet.", "de") == []


def test_french_move_stay_and_course() -> None:
    assert said("Je déménage à Nantes le mois prochain.", "fr") == [("is-moving-to", "Nantes")]
    assert said("Je ne déménage pas à Nantes.", "fr") == []
    assert said("Je pars en Norvège pour un semestre.", "fr") == [("is-off-to", "Norvège pour un semestre")]
    assert said("Je pars à Nice ce week-end.", "fr") == []
    assert said("Je me suis inscrite à un cours de céramique.", "fr") == [("signed-up-for", "un cours de céramique")]


def test_spanish_move() -> None:
    assert said("Me mudo a Valencia el mes que viene.", "es") == [("is-moving-to", "Valencia")]
    assert said("No me mudo a Valencia.", "es") == []
    assert said("Me apunté a un curso de cerámica.", "es") == [("joined", "un curso de cerámica")]


# --- what the briefing shows ------------------------------------------------------------------------


def test_a_move_a_stay_and_a_course_are_shown_untaken_as_a_change_of_life() -> None:
    assert {"is-moving-to", "is-off-to", "signed-up-for"} <= LIFE_CHANGES
    doc = talk([("Ana", "Quick update: I'm moving to Denver next month."), ("Ben", "How is work going?"),
                ("Ana", "Good. Also I just signed up for a ceramics class."), ("Ben", "Let's grab lunch."),
                ("Cleo", "Je pars en Norvège pour un semestre."), ("Ben", "See you Monday."),
                ("Ana", "I love jazz."), ("Ben", "Bye.")])
    assert doc.taken_up == []
    shown = sorted(fact_sentences(showable(doc), entity_names(doc.entities)))
    assert shown == ["Ana is moving to Denver", "Ana signed up for a ceramics class",
                     "Cleo is off to Norvège pour un semestre"]  # the taste, not taken up, is kept back
