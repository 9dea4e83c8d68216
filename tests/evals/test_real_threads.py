"""``workers.evals.real_threads``: recall families for Active Threads, each scored on every morning
and chosen leaving one conversation out. A two-session chat written here (no corpus text)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cortex_testkit import PLAN_FIRST, PLAN_LABELS, PLAN_SECOND, locomo_corpus, two_sessions

from shared.config import load_settings
from workers.conversation.patterns import get_patterns
from workers.evals.briefing import Counts
from workers.evals.real_eval import RealOptions, load_real_set, real_settings
from workers.evals.real_mornings import cut
from workers.evals.real_threads import (
    asked,
    first_person,
    leave_one_out,
    main,
    news,
    open_question,
    report,
    returned,
    said_in,
    score,
)

SECOND = [*PLAN_SECOND, ("Ana", "We still need to decide about the summer road trip.")]
LABELS = PLAN_LABELS


_sample = two_sessions("threads", PLAN_FIRST, SECOND)


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    return locomo_corpus(tmp_path, _sample, LABELS)


def test_each_family_proposes_the_plan_and_not_the_chatter(corpus: tuple[Path, Path]) -> None:
    locomo, labels = corpus
    (item,), _ = load_real_set(RealOptions(split="dev", locomo=str(locomo), labels=str(labels)))
    phrases = said_in(item, get_patterns(real_settings(load_settings({})).languages))
    plan = [s for s in phrases if s.phrase == "study abroad program"]
    assert plan and plan[0].engaged and plan[0].speaker == "Ana" and plan[0].head == "program"
    assert not any(s.engaged for s in phrases if "ice cream" in s.phrase)  # said, by nobody of their own doing
    first = cut(item, 1)
    assert first_person(1, 1, "phrase", 3)(first, phrases, 1) == ["study abroad program"]
    assert first_person(1, 2, "phrase", 3)(first, phrases, 0) == []  # nothing said yet by that morning
    assert news(1, 1, 1, "engaged")(first, phrases, 1) == ["study abroad program"]
    # said in two sessions by both, one of them of her own doing; "ice cream" by both in two, never so
    assert returned(1, 1, True, 2, True)(item, phrases, 2) == ["study abroad program"]
    assert "ice cream" not in returned(1, 3, True, 2, True)(item, phrases, 2)
    assert "ice cream" in returned(1, 3, True, 2, False)(item, phrases, 2)
    assert asked(1, 1, True)(item, phrases, 2) == ["study abroad program"]
    assert asked(1, 1, True)(first, phrases, 1) == []  # Ben asks in the second session
    assert open_question(1, 1, 0)(item, phrases, 2) == ["summer road trip"]
    assert open_question(1, 1, 0)(first, phrases, 1) == []


def test_the_families_are_scored_and_left_one_out(corpus: tuple[Path, Path]) -> None:
    locomo, labels = corpus
    items, _ = load_real_set(RealOptions(split="dev", locomo=str(locomo), labels=str(labels)))
    settings = real_settings(load_settings({}))
    scores = score(items, settings, [("off", None), ("plan", first_person(2, 1, "phrase", 3))])
    every, last = scores["plan"]["locomo-0"]
    off_every, off_last = scores["off"]["locomo-0"]
    # the threads core opens nothing here; the family's line is the labelled plan on both mornings
    assert (off_every.tp, off_every.fn, off_last.fn) == (0, 2, 1)
    assert (every.tp, every.fp, every.fn) == (2, 0, 0) and (last.tp, last.fp) == (1, 0)
    # one conversation: left out, the others are none, every variant ties and "off" (first) is chosen
    loo_every, loo_last, chosen = leave_one_out(scores, 0.5)
    assert chosen == {"locomo-0": "off"}
    assert (loo_every.tp, loo_every.fn, loo_last.fn) == (0, 2, 1)
    assert isinstance(loo_every, Counts)


def test_the_report_and_the_command_line(corpus: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    locomo, labels = corpus
    items, _ = load_real_set(RealOptions(split="dev", locomo=str(locomo), labels=str(labels)))
    text = report(items, real_settings(load_settings({})))
    assert text.splitlines()[0].startswith("Active Threads with each recall family added")
    for family in ("first_person", "news", "returned", "open_question", "asked"):
        assert f"\n{family}: off " in text
    assert "LOO by F0.5" in text and "in sample, best F1" in text
    assert main(["--locomo", str(locomo.parent / "missing.json")]) == 1
    assert "real_threads:" in capsys.readouterr().err
