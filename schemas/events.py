"""Event payloads published on ``cortex.<family>.<agent>...`` subjects (contract: Payloads)."""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from schemas.types import (
    AGENT_PATTERN,
    EVENT_ID_PATTERN,
    MEMORY_ID_PATTERN,
    AgentId,
    Count,
    EventId,
    FeedbackKind,
    MemoryScope,
    MemoryType,
    Role,
    SessionId,
    Timestamp,
)

Content = Annotated[
    str, Meta(description="UTF-8 text; at most 64 KiB unless CORTEX_RUNTIME_MAX_CONTENT_BYTES says otherwise")
]


class MessageEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A message reached the agent (``received``) or the agent sent one (``sent``)."""

    id: EventId
    agent: AgentId
    session: SessionId
    ts: Timestamp
    role: Role
    content: Content
    sender: str | None = None
    channel: str | None = None


class SessionEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A session starts or ends. ``workspace`` is informational, never used as a path."""

    id: EventId
    agent: AgentId
    session: SessionId
    ts: Timestamp
    channel: str | None = None
    workspace: str | None = None


class CompactionMessage(msgspec.Struct, frozen=True, kw_only=True):
    role: str
    content: str
    ts: Timestamp | None = None


class CompactionEvent(msgspec.Struct, frozen=True, kw_only=True):
    """History is about to be compacted (``before``) or was compacted (``after``)."""

    id: EventId
    agent: AgentId
    session: SessionId
    ts: Timestamp
    messages: Annotated[
        list[CompactionMessage],
        Meta(description="at most 500 unless CORTEX_RUNTIME_MAX_COMPACTION_MESSAGES says otherwise"),
    ] = msgspec.field(default_factory=list)
    message_count: Count | None = None
    compacting_count: Count | None = None


class NoteEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A markdown section of a memory directory (published by ``cortex index``)."""

    id: EventId
    agent: AgentId
    ts: Timestamp
    path: str
    content: Content
    headings: list[str] = msgspec.field(default_factory=list)


class FeedbackEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A state change caused by a request or a person rather than by conversation."""

    id: EventId
    agent: AgentId
    ts: Timestamp
    kind: FeedbackKind
    target: str | None = None
    value: Any = None
    actor: str | None = None


class RememberValue(msgspec.Struct, frozen=True, kw_only=True):
    """The ``value`` of a ``remember`` FeedbackEvent: an explicit memory from the agent or a
    person. ``type`` absent: the recall worker's classifier decides; ``scope`` absent: the
    scope cues of the text decide (``permanent`` without any)."""

    content: Annotated[str, Meta(min_length=1, description="the memory, one standalone statement; at most 64 KiB "
                                                          "unless CORTEX_RUNTIME_MAX_CONTENT_BYTES says otherwise")]
    type: MemoryType | None = None
    scope: MemoryScope | None = None
    # the person the memory belongs to, within the agent (a recall for that person sees it,
    # another person's does not); absent: shared by every conversation of the agent
    person: Annotated[str, Meta(min_length=1, max_length=256)] | None = None


class LlmAnswerValue(msgspec.Struct, frozen=True, kw_only=True):
    """The ``value`` of an ``llm_answer`` FeedbackEvent: a model's answer to a call that fell
    back to the structured path when it was made (the model unreachable), asked again once the
    model answered (``shared.llm``). The worker that made the call applies it to its
    document; the answer is in the event, so a replay applies the same without the model."""

    purpose: Annotated[str, Meta(min_length=1, max_length=64, description="the call's purpose (knowledge, "
                                                                          "recall, narrative, briefing, …)")]
    text: Annotated[str, Meta(description="the model's answer (text, or a tool's input as JSON)")]
    asked_at: Annotated[Timestamp, Meta(description="the event time the call was made for")]
    context: Any = None  # what the asking worker needs to apply it (the batch's ids, the trigger's time, …)


# Kinds whose ``value`` has a shape of its own (validated at decode: a wrong one is bad input).
# ``memory_update`` (``target``: the memory's id) carries the memory's new statement in the same shape:
# type and scope absent keep the memory's own.
FEEDBACK_VALUES: dict[str, type[msgspec.Struct]] = {"remember": RememberValue, "memory_update": RememberValue,
                                                    "llm_answer": LlmAnswerValue}


class ToolEvent(msgspec.Struct, frozen=True, kw_only=True):
    """The agent called a tool (``call``) or the call returned (``result``).

    Kept for the trace work (failure patterns over tool and run events); the conversation
    workers do not read them. ``params`` and ``result`` are whatever JSON the runtime had.
    """

    id: EventId
    agent: AgentId
    session: SessionId
    ts: Timestamp
    tool: Annotated[str, Meta(min_length=1, max_length=256, description="the tool's name")]
    call_id: str | None = None
    params: Any = None
    result: Any = None
    error: str | None = None
    duration_ms: int | None = None


class RunEvent(msgspec.Struct, frozen=True, kw_only=True):
    """An agent run (one turn of work) started (``start``), ended (``end``) or failed (``error``)."""

    id: EventId
    agent: AgentId
    session: SessionId
    ts: Timestamp
    run_id: str | None = None
    prompt: str | None = None
    success: bool | None = None
    error: str | None = None
    duration_ms: int | None = None


Event = MessageEvent | SessionEvent | CompactionEvent | NoteEvent | FeedbackEvent | ToolEvent | RunEvent

_AGENT_RE = re.compile(AGENT_PATTERN.strip("^$"))
_EVENT_ID_RE = re.compile(EVENT_ID_PATTERN.strip("^$"))
_MEMORY_ID_RE = re.compile(MEMORY_ID_PATTERN.strip("^$"))


def is_valid_agent(agent: str) -> bool:
    """True when ``agent`` is a whole valid agent id (no trailing newline loophole)."""
    return _AGENT_RE.fullmatch(agent) is not None


def is_valid_event_id(event_id: str) -> bool:
    return _EVENT_ID_RE.fullmatch(event_id) is not None


def is_memory_id(value: object) -> bool:
    """True when ``value`` is a recall memory's id (``MEMORY_ID_PATTERN``: a UUID string)."""
    return isinstance(value, str) and _MEMORY_ID_RE.fullmatch(value) is not None
