"""``workers.evals.real_mornings``: the BOOTSTRAP's selection scored on the morning after every
session, with the labels as they stood then. A two-session chat written here (no corpus text)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cortex_testkit import locomo_corpus, two_sessions

from shared.config import load_settings
from workers.evals.real_eval import RealOptions, load_real_set, real_settings
from workers.evals.real_mornings import cut, format_mornings, main, score_mornings

FIRST = [
    ("Ana", "I finally booked the pottery course at the community centre."),
    ("Ben", "Nice! When does it start?"),
    ("Ana", "Next Tuesday. I'll send you the course schedule by Friday."),
    ("Ben", "We decided to rent the lake cabin for our July trip, by the way."),
]
SECOND = [
    ("Ben", "How was the first class?"),
    ("Ana", "Great, and I sent you the course schedule yesterday."),
    ("Ben", "Thanks, it looks fun."),
]
LABELS: dict[str, Any] = {
    "source": "locomo", "conversation": "0", "split": "dev",
    "threads": [{"title": "Ana's pottery course", "refs": ["D1:1", "D2:1"], "state": "closed"}],
    "decisions": [{"what": "rent the lake cabin for the July trip", "refs": ["D1:4"]}],
    "commitments": [{"owner": "Ana", "what": "send Ben the course schedule", "due": "2024-05-03", "status": "done",
                     "refs": ["D1:3", "D2:2"]}],
    "facts": [], "rules": [],
}


_sample = two_sessions("mornings", FIRST, SECOND)


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    return locomo_corpus(tmp_path, _sample, LABELS)


def test_the_labels_stand_as_they_did_after_each_session(corpus: tuple[Path, Path]) -> None:
    locomo, labels = corpus
    (item,), _ = load_real_set(RealOptions(split="dev", locomo=str(locomo), labels=str(labels)))
    first = cut(item, 1)
    assert [t.ref for t in first.conv.turns] == ["D1:1", "D1:2", "D1:3", "D1:4"]
    assert first.conv.morning.isoformat().startswith("2024-05-04T09:00")
    (promise,) = first.labels.commitments  # done only at D2:2: still open the first morning
    assert (promise.status, promise.refs) == ("open", ["D1:3"])
    (thread,) = first.labels.threads
    assert (thread.state, thread.refs) == ("open", ["D1:1"])
    assert [d.what for d in first.labels.decisions] == ["rent the lake cabin for the July trip"]
    last = cut(item, 2)
    assert last.labels == item.labels and last.conv.turns == item.conv.turns


def test_every_morning_is_scored_as_the_briefing_selects(corpus: tuple[Path, Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    locomo, labels = corpus
    items, _ = load_real_set(RealOptions(split="dev", locomo=str(locomo), labels=str(labels)))
    result = score_mornings(items, real_settings(load_settings({})))
    assert result.mornings == 2
    every, last = result.every["locomo-0"], result.last["locomo-0"]
    # the promise is owed (overdue) on the first morning and kept by the second ("I sent you …")
    assert (every["commitments"].tp, every["commitments"].fp) == (1, 0)
    assert (last["commitments"].tp, last["commitments"].fp, last["commitments"].fn) == (0, 0, 0)
    assert every["decisions"].tp == 2 and last["decisions"].tp == 1  # shown both mornings, within 14 days
    text = format_mornings(result)
    assert text.startswith("BOOTSTRAP selection on 2 mornings of 1 conversations (dev split)")
    assert "  decisions    1.000 1.000 (2/0/0)" in text
    assert main(["--locomo", str(locomo.parent / "missing.json")]) == 1
    assert "real_mornings:" in capsys.readouterr().err
