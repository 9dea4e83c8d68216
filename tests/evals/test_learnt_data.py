"""The learnt reader's training rows (workers/evals/learnt_data.py, issue 37): every sentence of a
labelled conversation, labelled per kind by the eval's own matcher — on a conversation written
here, never a corpus excerpt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from workers.evals.learnt_data import conversation_rows, item_text
from workers.evals.real_corpora import RealConversation, RealTurn
from workers.evals.real_eval import Loaded
from workers.evals.real_labels import CommitmentLabel, ConversationLabels, DecisionLabel, FactLabel

START = datetime(2024, 3, 4, 18, 0, tzinfo=UTC)
TURNS = [
    ("D1:1", "Lena", "I work as a nurse at the children's hospital. Busy week!"),
    ("D1:2", "Omar", "Wow. We finally picked the blue tiles for the kitchen floor."),
    ("D1:3", "Lena", "Nice choice. I'll bring you the tile catalogue on Saturday."),
    ("D1:4", "Omar", "Thanks! The tiles arrive next week."),
    ("D2:1", "Lena", "Did the blue tiles for the kitchen floor look good?"),
    ("D2:2", "Omar", "Sure."),
]


def _loaded() -> Loaded:
    turns = tuple(RealTurn(ref=ref, speaker=who, text=text, ts=START + timedelta(minutes=i),
                           session=int(ref[1]))
                  for i, (ref, who, text) in enumerate(TURNS))
    conv = RealConversation(name="locomo-0", source="locomo", split="dev", speakers=("Lena", "Omar"), turns=turns)
    labels = ConversationLabels(
        source="locomo", conversation="0", split="dev",
        decisions=[DecisionLabel(what="blue tiles for the kitchen floor", refs=["D1:2", "D2:2"])],
        commitments=[CommitmentLabel(owner="Lena", what="bring the tile catalogue", status="open", refs=["D1:3"])],
        facts=[FactLabel(text="Lena works as a nurse at a children's hospital", about="Lena", refs=["D1:1"])])
    return Loaded(labels, conv)


def _by_sentence() -> dict[str, dict[str, int | None]]:
    return {row.sentence: row.labels for row in conversation_rows(_loaded())}


def test_every_sentence_is_a_row_with_its_turn_and_speaker() -> None:
    rows = conversation_rows(_loaded())
    assert [r.sentence for r in rows[:3]] == ["I work as a nurse at the children's hospital.", "Busy week!", "Wow."]
    first = rows[0]
    assert (first.ref, first.turn, first.speaker, first.position, first.session_turns) == ("D1:1", 0, "Lena", 0, 4)
    assert (rows[-1].turn, rows[-1].position, rows[-1].session_turns) == (5, 1, 2)


def test_a_sentence_said_in_a_labels_turn_that_matches_it_is_positive() -> None:
    labels = _by_sentence()
    assert labels["We finally picked the blue tiles for the kitchen floor."]["decisions"] == 1
    assert labels["I'll bring you the tile catalogue on Saturday."]["commitments"] == 1
    # a first-person fact is its speaker's: the label names Lena
    assert labels["I work as a nurse at the children's hospital."]["facts"] == 1
    assert item_text("facts", "Lena", "I work as a nurse.") == "Lena: I work as a nurse."


def test_what_is_no_clean_evidence_is_left_out_and_the_rest_is_negative() -> None:
    labels = _by_sentence()
    # said again outside the label's turns: it matches, but is not where the item was made
    assert labels["Did the blue tiles for the kitchen floor look good?"]["decisions"] is None
    # in the label's turn without matching it (the assent of a decision)
    assert labels["Sure."]["decisions"] is None
    assert labels["Busy week!"] == {"decisions": 0, "commitments": 0, "facts": None}  # the fact's turn
    # the rest is negative, kind by kind
    assert labels["Thanks!"] == {"decisions": 0, "commitments": 0, "facts": 0}
    assert labels["I'll bring you the tile catalogue on Saturday."]["decisions"] == 0


def test_a_promise_matches_only_its_owners_label() -> None:
    loaded = _loaded()
    turns = (*loaded.conv.turns, RealTurn(ref="D2:3", speaker="Omar", text="I'll bring you the tile catalogue too.",
                                          ts=START + timedelta(hours=1), session=2))
    conv = RealConversation(name="locomo-0", source="locomo", split="dev", speakers=("Lena", "Omar"), turns=turns)
    rows = conversation_rows(Loaded(loaded.labels, conv))
    assert rows[-1].labels["commitments"] == 0  # Omar's words, Lena's promise
