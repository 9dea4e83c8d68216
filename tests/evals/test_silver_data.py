"""Silver sentence labels from the corpora's own annotations (workers/evals/silver_data.py, issue 37,
ninth round) — on annotations and turns written here, never a corpus excerpt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from workers.evals.learnt_data import SentenceRow
from workers.evals.real_corpora import RealConversation, RealTurn
from workers.evals.silver_data import (
    _thinned,
    agreement,
    lasting,
    observations,
    query_notes,
    silver_rows_of,
)

START = datetime(2024, 3, 4, 18, 0, tzinfo=UTC)


def _conv(turns: list[tuple[str, str, str]], source: str = "locomo") -> RealConversation:
    made = tuple(RealTurn(ref=ref, speaker=who, text=text, ts=START + timedelta(minutes=i), session=1)
                 for i, (ref, who, text) in enumerate(turns))
    speakers = tuple(dict.fromkeys(who for _, who, _ in turns))
    return RealConversation(name="locomo-0", source=source, split="dev", speakers=speakers,  # type: ignore[arg-type]
                            turns=made)


CHAT = [
    ("D1:1", "Lena", "I work as a nurse at the children's hospital. Busy week!"),
    ("D1:2", "Omar", "Wow, that sounds demanding."),
    ("D1:3", "Lena", "I went hiking with my sister yesterday. It was lovely."),
]
SAMPLE = {"observation": {"session_1_observation": {
    "Lena": [["Lena works as a nurse at a children's hospital.", "D1:1"],
             ["Lena went hiking with her sister yesterday.", "D1:3"]],
    "Omar": []}}}


def test_an_observation_cites_its_turns_and_a_dated_one_is_an_event() -> None:
    notes = observations(SAMPLE)
    assert [(n.text[:20], sorted(n.refs), n.about, n.lasting) for n in notes] == [
        ("Lena works as a nurs", ["D1:1"], "Lena", True),
        ("Lena went hiking wit", ["D1:3"], "Lena", False)]
    assert lasting("Caroline is a transgender woman.")
    assert not lasting("Melanie is going to the beach after the conversation.")


def test_a_cited_sentence_saying_the_observation_is_a_fact_the_rest_of_its_turn_left_out() -> None:
    rows = silver_rows_of(_conv(CHAT), "locomo-0", observations(SAMPLE), ("facts",))
    facts = {r.sentence: r.labels["facts"] for r in rows}
    assert facts == {"I work as a nurse at the children's hospital.": 1, "Busy week!": None,
                     "Wow, that sounds demanding.": 0,
                     # an event's turn: not a lasting fact, and no clean negative either
                     "I went hiking with my sister yesterday.": None, "It was lovely.": None}
    # the kinds the annotation does not speak for are left out
    assert {r.labels["decisions"] for r in rows} == {None}
    assert rows[0].reply == "Wow, that sounds demanding."
    assert rows[-1].reply is None


MEETING = [
    ("ES2005b:10", "Project Manager", "So what about the glow in the dark material?"),
    ("ES2005b:11", "Industrial Designer", "We agreed to use the glow in the dark material, it is cheaper."),
    ("ES2005b:12", "Marketing", "Yeah."),
    ("ES2005b:13", "Marketing", "The buttons should be rubber."),
]
QUERIES = {"specific_query_list": [
    {"query": "What did the group decide about the light?", "relevant_text_span": [["10", "12"]],
     "answer": "The team agreed to use the glow in the dark material because it was cheaper. It was fun."},
    {"query": "Summarize the discussion about the buttons.", "relevant_text_span": [["13", "13"]],
     "answer": "The buttons would be rubber."},
    {"query": "What tasks were assigned for the next meeting?", "relevant_text_span": [["13", "13"]],
     "answer": "Marketing would look into rubber buttons."}]}


def test_a_decision_query_makes_its_answer_sentences_silver_decisions_of_its_spans() -> None:
    notes = query_notes("ES2005b", QUERIES)
    assert [(n.kind, n.text) for n in notes] == [
        ("decisions", "The team agreed to use the glow in the dark material because it was cheaper."),
        ("decisions", "It was fun."),
        ("commitments", "Marketing would look into rubber buttons.")]  # the summary query speaks for neither
    assert notes[0].refs == frozenset({"ES2005b:10", "ES2005b:11", "ES2005b:12"})
    rows = silver_rows_of(_conv(MEETING, "qmsum"), "silver-ES2005b", notes, ("decisions", "commitments"))
    decisions = {r.sentence: r.labels["decisions"] for r in rows}
    assert decisions["We agreed to use the glow in the dark material, it is cheaper."] == 1
    assert decisions["So what about the glow in the dark material?"] is None  # in the span, said no decision
    assert decisions["Yeah."] is None
    assert decisions["The buttons should be rubber."] == 0
    # two content words are too few to echo an answer ("rubber buttons")
    assert {r.labels["commitments"] for r in rows if r.ref == "ES2005b:13"} == {None}
    assert {r.labels["facts"] for r in rows} == {None}


def _row(name: str, ref: str, sentence: str, **labels: int | None) -> SentenceRow:
    full = {"decisions": None, "commitments": None, "facts": None} | labels
    return SentenceRow(name, ref, 0, "Lena", sentence, 0, 1, full)


def test_agreement_counts_silver_positives_against_hand_positives_where_both_label() -> None:
    hand = [_row("locomo-0", "D1:1", "a", facts=1), _row("locomo-0", "D1:2", "b", facts=0),
            _row("locomo-0", "D1:3", "c", facts=1), _row("locomo-0", "D1:4", "d", facts=None)]
    silver = [_row("locomo-0", "D1:1", "a", facts=1), _row("locomo-0", "D1:2", "b", facts=1),
              _row("locomo-0", "D1:3", "c", facts=0), _row("locomo-0", "D1:4", "d", facts=1)]
    assert agreement(silver, hand, "facts") == (1, 1, 1)


def test_thinning_keeps_every_positive_and_every_nth_other_row() -> None:
    rows = [_row("s", f"m:{i}", str(i), decisions=1 if i in (3, 4) else 0) for i in range(10)]
    assert [r.sentence for r in _thinned(rows, 4)] == ["3", "4", "5", "9"]


def test_nothing_outside_the_development_split_is_asked_for() -> None:
    import inspect

    from workers.evals import silver_data

    source = inspect.getsource(silver_data)
    assert silver_data.DEV == "dev" and silver_data.LOCOMO_DEV == (0, 1, 2, 3, 4)
    assert '"heldout"' not in source and '"acceptance"' not in source
