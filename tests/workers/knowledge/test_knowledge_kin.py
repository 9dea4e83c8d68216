"""A person's family and pets told across turns: one fact per person and kind (issue 37, fifteenth
round; ``workers.knowledge.kin``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from schemas.events import MessageEvent
from shared.config import KnowledgeSettings
from workers.knowledge.briefing import fact_sentences, showable
from workers.knowledge.core import apply_message
from workers.knowledge.personal import get_personal_patterns
from workers.render import entity_names

T0 = datetime(2023, 5, 1, 10, 0, tzinfo=UTC)


def lines(*turns: tuple[str, str], gap: timedelta = timedelta(seconds=30), shown: bool = False) -> list[str]:
    doc = None
    for i, (sender, text) in enumerate(turns):
        event = MessageEvent(id=f"e{i}", agent="a", session="s", ts=T0 + i * gap, role="user", sender=sender,
                             content=text, channel="webchat")
        doc = apply_message(doc, event, KnowledgeSettings(), get_personal_patterns(("en", "de")))
    assert doc is not None
    return fact_sentences(showable(doc) if shown else doc.facts, entity_names(doc.entities))


def kin_lines(*turns: tuple[str, str], gap: timedelta = timedelta(seconds=30)) -> list[str]:
    return [line for line in lines(*turns, gap=gap) if " include" in line]


def test_pets_gather_across_turns_and_the_next_turn_names_the_last() -> None:
    turns = (("Maria", "Guess what - I got a puppy two weeks ago! Her name's Coco and she's adorable."),
             ("John", "Aww, congrats!"),
             ("Maria", "I just adopted this cute pup from a shelter last week."),
             ("John", "That's wonderful, what's her name?"),
             ("Maria", "Her name is Shadow! She's full of energy."))
    assert kin_lines(*turns) == ["Maria's pets include a puppy named Coco, a pup named Shadow"]
    # the per-clause "Maria has a puppy" is told in the one fact, not beside it
    assert not any(line.startswith("Maria has") for line in lines(*turns))
    # a name said long after names nothing: the pup stays unnamed
    assert kin_lines(*turns, gap=timedelta(hours=1)) == ["Maria's pets include a puppy named Coco, a pup"]


def test_a_family_starts_with_a_name_or_an_age_and_then_gathers_owned_nouns() -> None:
    turns = (("John", "My kids love the park."),  # owned alone: starts nothing
             ("John", "Our one-year-old is so cute, his name is Kyle!"),
             ("John", "My kids and I went hiking."),
             ("John", "That was for my daughter Sara's birthday."))
    assert kin_lines(*turns) == ["John's family includes a one-year-old named Kyle, kids, a daughter named Sara"]
    assert kin_lines(("John", "My kids love the park."), ("John", "My wife and I went out.")) == []


def test_a_name_before_the_noun_and_a_statement_of_having() -> None:
    assert kin_lines(("Caroline", "And yup, I do- Oscar, my guinea pig. He's been great.")) == [
        "Caroline's pets include a guinea pig named Oscar"]
    assert kin_lines(("Mel", "We've got a pup and a kitty."), ("Mel", "We got another cat named Bailey too.")) == [
        "Mel's pets include a pup, a kitty, a cat named Bailey"]
    assert kin_lines(("Sam", "Ich habe einen Hund namens Bello.")) == ["Sam's pets include ein Hund namens Bello"]


def test_what_is_not_the_speakers_own_is_no_kin() -> None:
    assert kin_lines(("Nate", "Looky here, I got this new pup for you!")) == []  # a gift
    assert kin_lines(("Mel", "Here's a photo of my horse painting.")) == []  # a modifier
    assert kin_lines(("Ann", "Your dog named Rex is cute."), ("Ann", "Her kids, Tom and Ann, are cute.")) == []
    assert kin_lines(("Mel", "Thankfully, my son is ok now.")) == []  # an adverb is no name


def test_family_and_pets_are_shown_whether_or_not_the_reply_took_them_up() -> None:
    turns = (("Maria", "I got a puppy two weeks ago! Her name's Coco."), ("John", "How was the game?"))
    assert "Maria's pets include a puppy named Coco" in lines(*turns, shown=True)


def test_a_noun_only_owned_beside_one_of_its_kind_is_not_listed_again() -> None:
    """Seventeenth round: "a husband, kids, a partner" lists the same person twice."""
    turns = (("Mel", "I'm lucky to have my husband and kids; they keep me motivated."),
             ("Mel", "Marrying my partner was the best part."))
    assert kin_lines(*turns) == ["Mel's family includes a husband, kids"]
    # said with a name, a count or had, it is told: listed
    assert kin_lines(("Mel", "We've got a pup."), ("Mel", "My dog Rex loves it.")) == [
        "Mel's pets include a pup, a dog named Rex"]
    assert kin_lines(("Mel", "We've got a pup."), ("Mel", "We also adopted another dog.")) == [
        "Mel's pets include a pup, a dog"]
    # another kind is listed, whatever the pack ("partner" is English and German)
    assert kin_lines(("Mel", "We've got a pup."), ("Mel", "My cat hates it.")) == ["Mel's pets include a pup, a cat"]
    assert kin_lines(("Sam", "Ich habe einen Hund namens Bello."), ("Sam", "Meine Hunde sind toll.")) == [
        "Sam's pets include ein Hund namens Bello"]


def test_a_name_goes_to_a_noun_its_pronoun_may_name() -> None:
    """"His name is Toby" names no girlfriend (seventeenth round)."""
    assert kin_lines(("Andy", "I adopted a puppy last week. My girlfriend loves him. His name is Toby!")) == [
        "Andy's pets include a puppy named Toby"]
    assert kin_lines(("Ann", "I adopted a puppy!"), ("Ann", "Her name is Coco.")) == [
        "Ann's pets include a puppy named Coco"]
    # her name may name a daughter, his a son
    assert kin_lines(("Ann", "I have a daughter, her name is Mia.")) == ["Ann's family includes a daughter named Mia"]
    assert kin_lines(("Ann", "I have a daughter, his name is Max.")) == ["Ann's family includes a daughter"]


def test_a_list_of_names_after_a_noun_is_not_its_name() -> None:
    assert kin_lines(("Andy", "We've got a dog."), ("Andy", "Went hiking with my girlfriend, Toby and Buddy.")) == [
        "Andy's pets include a dog"]
    assert kin_lines(("Andy", "I love my dog, Toby.")) == ["Andy's pets include a dog named Toby"]
    # "<Name>, my <noun> and I": the people who did something, not the noun's name (eighteenth round)
    assert kin_lines(("Andy", "We've got a dog."), ("Andy", "Toby, my girlfriend and I went hiking.")) == [
        "Andy's pets include a dog"]
    assert kin_lines(("Sam", "Ich habe einen Hund."), ("Sam", "Bello, meine Freundin und ich gehen spazieren.")) == [
        "Sam's pets include ein Hund"]
    assert kin_lines(("Caroline", "And yup, I do- Oscar, my guinea pig. He's been great.")) == [
        "Caroline's pets include a guinea pig named Oscar"]
    # the list's last comma too ("Toby, and Buddy"): no girlfriend named Toby (eighteenth round)
    assert kin_lines(("Andy", "I adopted a puppy last week! His name is Toby."),
                     ("Andy", "Went hiking with my girlfriend, Toby, and Buddy.")) == [
        "Andy's pets include a puppy named Toby"]


def test_one_name_is_one_animal_or_person() -> None:
    """Eighteenth round: "a puppy named Toby, a pup named Toby" lists one dog twice."""
    assert kin_lines(("Andy", "I love my puppy, Toby."), ("Andy", "My pup Toby loves the beach."),
                     ("Andy", "Our dog Toby is great.")) == ["Andy's pets include a puppy named Toby"]
    assert kin_lines(("Ann", "I adopted a puppy!"), ("Ann", "Her name is Coco."), ("Ann", "We also adopted a pup!"),
                     ("Ann", "Her name is Coco.")) == ["Ann's pets include a puppy named Coco, a pup"]
    # another name is another animal
    assert kin_lines(("Andy", "I love my puppy, Toby."), ("Andy", "My pup Buddy loves the beach.")) == [
        "Andy's pets include a puppy named Toby, a pup named Buddy"]
    assert kin_lines(("Sam", "Ich habe einen Hund namens Bello."), ("Sam", "Ich habe einen Hund namens Bello.")) == [
        "Sam's pets include ein Hund namens Bello"]


def test_a_pets_name_is_no_family_nouns_name() -> None:
    """Eighteenth round: "a girlfriend named Toby" where Toby is the dog — whichever was said first."""
    puppy = ("Andy", "I adopted a puppy last week! His name is Toby.")
    girlfriend = ("Andy", "I have a girlfriend named Toby.")
    for turns in ((puppy, girlfriend), (girlfriend, puppy)):
        assert sorted(kin_lines(*turns)) == ["Andy's family includes a girlfriend",
                                             "Andy's pets include a puppy named Toby"]
    assert sorted(kin_lines(("Sam", "Ich habe einen Freund namens Bello."),
                            ("Sam", "Ich habe einen Hund namens Bello."))) == [
        "Sam's family includes ein Freund", "Sam's pets include ein Hund namens Bello"]
    # a family noun keeps a name no pet has
    assert sorted(kin_lines(puppy, ("Andy", "I have a girlfriend named Mia."))) == [
        "Andy's family includes a girlfriend named Mia", "Andy's pets include a puppy named Toby"]


def test_a_count_said_again_in_another_word_is_the_same_animals() -> None:
    """Eighteenth round: "a puppy named Pixie, four dogs, four pups" counts the dogs twice; "I have four
    dogs" keeps its count."""
    assert kin_lines(("Audrey", "I got a puppy named Pixie!"), ("Audrey", "I have four dogs."),
                     ("Audrey", "My four pups are great.")) == ["Audrey's pets include a puppy named Pixie, four dogs"]
    assert kin_lines(("Sam", "Ich habe vier Hunde."), ("Sam", "Meine vier Hunde schlafen.")) == [
        "Sam's pets include vier Hunde"]
    # another kind counted is listed
    assert kin_lines(("Audrey", "I have two dogs."), ("Audrey", "We also adopted two cats.")) == [
        "Audrey's pets include two dogs, two cats"]
