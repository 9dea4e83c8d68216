"""The api worker's pure query core: filters, ordering, limits and the ranked search
(traces and operations: test_api_traces.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from schemas.api import CommitmentsRequest, DecisionsRequest, ThreadsRequest
from schemas.docs import (
    Commitment,
    CommitmentsDoc,
    Decision,
    DecisionsDoc,
    Entity,
    Fact,
    Integrity,
    KnowledgeDoc,
    Thread,
    ThreadsDoc,
)
from schemas.types import CommitmentStatus, Impact, Priority, ThreadStatus
from workers.api.core import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    QueryError,
    query_commitments,
    query_decisions,
    query_threads,
    search,
)

T0 = datetime(2026, 2, 17, 9, tzinfo=UTC)


def thread(tid: str, title: str, status: ThreadStatus = "open", priority: Priority = "medium", minutes: int = 0,
           summary: str = "", decisions: tuple[str, ...] = (), waiting_for: str | None = None) -> Thread:
    at = T0 + timedelta(minutes=minutes)
    return Thread(id=tid, title=title, status=status, priority=priority, summary=summary, decisions=list(decisions),
                  waiting_for=waiting_for, mood="neutral", last_activity=at, created=T0)


def threads(*items: Thread) -> ThreadsDoc:
    return ThreadsDoc(updated=T0, session_mood="neutral", threads=list(items), integrity=Integrity())


def decision(did: str, what: str, day: str = "2026-02-17", minutes: int = 0, impact: Impact = "medium",
             why: str = "", who: str = "albert") -> Decision:
    return Decision(id=did, what=what, date=day, why=why, impact=impact, who=who,
                    extracted_at=T0 + timedelta(minutes=minutes))


def decisions(*items: Decision) -> DecisionsDoc:
    return DecisionsDoc(updated=T0, decisions=list(items), integrity=Integrity())


def commitment(cid: str, who: str, what: str, status: CommitmentStatus = "open", minutes: int = 0) -> Commitment:
    return Commitment(id=cid, who=who, what=what, status=status, created=T0 + timedelta(minutes=minutes),
                      source_event=f"e-{cid}")


def commitments(*items: Commitment) -> CommitmentsDoc:
    return CommitmentsDoc(updated=T0, commitments=list(items), integrity=Integrity())


def ids(items: list[Thread] | list[Decision] | list[Commitment]) -> list[str]:
    return [i.id for i in items]


THREADS = threads(
    thread("t-low-new", "Docs cleanup", priority="low", minutes=30),
    thread("t-closed", "Auth migration done", status="closed", priority="critical", minutes=40),
    thread("t-high-old", "Auth migration", priority="high", minutes=0, summary="Move logins to the new IdP"),
    thread("t-high-new", "Billing export", priority="high", minutes=20, waiting_for="finance sign-off"),
    thread("t-high-tie-b", "Tie", priority="high", minutes=20),
    thread("t-crit", "Outage follow-up", priority="critical", minutes=5, decisions=("roll back the auth proxy",)),
)


def test_threads_open_first_then_by_priority_then_the_latest_then_the_id() -> None:
    assert ids(query_threads(THREADS, ThreadsRequest())) == [
        "t-crit", "t-high-new", "t-high-tie-b", "t-high-old", "t-low-new", "t-closed"]


def test_threads_filter_by_status_priority_and_every_query_word() -> None:
    assert ids(query_threads(THREADS, ThreadsRequest(status="closed"))) == ["t-closed"]
    assert ids(query_threads(THREADS, ThreadsRequest(priority="high", status="open"))) == [
        "t-high-new", "t-high-tie-b", "t-high-old"]
    # every word, in any of title, summary, decisions and what it waits for, any case
    assert ids(query_threads(THREADS, ThreadsRequest(query="AUTH migration"))) == ["t-high-old", "t-closed"]
    assert ids(query_threads(THREADS, ThreadsRequest(query="new idp"))) == ["t-high-old"]
    assert ids(query_threads(THREADS, ThreadsRequest(query="auth proxy"))) == ["t-crit"]
    assert ids(query_threads(THREADS, ThreadsRequest(query="finance"))) == ["t-high-new"]
    assert query_threads(THREADS, ThreadsRequest(query="auth payroll")) == []


def test_a_query_without_words_matches_as_a_substring() -> None:
    doc = threads(thread("t1", "C# & F# interop"), thread("t2", "Rust"))
    assert ids(query_threads(doc, ThreadsRequest(query="#"))) == ["t1"]


def test_no_document_is_no_items() -> None:
    assert query_threads(None, ThreadsRequest()) == []
    assert query_decisions(None, DecisionsRequest()) == []
    assert query_commitments(None, CommitmentsRequest()) == []
    assert search("auth", None, None, None, None, None) == []


@pytest.mark.parametrize("limit", [0, -1, MAX_LIMIT + 1])
def test_a_limit_out_of_range_is_refused_with_the_range(limit: int) -> None:
    with pytest.raises(QueryError, match=f"limit must be between 1 and {MAX_LIMIT}"):
        query_threads(THREADS, ThreadsRequest(limit=limit))
    with pytest.raises(QueryError, match="limit"):
        search("auth", limit, THREADS, None, None, None)


def test_the_limit_cuts_after_ordering_and_defaults_to_fifty() -> None:
    assert ids(query_threads(THREADS, ThreadsRequest(limit=2))) == ["t-crit", "t-high-new"]
    many = threads(*(thread(f"t{i:03d}", "x") for i in range(DEFAULT_LIMIT + 10)))
    assert len(query_threads(many, ThreadsRequest())) == DEFAULT_LIMIT
    assert len(query_threads(many, ThreadsRequest(limit=MAX_LIMIT))) == DEFAULT_LIMIT + 10


DECISIONS = decisions(
    decision("d-old", "Use Postgres", day="2026-02-10", minutes=-60 * 24 * 7, impact="high", why="JSONB"),
    decision("d-b", "Ship on Monday", minutes=10, who="Maria"),
    decision("d-a", "Freeze the API", minutes=10, impact="critical"),
    decision("d-new", "Drop the cron", minutes=30),
)


def test_decisions_newest_first_filtered_by_since_impact_and_query() -> None:
    assert ids(query_decisions(DECISIONS, DecisionsRequest())) == ["d-new", "d-a", "d-b", "d-old"]
    assert ids(query_decisions(DECISIONS, DecisionsRequest(since="2026-02-17"))) == ["d-new", "d-a", "d-b"]
    # an RFC 3339 time counts by its date
    assert ids(query_decisions(DECISIONS, DecisionsRequest(since="2026-02-11T23:00:00+00:00"))) == [
        "d-new", "d-a", "d-b"]
    assert ids(query_decisions(DECISIONS, DecisionsRequest(impact="critical"))) == ["d-a"]
    assert ids(query_decisions(DECISIONS, DecisionsRequest(query="jsonb"))) == ["d-old"]  # why
    assert ids(query_decisions(DECISIONS, DecisionsRequest(query="maria"))) == ["d-b"]  # who


@pytest.mark.parametrize("since", ["last week", "2026-13-01", "17.02.2026"])
def test_a_since_that_is_no_date_is_refused_saying_what_is(since: str) -> None:
    with pytest.raises(QueryError, match=r"since must be YYYY-MM-DD or an RFC 3339 time, not '"):
        query_decisions(DECISIONS, DecisionsRequest(since=since))


def test_commitments_open_before_done_newest_first_and_by_who_in_any_case() -> None:
    doc = commitments(commitment("c-done", "albert", "send the report", status="done", minutes=50),
                      commitment("c-old", "Albert", "review the PR", minutes=0),
                      commitment("c-new", "maria", "book the room", minutes=20),
                      commitment("c-over", "albert", "fix the alert", status="overdue", minutes=10))
    assert ids(query_commitments(doc, CommitmentsRequest())) == ["c-new", "c-over", "c-old", "c-done"]
    assert ids(query_commitments(doc, CommitmentsRequest(who="ALBERT"))) == ["c-over", "c-old", "c-done"]
    assert ids(query_commitments(doc, CommitmentsRequest(status="overdue"))) == ["c-over"]


def knowledge() -> KnowledgeDoc:
    fact = Fact(id="f1", subject="auth", predicate="uses", object="keycloak", relevance=1.0, created_at=T0,
                last_accessed=T0, source="ingested")
    faint = Fact(id="f0", subject="auth", predicate="was", object="ldap", relevance=0.0, created_at=T0,
                 last_accessed=T0, source="ingested")
    entity = Entity(id="e1", type="product", value="Auth proxy", mentions=["m1"], count=1, importance=0.5,
                    last_seen=T0, source=["regex"])
    return KnowledgeDoc(updated=T0, entities=[entity], facts=[fact, faint], integrity=Integrity())


def test_search_ranks_by_the_share_of_query_words_times_the_kind_weight() -> None:
    docs = (threads(thread("t-open", "Auth migration"), thread("t-closed", "Auth migration", status="closed")),
            decisions(decision("d1", "Auth goes to Keycloak")),
            commitments(commitment("c1", "albert", "document the auth flow")), knowledge())
    hits = search("auth migration", None, *docs)
    # both words of an open thread (weight 1.0), of a closed one (0.8); one word of two: a fact
    # (0.85 * relevance + 0.15), a decision (0.95), a commitment (0.9), an entity (0.7), a fact
    # of relevance 0 (counted as 0.1)
    assert [(h.kind, h.id, h.score) for h in hits] == [
        ("thread", "t-open", 1.0), ("thread", "t-closed", 0.8), ("fact", "f1", 0.5), ("decision", "d1", 0.475),
        ("commitment", "c1", 0.45), ("entity", "e1", 0.35), ("fact", "f0", 0.1175)]
    assert hits[0].text == "Auth migration — "
    assert search("payroll", None, *docs) == []


def test_search_ties_break_by_kind_then_id_and_the_limit_cuts() -> None:
    doc = decisions(decision("d2", "auth"), decision("d1", "auth"))
    tied = commitments(commitment("c9", "auth", "x"))
    hits = search("auth", None, None, doc, tied, None)
    assert [(h.kind, h.id) for h in hits] == [("decision", "d1"), ("decision", "d2"), ("commitment", "c9")]
    assert [h.id for h in search("auth", 1, None, doc, tied, None)] == ["d1"]


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_search_is_refused(query: str) -> None:
    with pytest.raises(QueryError, match="query must not be empty"):
        search(query, None, THREADS, None, None, None)
