"""The eval's matcher (``workers.evals.real_match``) counts what a careful reader would count.

Made-up pairs, none from a corpus: true paraphrases in the other spelling, negation, a label said in
two parts and two items each stating one; and what must stay apart — the same words of another
fact (negated, the object changed, the people swapped), a repeat, one item for two labels.
"""

from __future__ import annotations

import pytest

from workers.evals.real_labels import CommitmentLabel, DecisionLabel, FactLabel, Label, ThreadLabel
from workers.evals.real_match import Candidate, american, match, name_words, negated, words

NAMES = name_words(["Ana", "Ben", "Tim", "Gina", "Jon"])


def _pairs(labels: list[Label], texts: list[str]) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    found = match(labels, [True] * len(labels), [Candidate(t) for t in texts], NAMES)
    return ([(_text(lab), c.text) for lab, c in found.pairs], [c.text for _, c in found.absorbed],
            [c.text for c in found.extra])


def _text(label: Label) -> str:
    return label.text if isinstance(label, FactLabel) else getattr(label, "what", getattr(label, "title", ""))


def _matches(label: Label, text: str) -> bool:
    return bool(match([label], [True], [Candidate(text)], NAMES).pairs)


def fact(text: str, about: str | None = None) -> FactLabel:
    return FactLabel(text=text, about=about, refs=["D1:1"])


def decision(what: str) -> DecisionLabel:
    return DecisionLabel(what=what, refs=["D1:1"])


# --- one spelling ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("label", "candidate"), [
    # two words each, one of them spelt the other way: the match hangs on reading it as the same word
    ("favourite colour", "her favorite color"),
    ("see a counsellor weekly", "sees a counselor weekly"),
    ("organised fundraiser", "organized the fundraiser"),
    ("neighbourhood theatre", "the neighborhood theater"),
    ("analyses the data", "analyzed the data"),
    ("grey jumper", "the gray jumper"),
    ("metres swum", "the meters swum"),
    ("jewellery shop", "a jewelry shop"),
    ("e-mail the slides", "email the slides"),
])
def test_the_other_spelling_of_the_same_words_matches(label: str, candidate: str) -> None:
    assert _matches(decision(label), candidate)
    assert _matches(fact(f"Ana: {label}", "Ana"), f"Ana: {candidate}")


def test_a_spelling_is_read_as_one_word_and_other_words_keep_theirs() -> None:
    assert {american(w) for w in ("favourite", "favorite")} == {"favorite"}
    assert american("colours") == "colors" and american("travelling") == "traveling"
    assert american("organization") == american("organisation") == "organisation"
    assert american("centred") == "centered" and american("metres") == "meters"
    # words that only look like the British forms stay what they are
    for word in ("your", "four", "hour", "tour", "filled", "called", "willing", "exercise", "surprise", "promise",
                 "size", "genre", "acre", "more", "advise"):
        assert american(word) == word, word
    assert words("the filled form") != words("the filed form")


# --- negation ----------------------------------------------------------------------------------


def test_a_negated_word_is_read_in_its_clause_only() -> None:
    assert negated("no TFT screen") == {"tft"}
    assert negated("We decided against the TFT screen") == {"tft"}
    assert negated("I don't mind to convince the management") == {"mind"}
    assert negated("plastic instead of rubber") == {"rubb"}
    assert negated("having an art show with my paintings - can't wait") == {"wait"}
    assert negated("a TFT screen") == frozenset()
    assert negated("I'd rather use plastic") == frozenset()
    assert negated("drop off the package at the post office") == frozenset()  # a delivery, no negation


@pytest.mark.parametrize(("label", "candidate", "same"), [
    ("no TFT screen", "no TFT screen, we said", True),
    ("no TFT screen", "We decided against the TFT screen", True),
    ("no TFT screen", "we dropped the TFT screen", True),
    ("no TFT screen", "a TFT screen", False),
    ("no TFT screen", "we'll use the TFT screen", False),
    ("use a TFT screen", "we won't use a TFT screen", False),
    ("plastic instead of rubber", "plastic case, not rubber", True),
    ("plastic instead of rubber", "rubber instead of plastic", False),
    # a negation that reaches none of the shared words is not read
    ("an art show with her paintings", "an art show with my paintings - can't wait", True),
    ("convince the management to spend more money", "I don't mind to convince the management to spend more money",
     True),
    # talk puts the negation far from its object: one somewhere answers a negated label
    ("no solar cells", "I really don't think it's necessary to have the solar cells anymore", True),
    ("no solar cells", "Solar cells, yeah, we said no to that.", True),
    ("no teletext", "we don't need to consider the teletext in our design", True),
    ("no solar cells", "we'll fit solar cells", False),
])
def test_a_decision_and_its_negation_are_two_decisions(label: str, candidate: str, same: bool) -> None:
    assert _matches(decision(label), candidate) is same


def test_a_fact_and_its_negation_are_two_facts() -> None:
    assert _matches(fact("Tim eats meat", "Tim"), "Tim eats meat every day")
    assert not _matches(fact("Tim eats meat", "Tim"), "Tim never eats meat")
    assert not _matches(fact("Tim doesn't drive a car", "Tim"), "Tim drives a car to work")


# --- the same words, another fact ----------------------------------------------------------------


def test_another_object_another_person_or_another_owner_is_no_match() -> None:
    assert not _matches(fact("Tim is learning the violin", "Tim"), "Tim is learning German")
    assert not _matches(fact("Tim is learning the violin", "Tim"), "Jon is learning the violin")
    label = CommitmentLabel(owner="Gina", what="send Jon her dance video", status="open", refs=["D1:1"])
    speakers = frozenset({"gina", "jon"})
    swapped = match([label], [True], [Candidate("send Gina my dance video", who="Jon")], NAMES, speakers)
    assert not swapped.pairs and swapped.extra
    assert match([label], [True], [Candidate("send Jon my dance video", who="Gina")], NAMES, speakers).pairs


# --- one to one, and the parts of a label ---------------------------------------------------------


def test_a_second_item_stating_another_part_of_a_label_is_true_but_no_second_recall() -> None:
    labels: list[Label] = [fact("Tim is learning the violin and the piano", "Tim")]
    pairs, absorbed, extra = _pairs(labels, ["Tim is learning piano", "Tim is learning violin"])
    assert pairs == [("Tim is learning the violin and the piano", "Tim is learning piano")]
    assert absorbed == ["Tim is learning violin"] and extra == []


def test_a_label_said_in_two_parts_takes_an_item_for_each() -> None:
    labels: list[Label] = [fact("Jon loves The Lord of the Rings; Aragorn is his favourite character", "Jon")]
    pairs, absorbed, extra = _pairs(labels, ["Jon's favorite character is Aragorn",
                                             "Jon is a huge fan of the Lord of the Rings"])
    assert pairs == [(labels[0].text, "Jon's favorite character is Aragorn")]  # type: ignore[attr-defined]
    assert absorbed == ["Jon is a huge fan of the Lord of the Rings"] and extra == []
    # a part alone is no match for the whole label: it only absorbs beside a match
    assert not _matches(labels[0], "Jon is a huge fan of the Lord of the Rings")


def test_a_repeat_of_a_matched_item_stays_extra() -> None:
    labels: list[Label] = [fact("Tim is learning the violin and the piano", "Tim")]
    pairs, absorbed, extra = _pairs(labels, ["Tim is learning piano", "Tim learns the piano"])
    assert len(pairs) == 1 and absorbed == [] and extra == ["Tim learns the piano"]


def test_a_second_thread_on_a_topic_stays_extra() -> None:
    labels: list[Label] = [ThreadLabel(title="Ana's flat and garden", refs=["D1:1"])]
    pairs, absorbed, extra = _pairs(labels, ["Ana's flat", "the flat and its garden"])
    assert len(pairs) == 1 and absorbed == [] and len(extra) == 1


def test_one_item_is_credited_to_one_label() -> None:
    labels: list[Label] = [fact("Tim writes articles about fantasy novels", "Tim"),
                           fact("Tim is writing a fantasy novel", "Tim")]
    found = match(labels, [True, True], [Candidate("Tim is writing articles about fantasy novels")], NAMES)
    assert [_text(lab) for lab, _ in found.pairs] == ["Tim writes articles about fantasy novels"]
    assert [_text(lab) for lab in found.missed] == ["Tim is writing a fantasy novel"]


def test_an_optional_label_absorbs_and_its_second_part_too() -> None:
    labels: list[Label] = [FactLabel(text="Ana's favourite colour is blue; her favourite flower is the tulip",
                                     about="Ana", optional=True, refs=["D1:1"])]
    found = match(labels, [False], [Candidate("Ana's favorite color is blue"),
                                    Candidate("Ana's favorite flower is the tulip")], NAMES)
    assert not found.pairs and len(found.absorbed) == 2 and not found.extra
