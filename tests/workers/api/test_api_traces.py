"""The traces and operations queries of the api worker (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from schemas.api import OperationsRequest, TracesRequest
from schemas.docs import Finding, Integrity, Operation, OperationsDoc, TraceDoc, Triage
from workers.api.core import QueryError, query_operations, query_traces

NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)


def finding(i: int, signal: str, severity: str, session: str = "s1", keep: bool | None = None) -> Finding:
    return Finding(id=f"f{i}", signal=signal, severity=severity, summary="x", events=[],  # type: ignore[arg-type]
                   first_ts=NOW, last_ts=NOW + timedelta(minutes=i), session=session,
                   triage=None if keep is None else Triage(keep=keep, severity="low"))


DOC = TraceDoc(updated=NOW, integrity=Integrity(), findings=[
    finding(1, "tool_fail", "low"), finding(2, "doom_loop", "high"), finding(3, "correction", "medium", "s2"),
    finding(4, "hallucination", "critical", keep=False),
])


def test_findings_come_newest_first_filtered_by_signal_least_severity_and_session() -> None:
    assert [f.id for f in query_traces(DOC, TracesRequest())] == ["f3", "f2", "f1"]
    assert [f.id for f in query_traces(DOC, TracesRequest(severity="medium"))] == ["f3", "f2"]
    assert [f.id for f in query_traces(DOC, TracesRequest(signal="doom_loop"))] == ["f2"]
    assert [f.id for f in query_traces(DOC, TracesRequest(session="s2"))] == ["f3"]
    assert [f.id for f in query_traces(DOC, TracesRequest(dismissed=True, limit=1))] == ["f4"]
    assert query_traces(None, TracesRequest()) == []
    with pytest.raises(QueryError):
        query_traces(DOC, TracesRequest(limit=0))


def test_operations_unread_means_what_the_agent_must_still_hear() -> None:
    def op(i: str, status: str, seen: bool, open_: bool = False) -> Operation:
        return Operation(id=i, tool="t", status=status, started=NOW + timedelta(minutes=len(i)),  # type: ignore[arg-type]
                         seen=seen, open=open_)

    doc = OperationsDoc(updated=NOW, integrity=Integrity(), operations=[
        op("a", "pending", False), op("bb", "completed", False), op("ccc", "completed", True),
        op("dddd", "pending", False, open_=True)])
    assert [o.id for o in query_operations(doc, OperationsRequest())] == ["dddd", "ccc", "bb", "a"]
    assert [o.id for o in query_operations(doc, OperationsRequest(unread=True))] == ["bb", "a"]
    assert [o.id for o in query_operations(doc, OperationsRequest(status="completed"))] == ["ccc", "bb"]
