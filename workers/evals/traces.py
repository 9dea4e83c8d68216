"""``cortex eval traces``: precision and recall of the trace analyzer's signals on labelled cases.

A case is one agent's events written as steps (a user or agent message, a tool call or
result, a run's start or end, a session's start or end, a pause) and the signals a reader
would flag in it; a clean case expects none. Each case runs through the pure trace core
(``workers.traces.core``) and is scored per signal and case: a signal found and expected is
a true positive, found and not expected a false positive, expected and not found a false
negative. The shipped set (``data/traces.json``) is in docs/traces.md with its numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from schemas.docs import TraceDoc
from schemas.events import MessageEvent, RunEvent, SessionEvent, ToolEvent
from schemas.types import SIGNALS
from shared.config import TracesSettings, parse_languages
from workers.traces.config import trace_config
from workers.traces.core import TraceEvent, apply_event

SAMPLE_TRACES = Path(__file__).parent / "data" / "traces.json"
HELDOUT_TRACES = Path(__file__).parent / "data" / "traces_heldout.json"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
STEP = timedelta(seconds=10)


class User(msgspec.Struct, tag="user", tag_field="t"):
    text: str


class Agent(msgspec.Struct, tag="agent", tag_field="t"):
    text: str


class Call(msgspec.Struct, tag="call", tag_field="t"):
    tool: str
    params: Any = None
    id: str = ""  # the runtime's call id


class Result(msgspec.Struct, tag="result", tag_field="t"):
    tool: str
    result: Any = None
    error: str | None = None
    id: str = ""


class RunStart(msgspec.Struct, tag="run_start", tag_field="t"):
    pass


class RunEnd(msgspec.Struct, tag="run_end", tag_field="t"):
    error: str | None = None


class Start(msgspec.Struct, tag="start", tag_field="t"):
    session: str = ""


class End(msgspec.Struct, tag="end", tag_field="t"):
    pass


class Wait(msgspec.Struct, tag="wait", tag_field="t"):
    minutes: float


Step = User | Agent | Call | Result | RunStart | RunEnd | Start | End | Wait


class Case(msgspec.Struct, kw_only=True):
    name: str
    steps: list[Step]
    expect: list[str] = msgspec.field(default_factory=list)
    language: str = "all"
    note: str = ""


class Dataset(msgspec.Struct, kw_only=True):
    cases: list[Case]


def load_dataset(path: Path) -> Dataset:
    return msgspec.json.decode(path.read_bytes(), type=Dataset)


def _message(step: User | Agent, common: dict[str, Any]) -> tuple[TraceEvent, str]:
    if isinstance(step, User):
        return MessageEvent(**common, role="user", content=step.text), "received"
    return MessageEvent(**common, role="assistant", content=step.text), "sent"


def _event(step: Step, common: dict[str, Any]) -> tuple[TraceEvent, str] | None:
    if isinstance(step, User | Agent):
        return _message(step, common)
    if isinstance(step, Call):
        return ToolEvent(**common, tool=step.tool, call_id=step.id or None, params=step.params), "call"
    if isinstance(step, Result):
        return ToolEvent(**common, tool=step.tool, call_id=step.id or None, result=step.result,
                         error=step.error), "result"
    if isinstance(step, RunStart):
        return RunEvent(**common), "start"
    if isinstance(step, RunEnd):
        return RunEvent(**common, error=step.error, success=step.error is None), "error" if step.error else "end"
    if isinstance(step, Start | End):
        return SessionEvent(**common), "start" if isinstance(step, Start) else "end"
    return None


def case_events(case: Case, agent: str = "eval") -> Iterator[tuple[TraceEvent, str]]:
    """The case's steps as contract events of ``agent``, ten seconds apart (a ``wait``
    moves the clock), in session ``s1`` until a ``start`` names another."""
    ts, session = START, "s1"
    for index, step in enumerate(case.steps):
        if isinstance(step, Wait):
            ts += timedelta(minutes=step.minutes)
            continue
        if isinstance(step, Start) and step.session:
            session = step.session
        common = {"id": f"{case.name}-{index}", "agent": agent, "session": session, "ts": ts}
        made = _event(step, common)
        if made is not None:
            yield made
        ts += STEP


def run_case(case: Case, settings: TracesSettings | None = None) -> TraceDoc | None:
    """The case's document (every signal on unless ``settings`` says otherwise)."""
    config = trace_config(settings or TracesSettings(signals="all"), parse_languages(case.language))
    doc: TraceDoc | None = None
    for event, kind in case_events(case):
        doc = apply_event(doc, event, kind, config) or doc
    return doc


@dataclass
class SignalScore:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    misses: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


@dataclass
class TraceScores:
    signals: dict[str, SignalScore]
    cases: int
    clean_cases: int
    clean_with_findings: list[str]


def score(dataset: Dataset, settings: TracesSettings | None = None) -> TraceScores:
    scores: dict[str, SignalScore] = {s: SignalScore() for s in SIGNALS}
    clean, noisy = 0, []
    for case in dataset.cases:
        doc = run_case(case, settings)
        found = {f.signal for f in doc.findings} if doc is not None else set()
        expected = set(case.expect)
        if not expected:
            clean += 1
            if found:
                noisy.append(case.name)
        for signal, entry in scores.items():
            if signal in found and signal in expected:
                entry.tp += 1
            elif signal in found:
                entry.fp += 1
                entry.false_alarms.append(case.name)
            elif signal in expected:
                entry.fn += 1
                entry.misses.append(case.name)
    return TraceScores(signals=scores, cases=len(dataset.cases), clean_cases=clean, clean_with_findings=noisy)


def render(scores: TraceScores) -> str:
    lines = [f"{scores.cases} cases, {scores.clean_cases} clean "
             f"({len(scores.clean_with_findings)} of them with findings)", "",
             f"{'signal':<17} {'tp':>3} {'fp':>3} {'fn':>3} {'precision':>9} {'recall':>7}"]
    for signal, s in scores.signals.items():
        lines.append(f"{signal:<17} {s.tp:>3} {s.fp:>3} {s.fn:>3} {s.precision:>9.2f} {s.recall:>7.2f}")
        for name in s.misses:
            lines.append(f"  missed in {name}")
        for name in s.false_alarms:
            lines.append(f"  false alarm in {name}")
    total = SignalScore(tp=sum(s.tp for s in scores.signals.values()), fp=sum(s.fp for s in scores.signals.values()),
                        fn=sum(s.fn for s in scores.signals.values()))
    lines.append(f"{'all':<17} {total.tp:>3} {total.fp:>3} {total.fn:>3} {total.precision:>9.2f} {total.recall:>7.2f}")
    return "\n".join(lines)
