"""Request/reply messages of the ``cortex.api.<service>.<agent>`` services (contract)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from schemas.docs import Commitment, Decision, Finding, Operation, Thread
from schemas.types import (
    CommitmentStatus,
    Impact,
    MemoryScope,
    MemoryType,
    OperationStatus,
    Priority,
    SessionId,
    Severity,
    Signal,
    ThreadStatus,
)


class BootRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=False):
    session: SessionId | None = None  # at most 128 characters (contract: Identity)
    max_chars: int | None = None
    # a briefing for one of the people the agent talks with: no memory of another person
    person: Annotated[str, Meta(min_length=1, max_length=256)] | None = None


class RecallRequest(msgspec.Struct, kw_only=True):
    query: str
    project: str | None = None
    limit: int | None = None
    budget_tokens: int | None = None
    history: bool = False  # also memories a newer one contradicted (each names it in superseded_by)
    # what was believed then: memories said by this time and not superseded at it (workers.recall.timeline)
    as_of: datetime | None = None
    # the person the agent is talking with: their memories and the shared ones, never another
    # person's (workers.recall.people)
    person: Annotated[str, Meta(min_length=1, max_length=256)] | None = None


class RecalledMemory(msgspec.Struct, kw_only=True, omit_defaults=True):
    id: str
    content: str
    type: MemoryType
    scope: MemoryScope
    score: float
    similarity: float
    source_event: str
    superseded_by: str | None = None  # only with history: the newer memory that contradicts this one
    fact_id: str | None = None  # a knowledge fact's memory: the fact's id (cortex facts, fact_access)


class RecallReply(msgspec.Struct, kw_only=True):
    memories: list[RecalledMemory]
    text: str
    tokens: int


class ConsolidateRequest(msgspec.Struct, kw_only=True):
    """``cortex.api.consolidate.<agent>``: what the agent's next session start would do to
    its memories (a dry run: memories change only through the stream)."""


class FoldedMemory(msgspec.Struct, kw_only=True):
    id: str
    content: str
    similarity: float
    source_event: str


class PlannedMerge(msgspec.Struct, kw_only=True):
    kept: str
    content: str
    type: MemoryType
    removed: list[FoldedMemory]


class ConsolidateReply(msgspec.Struct, kw_only=True):
    agent: str
    now: datetime  # the agent's latest event time applied: what a session start then would see
    memories: int
    merges: list[PlannedMerge]
    expired: list[str]
    decayed: list[str]


class MemoryVersion(msgspec.Struct, frozen=True, kw_only=True):
    """One version of a memory's statement: its text and the event that made it, when."""

    content: str
    type: MemoryType
    scope: MemoryScope
    event: str  # the event that made this version: the memory's source event, or a memory_update
    at: datetime


class MemoryRequest(msgspec.Struct, kw_only=True):
    """``cortex.api.memory.<agent>``: one memory by its id (an id folded into another names
    the memory that took it in)."""

    id: str


class MemoryReply(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The memory as stored, and ``versions``: every version of its statement, oldest
    first, the current one last (``cortex memory show --history``, the cortex_history tool)."""

    id: str
    content: str
    type: MemoryType
    scope: MemoryScope
    source_event: str
    created_at: datetime
    versions: list[MemoryVersion]
    person: str | None = None
    pinned: bool = False
    superseded_by: str | None = None
    superseded_at: datetime | None = None
    merged_from: list[str] = msgspec.field(default_factory=list)
    sources: list[str] = msgspec.field(default_factory=list)
    fact_id: str | None = None


class ThreadsRequest(msgspec.Struct, kw_only=True):
    status: ThreadStatus | None = None
    priority: Priority | None = None
    query: str | None = None
    limit: int | None = None


class ThreadsReply(msgspec.Struct, kw_only=True):
    threads: list[Thread]


class DecisionsRequest(msgspec.Struct, kw_only=True):
    since: str | None = None
    impact: Impact | None = None
    query: str | None = None
    limit: int | None = None


class DecisionsReply(msgspec.Struct, kw_only=True):
    decisions: list[Decision]


class CommitmentsRequest(msgspec.Struct, kw_only=True):
    status: CommitmentStatus | None = None
    who: str | None = None
    limit: int | None = None


class CommitmentsReply(msgspec.Struct, kw_only=True):
    commitments: list[Commitment]


class SearchRequest(msgspec.Struct, kw_only=True):
    query: str
    limit: int | None = None


class SearchHit(msgspec.Struct, kw_only=True):
    kind: str
    id: str
    text: str
    score: float


class SearchReply(msgspec.Struct, kw_only=True):
    hits: list[SearchHit]


class StatusRequest(msgspec.Struct, kw_only=True):
    pass


class WorkerStatus(msgspec.Struct, kw_only=True):
    worker: str
    consumer: str
    pending: int
    checkpoint: int
    last_event_ts: str | None = None


class StatusReply(msgspec.Struct, kw_only=True):
    agent: str
    counts: dict[str, int]
    workers: list[WorkerStatus]
    mood: str
    extra: dict[str, Any] = msgspec.field(default_factory=dict)


class TracesRequest(msgspec.Struct, kw_only=True):
    """``cortex.api.traces.<agent>``: findings, newest first; ``severity`` is the least one
    wanted; findings Claude's triage dismissed are left out unless ``dismissed``."""

    signal: Signal | None = None
    severity: Severity | None = None
    session: SessionId | None = None
    dismissed: bool = False
    limit: int | None = None


class TracesReply(msgspec.Struct, kw_only=True):
    findings: list[Finding]


class OperationsRequest(msgspec.Struct, kw_only=True):
    """``cortex.api.operations.<agent>``: operations, newest first; ``unread``: only results
    the agent has not been shown and calls still pending after their turn."""

    status: OperationStatus | None = None
    unread: bool = False
    limit: int | None = None


class OperationsReply(msgspec.Struct, kw_only=True):
    operations: list[Operation]


class ErrorBody(msgspec.Struct, kw_only=True):
    code: int
    message: str


class ErrorReply(msgspec.Struct, kw_only=True):
    error: ErrorBody


API_MESSAGES: tuple[type[msgspec.Struct], ...] = (
    BootRequest, RecallRequest, RecallReply, ConsolidateRequest, ConsolidateReply, ThreadsRequest, ThreadsReply,
    DecisionsRequest, DecisionsReply, CommitmentsRequest, CommitmentsReply, SearchRequest, SearchReply,
    StatusRequest, StatusReply, TracesRequest, TracesReply, OperationsRequest, OperationsReply, ErrorReply,
)
