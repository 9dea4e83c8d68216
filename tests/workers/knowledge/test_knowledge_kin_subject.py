"""The speaker's own people as a clause's subject (issue 37, twenty-second round): a death or a titled win
of "my/our" kin or team is a fact about the speaker, read inside another clause too and shown whether or
not the reply took it up, as a change of life is; the kin tastes and jobs are read after "our" too, with a
count. Every sentence is made up for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import knowledge_testkit
from knowledge_testkit import said

from schemas.docs import KnowledgeDoc
from workers.knowledge.briefing import fact_sentences, kin_event, showable
from workers.render import entity_names

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def talk(turns: list[tuple[str, str]], languages: tuple[str, ...] = ("en", "de")) -> KnowledgeDoc:
    return knowledge_testkit.talk(turns, languages, T0)


# --- English ------------------------------------------------------------------------------------


def test_a_death_of_the_speakers_own_people_is_read_inside_another_clause_too() -> None:
    assert said("Two weeks ago, my uncle passed away and I'm still sad.") == [("'s-uncle", "passed away")]
    assert said("Sorry for the silence, our old cat died on Sunday.") == []  # an adjective before the noun: no
    assert said("It's been hard since my grandpa died.") == [("'s-grandpa", "died")]
    assert said("Our dog sadly passed away.") == [("'s-dog", "passed away")]


def test_a_death_that_is_not_said_as_having_happened_is_not_read() -> None:
    assert said("My grandpa died in May.") == [("'s-grandpa", "died")]
    assert said("If my grandpa died I would move home.") == []
    assert said("I hope my hamster never died of boredom.") == []
    assert said("Has your grandpa passed away?") == []
    assert said("My grandpa's dog died.") == []  # someone else's: "grandpa's" is no kin noun of the speaker


def test_a_win_is_read_only_with_a_title_place_or_prize() -> None:
    assert said("Best day ever: my robotics team won the state championship!") == [
        ("'s-robotics-team-won", "the state championship")]
    assert said("Our band won second place at the county fair.") == [
        ("'s-band-won", "second place at the county fair")]
    assert said("My team won the game last night.") == []  # that night's game: no title, no fact
    assert said("My team won't make the playoffs.") == []
    assert said("If our crew won the cup we'd party.") == []


def test_the_kin_tastes_read_after_our_and_with_a_count() -> None:
    assert said("Our twins love building sandcastles.") == [("'s-twins-love", "building sandcastles")]
    assert said("Our kids love dinosaurs.") == [("'s-kids-love", "dinosaurs")]
    assert said("Honestly, our 3 younger kids love horses.") == [("'s-younger-kids-love", "horses")]
    assert said("My two daughters play chess.") == [("'s-daughters-play", "chess")]


def test_the_or_another_clause_is_not_the_speakers() -> None:
    assert said("Our kids love dinosaurs.") == [("'s-kids-love", "dinosaurs")]
    assert said("The kids love dinosaurs.") == []  # a teacher's "the kids" are the class
    assert said("I think our kids love painting.") == []  # not opening its clause
    assert said("Our kids love it.") == []  # says nothing lasting
    assert said("Do our kids love school?") == []


# --- German, Spanish, French ----------------------------------------------------------------------


def test_german_death_win_and_our_kin() -> None:
    assert said("Mein Opa ist im Mai gestorben.", "de") == [("'s-opa", "gestorben")]
    assert said("Unser Team hat den Landespokal gewonnen!", "de") == [("'s-team-won", "den Landespokal")]
    assert said("Unser Team hat das Spiel gewonnen.", "de") == []
    assert said("Wenn mein Opa gestorben wäre, wüsste ich es.", "de") == []
    assert said("Unsere zwei Kinder lieben Pferde.", "de") == [("'s-kinder-love", "Pferde")]


def test_spanish_death_and_win() -> None:
    assert said("Mi tío falleció el año pasado.", "es") == [("'s-tío", "falleció")]
    assert said("Nuestro equipo ganó el torneo regional.", "es") == [("'s-equipo-won", "el torneo regional")]
    assert said("Mi equipo ganó el partido.", "es") == []
    assert said("Si mi tío murió, nadie me lo dijo.", "es") == []


def test_french_death_and_win() -> None:
    assert said("Mon grand-père est décédé en juin.", "fr") == [("'s-grand-père", "décédé")]
    assert said("Notre équipe a remporté le tournoi régional !", "fr") == [("'s-équipe-won", "le tournoi régional")]
    assert said("Mon équipe a gagné le match.", "fr") == []
    assert said("Si mon chien est mort, je pleure.", "fr") == []


# --- what the briefing shows ------------------------------------------------------------------------


def test_a_death_or_a_win_is_shown_taken_up_or_not_and_a_kin_taste_is_not() -> None:
    doc = talk([("Ana", "Quick update: my grandma passed away last month."), ("Ben", "How is work going?"),
                ("Ana", "Good. Also my choir won first prize at the festival."), ("Ben", "Let's grab lunch."),
                ("Ana", "Our kids love dinosaurs."), ("Ben", "See you Monday.")])
    assert sorted(f.object for f in doc.facts) == ["dinosaurs", "first prize at the festival", "passed away"]
    assert doc.taken_up == []
    shown = sorted(fact_sentences(showable(doc), entity_names(doc.entities)))
    assert shown == ["Ana's choir won first prize at the festival", "Ana's grandma passed away"]
    assert [kin_event(f) for f in sorted(doc.facts, key=lambda f: f.object)] == [False, True, True]
