"""The OpenClaw NATS event store's envelopes, turned into contract events.

`@vainplex/nats-eventstore` publishes every agent event to its own stream (default
``openclaw-events``, subjects ``<prefix>.<agent>.<type with dots as underscores>``).
``cortex init`` makes CORTEX_EVENTS source that stream through one subject transform, so
the server itself stores each event, payload unchanged, as
``<cortex prefix>.openclaw.<agent>.<type token>`` (``shared.names.openclaw_transform``).
``shared.codec.decode_event`` hands such a message here; the result is the contract event
its type token maps to (``shared.names.OPENCLAW_TYPES``), checked afterwards by the same
identity and size rules as any contract event.

Three envelopes share the stream (fixtures: ``tests/fixtures/openclaw/``):

* v0.2, what npm's 0.2.1 publishes: ``{id: uuid4, ts: epoch ms, agent, session, type, payload}``
  with legacy types (``msg.in``, ``tool.result``, ``session.compaction_start``, …);
* schema version 1 (the repository's newer source): the same plus ``schema_version: 1``,
  ``canonicalType`` (``message.in.received``), ``legacyType``, ``source``, ``actor``,
  ``scope`` (``runId``, ``toolCallId``, …), ``trace``, ``visibility``, ``redaction``; its
  ``type`` is still the legacy one (``session.reset`` has no other), so the subject is too;
* session-sync: ``{id, timestamp: epoch ms, agent, session, type: "conversation.*",
  visibility, payload, meta}``, message text in ``payload.text_preview[0].text`` (the first
  block with a text; a turn that only called tools has none: its content is empty).

The agent: the store's, but where OpenClaw 2026.9's session keys made the store name every
agent of a gateway alike. Those keys read ``agent:<id>:<rest>``; the store (0.2.x, and the
newer source alike) takes a hook's ``ctx.agentId`` unless it is ``main``, else the key's first
segment — and OpenClaw's message hooks carry no agent id — so it files the messages of every
agent, and everything of the agent ``main``, under ``agent`` (``OPENCLAW_SESSION_AGENT``). An
event the store filed so is Cortex's event of the ``<id>`` its session key names
(``filed_agent``): one tenant per OpenClaw agent, not one for the whole gateway. The store's
agent must still be its subject's (its own consistency); the event's is the one filed.

Time: the envelope's epoch milliseconds become an exact UTC timestamp (integer
arithmetic, no float on the way for integer input), so a replay derives the same bytes.
A session key longer than the contract's 128 characters is shortened deterministically
(its head, ``~`` and 16 hex digits of its SHA-256). Every failure is a reason string:
the consume loop dead-letters it.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from schemas.events import CompactionEvent, Event, MessageEvent, RunEvent, SessionEvent, ToolEvent
from schemas.types import Count
from shared.names import OPENCLAW_IGNORED, OPENCLAW_SESSION_AGENT, OPENCLAW_TYPES

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
_MAX_SESSION = 128
_ENCODE = msgspec.json.Encoder(order="deterministic").encode


def _raw_default() -> msgspec.Raw:
    return msgspec.Raw(b"")


class StoreEnvelope(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The fields of all three envelopes Cortex reads; every one optional, so that a missing
    one gets its own readable reason instead of a generic validation error."""

    id: str | None = None
    agent: str | None = None
    session: str | None = None
    type: str | None = None
    ts: int | float | None = None
    timestamp: int | float | None = None  # session-sync's name for ts
    schema_version: int | None = None
    scope: msgspec.Raw = msgspec.field(default_factory=_raw_default)  # what the event is about: its identity too
    payload: msgspec.Raw = msgspec.field(default_factory=_raw_default)


class _TextBlock(msgspec.Struct, frozen=True, kw_only=True):
    type: Any = None
    text: Any = None


class _MessageMetadata(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    sender_id: str | None = None


_METADATA = msgspec.json.Decoder(_MessageMetadata)


def _no_metadata() -> msgspec.Raw:
    return msgspec.Raw(b"{}")


class MessagePayload(msgspec.Struct, frozen=True, kw_only=True):
    """``msg.in`` / ``msg.out`` (and session-sync's ``conversation.message.*``)."""

    content: str | None = None
    sender: str | None = msgspec.field(default=None, name="from")
    channel: str | None = None
    text_preview: list[_TextBlock] | None = None
    metadata: msgspec.Raw = msgspec.field(default_factory=_no_metadata)


def _sender(p: MessagePayload) -> str | None:
    """Who sent a received message: OpenClaw's sender id (``metadata.senderId``, what the
    gateway's own hooks call the sender of the turn — ``ctx.senderId``, which the Cortex gateway
    plugin asks recall for as the person), else the store's ``from`` (the channel's address,
    ``matrix:@albert:example.org``; empty for the web chat), else none."""
    try:
        sender_id = _METADATA.decode(p.metadata).sender_id
    except msgspec.MsgspecError:
        sender_id = None  # metadata of another shape only loses the id
    return (sender_id or "").strip() or p.sender or None


class SessionPayload(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    session_id: str | None = None


class CompactionPayload(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    message_count: Count | None = None
    compacting_count: Count | None = None
    compacted_count: Count | None = None


class SyncToolData(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """session-sync's tool events carry the tool in ``payload.data``."""

    name: str | None = None
    tool_call_id: str | None = None
    args: Any = None
    result: Any = None
    is_error: bool | None = None


class ToolPayload(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    tool_name: str | None = None
    tool_call_id: str | None = None
    params: Any = None
    result: Any = None
    error: Any = None
    duration_ms: int | float | None = None
    data: SyncToolData | None = None


class RunPayload(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    run_id: str | None = None
    prompt: str | None = None
    success: bool | None = None
    error: Any = None
    duration_ms: int | float | None = None


_ENVELOPE = msgspec.json.Decoder(StoreEnvelope)
_PAYLOADS: dict[str, msgspec.json.Decoder[Any]] = {
    "msg": msgspec.json.Decoder(MessagePayload),
    "session": msgspec.json.Decoder(SessionPayload),
    "compaction": msgspec.json.Decoder(CompactionPayload),
    "tool": msgspec.json.Decoder(ToolPayload),
    "run": msgspec.json.Decoder(RunPayload),
}


class Mapped(msgspec.Struct, frozen=True, kw_only=True):
    """A store event as a contract event, with what identifies a second copy of it."""

    event: Event
    duplicate_key: bytes


def epoch_ms_to_datetime(ms: int | float) -> datetime:
    """Epoch milliseconds → an aware UTC datetime, exactly (integers never touch a float)."""
    if isinstance(ms, int):
        return _EPOCH + timedelta(milliseconds=ms)
    return _EPOCH + timedelta(microseconds=round(ms * 1000))


def contract_session(session: str) -> str:
    """A session key within the contract's 128 characters; longer ones get a stable short form."""
    if len(session) <= _MAX_SESSION:
        return session
    digest = hashlib.sha256(session.encode()).hexdigest()[:16]
    return f"{session[:_MAX_SESSION - 17]}~{digest}"


def filed_agent(store_agent: str, session: str) -> str:
    """The agent Cortex files a store event under: the ``<id>`` of an ``agent:<id>:<rest>``
    session key when the store named the agent by that key's first segment, else the store's
    agent. (An ``<id>`` that is no valid agent id is the caller's to reject.)"""
    if store_agent != OPENCLAW_SESSION_AGENT:
        return store_agent
    head, _, rest = session.partition(":")
    agent, colon, _ = rest.partition(":")
    return agent if head == OPENCLAW_SESSION_AGENT and colon and agent else store_agent


class _Filing(msgspec.Struct, frozen=True):
    agent: str | None = None
    session: str | None = None


_FILING = msgspec.json.Decoder(_Filing)  # made once: the scout reads the filing of every message under the token


def filed_agent_of(data: bytes) -> str | None:
    """The agent a stored store event is filed under (``filed_agent``), read from its bytes
    alone; None when they hold no envelope with an agent and a session (a dead letter's)."""
    try:
        filing = _FILING.decode(data)
    except msgspec.MsgspecError:
        return None
    if filing.agent is None or filing.session is None:
        return None
    return filed_agent(filing.agent, filing.session)


def duplicate_key(agent: str, token: str, event_id: str, payload: bytes, scope: bytes = b"") -> bytes:
    """The identity of one store event: the same id, type, payload and (v1) scope is the
    same event stored twice (the plugin publishes without ``Nats-Msg-Id``). The envelope's
    ``ts`` is left out: a re-fired hook stamps a new one on the same event. The scope is in:
    the v1 plugin derives an id from the first of runId, messageId, toolCallId it finds, so
    two calls of one tool with the same arguments in one run share id and payload and differ
    only in ``scope.toolCallId`` — a doom loop is not a duplicate."""
    head = f"{len(agent)}:{agent}{len(token)}:{token}{len(event_id)}:{event_id}{len(scope)}:".encode()
    return hashlib.blake2b(head + scope + payload, digest_size=16).digest()


def _reason(exc: msgspec.MsgspecError, what: str) -> str:
    """Anything else a decode may raise reaches ``shared.codec.total`` (the caller's guard)."""
    return f"invalid {what}: {exc}" if isinstance(exc, msgspec.ValidationError) else f"malformed JSON: {exc}"


def _error_text(error: Any) -> str | None:
    """A runtime's error as text: strings as they are, anything else as canonical JSON."""
    if error is None or isinstance(error, str):
        return error
    return _ENCODE(error).decode()


def _duration(ms: int | float | None) -> int | None:
    return ms if ms is None or isinstance(ms, int) else round(ms)


def _ts(env: StoreEnvelope) -> datetime | str:
    ms = env.ts if env.ts is not None else env.timestamp
    if ms is None:
        return "OpenClaw event without a time (ts or timestamp, epoch milliseconds)"
    if not 0 < ms <= _MAX_MS:
        return f"OpenClaw event time {ms!r} is not epoch milliseconds between 1970 and 9999"
    return epoch_ms_to_datetime(ms)


def _check_envelope(env: StoreEnvelope, token: str) -> str | None:
    if env.schema_version is not None and env.schema_version != 1:
        return f"unknown OpenClaw envelope: schemaVersion {env.schema_version} (Cortex reads 1)"
    if not env.type:
        return "OpenClaw event without a type"
    if env.type.replace(".", "_") != token:
        return f"OpenClaw event type {env.type!r} does not match its subject's {token!r}"
    if not env.id:
        return "OpenClaw event without an id"
    if not env.agent:
        return "OpenClaw event without an agent"
    if env.session is None:
        return "OpenClaw event without a session"
    if not len(env.payload):
        return "OpenClaw event without a payload"
    return None


_SCOPE = msgspec.json.Decoder(dict[str, Any])


def _scope(env: StoreEnvelope, key: str) -> str | None:
    """A string of the v1 envelope's ``scope`` (``runId``, ``toolCallId``, …); anything else: None."""
    if not len(env.scope):
        return None
    try:
        value = _SCOPE.decode(env.scope).get(key)
    except msgspec.MsgspecError:
        return None  # a scope of the wrong shape only loses the optional ids
    return value if isinstance(value, str) and value else None


def _message(env: StoreEnvelope, kind: str, p: MessagePayload, common: dict[str, Any]) -> MessageEvent:
    content = p.content
    if content is None and p.text_preview:  # session-sync: the first text block's text
        content = next((b.text for b in p.text_preview if isinstance(b.text, str)), None)
    return MessageEvent(**common, role="user" if kind == "received" else "assistant", content=content or "",
                        sender=_sender(p) if kind == "received" else None, channel=p.channel)


def _tool(env: StoreEnvelope, p: ToolPayload, common: dict[str, Any]) -> ToolEvent | str:
    if p.data is not None:  # session-sync
        d = p.data
        error = (d.result if isinstance(d.result, str) else "the tool reported an error") if d.is_error else None
        tool, call_id, params, result = d.name, d.tool_call_id, d.args, None if d.is_error else d.result
    else:
        error = _error_text(p.error)
        tool, call_id, params, result = p.tool_name, p.tool_call_id or _scope(env, "toolCallId"), p.params, p.result
    if not tool:
        return "OpenClaw tool event without a tool name (payload.toolName)"
    return ToolEvent(**common, tool=tool, call_id=call_id, params=params, result=result, error=error,
                     duration_ms=_duration(p.duration_ms))


def _run(env: StoreEnvelope, kind: str, p: RunPayload, common: dict[str, Any]) -> RunEvent:
    success = False if kind == "error" and p.success is None else p.success
    return RunEvent(**common, run_id=p.run_id or _scope(env, "runId"), prompt=p.prompt, success=success,
                    error=_error_text(p.error), duration_ms=_duration(p.duration_ms))


def _build(env: StoreEnvelope, family: str, kind: str, payload: Any, common: dict[str, Any]) -> Event | str:
    if family == "msg":
        return _message(env, kind, payload, common)
    if family == "session":
        return SessionEvent(**common)
    if family == "compaction":
        after = kind == "after"
        return CompactionEvent(**common, message_count=payload.message_count,
                               compacting_count=payload.compacted_count if after else payload.compacting_count)
    if family == "tool":
        return _tool(env, payload, common)
    return _run(env, kind, payload, common)


def map_store_event(token: str, data: bytes, subject_agent: str) -> Mapped | str:
    """The contract event for one store message on type ``token`` under the agent token
    ``subject_agent``, or the reason it has none. The event's agent is the one Cortex files it
    under (``filed_agent``); the caller checks it like any contract event's."""
    mapping = OPENCLAW_TYPES.get(token)
    if mapping is None:
        if token in OPENCLAW_IGNORED:
            return f"OpenClaw type {token!r} is not conversation: no worker reads it"
        return f"unknown OpenClaw event type {token!r}"
    family, kind = mapping
    try:
        env = _ENVELOPE.decode(data)
    except msgspec.MsgspecError as exc:
        return _reason(exc, "OpenClaw envelope")
    reason = _check_envelope(env, token)
    if reason:
        return reason
    if env.agent != subject_agent:
        return f"agent mismatch: store agent {env.agent!r} != subject agent {subject_agent!r}"
    ts = _ts(env)
    if isinstance(ts, str):
        return ts
    assert env.id is not None and env.agent is not None and env.session is not None  # _check_envelope
    try:
        payload = _PAYLOADS[family].decode(env.payload)
    except msgspec.MsgspecError as exc:
        return _reason(exc, f"OpenClaw {env.type} payload")
    common: dict[str, Any] = {"id": env.id, "agent": filed_agent(env.agent, env.session),
                              "session": contract_session(env.session), "ts": ts}
    event = _build(env, family, kind, payload, common)
    if isinstance(event, str):
        return event
    # the agent Cortex files it under: events the store filed under its session token are each of
    # the agent their session key names, never a copy of another agent's (whose they are, below)
    key = duplicate_key(common["agent"], token, env.id, bytes(env.payload), bytes(env.scope))
    return Mapped(event=event, duplicate_key=key)
