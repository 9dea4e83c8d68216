"""``workers.evals.real_facts``: the development conversations' Known Facts per conversation and
per predicate, and a predicate selection left one conversation out. Two chats written here (no
corpus text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared.config import load_settings
from workers.evals.real_eval import RealOptions, load_real_set, real_settings
from workers.evals.real_facts import (
    ami_silver,
    by_family,
    family_of,
    fold_of,
    format_facts,
    held_in,
    kept_leaving_out,
    leave_one_out,
    main,
    score_facts,
)

CHATS = [
    [("Ana", "I'm allergic to cats, sadly."), ("Ben", "Oh no."), ("Ana", "I'm into pottery these days."),
     ("Ben", "I'm a nurse at the city hospital.")],
    [("Ana", "I'm allergic to peanuts."), ("Ben", "I'm into chess."), ("Ana", "I'm a teacher.")],
]
FACTS: list[list[dict[str, Any]]] = [
    [{"about": "Ana", "text": "Ana is allergic to cats", "refs": ["D1:1"]},
     {"about": "Ben", "text": "Ben is a nurse at the city hospital", "refs": ["D1:4"]}],
    [{"about": "Ana", "text": "Ana is allergic to peanuts", "refs": ["D1:1"]},
     {"about": "Ben", "text": "Ben plays chess", "refs": ["D1:2"]}],
]


def _sample(turns: list[tuple[str, str]]) -> dict[str, Any]:
    session = [{"speaker": s, "dia_id": f"D1:{k}", "text": t} for k, (s, t) in enumerate(turns, 1)]
    return {"sample_id": "facts", "qa": [], "conversation": {
        "speaker_a": "Ana", "speaker_b": "Ben", "session_1_date_time": "6:05 pm on 3 May, 2024", "session_1": session}}


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    locomo = tmp_path / "locomo10.json"
    locomo.write_text(json.dumps([_sample(CHATS[i % 2]) for i in range(10)]))
    labels = tmp_path / "labels"
    (labels / "dev").mkdir(parents=True)
    for i, facts in enumerate(FACTS):
        (labels / "dev" / f"locomo-{i}.json").write_text(json.dumps(
            {"source": "locomo", "conversation": str(i), "split": "dev", "facts": facts}))
    return locomo, labels


def test_each_fact_is_counted_under_its_predicate_and_conversation(corpus: tuple[Path, Path]) -> None:
    locomo, labels = corpus
    items, _ = load_real_set(RealOptions(split="dev", locomo=str(locomo), labels=str(labels)))
    scores = score_facts(items, real_settings(load_settings({})))
    stored = scores.levels["locomo-0"]["stored"]
    # allergy and job found; "is into pottery" is true but not labelled
    assert (stored.tp, stored.fp, stored.fn) == (2, 1, 0)
    # the briefing shows what no reply left untaken (thirteenth round): Ana's pottery (Ben's next words are
    # about himself) is kept, not shown; her allergy ("Oh no.") is who she is, shown taken up or not
    # (seventeenth round); Ben's nurse waits for a reply
    shown = scores.levels["locomo-0"]["briefing"]
    assert (shown.tp, shown.fp, shown.fn) == (2, 0, 0)
    allergy = scores.predicates["person is-allergic-to"]
    assert (allergy["locomo-0"].tp, allergy["locomo-1"].tp) == (1, 1)
    into = scores.predicates["person is-into"]
    assert (into["locomo-0"].fp, into["locomo-1"].fp) == (1, 1)  # wrong in both: dropped in both folds
    assert "person is-into" not in kept_leaving_out(scores, "locomo-0")
    # "is a" is right in the first chat (a nurse) and wrong in the second (a teacher nobody labelled)
    assert "person is-a" in kept_leaving_out(scores, "locomo-1")
    assert "person is-a" not in kept_leaving_out(scores, "locomo-0")
    folds = leave_one_out(scores)
    # the nurse is lost in its fold, the teacher stays in its own; "Ben plays chess" is missed either way
    assert (folds.tp, folds.fp, folds.fn) == (2, 1, 2)
    # per conversation, what it scores had it not been used to choose: the nurse lost in locomo-0
    assert (fold_of(scores, "locomo-0").tp, fold_of(scores, "locomo-0").fp, fold_of(scores, "locomo-0").fn) == (1, 0, 1)
    assert held_in(scores, ["locomo-0", "locomo-1"])["person is-allergic-to"] == (2, 0)
    assert held_in(scores, ["locomo-0", "locomo-1"])["person is-into"] == (0, 2)
    text = format_facts(scores)
    assert text.startswith("Known Facts on 2 conversations (dev split)")
    assert "  2   2/0   person is-allergic-to" in text
    assert "right in at least 2 of the 2 chats: person is-allergic-to" in text
    # by kind of statement: the allergy is an identity; "is a" joins it, "is into" is a standing taste
    families = by_family(scores)
    identity = families.predicates["identity"]
    assert (identity["locomo-0"].tp, identity["locomo-0"].fp, identity["locomo-1"].tp, identity["locomo-1"].fp) == \
        (2, 0, 1, 1)
    assert held_in(families, ["locomo-0", "locomo-1"])["standing taste"] == (0, 2)
    assert "right in at least 2 of the 2 chats: identity" in text


def test_a_predicate_belongs_to_one_kind_of_statement() -> None:
    assert [family_of(p) for p in ("person is-into", "person 's-passion-is", "person 's-favorite-book-is",
                                   "person lost-their-job-at", "person joined", "person has",
                                   "person 's-guinea-pig-is-named", "person is-a", "person is-allergic-to",
                                   "person is-named", "concept is", "concept share-finding", "person plays",
                                   "person volunteers-at")] == [
        "standing taste", "standing taste", "favourite", "a change of life", "a change of life",
        "family and pets", "family and pets", "identity", "identity", "introduction",
        "project figure or finding", "project figure or finding", "practice", "practice"]


def test_a_missing_corpus_is_one_line(corpus: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    locomo, _ = corpus
    assert main(["--locomo", str(locomo.parent / "missing.json")]) == 1
    assert capsys.readouterr().err.startswith("real_facts:")


def _meeting(tmp: Path, name: str, turns: list[tuple[str, str]]) -> None:
    (tmp / "train" / f"{name}.json").write_text(json.dumps(
        {"meeting_transcripts": [{"speaker": s, "content": t} for s, t in turns]}))


def test_every_ami_series_is_read_for_the_scenarios_figures_without_labels(tmp_path: Path) -> None:
    """Tenth round: the AMI brief is the same for every team, so whether a series says its
    figures, and whether they are kept right, needs no hand label (meetings written here)."""
    for split in ("train", "val", "test"):
        (tmp_path / split).mkdir()
    _meeting(tmp_path, "ES2091a", [
        ("Project Manager", "I'm Dana and I'm the project manager."),
        ("Project Manager", "Selling price twenty five Euros, profit aim fifty million Euros."),
        ("Marketing", "Seventy five percent of users find their remote controls ugly.")])
    _meeting(tmp_path, "ES2091b", [("Marketing", "Can we sell it for fifty Euros?")])
    _meeting(tmp_path, "TS3091a", [("Project Manager", "If we can, we sell it for twenty five Euro.")])
    _meeting(tmp_path, "Bed091", [("me013", "selling price twenty five euros")])  # ICSI: not the scenario
    text = ami_silver(tmp_path, real_settings(load_settings({})))
    lines = text.splitlines()
    assert lines[1].split() == ["ES2091", "price:S+", "cost:-.", "profit:S+", "ugly:S+", "buttons:-.", "spend:-.",
                                "lose:-.", "named:1/2"]
    assert lines[2].split()[:2] == ["TS3091", "price:S."]  # said, but only as a supposition
    assert "  ES: price 1/1/0, cost 0/0/0, profit 1/1/0, ugly 1/1/0" in text
    assert "  TS: price 1/0/0" in text
    assert "Bed091" not in text
    assert main(["--ami", "--qmsum", str(tmp_path / "missing")]) == 1
