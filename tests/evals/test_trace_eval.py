"""``cortex eval traces``: the labelled cases and the floors the trace analyzer must keep.

The numbers are in docs/traces.md; the whole set runs through the pure core in a second."""

from __future__ import annotations

import argparse

import pytest

from schemas.types import SIGNALS
from shared.config import load_settings
from workers.evals import cli as eval_cli
from workers.evals import traces


def test_the_set_covers_every_signal_in_several_languages_and_clean_sessions() -> None:
    cases = traces.load_dataset(traces.SAMPLE_TRACES).cases
    expected = {s for c in cases for s in c.expect}
    assert expected == set(SIGNALS)
    assert sum(1 for c in cases if not c.expect) >= 20
    assert len({c.language for c in cases}) >= 10  # the ten pattern languages (and "all")


@pytest.mark.parametrize("path", [traces.SAMPLE_TRACES, traces.HELDOUT_TRACES])
def test_clean_cases_give_no_findings_and_signals_keep_their_floors(path: object) -> None:
    scores = traces.score(traces.load_dataset(path))  # type: ignore[arg-type]
    assert scores.clean_with_findings == []
    for signal, score in scores.signals.items():
        assert score.precision >= 0.9, (signal, score.false_alarms)
        assert score.recall >= 0.8, (signal, score.misses)


async def test_the_command_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(file="heldout")
    assert await eval_cli.cmd_eval_traces(args, load_settings({})) == 0
    out = capsys.readouterr().out
    assert "trace eval: traces_heldout.json" in out and "doom_loop" in out and "precision" in out
    assert await eval_cli.cmd_eval_traces(argparse.Namespace(file="/nonexistent.json"), load_settings({})) == 1
