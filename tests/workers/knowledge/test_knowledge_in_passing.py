"""Facts said in passing (issue 37, twenty-fifth round): who one is said on the way to something else ("my own
journey as a …"; in French and Spanish "En tant que sage-femme, je …"), a marriage, what one cares about most
("passionate about") in every pack that says it, a favourite after "but"; and what Known Facts shows of them whether
or not the reply took them up — what one cares about most and one's favourites, as who one is. What one was ("as a
kid"), a figure of speech ("as a result"), a thing ("as a curve"), a wish or a negation, and "I love …" are not.
Every sentence is made up for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import knowledge_testkit
from knowledge_testkit import said

from schemas.docs import KnowledgeDoc
from workers.knowledge.briefing import LIFE_CHANGES, fact_sentences, showable
from workers.render import entity_names

T0 = datetime(2026, 5, 4, 18, 0, tzinfo=UTC)


def talk(turns: list[tuple[str, str]], languages: tuple[str, ...] = ("en", "de", "fr", "es")) -> KnowledgeDoc:
    return knowledge_testkit.talk(turns, languages, T0)


# --- who one is, said in passing ------------------------------------------------------------------


def test_who_one_is_said_of_ones_own_journey_is_read() -> None:
    assert said("I drew it to show my own journey as a deaf musician and what it taught me.") == [
        ("is-a", "deaf musician")]
    assert said("Honestly, my life as a single parent is never dull.") == [("is-a", "single parent")]
    assert said("This painting shows my path as a trans woman.") == [("is-a", "trans woman")]


def test_what_one_was_a_figure_of_speech_or_a_thing_is_not_read() -> None:
    assert said("My life as a kid was simple.") == []  # what one was
    assert said("My life as a result changed.") == []
    assert said("My story as a curve in the chart.") == []  # a thing, not a person
    assert said("Would you read my story as a nurse?") == []  # a question


def test_french_spanish_who_one_is_in_passing() -> None:
    assert said("En tant que sage-femme, je connais ces nuits-là.", "fr") == [("is-a", "sage-femme")]
    assert said("Étant infirmière, j'ai vu beaucoup de choses.", "fr") == [("is-a", "infirmière")]
    assert said("En tant que tel, je ne sais pas.", "fr") == []
    assert said("En tant que sage-femme, elle connaît ces nuits-là.", "fr") == []  # not the speaker's clause
    assert said("Como bombera, me levanto a cualquier hora.", "es") == [("is-a", "bombera")]
    assert said("Siendo madre soltera, mi vida es complicada.", "es") == [("is-a", "madre soltera")]
    assert said("Como niña, me gustaba el mar.", "es") == []


# --- a marriage -------------------------------------------------------------------------------------


def test_a_marriage_is_read() -> None:
    assert said("Big news: my fiancée and I just tied the knot in Lisbon!") == [("married-their", "fiancée")]
    assert said("My boyfriend and I had a tiny garden wedding last Sunday.") == [("married-their", "boyfriend")]
    assert said("I married my college roommate.") == [("married-their", "college roommate")]
    assert "married-their" in LIFE_CHANGES


def test_a_marriage_wished_or_denied_is_not_read() -> None:
    assert said("If my boyfriend and I got married, I'd cry.") == []
    assert said("I'd never have married my ex.") == []
    assert said("I married into a big family.") == []  # no partner named


def test_german_french_spanish_marriage() -> None:
    assert said("Ich habe letzten Sommer meinen Freund geheiratet.", "de") == [("married-their", "Freund")]
    assert said("Meine Partnerin und ich haben im Mai geheiratet.", "de") == [("married-their", "Partnerin")]
    assert said("Ich habe meinen Freund nicht geheiratet.", "de") == []
    assert said("J'ai épousé mon compagnon l'été dernier.", "fr") == [("married-their", "compagnon")]
    assert said("Ma compagne et moi nous sommes mariées en juin.", "fr") == [("married-their", "compagne")]
    assert said("Me casé con mi novia de la universidad.", "es") == [("married-their", "novia de la universidad")]
    assert said("No me casé con mi novia.", "es") == []


# --- what one cares about most, one's favourite ------------------------------------------------------


def test_passionate_about_in_german_french_spanish() -> None:
    assert said("Ich begeistere mich seit Jahren für Astronomie.", "de") == [("is-passionate-about", "Astronomie")]
    assert said("Je suis passionnée de reliure.", "fr") == [("is-passionate-about", "reliure")]
    assert said("Me apasiona la escalada.", "es") == [("is-passionate-about", "escalada")]
    assert said("Soy un apasionado de la ópera.", "es") == [("is-passionate-about", "ópera")]
    assert said("No me apasiona la escalada.", "es") == []


def test_a_favourite_after_but_is_read() -> None:
    assert said("I like most cheeses, but gouda is my favourite.") == [("'s-favorite-is", "gouda")]
    assert said("I tried five sports, and trail running is my top pick.") == [
        ("'s-favorite-is", "trail running")]


def test_what_one_cares_about_most_and_favourites_are_shown_untaken_and_loves_are_not() -> None:
    doc = talk([("Ana", "I'm passionate about restoring old bikes."), ("Ben", "When is the meeting?"),
                ("Ana", "My favourite city is Porto."), ("Ben", "Let's say Tuesday."),
                ("Ana", "I love gouda."), ("Ben", "Fine."),
                ("Ana", "I'm into sudoku."), ("Ben", "See you.")])
    assert doc.taken_up == []
    shown = sorted(fact_sentences(showable(doc), entity_names(doc.entities)))
    assert shown == ["Ana is passionate about restoring old bikes", "Ana's favorite city is Porto"]


def test_who_one_is_and_a_marriage_said_in_passing_are_shown_untaken() -> None:
    doc = talk([("Ana", "My life as a beekeeping teacher is busy."), ("Ben", "When is the meeting?"),
                ("Ana", "Oh and my partner and I got married on Saturday!"), ("Ben", "Tuesday then.")])
    assert doc.taken_up == []
    shown = sorted(fact_sentences(showable(doc), entity_names(doc.entities)))
    assert shown == ["Ana is a beekeeping teacher", "Ana married their partner"]
