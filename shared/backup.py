"""Backups of the KV buckets (they are streams ``KV_<bucket>``) without the ``nats`` CLI.

``export_buckets`` reads every live key of each bucket (direct gets, all revisions kept by
history are not needed to restore the current state; a document split over
``agent.<part>`` keys is read as one consistent version); ``import_buckets`` writes them into a
freshly provisioned server. The format is JSON lines: ``{"bucket", "key", "value"}`` with the
value base64-encoded. For whole-stream backups with history, use ``nats stream backup``
(docs/operations.md).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from shared.kv import kv_keys, kv_read
from shared.parts import SPLIT_DOCS, agent_of, is_part_key, part_key, read_latest


class BackupRecord(msgspec.Struct, kw_only=True):
    bucket: str
    key: str
    value: str  # base64


async def export_buckets(js: JetStreamContext, buckets: Iterable[str]) -> list[BackupRecord]:
    records: list[BackupRecord] = []
    for bucket in buckets:
        try:
            kv = await js.key_value(bucket)
            keys = await kv_keys(js, bucket)
        except (nats.js.errors.BucketNotFoundError, nats.js.errors.NoKeysError):
            continue
        split = bucket in SPLIT_DOCS
        for key in keys:
            if split and is_part_key(key):
                continue  # exported with its head: the same version, read consistently
            records += [BackupRecord(bucket=bucket, key=k, value=base64.b64encode(v).decode())
                        for k, v in await _values(kv, key, split and agent_of(key) == key)]
    return records


async def _values(kv: KeyValue, key: str, split: bool) -> list[tuple[str, bytes]]:
    """The key's value; for an agent's split document, its parts then its head (the order in which
    the writer puts them, which ``import_buckets`` keeps)."""
    if not split:
        raw, _ = await kv_read(kv, key)
        return [(key, raw)] if raw is not None else []
    values, _ = await read_latest(kv, key)
    return [(part_key(key, index), values[index]) for index in (*range(1, len(values)), 0)] if values else []


async def import_buckets(js: JetStreamContext, records: Iterable[BackupRecord]) -> int:
    """Writes the records; a split document's parts before its head, so a reader that
    sees the head finds its parts (``shared.parts``)."""
    count = 0
    for record in sorted(records, key=lambda r: not (r.bucket in SPLIT_DOCS and is_part_key(r.key))):
        kv = await js.key_value(record.bucket)
        await kv.put(record.key, base64.b64decode(record.value))
        count += 1
    return count


def dump_lines(records: Iterable[BackupRecord]) -> Iterator[bytes]:
    encoder = msgspec.json.Encoder()
    for record in records:
        yield encoder.encode(record) + b"\n"


def load_lines(lines: Iterable[bytes]) -> list[BackupRecord]:
    decoder = msgspec.json.Decoder(BackupRecord)
    return [decoder.decode(line) for line in lines if line.strip()]
