"""Decode and validate events once, at the boundary: subject → family → Struct.

A payload that cannot be decoded or violates the contract yields a ``Rejection`` with a
readable reason (it becomes the dead letter's ``Cortex-Error``); never an exception.
"""

from __future__ import annotations

from typing import Any

import msgspec

from schemas.events import (
    FEEDBACK_VALUES,
    CompactionEvent,
    Event,
    FeedbackEvent,
    MessageEvent,
    NoteEvent,
    RunEvent,
    SessionEvent,
    ToolEvent,
    is_valid_agent,
    is_valid_event_id,
)
from shared.names import KINDS


class Envelope(msgspec.Struct, frozen=True, kw_only=True):
    """A decoded event with its place in the stream."""

    seq: int
    subject: str
    family: str
    kind: str | None
    agent: str
    event: Event

    @property
    def channel(self) -> str | None:
        return getattr(self.event, "channel", None)


class Rejection(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    subject: str
    reason: str


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    max_content_bytes: int = 65536
    max_compaction_messages: int = 500


_DECODERS: dict[str, msgspec.json.Decoder[Any]] = {
    "msg": msgspec.json.Decoder(MessageEvent),
    "session": msgspec.json.Decoder(SessionEvent),
    "compaction": msgspec.json.Decoder(CompactionEvent),
    "notes": msgspec.json.Decoder(NoteEvent),
    "feedback": msgspec.json.Decoder(FeedbackEvent),
    "tool": msgspec.json.Decoder(ToolEvent),
    "run": msgspec.json.Decoder(RunEvent),
}
_ENCODE = msgspec.json.Encoder().encode


def parse_subject(prefix: str, subject: str) -> tuple[str, str, str | None] | str:
    """``(family, agent, kind)`` for a contract subject, or a reason string."""
    tokens = subject.split(".")
    if len(tokens) < 3 or tokens[0] != prefix or tokens[1] not in KINDS:
        return f"unknown subject {subject!r}"
    family, agent = tokens[1], tokens[2]
    kinds = KINDS[family]
    if kinds is None:
        if len(tokens) != 3:
            return f"subject {subject!r}: expected {prefix}.{family}.<agent>"
        return family, agent, None
    if len(tokens) != 4 or tokens[3] not in kinds:
        return f"subject {subject!r}: expected {prefix}.{family}.<agent>.({'|'.join(sorted(kinds))})"
    return family, agent, tokens[3]


def _content_sizes(event: Event) -> list[tuple[str, int]]:
    """(field, UTF-8 size) of every field the content limit applies to."""
    if isinstance(event, MessageEvent | NoteEvent):
        return [("content", len(event.content.encode()))]
    if isinstance(event, CompactionEvent):
        return [(f"messages[{i}].content", len(m.content.encode())) for i, m in enumerate(event.messages)]
    if isinstance(event, FeedbackEvent) and event.kind == "remember" and isinstance(event.value, dict):
        content = event.value.get("content")
        return [("value.content", len(content.encode()))] if isinstance(content, str) else []
    if isinstance(event, ToolEvent):
        return [("params", len(_ENCODE(event.params))), ("result", len(_ENCODE(event.result))),
                ("error", len((event.error or "").encode()))]
    if isinstance(event, RunEvent):
        return [("prompt", len((event.prompt or "").encode())), ("error", len((event.error or "").encode()))]
    return []


def _check_limits(event: Event, raw_size: int, limits: Limits) -> str | None:
    if isinstance(event, CompactionEvent) and len(event.messages) > limits.max_compaction_messages:
        return (f"too many compaction messages: {len(event.messages)} > "
                f"{limits.max_compaction_messages}")
    if raw_size <= limits.max_content_bytes:
        return None  # no field can exceed the limit when the whole payload does not
    for field, size in _content_sizes(event):
        if size > limits.max_content_bytes:
            return f"{field} too large: {size} bytes > {limits.max_content_bytes}"
    return None


def _check_identity(event: Event, subject_agent: str, kind: str | None) -> str | None:
    if not is_valid_agent(event.agent):
        return f"invalid agent id {event.agent!r}: expected ^[A-Za-z0-9_-]{{1,64}}$"
    if event.agent != subject_agent:
        return f"agent mismatch: payload agent {event.agent!r} != subject agent {subject_agent!r}"
    if not is_valid_event_id(event.id):
        return f"invalid event id {event.id!r}: expected ^[A-Za-z0-9_.:-]{{1,128}}$"
    if isinstance(event, FeedbackEvent) and event.kind != kind:
        return f"feedback kind mismatch: payload kind {event.kind!r} != subject kind {kind!r}"
    return None


def _check_value(event: Event) -> str | None:
    """A feedback kind's ``value`` of the right shape (``FEEDBACK_VALUES``); a ``fact_access``
    names its fact ids (``target`` and/or a list of strings in ``value``)."""
    if not isinstance(event, FeedbackEvent):
        return None
    shape = FEEDBACK_VALUES.get(event.kind)
    if shape is not None:
        try:
            msgspec.convert(event.value, shape)
        except msgspec.ValidationError as exc:
            return f"invalid {event.kind} value: {exc}"
    if event.kind == "fact_access":
        ids = event.value if event.value is not None else []
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return "invalid fact_access value: expected a list of fact ids (strings)"
        if not ids and not event.target:
            return "fact_access names no fact id (target or a list in value)"
    return None


def decode_event(prefix: str, subject: str, seq: int, data: bytes, limits: Limits) -> Envelope | Rejection:
    parsed = parse_subject(prefix, subject)
    if isinstance(parsed, str):
        return Rejection(seq=seq, subject=subject, reason=parsed)
    family, agent, kind = parsed
    if not is_valid_agent(agent):
        return Rejection(seq=seq, subject=subject, reason=f"invalid agent token {agent!r} in subject")
    try:
        event = _DECODERS[family].decode(data)
    except msgspec.ValidationError as exc:
        return Rejection(seq=seq, subject=subject, reason=f"invalid {family} event: {exc}")
    except msgspec.DecodeError as exc:
        return Rejection(seq=seq, subject=subject, reason=f"malformed JSON: {exc}")
    reason = _check_identity(event, agent, kind) or _check_value(event) or _check_limits(event, len(data), limits)
    if reason:
        return Rejection(seq=seq, subject=subject, reason=reason)
    return Envelope(seq=seq, subject=subject, family=family, kind=kind, agent=agent, event=event)


def _run_kind(payload: dict[str, Any]) -> str:
    if payload.get("success") is False or payload.get("error"):
        return "error"
    return "end" if "success" in payload or "duration_ms" in payload else "start"


def event_subject(prefix: str, payload: dict[str, Any]) -> str | None:
    """Derive the subject for a raw event dict (used by ``cortex publish``), or None.

    The family is told by an explicit ``type`` field ("msg.received", "tool.call", …) or
    guessed from the payload's shape: ``role`` a message, ``kind`` feedback, ``tool`` a tool
    call (a result when it has ``result``, ``error`` or ``duration_ms``), ``run_id`` /
    ``prompt`` / ``success`` a run (an error when ``success`` is false or it has ``error``).
    """
    agent = payload.get("agent")
    if not isinstance(agent, str):
        return None
    explicit = payload.get("type") or payload.get("subject_kind")
    if isinstance(explicit, str) and "." in explicit:
        family, kind = explicit.split(".", 1)
        return f"{prefix}.{family}.{agent}.{kind}"
    if isinstance(explicit, str) and explicit == "notes":
        return f"{prefix}.notes.{agent}"
    if "kind" in payload and isinstance(payload["kind"], str):
        return f"{prefix}.feedback.{agent}.{payload['kind']}"
    if "tool" in payload:
        returned = any(key in payload for key in ("result", "error", "duration_ms"))
        return f"{prefix}.tool.{agent}.{'result' if returned else 'call'}"
    if "run_id" in payload or "prompt" in payload or "success" in payload:
        return f"{prefix}.run.{agent}.{_run_kind(payload)}"
    if "role" in payload:
        return f"{prefix}.msg.{agent}.{'sent' if payload['role'] == 'assistant' else 'received'}"
    if "messages" in payload:
        return f"{prefix}.compaction.{agent}.before"
    if "path" in payload:
        return f"{prefix}.notes.{agent}"
    return None
