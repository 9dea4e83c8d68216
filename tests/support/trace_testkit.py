"""Builders for trace analyzer tests: a case's steps in, the findings or document out."""

from __future__ import annotations

from schemas.docs import Finding, TraceDoc
from shared.config import TracesSettings
from workers.evals.traces import (
    Agent,
    Call,
    Case,
    End,
    Result,
    RunEnd,
    RunStart,
    Start,
    Step,
    User,
    Wait,
    case_events,
    run_case,
)

__all__ = ["Agent", "Call", "End", "Result", "RunEnd", "RunStart", "Start", "User", "Wait", "case_events",
           "fail", "findings", "ok", "signals_of", "trace_doc"]


def ok(tool: str, params: object, result: object = "ok", call_id: str = "") -> list[Step]:
    return [Call(tool=tool, params=params, id=call_id), Result(tool=tool, result=result, id=call_id)]


def fail(tool: str, params: object, error: str, call_id: str = "") -> list[Step]:
    return [Call(tool=tool, params=params, id=call_id), Result(tool=tool, error=error, id=call_id)]


def trace_doc(*steps: Step | list[Step], language: str = "all", signals: str = "all", **knobs: object) -> TraceDoc:
    flat: list[Step] = [s for item in steps for s in (item if isinstance(item, list) else [item])]
    doc = run_case(Case(name="t", steps=flat, language=language), TracesSettings(signals=signals, **knobs))  # type: ignore[arg-type]
    assert doc is not None
    return doc


def findings(*steps: Step | list[Step], language: str = "all", signals: str = "all", **knobs: object) -> list[Finding]:
    return trace_doc(*steps, language=language, signals=signals, **knobs).findings


def signals_of(found: list[Finding]) -> list[str]:
    return [f.signal for f in found]
