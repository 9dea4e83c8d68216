"""Read another worker's document as it was just before a stream sequence.

Composed documents (snapshot, narrative, boot) made for the event at sequence S must
reflect exactly the events before S, even when the source worker has already moved on.
Event-derived workers write their pending changes at every trigger event (a *cut*, see
``ProjectionHandler``) and their buckets keep a short history, so the newest revision
whose ``integrity.last_seq`` is below S is the source's state at S − 1.
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from shared.kv import kv_read

log = logging.getLogger(__name__)

T = TypeVar("T")

DOC_HISTORY = 16  # revisions kept per document key in event-derived buckets


class DocReader:
    def __init__(self, js: JetStreamContext) -> None:
        self._js = js
        self._kvs: dict[str, KeyValue] = {}
        self._decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}

    async def kv(self, bucket: str) -> KeyValue:
        kv = self._kvs.get(bucket)
        if kv is None:
            kv = self._kvs[bucket] = await self._js.key_value(bucket)
        return kv

    def _decode(self, raw: bytes, doc_type: type[T]) -> T:
        decoder = self._decoders.get(doc_type)
        if decoder is None:
            decoder = self._decoders[doc_type] = msgspec.json.Decoder(doc_type)
        result: T = decoder.decode(raw)
        return result

    async def latest(self, bucket: str, agent: str, doc_type: type[T]) -> T | None:
        raw, _ = await kv_read(await self.kv(bucket), agent)
        return self._decode(raw, doc_type) if raw is not None else None

    async def as_of(self, bucket: str, agent: str, doc_type: type[T], before_seq: int) -> tuple[T | None, bool]:
        """The document as it was before ``before_seq``; the flag is False when the history
        no longer reaches back that far (the latest document is returned instead)."""
        latest = await self.latest(bucket, agent, doc_type)
        if latest is None or _last_seq(latest) < before_seq:
            return latest, True
        try:
            entries = await (await self.kv(bucket)).history(agent)
        except nats.js.errors.NoKeysError:
            return None, True
        best: T | None = None
        for entry in entries:
            if entry.value is None:
                best = None  # a delete marker: nothing existed before the next write
                continue
            doc = self._decode(entry.value, doc_type)
            if _last_seq(doc) >= before_seq:
                break
            best = doc
        complete = len(entries) < DOC_HISTORY or best is not None
        if not complete:
            log.warning("history_too_short", extra={"bucket": bucket, "agent": agent, "before_seq": before_seq})
            return latest, False
        return best, True


def _last_seq(doc: Any) -> int:
    return int(doc.integrity.last_seq)
