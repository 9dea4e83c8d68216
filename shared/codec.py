"""Decode and validate events once, at the boundary: subject → family → Struct.

``decode_event`` is *total*: whatever the bytes are — malformed or deeply nested JSON,
invalid UTF-8, a timestamp whose UTC time overflows, a field over its size limit, or a
failure nobody foresaw — it returns a ``Rejection`` with a readable reason (it becomes
the dead letter's ``Cortex-Error``), never an exception. The guarantee is structural:
every step from untrusted bytes to a validated ``Envelope`` runs inside one ``try`` in
``decode_event``; a new family is a new entry in ``EVENT_DECODERS`` (or a new step called from
``_decode``) and is covered without further work. A decoder for another envelope (a
foreign event store) gets the same guarantee and the same checks by going through
``total`` and ``check_event``.

Stored subjects are parsed here and only here (``parse_subject``): the contract's
``<prefix>.<family>.<slot>.<agent>.<kind>`` (the slot token put in by the stream) and the
OpenClaw store's events that CORTEX_EVENTS sources,
``<prefix>.openclaw.<slot>.<agent>.<type token>``, whose payload is the store's own
envelope: ``shared.openclaw`` maps it to the contract event, inside the same guard and
followed by the same checks. Such an event's agent is the one Cortex files it under
(``shared.openclaw.filed_agent``): the subject's agent token, except for the events the store
filed under its session token ``agent`` (OpenClaw 2026.9), each of which is the agent its
session key names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Final, NamedTuple

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
    is_memory_id,
    is_valid_agent,
    is_valid_event_id,
)
from shared.names import KINDS, NOTES_KIND, OPENCLAW_FAMILY, OPENCLAW_TYPES, SLOTS, notes_subject, published_subject
from shared.openclaw import map_store_event

if TYPE_CHECKING:
    from shared.config import Settings


class Envelope(msgspec.Struct, frozen=True, kw_only=True):
    """A decoded event with its place in the stream."""

    seq: int
    subject: str
    family: str
    kind: str | None
    agent: str
    event: Event
    # an OpenClaw store event: what identifies a second stored copy of it (see shared.openclaw)
    duplicate_key: bytes | None = None

    @property
    def channel(self) -> str | None:
        return getattr(self.event, "channel", None)


class Rejection(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    subject: str
    reason: str


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """Size limits of an event (contract: Payloads, "Limits (configurable)").

    ``max_content_bytes`` bounds the long texts (``content``, a feedback ``value``, a
    tool's ``params``, ``result`` and ``error`` as JSON, a run's ``prompt`` and
    ``error``); ``max_path_chars`` a note's ``path``, each of its ``headings`` and a
    session's ``workspace``; ``max_label_chars`` every other string (``sender``,
    ``channel``, ``actor``, ``target``, ``tool``, a compaction message's ``role``, …),
    the ones that end up in documents as names. ``max_depth`` bounds JSON nesting, so
    that the decoder's own recursion never decides (a payload nested 1000 deep is a dead
    letter, not a crash).
    """

    max_content_bytes: int = 65536
    max_compaction_messages: int = 500
    max_label_chars: int = 256
    max_path_chars: int = 1024
    max_depth: int = 64


def event_limits(settings: Settings) -> Limits:
    """The limits the settings ask for (``CORTEX_RUNTIME_MAX_*``): workers and ``cortex publish``."""
    rt = settings.runtime
    return Limits(max_content_bytes=rt.max_content_bytes, max_compaction_messages=rt.max_compaction_messages,
                  max_label_chars=rt.max_label_chars, max_path_chars=rt.max_path_chars)


# The UTC instants an event may carry: far enough inside datetime's range (years 1..9999)
# that any arithmetic the workers do (time zones, prune and overdue windows) stays in it.
TS_MIN: Final = datetime(1900, 1, 1, tzinfo=UTC)
TS_MAX: Final = datetime(9000, 1, 1, tzinfo=UTC)

# Fields of any size up to max_content_bytes (UTF-8 bytes), and path-like fields.
LONG_FIELDS: Final = frozenset({"content", "value", "params", "result", "prompt", "error"})
VALUE_SLACK_BYTES: Final = 1024  # a feedback value's other fields, beside its content
PATH_FIELDS: Final = frozenset({"path", "headings", "workspace"})

EVENT_DECODERS: dict[str, msgspec.json.Decoder[Any]] = {
    "msg": msgspec.json.Decoder(MessageEvent),
    "session": msgspec.json.Decoder(SessionEvent),
    "compaction": msgspec.json.Decoder(CompactionEvent),
    "notes": msgspec.json.Decoder(NoteEvent),
    "feedback": msgspec.json.Decoder(FeedbackEvent),
    "tool": msgspec.json.Decoder(ToolEvent),
    "run": msgspec.json.Decoder(RunEvent),
}
_ENCODER: Final = msgspec.json.Encoder()


class Subject(NamedTuple):
    """A stored subject: the contract family, agent and kind it stands for, and for an event
    of the OpenClaw store its type token (``msg_in``, …)."""

    family: str
    agent: str
    kind: str | None
    token: str | None = None


_SLOT_TOKENS: Final = frozenset(str(s) for s in range(SLOTS))


def parse_subject(prefix: str, subject: str) -> Subject | str:
    """The ``Subject`` a stored subject stands for, or a reason string.

    Stored subjects are ``<prefix>.<family>.<slot>.<agent>.<kind>`` (the stream's slot
    transform, ``shared.names.slot_transform``); the OpenClaw store's events are
    ``<prefix>.openclaw.<slot>.<agent>.<type token>``."""
    tokens = subject.split(".")
    if len(tokens) < 2 or tokens[0] != prefix or (tokens[1] not in KINDS and tokens[1] != OPENCLAW_FAMILY):
        return f"unknown subject {subject!r}"
    family = tokens[1]
    if len(tokens) == 4:
        return (f"subject {subject!r} was stored without a slot: a wildcard token ('*') is no agent, "
                "kind or type (invalid agent token)")
    if len(tokens) != 5 or tokens[2] not in _SLOT_TOKENS:
        what = "<type>" if family == OPENCLAW_FAMILY else "<kind>"
        return f"subject {subject!r}: expected {prefix}.{family}.<slot>.<agent>.{what}"
    agent, last = tokens[3], tokens[4]
    if family == OPENCLAW_FAMILY:
        mapped = OPENCLAW_TYPES.get(last)
        family, kind = mapped if mapped is not None else (OPENCLAW_FAMILY, None)
        return Subject(family, agent, kind, last)
    kinds = KINDS[family]
    if last not in kinds:
        return f"subject {subject!r}: expected {prefix}.{family}.<slot>.<agent>.({'|'.join(sorted(kinds))})"
    return Subject(family, agent, last)


def subject_agent(prefix: str, subject: str) -> str | None:
    """The agent of a subject as stored now or by the first layout (a dead letter's
    ``Cortex-Original-Subject`` from before a migration): ``<prefix>.<family>.<agent>[.…]``."""
    parsed = parse_subject(prefix, subject)
    if isinstance(parsed, Subject):
        return parsed.agent
    tokens = subject.split(".")
    return tokens[2] if len(tokens) >= 3 and tokens[0] == prefix else None


# --------------------------------------------------------------------------- raw bytes

_JSON_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[{]}")


def nesting_depth(data: bytes) -> int:
    """How deeply the JSON in ``data`` nests arrays and objects (brackets inside strings
    do not count). An upper bound for malformed input; C-speed passes only."""
    if data.count(b"[") + data.count(b"{") <= 1:
        return 1 if b"[" in data or b"{" in data else 0
    brackets = _JSON_STRING.sub(b"", data).translate(_BRACKETS, _NOT_BRACKETS)
    return max(accumulate(1 if b == 1 else -1 for b in brackets), default=0)


# --------------------------------------------------------------------------- checks

# How each field of an event type is checked, decided once per type from its name and
# annotation: a new event type or field is covered without being listed anywhere.
_TIME, _NESTED, _LONG, _PATH, _LABEL = range(5)
_PLANS: dict[type[Any], tuple[tuple[str, int], ...]] = {}


def _bare(info: msgspec.inspect.Type) -> tuple[msgspec.inspect.Type, ...]:
    """The types a field may hold, without their metadata."""
    if isinstance(info, msgspec.inspect.Metadata):
        return _bare(info.type)
    if isinstance(info, msgspec.inspect.UnionType):
        return tuple(t for member in info.types for t in _bare(member))
    return (info,)


def _bounded(types: tuple[msgspec.inspect.Type, ...]) -> bool:
    """A field the decoder itself keeps short: a number, a literal, a string with a max length."""
    scalars = (msgspec.inspect.LiteralType, msgspec.inspect.NoneType, msgspec.inspect.IntType,
               msgspec.inspect.FloatType, msgspec.inspect.BoolType)
    return all(isinstance(t, scalars)
               or (isinstance(t, msgspec.inspect.StrType) and t.max_length is not None) for t in types)


def _kind_of(name: str, info: msgspec.inspect.Type) -> int | None:
    types = _bare(info)
    if any(isinstance(t, msgspec.inspect.DateTimeType) for t in types):
        return _TIME
    if any(isinstance(t, msgspec.inspect.ListType) and isinstance(t.item_type, msgspec.inspect.StructType)
           for t in types):
        return _NESTED
    if _bounded(types):
        return None  # the event id, agent, session, role, a feedback kind, a tool name: checked by the Struct
    if name in LONG_FIELDS:
        return _LONG
    return _PATH if name in PATH_FIELDS else _LABEL


def _plan(cls: type[Any]) -> tuple[tuple[str, int], ...]:
    plan = _PLANS.get(cls)
    if plan is None:
        info = msgspec.inspect.type_info(cls)
        assert isinstance(info, msgspec.inspect.StructType)
        kinds = ((f.name, _kind_of(f.name, f.type)) for f in info.fields)
        plan = _PLANS[cls] = tuple((name, kind) for name, kind in kinds if kind is not None)
    return plan


def _check_struct(obj: Any, limits: Limits, raw_size: int, where: str = "") -> str | None:
    """The first field of ``obj`` (or of the Structs in its lists) over its limit or out of
    range. A string can exceed a limit only when the whole payload does, so for ordinary
    events most checks are one comparison."""
    bounds = (0, 0, limits.max_content_bytes, limits.max_path_chars, limits.max_label_chars)
    for name, kind in _plan(type(obj)):
        value = getattr(obj, name)
        if value is None:
            continue
        if kind > _LONG and type(value) is str and len(value) <= bounds[kind]:
            continue  # a path or a label within its characters: what ``_size_reason`` finds of it
        reason = None
        if kind == _TIME:
            if not TS_MIN.year < value.year < TS_MAX.year - 1:  # else no offset can take it out of range
                reason = _time_reason(where + name, value)
        elif kind == _NESTED:
            for index, item in enumerate(value):
                reason = reason or _check_struct(item, limits, raw_size, f"{where}{name}[{index}].")
        elif raw_size > bounds[kind]:
            reason = _size_reason(name, where + name, value, limits)
        if reason:
            return reason
    return None


def _value_reason(where: str, value: Any, limits: Limits) -> str | None:
    """A feedback ``value``: its text (a string, or a remember's ``content``) within the
    content limit, and the whole of it within that plus ``VALUE_SLACK_BYTES``."""
    text = value.get("content") if isinstance(value, dict) else value
    if isinstance(text, str) and (size := len(text.encode())) > limits.max_content_bytes:
        field = f"{where}.content" if isinstance(value, dict) else where
        return f"{field} too large: {size} bytes > {limits.max_content_bytes}"
    size, bound = len(_ENCODER.encode(value)), limits.max_content_bytes + VALUE_SLACK_BYTES
    return f"{where} too large: {size} bytes > {bound}" if size > bound else None


def _size_reason(name: str, where: str, value: Any, limits: Limits) -> str | None:
    if name == "value":
        return _value_reason(where, value, limits)
    if name in LONG_FIELDS:
        size = len(value.encode()) if isinstance(value, str) else len(_ENCODER.encode(value))
        if size > limits.max_content_bytes:
            return f"{where} too large: {size} bytes > {limits.max_content_bytes}"
        return None
    limit = limits.max_path_chars if name in PATH_FIELDS else limits.max_label_chars
    for text in value if isinstance(value, list) else (value,):
        if isinstance(text, str) and len(text) > limit:
            return f"{where} too long: {len(text)} characters > {limit}"
    return None


def _time_reason(where: str, value: datetime) -> str | None:
    try:
        utc = value.astimezone(UTC)
    except OverflowError:
        return f"{where} {value.isoformat()} out of range: its UTC time is outside the calendar"
    if not TS_MIN <= utc < TS_MAX:
        return f"{where} {value.isoformat()} out of range: expected {TS_MIN:%Y}-01-01 to {TS_MAX:%Y}-01-01 (UTC)"
    return None


def check_event(event: Event, limits: Limits, raw_size: int) -> str | None:
    """The first contract limit ``event`` breaks (field sizes, timestamps, counts), or None.

    Every field of every event type is covered by its name and type: a new event type or
    field is checked without being listed here (times; ``LONG_FIELDS``, ``PATH_FIELDS``,
    else a label; lists of Structs field by field).
    """
    if isinstance(event, CompactionEvent) and len(event.messages) > limits.max_compaction_messages:
        return (f"too many compaction messages: {len(event.messages)} > "
                f"{limits.max_compaction_messages}")
    return _check_struct(event, limits, raw_size)


def _check_identity(event: Event, subject_agent: str, kind: str | None, agent_valid: bool = False) -> str | None:
    """``agent_valid``: ``subject_agent`` is known to be a valid agent id (the payload's, when it
    is the same, need not be matched again)."""
    if not ((agent_valid and event.agent == subject_agent) or is_valid_agent(event.agent)):
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
    names its fact ids, an ``operation_seen`` its operation ids (``target`` and/or a list of
    strings in ``value``)."""
    if not isinstance(event, FeedbackEvent):
        return None
    shape = FEEDBACK_VALUES.get(event.kind)
    if shape is not None:
        try:
            msgspec.convert(event.value, shape)
        except msgspec.ValidationError as exc:
            return f"invalid {event.kind} value: {exc}"
    if event.kind in _ID_LISTS:
        what = _ID_LISTS[event.kind]
        ids = event.value if event.value is not None else []
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return f"invalid {event.kind} value: expected a list of {what} ids (strings)"
        if not ids and not event.target:
            return f"{event.kind} names no {what} id (target or a list in value)"
    return None


# Feedback kinds naming ids: ``target`` and/or a list of strings in ``value``.
_ID_LISTS = {"fact_access": "fact", "operation_seen": "operation"}

# Feedback kinds naming recall memories (``target`` and/or a list in ``value``): every id a
# memory id (``is_memory_id``), as cortex_recall returns them — an id the memory store can
# never hold is bad input here, not a failure of the recall worker's store later.
MEMORY_ID_KINDS: Final = frozenset({"recall_access", "memory_pin", "memory_forget"})


def _check_memory_ids(event: Event) -> str | None:
    """A ``recall_access``, ``memory_pin`` or ``memory_forget`` names memory ids only, at
    least one (``cortex forget``'s marker, a ``memory_forget`` whose ``value`` is ``"all"``,
    may name none: it forgets every memory of the agent)."""
    if isinstance(event, FeedbackEvent) and event.kind == "memory_update":
        return _check_updated_id(event)
    if not isinstance(event, FeedbackEvent) or event.kind not in MEMORY_ID_KINDS:
        return None
    everything = event.kind == "memory_forget" and event.value == "all"
    if event.value is not None and not everything and (
            not isinstance(event.value, list) or not all(isinstance(i, str) for i in event.value)):
        return f"invalid {event.kind} value: expected a list of memory ids (strings)"
    ids = ([event.target] if event.target is not None else []) + (
        event.value if isinstance(event.value, list) else [])
    if not ids and not everything:
        return f"{event.kind} names no memory id (target or a list in value)"
    bad = next((i for i in ids if not is_memory_id(i)), None)
    if bad is not None:
        shown = bad if len(bad) <= 80 else bad[:80] + "…"
        return (f"{event.kind}: {shown!r} is not a memory id (expected a UUID such as cortex_recall returns, "
                "e.g. 1b4e28ba-2fa1-11d2-883f-0016d3cca427)")
    return None


def _check_updated_id(event: FeedbackEvent) -> str | None:
    """A ``memory_update`` names the one memory it changes in ``target`` (its new statement
    is the ``value``, checked as a ``RememberValue``)."""
    if event.target is None:
        return "memory_update names no memory id (target)"
    if not is_memory_id(event.target):
        shown = event.target if len(event.target) <= 80 else event.target[:80] + "…"
        return f"memory_update: {shown!r} is not a memory id (expected a UUID such as cortex_recall returns)"
    return None


# --------------------------------------------------------------------------- decoding

def rejection_reason(exc: BaseException, what: str = "event") -> str:
    """A readable reason for an exception raised while decoding untrusted bytes."""
    if isinstance(exc, msgspec.ValidationError):
        return f"invalid {what}: {exc}"
    if isinstance(exc, msgspec.DecodeError):
        if "utf-8" in str(exc).lower():  # msgspec ≥ 0.23 reports bad UTF-8 here, not as UnicodeDecodeError
            return f"invalid UTF-8: malformed JSON: {exc}"
        return f"malformed JSON: {exc}"
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid UTF-8 at byte {exc.start}: {exc.reason}"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return f"undecodable {what}: {type(exc).__name__}: {exc}"


def total(
    seq: int, subject: str, decode: Callable[[], Envelope | Rejection], what: str = "event"
) -> Envelope | Rejection:
    """Run ``decode`` on untrusted input: any exception becomes this event's Rejection."""
    try:
        return decode()
    except Exception as exc:  # untrusted bytes: every failure is this event's, never the worker's
        return Rejection(seq=seq, subject=subject, reason=rejection_reason(exc, what))


class _Subjects:
    """Each stored subject parsed once (``parse_subject``) with a valid agent token: a worker's
    subjects are its agents times their kinds, each read for every event. Only subjects that
    pass are kept (a bad one is parsed again, and rejected again, each time); bounded, emptied
    when full. An object, not a module-level dict (``shared.fingerprint`` reads those as tables)."""

    LIMIT: Final = 8192

    def __init__(self) -> None:
        self.by_subject: dict[tuple[str, str], Subject] = {}

    def parsed(self, prefix: str, subject: str) -> Subject | str:
        known = self.by_subject.get((prefix, subject))
        if known is not None:
            return known
        parsed = parse_subject(prefix, subject)
        if isinstance(parsed, str):
            return parsed
        if not is_valid_agent(parsed.agent):
            return f"invalid agent token {parsed.agent!r} in subject"
        if len(self.by_subject) >= self.LIMIT:
            self.by_subject.clear()
        self.by_subject[(prefix, subject)] = parsed
        return parsed


_SUBJECTS: Final = _Subjects()


def _decode(prefix: str, subject: str, seq: int, data: bytes, limits: Limits) -> Envelope | Rejection:
    parsed = _SUBJECTS.parsed(prefix, subject)  # (the agent token a valid agent id too)
    if isinstance(parsed, str):
        return Rejection(seq=seq, subject=subject, reason=parsed)
    family, agent, kind, token = parsed
    # a payload with fewer brackets than the limit cannot nest deeper: measure only the others
    if data.count(b"[") + data.count(b"{") > limits.max_depth and (depth := nesting_depth(data)) > limits.max_depth:
        return Rejection(seq=seq, subject=subject,
                         reason=f"JSON nested too deeply: {depth} levels > {limits.max_depth}")
    decoded = _decode_payload(family, token, agent, data)
    if isinstance(decoded, str):
        return Rejection(seq=seq, subject=subject, reason=decoded)
    event, key = decoded
    if token is not None:  # an OpenClaw store event: filed under the agent its session names (shared.openclaw)
        agent = event.agent
    # the subject's agent was matched above, unless the payload named it (an OpenClaw store event)
    reason = (_check_identity(event, agent, kind, agent_valid=token is None) or _check_value(event)
              or check_event(event, limits, len(data)) or _check_memory_ids(event))
    if reason:
        return Rejection(seq=seq, subject=subject, reason=reason)
    return Envelope(seq=seq, subject=subject, family=family, kind=kind, agent=agent, event=event,
                    duplicate_key=key)


def _decode_payload(family: str, token: str | None, agent: str, data: bytes) -> tuple[Event, bytes | None] | str:
    """The event a payload holds (with an OpenClaw store event's duplicate key), or why not."""
    if token is not None:
        mapped = map_store_event(token, data, agent)
        return mapped if isinstance(mapped, str) else (mapped.event, mapped.duplicate_key)
    try:
        return EVENT_DECODERS[family].decode(data), None
    except msgspec.MsgspecError as exc:
        return rejection_reason(exc, f"{family} event")


def decode_event(prefix: str, subject: str, seq: int, data: bytes, limits: Limits) -> Envelope | Rejection:
    """The event at stream sequence ``seq``, or why it is bad input. Never raises (``total``'s
    rule, without a closure per event)."""
    try:
        return _decode(prefix, subject, seq, data, limits)
    except Exception as exc:  # untrusted bytes: every failure is this event's, never the worker's
        return Rejection(seq=seq, subject=subject, reason=rejection_reason(exc, "event"))


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
    told = _family_kind(payload)
    if told == ("notes", NOTES_KIND):
        return notes_subject(prefix, agent)  # the contract's (CORTEX_NOTES, copied into CORTEX_EVENTS)
    return None if told is None else published_subject(prefix, told[0], agent, told[1])


def _family_kind(payload: dict[str, Any]) -> tuple[str, str] | None:
    """The (family, kind) a raw event's ``type`` names or its shape tells (``event_subject``)."""
    explicit = payload.get("type") or payload.get("subject_kind")
    if isinstance(explicit, str) and "." in explicit:
        family, kind = explicit.split(".", 1)
        return family, kind
    if isinstance(explicit, str) and explicit == "notes":
        return "notes", NOTES_KIND
    if "kind" in payload and isinstance(payload["kind"], str):
        return "feedback", payload["kind"]
    if "tool" in payload:
        return "tool", "result" if any(key in payload for key in ("result", "error", "duration_ms")) else "call"
    if "run_id" in payload or "prompt" in payload or "success" in payload:
        return "run", _run_kind(payload)
    if "role" in payload:
        return "msg", "sent" if payload["role"] == "assistant" else "received"
    if "messages" in payload:
        return "compaction", "before"
    if "path" in payload:
        return "notes", NOTES_KIND
    return None
