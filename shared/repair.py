"""Stored documents that cannot be read: what counts as one, and how it is cleared.

A document in a bucket is untrusted bytes like an event: anyone with write access to the
bucket (or a bug, or a disk) can leave garbage, JSON of the wrong shape, or times no
arithmetic survives. Reading one must fail for *that document* only. Its owner deletes
it and derives it again from the stream (``shared.errors.DocumentCorrupt``; the stream is
the truth), readers of other workers' documents treat it as missing meanwhile
(``shared.asof``).
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from shared import parts
from shared.codec import TS_MAX, TS_MIN
from shared.errors import RebuildRequired, is_transient
from shared.names import EVENTS_STREAM, agent_filter, session_agent_filter

# Documents keep the event times they were derived from; a stored one outside this range
# was not written by a worker (events outside it are rejected at decode).
_DOC_TS_MIN = TS_MIN
_DOC_TS_MAX = TS_MAX


def invalid_times(obj: Any, where: str = "") -> str | None:
    """The first datetime in a decoded document (nested Structs and lists included) that
    lies outside the range events may carry, or None.

    Every stored document a worker reads passes through here, so the usual answer (none) is
    found on the fields that can hold a time only (``_time_plan``: a Struct's strings and
    numbers are not visited) and without building a field's path; the path is made by the
    full walk once a time is found wrong."""
    return None if _times_fine(obj) else _first_invalid_time(obj, where)


def _times_fine(obj: Any) -> bool:
    if isinstance(obj, datetime):
        if obj.tzinfo is UTC:  # how a decoder reads "…Z": in range or not, no conversion needed
            return _DOC_TS_MIN <= obj < _DOC_TS_MAX
        return _first_invalid_time(obj) is None
    if isinstance(obj, msgspec.Struct):
        for name in _time_plan(type(obj)):
            if not _times_fine(getattr(obj, name)):
                return False
    elif isinstance(obj, list) and obj and isinstance(obj[0], msgspec.Struct | datetime):
        for item in obj:
            if not _times_fine(item):
                return False
    return True


def _may_hold_time(info: msgspec.inspect.Type) -> bool:
    """Whether a field of this type can hold, once decoded, what ``_first_invalid_time``
    visits: a datetime, a Struct, or a list of either. Strings, numbers, dicts and tuples
    cannot (the walk never entered a dict or a tuple); a type this cannot tell is visited."""
    if isinstance(info, msgspec.inspect.Metadata):
        return _may_hold_time(info.type)
    if isinstance(info, msgspec.inspect.UnionType):
        return any(_may_hold_time(t) for t in info.types)
    if isinstance(info, msgspec.inspect.ListType):
        return _may_hold_time(info.item_type)
    return not isinstance(info, _TIMELESS)


_TIMELESS = (msgspec.inspect.StrType, msgspec.inspect.IntType, msgspec.inspect.FloatType, msgspec.inspect.BoolType,
             msgspec.inspect.NoneType, msgspec.inspect.LiteralType, msgspec.inspect.BytesType,
             msgspec.inspect.DictType, msgspec.inspect.TupleType, msgspec.inspect.VarTupleType,
             msgspec.inspect.SetType, msgspec.inspect.FrozenSetType, msgspec.inspect.EnumType,
             msgspec.inspect.DateType, msgspec.inspect.TimeType, msgspec.inspect.TimeDeltaType,
             msgspec.inspect.UUIDType, msgspec.inspect.DecimalType)


@functools.cache
def _time_plan(cls: type[msgspec.Struct]) -> tuple[str, ...]:
    """The fields of ``cls`` that can hold a time, in field order."""
    info = msgspec.inspect.type_info(cls)
    if not isinstance(info, msgspec.inspect.StructType):
        return cls.__struct_fields__
    return tuple(f.name for f in info.fields if _may_hold_time(f.type))


def _first_invalid_time(obj: Any, where: str = "") -> str | None:
    """The full walk: every field, each found time's path."""
    if isinstance(obj, datetime):
        try:
            utc = obj.astimezone(UTC)
        except OverflowError:
            return f"{where or 'a time'} {obj.isoformat()} overflows"
        return None if _DOC_TS_MIN <= utc < _DOC_TS_MAX else f"{where or 'a time'} {obj.isoformat()} out of range"
    if isinstance(obj, msgspec.Struct):
        for name in obj.__struct_fields__:
            found = _first_invalid_time(getattr(obj, name), f"{where}.{name}" if where else name)
            if found:
                return found
    elif isinstance(obj, list) and obj and isinstance(obj[0], msgspec.Struct | datetime):
        for index, item in enumerate(obj):
            found = _first_invalid_time(item, f"{where}[{index}]")
            if found:
                return found
    return None


def unreadable_reason(exc: BaseException) -> str | None:
    """Why a stored document could not be read, or None when ``exc`` says nothing about
    the document (a transient failure of the store, a rebuild already under way)."""
    if isinstance(exc, RebuildRequired) or is_transient(exc):
        return None
    return f"{type(exc).__name__}: {exc}"[:300]


class InvalidDocument(ValueError):
    """A stored document decoded but holds what no worker writes."""


def decode_document(values: list[bytes], decoder: msgspec.json.Decoder[Any]) -> Any:
    """A stored document from its values (one, or a head and parts); raises on anything
    undecodable or invalid (callers turn that into a rebuild or a miss)."""
    doc = parts.decode_parts(values, decoder)
    reason = invalid_times(doc)
    if reason:
        raise InvalidDocument(reason)
    return doc


async def discard_document(kv: KeyValue, agent: str, stored_parts: int = 0) -> None:
    """Delete an unreadable document: the head (first, so no reader joins the parts
    meanwhile), then every part key it may have."""
    await kv.delete(agent)
    index = stored_parts + 1
    while True:  # leftovers past what the head said, up to the first missing key
        try:
            entry = await kv.get(parts.part_key(agent, index))
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            break
        if entry.value is None:
            break
        index += 1
    await parts.delete_parts(kv, agent, 0, index - 1)


async def first_event_seq(js: JetStreamContext, prefix: str, agent: str) -> int:
    """The stream sequence of ``agent``'s first event, or earlier (1 when it cannot be told: a
    rewind from the start is always correct, only slower): the first of its own subject's and
    of those the OpenClaw store filed under its session token, any of which may be its."""
    subjects = (agent_filter(prefix, agent), session_agent_filter(prefix))
    firsts = [await _first_seq_of(js, subject) for subject in subjects]
    found = [seq for seq in firsts if seq is not None]
    return min(found) if found else 1


async def _first_seq_of(js: JetStreamContext, subject: str) -> int | None:
    """The first stream sequence on ``subject`` (None: none; 1: it cannot be told)."""
    try:
        msg = await js.get_msg(EVENTS_STREAM, seq=1, subject=subject, next=True)
    except nats.js.errors.NotFoundError:
        return None
    except Exception as exc:  # a lookup that fails only costs time: rewind from the start
        if not is_transient(exc):
            return 1
        raise
    return int(msg.seq) if msg.seq else 1
