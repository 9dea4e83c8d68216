"""Read another worker's document as it was just before a stream sequence.

Composed documents (snapshot, narrative, boot) made for the event at sequence S must
reflect exactly the events before S, even when the source worker has already moved on.
Event-derived workers write their pending changes at every trigger event (a *cut*, see
``ProjectionHandler``) and their buckets keep a short history, so the newest revision
whose ``integrity.last_seq`` is below S is the source's state at S − 1.

A document split over ``agent.<part>`` keys (``shared.parts``) is read as the head's
version: the head revision is chosen as above, and each part is the revision of its key
that the head was written with.

A source written many times since the trigger (paced load writes a revision per small
batch; a reader restarted, or catching up, far behind) may keep no revision that old: a
document derived from the events alone — or from them and other such documents as of its
triggers (the composed ones) — is then derived (``shared.derive``), so the read stays
exact; any other (a model helped make it), or one whose events the stream no longer holds
in full (retention moved its start), is read as it is now, counted
(``cortex_asof_history_short_total``).
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue
from prometheus_client import Counter

from shared import parts
from shared.derive import Derivation
from shared.kv import DOC_HISTORY, Revision, kv_read, kv_revision_below, kv_revisions_below
from shared.metrics import DOCUMENTS_UNREADABLE
from shared.repair import decode_document, unreadable_reason

log = logging.getLogger(__name__)

T = TypeVar("T")

HISTORY_SHORT = Counter(
    "cortex_asof_history_short_total",
    "Composed reads (boot, snapshot, narrative, recall's facts) for which the source's history no longer "
    "reached the trigger and the source is not derived from the events alone (or the stream no longer holds "
    "them all: retention or a purge moved its start): the latest document was used "
    "instead, so a replay may not reproduce that one")

__all__ = ["DOC_HISTORY", "DocReader"]


class DocReader:
    def __init__(self, js: JetStreamContext, derivation: Derivation | None = None) -> None:
        self._js = js
        self._derivation = derivation
        self._kvs: dict[str, KeyValue] = {}
        self._decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}

    async def warm(self) -> None:
        """Its derivation made ready off the event loop (``Derivation.warm``), if it has one."""
        if self._derivation is not None:
            await self._derivation.warm()

    async def kv(self, bucket: str) -> KeyValue:
        kv = self._kvs.get(bucket)
        if kv is None:
            kv = self._kvs[bucket] = await self._js.key_value(bucket)
        return kv

    def _decoder(self, doc_type: type[T]) -> msgspec.json.Decoder[T]:
        decoder = self._decoders.get(doc_type)
        if decoder is None:
            decoder = self._decoders[doc_type] = msgspec.json.Decoder(doc_type)
        return decoder

    def _decode(self, values: list[bytes], doc_type: type[T], bucket: str, agent: str) -> T | None:
        """The document, or None when it cannot be read: another worker's document is
        untrusted bytes too. Its owner deletes and rebuilds it (``shared.repair``); until
        then it counts as missing here."""
        try:
            doc: T = decode_document(values, self._decoder(doc_type))
        except Exception as exc:
            _unreadable(bucket, agent, exc)
            return None
        return doc

    async def _latest(self, bucket: str, agent: str, doc_type: type[T]) -> tuple[T | None, int, bool]:
        """The current document, its (head's) revision, and whether it could be read."""
        kv = await self.kv(bucket)
        try:
            if parts.split_lists(doc_type):
                values, revision = await parts.read_latest(kv, agent)
            else:
                raw, revision = await kv_read(kv, agent)
                values = [raw] if raw is not None else []
        except Exception as exc:  # a head that is not even a document (no integrity to read)
            if unreadable_reason(exc) is None:
                raise
            _unreadable(bucket, agent, exc)
            return None, (await kv_read(kv, agent))[1], False
        if not values:
            return None, revision, True
        doc = self._decode(values, doc_type, bucket, agent)
        return doc, revision, doc is not None

    async def latest(self, bucket: str, agent: str, doc_type: type[T]) -> T | None:
        return (await self._latest(bucket, agent, doc_type))[0]

    async def final_before(self, bucket: str, agent: str, before_seq: int) -> bool:
        """Whether ``as_of(before_seq)`` is final already: the agent's document holds the
        event just before ``before_seq`` or a later one (its head's ``integrity.last_seq``).
        A worker writes an agent's revisions in stream order, each with a higher watermark
        than the one before (a write carries an event the last one did not hold), so no
        revision below ``before_seq`` can come after that one — exactly as once the worker's
        checkpoint has passed the trigger, which happens only after the rest of its batch is
        applied and committed. For a document made *for* the trigger (read before S + 1) it
        is that document itself. An absent, deleted or unreadable document proves nothing."""
        try:
            raw, _ = await kv_read(await self.kv(bucket), agent)
        except nats.js.errors.BucketNotFoundError:
            return False
        if raw is None:
            return False
        try:
            return int(parts.integrity_of(raw).last_seq) >= before_seq - 1
        except (msgspec.DecodeError, msgspec.ValidationError):
            return False

    async def as_of(self, bucket: str, agent: str, doc_type: type[T], before_seq: int) -> tuple[T | None, bool]:
        """The document as it was before ``before_seq``; the flag is False when the history
        no longer reaches back that far (the latest document is returned instead).

        Walks back from the latest revision (usually one or two): the first revision whose
        ``integrity.last_seq`` is below ``before_seq`` is the one — one direct get for the step
        below the latest, and the rest of the key's history in one more (``kv_revisions_below``)
        when that step is not far enough back.
        An unreadable revision (garbage written over a document) is passed over.
        """
        latest, revision, readable = await self._latest(bucket, agent, doc_type)
        if readable and (latest is None or _last_seq(latest) < before_seq):
            return latest, True
        older = await kv_revision_below(self._js, bucket, agent, revision)
        if older is not None and older.value is not None and _last_seq_of(older.value, bucket, agent) >= before_seq:
            # further back than one step (a read at a stream cut): the rest of the key's history
            # in one request, not a request a revision
            rest = await kv_revisions_below(self._js, bucket, agent, older.revision)
            older = _walk(rest, bucket, agent, before_seq)
            if older is None:
                if 2 + len(rest) < DOC_HISTORY:
                    return None, True  # no older revision ever existed
                return await self._past_history(bucket, agent, before_seq, latest)
        elif older is None:
            return None, True  # no older revision ever existed (the latest is the first)
        if older.value is None:
            return None, True  # a delete marker: nothing existed before the next write
        values: list[bytes] | None = [older.value]
        if parts.split_lists(doc_type):
            values = await parts.values_at(await self.kv(bucket), agent, older.value, older.revision)
        if values is None:
            return await self._past_history(bucket, agent, before_seq, latest)
        return self._decode(values, doc_type, bucket, agent), True

    async def _past_history(self, bucket: str, agent: str, before_seq: int, latest: T | None) -> tuple[T | None, bool]:
        """The bucket's history no longer reaches ``before_seq``. A document derived from the
        events alone is derived from them (``shared.derive``: exact, whatever the lag, while
        the stream holds every event); any other, or one the stream no longer holds the
        events of, is read as it is now — counted and logged, for a replay may not reproduce
        what is made of it."""
        if self._derivation is not None and self._derivation.derivable(bucket):
            derived, exact = await self._derivation.as_of(bucket, agent, before_seq, _producer(latest),
                                                          self.as_of)
            if exact:
                return derived, True
        log.warning("history_too_short", extra={"bucket": bucket, "agent": agent, "before_seq": before_seq})
        HISTORY_SHORT.inc()
        return latest, False


def _walk(revisions: list[Revision], bucket: str, agent: str, before_seq: int) -> Revision | None:
    """Back from the newest of ``revisions`` (oldest first): the first whose watermark is below
    ``before_seq``, or a delete marker (nothing existed before the write after it); None when
    none is."""
    for older in reversed(revisions):
        if older.value is None or _last_seq_of(older.value, bucket, agent) < before_seq:
            return older
    return None


def _producer(doc: Any) -> str:
    """Who made a document (``integrity.producer``), for one derived in its place."""
    return str(doc.integrity.producer) if doc is not None else ""


def _last_seq(doc: Any) -> int:
    return int(doc.integrity.last_seq)


def _last_seq_of(raw: bytes, bucket: str, agent: str) -> int:
    """An older revision's watermark; an unreadable revision (garbage written over a
    document, deleted by its owner since) is passed over: as if it were newer."""
    try:
        return int(parts.integrity_of(raw).last_seq)
    except Exception as exc:  # untrusted bytes: this revision's problem only
        _unreadable(bucket, agent, exc)
        return 1 << 62


def _unreadable(bucket: str, agent: str, exc: BaseException) -> None:
    log.warning("document_unreadable", extra={"bucket": bucket, "agent": agent,
                                              "error": f"{type(exc).__name__}: {exc}"[:300],
                                              "action": "read as missing; its worker rebuilds it"})
    DOCUMENTS_UNREADABLE.labels(bucket.replace("cortex_shadow_", "cortex_")).inc()
