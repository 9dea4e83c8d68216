"""``workers.evals.real_threads_ranker``: a session's phrases ranked for Active Threads, the ranker
learnt on the other conversations. The same two-session chat labelled as two dev conversations
(no corpus text), the structures only (the embedder's table is a build artefact)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cortex_testkit import PLAN_FIRST, PLAN_LABELS, PLAN_SECOND, locomo_corpus, two_sessions

from shared.config import load_settings
from workers.conversation.patterns import get_patterns
from workers.evals.real_eval import RealOptions, load_real_set, real_settings
from workers.evals.real_threads_ranker import THRESHOLDS, fit, leave_one_out, main, prepare, report

LABELS = PLAN_LABELS


_sample = two_sessions("ranker", PLAN_FIRST, PLAN_SECOND)


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    locomo, labels = locomo_corpus(tmp_path, _sample, LABELS)
    (labels / "dev" / "locomo-1.json").write_text(json.dumps({**LABELS, "conversation": "1"}))
    return locomo, labels


def test_the_plan_is_learnt_from_the_other_conversation(corpus: tuple[Path, Path]) -> None:
    locomo, labels = corpus
    items, _ = load_real_set(RealOptions(split="dev", locomo=str(locomo), labels=str(labels)))
    assert [i.labels.name for i in items] == ["locomo-0", "locomo-1"]
    settings = real_settings(load_settings({}))
    conversations = [prepare(item, settings, get_patterns(settings.languages), None) for item in items]
    first = conversations[0]
    assert first.x.shape[0] == first.y.shape[0] and 0 < first.y.sum() < first.y.shape[0]
    w = fit(conversations[1].x, conversations[1].y)
    phrases, x = first.mornings[2]
    assert x is not None
    top = phrases[int(np.argmax(x @ w))]
    assert "program" in top or "abroad" in top  # the plan, not "ice cream"
    ranked = leave_one_out(conversations)
    never, _ = ranked.fixed[THRESHOLDS[-1]]  # a threshold no score reaches: what the BOOTSTRAP shows
    assert (never.tp, never.fn) == (0, 4)  # the core opens nothing in so short a chat
    every, last = ranked.fixed[0.5]
    assert every.tp == 4 and last.tp == 2  # both mornings of both conversations


def test_the_report_and_the_command_line(corpus: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    locomo, labels = corpus
    items, _ = load_real_set(RealOptions(split="dev", locomo=str(locomo), labels=str(labels)))
    text = report(items, real_settings(load_settings({})), with_vectors=False)
    assert text.splitlines()[1] == "the structures:" and "nested by F0.5:" in text
    assert main(["--locomo", str(locomo.parent / "missing.json")]) == 1
    assert "real_threads_ranker:" in capsys.readouterr().err
