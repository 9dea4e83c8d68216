"""What a person says of themselves, judged by the reply (issue 37, thirteenth round): said to the
agent it is shown as before; said to another person, Known Facts shows one per person of what the
reply took up and none of what it did not, but every change in their life (fourteenth round) — the
document keeps every fact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec

from schemas.docs import KnowledgeDoc
from schemas.events import MessageEvent
from shared.config import KnowledgeSettings
from workers.knowledge.briefing import fact_sentences, showable
from workers.knowledge.core import apply_message
from workers.render import entity_names

T0 = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)
SETTINGS = KnowledgeSettings()


def talk(turns: list[tuple[str | None, str]], doc: KnowledgeDoc | None = None) -> KnowledgeDoc:
    """``(sender, text)`` turns as user messages a minute apart; a ``None`` sender is the assistant."""
    for n, (sender, text) in enumerate(turns):
        event = msgspec.convert({"id": f"e{n}", "agent": "a1", "session": "s1", "ts": T0 + timedelta(minutes=n),
                                 "role": "assistant" if sender is None else "user", "sender": sender,
                                 "content": text}, MessageEvent)
        doc = apply_message(doc, event, SETTINGS)
    assert doc is not None
    return doc


def shown(doc: KnowledgeDoc) -> list[str]:
    return sorted(fact_sentences(showable(doc), entity_names(doc.entities)))


def stored(doc: KnowledgeDoc) -> list[str]:
    return sorted(f.object for f in doc.facts)


def test_what_the_other_persons_reply_does_not_take_up_is_kept_not_shown() -> None:
    doc = talk([("Ana", "I'm into jazz."), ("Ben", "Oh no, that's rough."),
                ("Ana", "I'm learning German now."), ("Ben", "Wow, German! How is it going?")])
    assert stored(doc) == ["German", "jazz"]  # the document keeps both
    assert doc.unanswered == [f.id for f in doc.facts if f.object == "jazz"]
    assert doc.taken_up == [f.id for f in doc.facts if f.object == "German"]
    assert shown(doc) == ["Ana is learning German"]


def test_said_to_the_agent_is_shown_as_before() -> None:
    doc = talk([("Ana", "I'm allergic to cats."), (None, "Noted."), ("Ana", "I'm learning German now."),
                (None, "Good luck with that.")])
    assert doc.unanswered == [] and doc.taken_up == [] and doc.awaiting_reply == []
    assert shown(doc) == ["Ana is allergic to cats", "Ana is learning German"]


def test_waiting_for_a_reply_is_shown_and_a_persons_next_message_keeps_it_waiting() -> None:
    doc = talk([("Ana", "I'm allergic to cats."), ("Ana", "Anyway, how was your weekend?")])
    assert doc.awaiting_reply == [f.id for f in doc.facts] and doc.unanswered == []
    assert shown(doc) == ["Ana is allergic to cats"]
    # a system message is nobody's reply either
    system = msgspec.convert({"id": "sys", "agent": "a1", "session": "s1", "ts": T0 + timedelta(minutes=5),
                              "role": "system", "content": "Session resumed."}, MessageEvent)
    assert apply_message(doc, system, SETTINGS).awaiting_reply == doc.awaiting_reply


def test_one_fact_per_person_of_what_replies_took_up_the_first_said_first() -> None:
    doc = talk([("Ana", "I'm a nurse at the city hospital."), ("Ben", "A nurse! That must be busy."),
                ("Ana", "I'm into German poetry."), ("Ben", "German is hard, good luck."),
                ("Ben", "I'm a teacher at the high school."), ("Ana", "A teacher, nice!")])
    assert len(doc.taken_up) == 3
    assert shown(doc) == ["Ana is a nurse at the city hospital", "Ben is a teacher at the high school"]


def test_said_again_later_it_counts_as_taken_up() -> None:
    doc = talk([("Ana", "I'm into jazz."), ("Ben", "Oh no.")])
    assert shown(doc) == []
    doc = talk([("Ana", "As I said, I'm into jazz.")], doc)
    assert doc.unanswered == [] and doc.taken_up == [f.id for f in doc.facts]
    assert shown(doc) == ["Ana is into jazz"]


def test_a_change_in_a_persons_life_is_shown_taken_up_or_not() -> None:
    """A job got or lost, a group joined, a business opened: news that stays true, shown beside
    the one taken-up fact whether or not the reply took it up (fourteenth round); a state the
    reply did not take up stays kept back."""
    doc = talk([("Ana", "I'm a nurse at the city hospital."), ("Ben", "A nurse! That must be busy."),
                ("Ana", "I just joined a rowing club."), ("Ben", "How was your weekend otherwise?"),
                ("Ana", "I lost my job at the bakery."), ("Ben", "Oh no, that's rough."),
                ("Ana", "I'm into jazz."), ("Ben", "Anyway, see you soon.")])
    assert len(doc.unanswered) == 3 and len(doc.taken_up) == 1
    assert shown(doc) == ["Ana is a nurse at the city hospital", "Ana joined a rowing club",
                          "Ana lost their job at the bakery"]
    assert stored(doc) == ["a rowing club", "jazz", "nurse at the city hospital", "the bakery"]


def test_who_a_person_is_is_shown_taken_up_or_not_a_fan_is_not() -> None:
    """Seventeenth round: a condition, a kind, where they are from — told to another person and not
    taken up — is shown as a change of life is; a fan is a taste and stays kept back."""
    doc = talk([("Jo", "I'm allergic to most reptiles and animals with fur."), ("Nate", "How was the movie?"),
                ("Jo", "I'm lactose intolerant."), ("Nate", "Anyway, see you soon."),
                ("Jo", "I'm a big fan of Nintendo games."), ("Nate", "Cool."),
                ("John", "I'm a shooting guard for the team."), ("Tim", "How was your week?")])
    assert len(doc.unanswered) == 4 and doc.taken_up == []
    assert shown(doc) == ["Jo is allergic to most reptiles and animals with fur", "Jo is lactose intolerant",
                          "John is a shooting guard for the team"]


def test_what_a_person_does_is_shown_once_per_verb_and_not_twice_in_other_words() -> None:
    """Seventeenth round: a practice told is shown taken up or not — the first per person and verb,
    none whose words a line of theirs already shown says."""
    doc = talk([("Tim", "I'm learning piano."), ("John", "How was the game?"),
                ("Tim", "I'm learning violin."), ("John", "Anyway, see you soon."),
                ("Cara", "I joined a mentorship program for LGBTQ youth."), ("Mel", "How was your week?"),
                ("Cara", "I mentor a transgender teen."), ("Mel", "Nice weather today."),
                ("Mel", "I play clarinet."), ("Cara", "What did you eat?")])
    assert doc.taken_up == []
    assert shown(doc) == ["Cara joined a mentorship program for LGBTQ youth", "Mel plays clarinet",
                          "Tim is learning piano"]
    assert "a transgender teen" in stored(doc) and "violin" in stored(doc)  # the document keeps them


def test_an_introduction_needs_no_reply() -> None:
    doc = talk([("Project Manager", "I'm Laura and I'm the project manager."), ("Marketing", "Okay, cool.")])
    assert "Project Manager is named Laura" in shown(doc)


def test_the_rule_is_deterministic_and_replays_byte_identical() -> None:
    turns: list[tuple[str | None, str]] = [("Ana", "I'm into jazz."), ("Ben", "Oh no."),
                                           ("Ben", "I'm into chess."), ("Ana", "Chess is fun!")]
    assert msgspec.json.encode(talk(turns)) == msgspec.json.encode(talk(turns))


def test_a_reply_in_japanese_takes_up_by_its_characters() -> None:
    """Words no space parts: a reply takes a statement up by a pair of its characters."""
    from workers.knowledge.core import _content_words, _starts, _takes_up

    def up(said: str, reply: str) -> bool:
        words = _content_words(reply)
        return _takes_up(_content_words(said), words, _starts(words))

    assert up("ドイツ語", "ドイツ語を勉強しているんですね！")
    assert not up("ドイツ語", "そうなんだ。")
    assert up("Deutsch", "Oh, Deutsch ist schwer!")
    assert not up("Katzen", "Oh nein, das ist schade.")
    # a stem: alike but for two letters of the shorter word, four letters at least
    assert up("dancing", "Your dance studio!") and up("counselling", "a counselor") and up("teen", "teenagers")
    assert not up("surfing", "surely") and not up("art", "artist") and not up("teacher", "teaspoon")


def test_a_reply_takes_up_the_facts_predicate_as_well_as_its_object() -> None:
    doc = talk([("Jon", "Lost my job as a banker yesterday."), ("Gina", "Sorry about your job Jon!")])
    assert [f.object for f in doc.facts if f.id in doc.taken_up] == ["a banker"]
    assert shown(doc) == ["Jon lost their job as a banker"]


def test_an_identity_that_says_the_speakers_name_again_is_not_shown() -> None:
    """A meeting's speakers are named by their role: "I'm the user interface designer" said by User
    Interface tells nothing new (seventeenth round)."""
    doc = talk([("User Interface", "I'm a user interface designer."), ("Marketing", "Okay, cool."),
                ("Marketing", "I'm allergic to cats."), ("User Interface", "Right, let's start.")])
    assert shown(doc) == ["Marketing is allergic to cats"]


def test_who_a_person_is_said_again_in_other_words_is_shown_once() -> None:
    doc = talk([("Cara", "I'm a transgender woman."), ("Mel", "How was the trip?"),
                ("Cara", "I'm a trans woman, as you know."), ("Mel", "Nice weather today."),
                ("John", "I'm a shooting guard for the team."), ("Tim", "What did you eat?"),
                ("John", "I mentor the younger players on my team."), ("Tim", "Cool, mentoring is great.")])
    assert len(stored(doc)) == 4  # the document keeps both
    assert shown(doc) == ["Cara is a transgender woman", "John is a shooting guard for the team",
                          "John mentors the younger players on their team"]


def test_a_kind_said_as_one_word_is_shown_only_when_the_reply_took_it_up() -> None:
    """Eighteenth round: "Andrew is a rookie" — a one-word kind said in passing is kept back; a kind with
    its modifier or complement is shown untaken; a one-word kind the reply took up is shown."""
    doc = talk([("Andy", "Honestly I'm a rookie when it comes to hiking."), ("Ben", "How was the weekend?"),
                ("Sam", "Ich bin Anfänger."), ("Ben", "Und das Wetter?"),
                ("Bo", "I'm a real homebody."), ("Ben", "Seen any films?"),  # one word and its size or praise
                ("John", "I'm a shooting guard for the team."), ("Tim", "How was your week?")])
    assert {"rookie", "Anfänger", "real homebody"} <= set(stored(doc))  # the document keeps them
    assert shown(doc) == ["John is a shooting guard for the team"]
    doc = talk([("Ana", "I'm a nurse."), ("Ben", "A nurse! Where do you work as a nurse?")])
    assert shown(doc) == ["Ana is a nurse"]


def test_an_introduction_that_gives_the_speakers_own_name_is_no_fact() -> None:
    """Eighteenth round: "Anna is named Anna" told nothing; a meeting's role named by its person stays."""
    assert shown(talk([("Anna", "Hi, I'm Anna, the project manager.")])) == []
    assert shown(talk([("Anna", "My name is anna.")])) == []
    assert shown(talk([("Project Manager", "Hi, I'm Anna, the project manager.")])) == [
        "Project Manager is named Anna"]
