"""``workers.evals.real_dc``: decisions and commitments per dev conversation, and the commitment
filters' thresholds left one conversation out. A one-session chat written here (no corpus text)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cortex_testkit import locomo_corpus

from shared.config import load_settings
from workers.conversation import learnt
from workers.evals.real_dc import GRID, SHIPPED, Knobs, knobs_set, main, score_one
from workers.evals.real_eval import RealOptions, load_real_set, real_settings

TURNS = [
    ("Ana", "We decided to rent the lake cabin for our July trip."),
    ("Ben", "Great. You need to send the deposit to the owner by Friday."),
    ("Ana", "I'll send you the course schedule by Friday."),
    ("Ben", "Thanks!"),
]
LABELS: dict[str, Any] = {
    "source": "locomo", "conversation": "0", "split": "dev",
    "threads": [],
    "decisions": [{"what": "rent the lake cabin for the July trip", "refs": ["D1:1"]}],
    "commitments": [{"owner": "Ana", "what": "send the deposit to the cabin owner", "due": "2024-05-03",
                     "status": "open", "refs": ["D1:2"]},
                    {"owner": "Ana", "what": "send Ben the course schedule", "due": "2024-05-03", "status": "open",
                     "refs": ["D1:3"]}],
    "facts": [], "rules": [],
}


def _sample(i: int) -> dict[str, Any]:
    conv: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben", "session_1_date_time": "6:05 pm on 1 May, 2024",
                            "session_1": [{"speaker": s, "dia_id": f"D1:{k}", "text": t}
                                          for k, (s, t) in enumerate(TURNS, 1)]}
    return {"sample_id": f"dc-{i}", "conversation": conv, "qa": []}


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    return locomo_corpus(tmp_path, _sample, LABELS)


def test_both_levels_are_scored_and_a_task_asked_of_another_is_stored(corpus: tuple[Path, Path]) -> None:
    locomo, labels = corpus
    (item,), _ = load_real_set(RealOptions(split="dev", locomo=str(locomo), labels=str(labels)))
    examples: list[str] = []
    counts = score_one(item, real_settings(load_settings({})), examples)
    assert (counts[("decisions", "stored")].tp, counts[("decisions", "briefing")].tp) == (1, 1)
    # Ben's "You need to send the deposit … by Friday" is stored and shown ("asked by Ben": the
    # owner check does not apply to a promiser who is no speaker), as is Ana's own promise
    assert (counts[("commitments", "stored")].tp, counts[("commitments", "stored")].fp) == (2, 0)
    assert counts[("commitments", "briefing")].tp == 2
    assert examples == []


def test_the_knobs_replace_the_shipped_thresholds_only_for_their_duration() -> None:
    shipped = learnt._shipped()["commitments"].threshold
    with knobs_set(Knobs(filter_at=float("-inf"), reply_at=5.0)):
        assert learnt._shipped()["commitments"].threshold == float("-inf")
        assert learnt._shipped_replies()["commitments"].keep == 5.0
    assert learnt._shipped()["commitments"].threshold == shipped
    assert SHIPPED in GRID


def test_the_report_prints_each_conversation_and_the_left_out_choice(
        corpus: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    locomo, labels = corpus
    monkeypatch.setattr("workers.evals.real_eval.load_real_set",
                        lambda options: load_real_set(RealOptions(split="dev", locomo=str(locomo),
                                                                  labels=str(labels))))
    assert main(["--locomo", str(locomo)]) == 0
    out = capsys.readouterr().out
    assert "locomo-0" in out and "leave one conversation out" in out and "LOO" in out
    assert "Misses and extras" not in out
    assert main(["--locomo", str(locomo), "--examples"]) == 0
    assert "Misses and extras (shipped):" in capsys.readouterr().out


def test_a_missing_corpus_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--locomo", str(tmp_path / "nothing.json")]) == 1
    assert capsys.readouterr().err.startswith("real_dc: ")
