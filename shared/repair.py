"""Stored documents that cannot be read: what counts as one, and how it is cleared.

A document in a bucket is untrusted bytes like an event: anyone with write access to the
bucket (or a bug, or a disk) can leave garbage, JSON of the wrong shape, or times no
arithmetic survives. Reading one must fail for *that document* only. Its owner deletes
it and derives it again from the stream (``shared.errors.DocumentCorrupt``; the stream is
the truth), readers of other workers' documents treat it as missing meanwhile
(``shared.asof``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from shared import parts
from shared.codec import TS_MAX, TS_MIN
from shared.errors import RebuildRequired, is_transient
from shared.names import EVENTS_STREAM, agent_filter

# Documents keep the event times they were derived from; a stored one outside this range
# was not written by a worker (events outside it are rejected at decode).
_DOC_TS_MIN = TS_MIN
_DOC_TS_MAX = TS_MAX


def invalid_times(obj: Any, where: str = "") -> str | None:
    """The first datetime in a decoded document (nested Structs and lists included) that
    lies outside the range events may carry, or None."""
    if isinstance(obj, datetime):
        try:
            utc = obj.astimezone(UTC)
        except OverflowError:
            return f"{where or 'a time'} {obj.isoformat()} overflows"
        return None if _DOC_TS_MIN <= utc < _DOC_TS_MAX else f"{where or 'a time'} {obj.isoformat()} out of range"
    if isinstance(obj, msgspec.Struct):
        for name in obj.__struct_fields__:
            found = invalid_times(getattr(obj, name), f"{where}.{name}" if where else name)
            if found:
                return found
    elif isinstance(obj, list) and obj and isinstance(obj[0], msgspec.Struct | datetime):
        for index, item in enumerate(obj):
            found = invalid_times(item, f"{where}[{index}]")
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
    """The stream sequence of ``agent``'s first event (1 when it cannot be told: a rewind
    from the start is always correct, only slower)."""
    try:
        msg = await js.get_msg(EVENTS_STREAM, seq=1, subject=agent_filter(prefix, agent), next=True)
    except nats.js.errors.NotFoundError:
        return 1
    except Exception as exc:  # a lookup that fails only costs time: rewind from the start
        if not is_transient(exc):
            return 1
        raise
    return int(msg.seq) if msg.seq else 1
