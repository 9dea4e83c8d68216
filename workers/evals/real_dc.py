"""Decisions and commitments per development conversation, and their fitted knobs left one
conversation out (issue 37, tenth round; docs/briefing-eval.md).

For each dev conversation the pure decisions and commitments cores run in stream order (as
``real_mornings`` does) and two levels are scored with the eval's matcher: **stored** (every
decision and commitment of the documents at the end) and **BOOTSTRAP** (the last morning's
Recent Decisions and Commitments, at the default knobs) — the pipeline's numbers for these two
sections, conversation by conversation. Then the fitted parts of commitments — the learnt
filter's threshold (fourth round) and the reply filter's (eighth round) — are varied on a grid,
and **leave one conversation out** chooses a setting by F1 over the other conversations
(stored and BOOTSTRAP counts summed) and scores it on the one left out. The models' weights
themselves were trained on these conversations (``learnt_train --loo`` and ``reader_train --loo``
retrain them per fold); here only their thresholds are out of sample.

Development split only: ``python -m workers.evals.real_dc --locomo … --qmsum …``
(``--examples`` adds every miss and extra item of the shipped setting).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

import msgspec

from schemas.events import MessageEvent
from shared.config import Settings
from workers.conversation import learnt
from workers.conversation.patterns import get_patterns
from workers.decisions import commitments as commitments_core
from workers.decisions import core as decisions_core
from workers.decisions.briefing import (
    CommitmentsBriefingSettings,
    DecisionsBriefingSettings,
    commitments_section,
    recent_decisions,
)
from workers.evals.briefing import Counts, conversation_events
from workers.evals.real_eval import (
    LevelScore,
    Loaded,
    as_conversation,
    briefing_candidates,
    cell,
    dev_tool_main,
    score_section,
)
from workers.evals.real_match import Candidate

KINDS = ("decisions", "commitments")
LEVELS = ("stored", "briefing")
COMMITMENTS_CHARS = 1000  # the Commitments section's budget, as ``real_mornings``

Cell = dict[tuple[str, str], Counts]  # (kind, level) -> counts


@dataclass(frozen=True)
class Knobs:
    """The commitments filters' thresholds (None: the shipped one; -inf: the filter off)."""

    filter_at: float | None = None
    reply_at: float | None = None

    def label(self) -> str:
        def one(x: float | None) -> str:
            return "shipped" if x is None else ("off" if x == float("-inf") else f"{x:g}")
        return f"filter {one(self.filter_at)}, reply {one(self.reply_at)}"


@contextlib.contextmanager
def knobs_set(knobs: Knobs) -> Iterator[None]:
    """The shipped tables with their thresholds replaced, for the duration."""
    shipped, replies = learnt._shipped(), learnt._shipped_replies()
    saved_f, saved_r = dict(shipped), dict(replies)
    if knobs.filter_at is not None:
        shipped.update({k: msgspec.structs.replace(t, threshold=knobs.filter_at) for k, t in saved_f.items()})
    if knobs.reply_at is not None:
        replies.update({k: msgspec.structs.replace(t, keep=knobs.reply_at) for k, t in saved_r.items()})
    try:
        yield
    finally:
        shipped.clear()
        shipped.update(saved_f)
        replies.clear()
        replies.update(saved_r)


def score_one(item: Loaded, settings: Settings, examples: list[str] | None = None) -> Cell:
    """Stored and BOOTSTRAP counts of decisions and commitments for one conversation."""
    patterns = get_patterns(settings.languages)
    tz = ZoneInfo(settings.timezone)
    decisions = commitments = None
    for placed in conversation_events(as_conversation(item.conv)):
        event = placed.event
        if isinstance(event, MessageEvent):
            decisions = decisions_core.apply_message(decisions, event, settings.decisions, patterns, tz)
            commitments = commitments_core.apply_message(commitments, event, settings.commitments, patterns, tz)
    stored_d = decisions.decisions if decisions else []
    stored_c = commitments.commitments if commitments else []
    morning = item.conv.morning
    knobs = DecisionsBriefingSettings()
    shown_d = recent_decisions(stored_d, morning, tz, knobs.decision_recency_days, knobs.max_decisions_in_boot)
    windows = CommitmentsBriefingSettings()
    text, _ = commitments_section(stored_c, morning, tz, COMMITMENTS_CHARS, undated_days=windows.commitment_days,
                                  overdue_days=windows.overdue_days)
    cands = {
        ("decisions", "stored"): [Candidate(d.what) for d in stored_d],
        ("commitments", "stored"): [Candidate(f"{c.what} ({c.topic})" if c.topic else c.what, status=c.status,
                                              due=c.due, who=c.who) for c in stored_c],
        ("decisions", "briefing"): [Candidate(d.what) for d in shown_d],
        ("commitments", "briefing"): briefing_candidates(text)["commitments"],
    }
    out: Cell = {}
    for (kind, level), found in cands.items():
        score = LevelScore()
        score_section(item, kind, level, found, knobs.decision_recency_days, score)
        out[(kind, level)] = score.counts[kind]
        if examples is not None:
            examples += [x for x in score.examples if " matched: " not in x]
    return out


def f1(c: Counts) -> float:
    return 2 * c.tp / (2 * c.tp + c.fp + c.fn) if c.tp else 0.0


def _sum(cells: Sequence[Cell], key: tuple[str, str]) -> Counts:
    total = Counts()
    for one in cells:
        total.add(one[key])
    return total


def _both(cells: Sequence[Cell], kind: str) -> Counts:
    total = Counts()
    for level in LEVELS:
        total.add(_sum(cells, (kind, level)))
    return total


GRID: tuple[Knobs, ...] = tuple(Knobs(f, r) for f in (float("-inf"), -3.5, -2.5, -1.5, -0.5)
                                for r in (float("-inf"), 0.0, 1.0, 2.0))
SHIPPED = Knobs(-2.5, 1.0)


def report(items: Sequence[Loaded], settings: Settings, show_examples: bool) -> str:
    names = [item.labels.name for item in items]
    lines = ["Decisions and commitments per dev conversation (pure cores; stored | last-morning BOOTSTRAP)",
             f"  {'conversation':14} {'decisions stored':24} {'decisions BOOT':24} {'commitments stored':24} "
             "commitments BOOT"]
    examples: list[str] = []
    shipped = [score_one(item, settings, examples if show_examples else None) for item in items]
    for name, one in [*zip(names, shipped, strict=True), ("all", None)]:
        row = [cell((one[(k, lv)] if one is not None else _sum(shipped, (k, lv))).as_dict())
               for k in KINDS for lv in LEVELS]
        lines.append(f"  {name:14} " + " ".join(f"{x:24}" for x in row))
    by_knobs: dict[Knobs, list[Cell]] = {}
    for knobs in GRID:
        with knobs_set(knobs):
            by_knobs[knobs] = [score_one(item, settings) for item in items]
    lines.append("Commitments: the grid in sample (stored + BOOTSTRAP counts; F1 of their sum)")
    for knobs, cells in by_knobs.items():
        both = _both(cells, "commitments")
        lines.append(f"  {knobs.label():28} stored {cell(_sum(cells, ('commitments', 'stored')).as_dict()):24} "
                     f"BOOT {cell(_sum(cells, ('commitments', 'briefing')).as_dict()):24} F1 {f1(both):.3f}")
    off, learnt_only = Knobs(float("-inf"), float("-inf")), Knobs(-2.5, float("-inf"))
    lines.append("Commitments per conversation, stored (BOOTSTRAP): both filters off | learnt filter only | shipped")
    for i, name in enumerate(names):
        row = [f"{cell(by_knobs[k][i][('commitments', 'stored')].as_dict())} "
               f"({cell(by_knobs[k][i][('commitments', 'briefing')].as_dict()).split('(')[-1]}"
               for k in (off, learnt_only, SHIPPED)]
        lines.append(f"  {name:14} " + " | ".join(row))
    lines.append("Commitments: leave one conversation out (chosen by F1 on the others; ties keep the shipped)")
    chosen: list[Cell] = []
    for i, name in enumerate(names):
        def others(knobs: Knobs, left: int = i) -> float:
            return f1(_both([c for j, c in enumerate(by_knobs[knobs]) if j != left], "commitments"))
        best = max(GRID, key=lambda k: (round(others(k), 6), k == SHIPPED))
        chosen.append(by_knobs[best][i])
        lines.append(f"  {name:14} chooses {best.label():28} "
                     f"stored {cell(by_knobs[best][i][('commitments', 'stored')].as_dict()):24} "
                     f"BOOT {cell(by_knobs[best][i][('commitments', 'briefing')].as_dict())}")
    lines.append(f"  {'LOO':14} {'':37} stored {cell(_sum(chosen, ('commitments', 'stored')).as_dict()):24} "
                 f"BOOT {cell(_sum(chosen, ('commitments', 'briefing')).as_dict())}")
    if show_examples:
        lines += ["Misses and extras (shipped):", *(f"  {x}" for x in examples)]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    return dev_tool_main("workers.evals.real_dc", (__doc__ or "").split("\n")[0],
                         lambda items, settings: report(items, settings, False), argv,
                         examples=lambda items, settings: report(items, settings, True))


if __name__ == "__main__":
    sys.exit(main())
