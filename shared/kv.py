"""KV helpers: reads that treat delete markers as missing, and compare-and-set writes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from shared.connection import _CortexClient
from shared.errors import TransientError, api_codes
from shared.natsio import api_request, direct_range, kv_key_valid, kv_writer

READS_AT_ONCE = 64  # key reads in flight at once when listing a bucket's keys (kv_keys)
DOC_HISTORY = 16  # revisions kept per document key in event-derived buckets (see shared.asof)


async def kv_read(kv: KeyValue, key: str) -> tuple[bytes | None, int]:
    """``(value, revision)``; value is None when the key is absent or deleted.

    The revision of a delete marker is returned so a compare-and-set can write over it.
    """
    try:
        entry = await kv.get(key)
    except (nats.js.errors.KeyDeletedError, nats.js.errors.KeyNotFoundError) as exc:
        # kv.get turns a delete marker into KeyNotFoundError but keeps the marker's entry:
        # its revision is what a compare-and-set must name to write over the marker.
        marker = getattr(exc, "entry", None)
        return None, (marker.revision or 0) if marker is not None else 0
    # Pitfall (NOTES.md): while a delete/expiry marker exists, get() may return value None.
    if entry.value is None or entry.operation in ("DEL", "PURGE"):
        return None, entry.revision or 0
    return entry.value, entry.revision or 0


async def key_written_at(js: JetStreamContext, bucket: str, key: str) -> datetime | None:
    """When ``key`` was last written (the server's time; a delete counts), or None if never."""
    try:
        msg = await js.get_last_msg(f"KV_{bucket}", f"$KV.{bucket}.{key}", direct=True)
    except nats.js.errors.NotFoundError:
        return None
    return msg.time


async def bucket_made_at(js: JetStreamContext, bucket: str) -> datetime | None:
    """When the bucket was made (its stream's creation, the server's time), or None if it is missing."""
    try:
        return (await js.stream_info(f"KV_{bucket}")).created
    except nats.js.errors.NotFoundError:
        return None


def checkpoint_value(raw: bytes | None) -> int | None:
    """A stored checkpoint (decimal ASCII); None when there is none or it is unreadable."""
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if value >= 0 else None


async def kv_cas(kv: KeyValue, key: str, value: bytes, revision: int) -> int:
    """Write ``value`` iff the key is still at ``revision`` (0: must not exist).

    Raises ``nats.js.errors.KeyWrongLastSequenceError`` on a conflict. On a Cortex connection
    that is up, one lean publish (``_CortexClient.publish_expecting``); else ``KeyValue.update``.
    """
    nc, prefix, timeout = kv_writer(kv)
    if isinstance(nc, _CortexClient) and nc.is_connected and not nc.is_draining_pubs:
        if not kv_key_valid(key):
            raise nats.js.errors.InvalidKeyError(key)
        return await nc.publish_expecting(f"{prefix}{key}", value, revision, timeout)
    return await kv.update(key, value, last=revision)


# JetStream: the subject's last sequence is not the one the write expected (nats-py's
# ``KeyValue.update`` turns these into ``KeyWrongLastSequenceError`` the same way)
_WRONG_LAST_SEQUENCE = frozenset({10071, 10164})


async def kv_delete(js: JetStreamContext, bucket: str, key: str, revision: int) -> int:
    """Put a delete marker on ``key`` iff it is still at ``revision`` and return the
    marker's revision (``KeyValue.delete`` does not: the next compare-and-set must name it).
    Raises ``nats.js.errors.KeyWrongLastSequenceError`` on a conflict, as ``kv_cas``."""
    headers = {"KV-Operation": "DEL", "Nats-Expected-Last-Subject-Sequence": str(revision)}
    try:
        ack = await js.publish(f"$KV.{bucket}.{key}", b"", headers=headers)
    except nats.js.errors.APIError as exc:
        if api_codes(exc)[1] in _WRONG_LAST_SEQUENCE:
            raise nats.js.errors.KeyWrongLastSequenceError(description=exc.description) from exc
        raise
    return int(ack.seq)


async def kv_count(js: JetStreamContext, bucket: str) -> int:
    """The number of the bucket's keys that hold a value, exactly (``kv_keys``; nats-py's
    ``KeyValue.keys()`` can end its listing early and leaves a consumer on the bucket's
    stream for five minutes)."""
    return len(await kv_keys(js, bucket))


async def kv_update(
    kv: KeyValue, key: str, mutate: Callable[[bytes | None], bytes], attempts: int = 100
) -> int:
    """Read-modify-write with compare-and-set, retried on conflict; returns the new revision."""
    for _ in range(attempts):
        raw, revision = await kv_read(kv, key)
        try:
            return await kv_cas(kv, key, mutate(raw), revision)
        except nats.js.errors.KeyWrongLastSequenceError:
            continue
    raise TransientError(f"{key}: gave up after {attempts} conflicting updates")


class Revision(NamedTuple):
    revision: int
    value: bytes | None  # None: a delete or purge marker


class _MultiLast(msgspec.Struct):
    multi_last: list[str]
    up_to_seq: int
    batch: int = 1


_LAST_BELOW_TIMEOUT_S = 5.0


async def kv_revision_below(js: JetStreamContext, bucket: str, key: str, below: int) -> Revision | None:
    """The newest revision of ``key`` older than revision ``below`` (a revision the bucket
    holds: the server finds nothing past its last sequence), or None when the bucket keeps
    none. One direct-get request (``multi_last`` up to a sequence, nats-server
    2.11+) instead of reading the key's whole history through a consumer."""
    if below <= 1:
        return None
    request = msgspec.json.encode(_MultiLast(multi_last=[f"$KV.{bucket}.{key}"], up_to_seq=below - 1))
    msg = await api_request(js, f"DIRECT.GET.KV_{bucket}", request, _LAST_BELOW_TIMEOUT_S)  # not in nats-py
    headers = msg.headers or {}
    status = headers.get("Status")
    if status is not None:
        if status in ("404", "204"):  # nothing at or below that sequence
            return None
        raise nats.js.errors.APIError.from_msg(msg)
    operation = headers.get("KV-Operation")
    value = None if operation in ("DEL", "PURGE") else msg.data
    return Revision(int(headers["Nats-Sequence"]), value)


_HISTORY_BATCH = 64


async def kv_revisions_below(js: JetStreamContext, bucket: str, key: str, below: int) -> list[Revision]:
    """Every revision of ``key`` the bucket holds older than revision ``below``, oldest first —
    in one batched direct get (per ``_HISTORY_BATCH``), where ``kv_revision_below`` walks back a
    request a revision: for a read that has to go far back (a composed read at a stream cut,
    past most of the key's history: up to ``DOC_HISTORY`` requests)."""
    found = await direct_range(js, f"KV_{bucket}", f"$KV.{bucket}.{key}", 1, below, _LAST_BELOW_TIMEOUT_S,
                               _HISTORY_BATCH)
    return [Revision(revision, None if (msg.headers or {}).get("KV-Operation") in ("DEL", "PURGE") else msg.data)
            for revision, msg in found]


class _Subjects(msgspec.Struct):
    subjects: dict[str, int] | None = None


class _StreamInfoPage(msgspec.Struct):
    state: _Subjects | None = None
    total: int = 0
    error: dict[str, Any] | None = None


async def kv_keys(js: JetStreamContext, bucket: str, agent: str | None = None) -> list[str]:
    """The bucket's keys that hold a value (``agent``: only that agent's head and
    ``agent.<part>`` keys), sorted.

    Asked of the server by subject (stream info, page by page), then each key's latest
    entry read: ``KeyValue.keys()`` lists keys with a watcher that can miss some (known
    upstream), and a backup or a forget must not.
    """
    prefix = f"$KV.{bucket}."
    filters = [f"{prefix}{agent}", f"{prefix}{agent}.>"] if agent is not None else [f"{prefix}>"]
    subjects: set[str] = set()
    for subject_filter in filters:
        offset = 0
        while True:
            request = msgspec.json.encode({"subjects_filter": subject_filter, "offset": offset})
            msg = await api_request(js, f"STREAM.INFO.KV_{bucket}", request, _LAST_BELOW_TIMEOUT_S)
            page = msgspec.json.decode(msg.data, type=_StreamInfoPage)
            if page.error is not None:
                if page.error.get("code") == 404:
                    raise nats.js.errors.BucketNotFoundError
                raise nats.js.errors.APIError(code=page.error.get("code"), description=page.error.get("description"))
            found = (page.state.subjects if page.state else None) or {}
            subjects.update(found)
            offset += len(found)
            if not found or offset >= page.total:
                break
    kv = await js.key_value(bucket)
    ordered = [subject[len(prefix):] for subject in sorted(subjects)]
    keys = []
    for start in range(0, len(ordered), READS_AT_ONCE):
        chunk = ordered[start:start + READS_AT_ONCE]
        latest = await asyncio.gather(*(kv_read(kv, key) for key in chunk))
        keys += [key for key, (raw, _) in zip(chunk, latest, strict=True) if raw is not None]  # a marker holds nothing
    return keys
