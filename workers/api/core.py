"""Pure query logic of the API worker: filters, ordering and a small ranked search."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime

from schemas.api import (
    CommitmentsRequest,
    DecisionsRequest,
    OperationsRequest,
    SearchHit,
    ThreadsRequest,
    TracesRequest,
)
from schemas.docs import (
    Commitment,
    CommitmentsDoc,
    Decision,
    DecisionsDoc,
    Finding,
    KnowledgeDoc,
    Operation,
    OperationsDoc,
    Thread,
    ThreadsDoc,
    TraceDoc,
)
from schemas.types import PRIORITIES, SEVERITIES
from workers.render import commitment_task, is_unread, is_waiting

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
_WORD = re.compile(r"\w+", re.UNICODE)
_RANK = {p: i for i, p in enumerate(PRIORITIES)}


class QueryError(ValueError):
    """A request that cannot be answered as asked (the message says why)."""


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1}


def _limit(value: int | None) -> int:
    if value is None:
        return DEFAULT_LIMIT
    if not 1 <= value <= MAX_LIMIT:
        raise QueryError(f"limit must be between 1 and {MAX_LIMIT}")
    return value


def _matches(query: str | None, *texts: str) -> bool:
    if not query:
        return True
    wanted = words(query)
    have = words(" ".join(texts))
    return wanted <= have if wanted else query.lower() in " ".join(texts).lower()


def query_threads(doc: ThreadsDoc | None, req: ThreadsRequest) -> list[Thread]:
    threads = doc.threads if doc else []
    picked = [t for t in threads
              if (req.status is None or t.status == req.status)
              and (req.priority is None or t.priority == req.priority)
              and _matches(req.query, t.title, t.summary, " ".join(t.decisions), t.waiting_for or "")]
    picked.sort(key=lambda t: (t.status != "open", _RANK[t.priority], -t.last_activity.timestamp(), t.id))
    return picked[: _limit(req.limit)]


def _since(value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value).date() if "T" in value else date.fromisoformat(value)
    except ValueError as exc:
        raise QueryError(f"since must be YYYY-MM-DD or an RFC 3339 time, not {value!r}") from exc


def query_decisions(doc: DecisionsDoc | None, req: DecisionsRequest) -> list[Decision]:
    since = _since(req.since)
    picked = [d for d in (doc.decisions if doc else [])
              if (since is None or date.fromisoformat(d.date) >= since)
              and (req.impact is None or d.impact == req.impact)
              and _matches(req.query, d.what, d.why, d.who)]
    picked.sort(key=lambda d: (-d.extracted_at.timestamp(), d.id))
    return picked[: _limit(req.limit)]


def query_commitments(doc: CommitmentsDoc | None, req: CommitmentsRequest) -> list[Commitment]:
    picked = [c for c in (doc.commitments if doc else [])
              if (req.status is None or c.status == req.status)
              and (req.who is None or c.who.lower() == req.who.lower())]
    picked.sort(key=lambda c: (c.status == "done", -c.created.timestamp(), c.id))
    return picked[: _limit(req.limit)]


def _score(query: set[str], text: str, weight: float) -> float:
    have = words(text)
    if not query or not have:
        return 0.0
    hit = len(query & have)
    return round(weight * hit / len(query), 6) if hit else 0.0


def _candidates(threads: ThreadsDoc | None, decisions: DecisionsDoc | None, commitments: CommitmentsDoc | None,
                knowledge: KnowledgeDoc | None) -> Iterable[tuple[str, str, str, float]]:
    for t in threads.threads if threads else []:
        yield "thread", t.id, f"{t.title} — {t.summary}", 1.0 if t.status == "open" else 0.8
    for d in decisions.decisions if decisions else []:
        yield "decision", d.id, d.what, 0.95
    for c in commitments.commitments if commitments else []:
        yield "commitment", c.id, f"{c.who}: {commitment_task(c)}", 0.9
    if knowledge is not None:
        for f in knowledge.facts:
            yield "fact", f.id, f"{f.subject} {f.predicate} {f.object}", 0.85 * max(f.relevance, 0.1) + 0.15
        for e in knowledge.entities:
            yield "entity", e.id, e.value, 0.7


def search(query: str, limit: int | None, threads: ThreadsDoc | None, decisions: DecisionsDoc | None,
           commitments: CommitmentsDoc | None, knowledge: KnowledgeDoc | None) -> list[SearchHit]:
    """Ranked hits across threads, decisions, commitments, facts and entities.

    Score: the share of query words found in the item's text, times a per-kind weight
    (open threads first, facts weighted by their relevance). Ties break by kind, then id.
    """
    if not query.strip():
        raise QueryError("query must not be empty")
    wanted = words(query)
    hits = [SearchHit(kind=k, id=i, text=text, score=s)
            for k, i, text, w in _candidates(threads, decisions, commitments, knowledge)
            if (s := _score(wanted, text, w)) > 0]
    hits.sort(key=lambda h: (-h.score, h.kind, h.id))
    return hits[: _limit(limit)]


_SEVERITY = {s: i for i, s in enumerate(SEVERITIES)}


def query_traces(doc: TraceDoc | None, req: TracesRequest) -> list[Finding]:
    findings = doc.findings if doc else []
    least = _SEVERITY[req.severity] if req.severity else 0
    picked = [f for f in findings
              if (req.signal is None or f.signal == req.signal)
              and _SEVERITY[f.severity] >= least
              and (req.session is None or f.session == req.session)
              and (req.dismissed or f.triage is None or f.triage.keep)]
    picked.sort(key=lambda f: (-f.last_ts.timestamp(), f.id))
    return picked[: _limit(req.limit)]


def query_operations(doc: OperationsDoc | None, req: OperationsRequest) -> list[Operation]:
    ops = doc.operations if doc else []
    picked = [op for op in ops
              if (req.status is None or op.status == req.status)
              and (not req.unread or is_unread(op) or is_waiting(op))]
    picked.sort(key=lambda op: (-op.started.timestamp(), op.id))
    return picked[: _limit(req.limit)]
