"""Identity rules of the contract as annotated types (validated by msgspec on decode)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from msgspec import Meta

# `$` in Python also matches before a trailing newline; the decoder re-checks with
# fullmatch (schemas.events.is_valid_agent / is_valid_event_id); the pattern here is for JSON Schema.
AGENT_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
EVENT_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"
# A recall memory's id: a UUID in its usual 8-4-4-4-12 form, as the recall worker makes them
# (uuid5, lowercase; any case is the same id) — the ids a recall_access, memory_pin or
# memory_forget FeedbackEvent may name.
MEMORY_ID_PATTERN = r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"

AgentId = Annotated[
    str,
    Meta(pattern=AGENT_PATTERN, min_length=1, max_length=64,
         description="Agent id: one subject token and one KV key; the tenant boundary"),
]
EventId = Annotated[
    str,
    Meta(pattern=EVENT_ID_PATTERN, min_length=1, max_length=128,
         description="Unique event id; also sent as the Nats-Msg-Id header"),
]
SessionId = Annotated[str, Meta(max_length=128, description="Session id, at most 128 characters")]
Timestamp = Annotated[
    datetime, Meta(tz=True, description="RFC 3339 timestamp with an offset, e.g. 2026-02-17T10:30:00Z")
]
ShortText = Annotated[str, Meta(max_length=256)]
Count = Annotated[int, Meta(ge=0, description="a number of things: never negative")]

Role = Literal["user", "assistant", "system", "tool"]
Mood = Literal["neutral", "frustrated", "excited", "tense", "productive", "exploratory"]
Priority = Literal["critical", "high", "medium", "low"]
Impact = Literal["critical", "high", "medium", "low"]
ThreadStatus = Literal["open", "closed"]
CommitmentStatus = Literal["open", "overdue", "done"]
FeedbackKind = Literal[
    "recall_access", "thread_close", "thread_priority", "commitment_done", "memory_pin", "memory_forget",
    "remember", "fact_access", "operation_seen", "llm_answer", "memory_update",
    # a person's corrections beyond the contract's: "not a commitment", "this decision is wrong" (issue 43)
    "commitment_reject", "decision_reject",
]
BootTrigger = Literal["session_start", "compaction", "request", "change"]
ChannelLayer = Literal["foreground", "background", "archived"]
# The trace analyzer's failure signals (the reference's SIG-* taxonomy) and their severities.
Signal = Literal["doom_loop", "repeat_fail", "tool_fail", "correction", "dissatisfied", "hallucination",
                 "unverified_claim"]
Severity = Literal["low", "medium", "high", "critical"]
OperationStatus = Literal["pending", "completed", "failed"]
EntityType = Literal["person", "location", "organization", "date", "product", "concept", "email", "url", "unknown"]
FactSource = Literal["ingested", "extracted-regex", "extracted-llm"]
MemoryType = Literal["rule", "procedure", "fact", "episode", "preference"]
MemoryScope = Literal["permanent", "project", "session", "ttl"]

MOODS: tuple[Mood, ...] = ("neutral", "frustrated", "excited", "tense", "productive", "exploratory")
PRIORITIES: tuple[Priority, ...] = ("critical", "high", "medium", "low")
SIGNALS: tuple[Signal, ...] = ("doom_loop", "repeat_fail", "tool_fail", "correction", "dissatisfied",
                               "hallucination", "unverified_claim")
SEVERITIES: tuple[Severity, ...] = ("low", "medium", "high", "critical")
