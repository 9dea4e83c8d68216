"""Backups of the KV buckets (they are streams ``KV_<bucket>``) without the ``nats`` CLI.

``export_buckets`` reads every live key of each bucket (direct gets, all revisions kept by
history are not needed to restore the current state); ``import_buckets`` writes them into a
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

from shared.kv import kv_read


class BackupRecord(msgspec.Struct, kw_only=True):
    bucket: str
    key: str
    value: str  # base64


async def export_buckets(js: JetStreamContext, buckets: Iterable[str]) -> list[BackupRecord]:
    records: list[BackupRecord] = []
    for bucket in buckets:
        try:
            kv = await js.key_value(bucket)
            keys = sorted(await kv.keys())
        except (nats.js.errors.BucketNotFoundError, nats.js.errors.NoKeysError):
            continue
        for key in keys:
            raw, _ = await kv_read(kv, key)
            if raw is not None:
                records.append(BackupRecord(bucket=bucket, key=key, value=base64.b64encode(raw).decode()))
    return records


async def import_buckets(js: JetStreamContext, records: Iterable[BackupRecord]) -> int:
    count = 0
    for record in records:
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
