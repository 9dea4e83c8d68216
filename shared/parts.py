"""Documents stored over several KV values: the head ``agent`` and parts ``agent.part1`` …

Contract: no value exceeds 512 KiB; a store that could grow past that splits into keys
``agent.<part>``. A document type that may be split names its splittable lists in a
``SPLIT_LISTS`` class variable (``KnowledgeDoc``: entities, facts). Every part is itself a
complete document of that type — the head's other fields, the head's ``integrity``, a run
of the lists' items — so each value decodes with the ordinary decoder. A document that
fits is one value, byte-identical to its plain encoding (no part keys at all).

Writing (``ProjectionHandler``): the parts are put first, then the head with
compare-and-set, then part keys the new document no longer uses are deleted, highest
first. The head's KV revision is the consistency point: revisions are the bucket stream's
sequence numbers, ordered across keys, so the version of part *i* that belongs to a head
written at revision *r* is the newest revision of ``agent.part<i>`` below *r* — and it
carries the head's integrity. A reader never mixes versions:

* a part whose newest revision is below the head's is what the head saw (a missing key or
  a delete marker there ends the document, as does a leftover from an older version);
* a part rewritten or deleted after the head (the writer is between its parts and its next
  head, or cleaned up after it) is read at its newest revision below the head's;
* when the history no longer reaches back that far the read is torn: ``values_at`` says
  so (None) and the caller reads again or reports it.

Keys: an agent id never contains a dot, so ``is_part_key`` tells parts from documents
and ``agent_of`` maps any key to its agent.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any, Final, TypeVar

import msgspec
from nats.js.kv import KeyValue

from schemas.docs import Integrity, KnowledgeDoc
from shared.errors import DocumentTooLarge, TransientError
from shared.kv import DOC_HISTORY, kv_read, kv_revision_below
from shared.names import BUCKET_KNOWLEDGE, shadow_bucket
from shared.natsio import kv_location

MAX_VALUE_BYTES: Final = 512 * 1024  # the contract's limit per KV value
PAYLOAD_HEADROOM: Final = 1024  # a KV write's subject and headers, beside its value
READ_ATTEMPTS: Final = 8

D = TypeVar("D", bound=msgspec.Struct)

_ENCODER: Final = msgspec.json.Encoder()


class _Stamped(msgspec.Struct):
    integrity: Integrity


_STAMP: Final = msgspec.json.Decoder(_Stamped)


# The document buckets whose documents may be split, for tools that read buckets by name.
SPLIT_DOCS: Final[dict[str, type[msgspec.Struct]]] = {
    name: doc_type for bucket, doc_type in ((BUCKET_KNOWLEDGE, KnowledgeDoc),)
    for name in (bucket, shadow_bucket(bucket))
}


def split_lists(doc_type: type[Any]) -> tuple[str, ...]:
    """The list fields a document type spreads over parts; () for single-value documents."""
    return tuple(getattr(doc_type, "SPLIT_LISTS", ()))


def cap_lists(doc_type: type[Any]) -> tuple[str, ...]:
    """The list fields a write may trim from the front to fit (``CAP_LISTS``)."""
    return tuple(getattr(doc_type, "CAP_LISTS", ()))


def value_budget(max_payload: int, limit: int = MAX_VALUE_BYTES) -> int:
    """The largest value a write may carry: the contract's limit, and below the server's
    max payload with room for the message's headers (a value the server refuses can never
    be written, however often it is retried)."""
    return min(limit, max(1024, max_payload - PAYLOAD_HEADROOM))


def cap(doc: D, max_bytes: int) -> tuple[D, int]:
    """``doc`` with the oldest items of its ``CAP_LISTS`` dropped until it encodes to at
    most ``max_bytes`` (its ``SPLIT_LISTS`` do not count: they go to parts), and how many
    were dropped. Raises ``DocumentTooLarge`` when even empty lists do not make it fit."""
    lists = split_lists(type(doc))
    measured = msgspec.structs.replace(doc, **{name: [] for name in lists}) if lists else doc
    excess = len(_ENCODER.encode(measured)) - max_bytes
    if excess <= 0:
        return doc, 0
    trimmed: dict[str, list[Any]] = {}
    dropped = 0
    for name in cap_lists(type(doc)):
        items = list(getattr(doc, name))
        cut = 0
        while cut < len(items) and excess > 0:
            excess -= len(_ENCODER.encode(items[cut])) + (1 if cut < len(items) - 1 else 0)  # and its comma
            cut += 1
        trimmed[name] = items[cut:]
        dropped += cut
        if excess <= 0:
            break
    if excess > 0:
        raise DocumentTooLarge(f"{type(doc).__name__} does not fit {max_bytes} bytes even without "
                               f"{', '.join(cap_lists(type(doc))) or 'any list'}")
    return msgspec.structs.replace(doc, **trimmed), dropped


def part_key(agent: str, index: int) -> str:
    """``agent`` for the head (index 0), ``agent.part<index>`` after it."""
    return agent if index == 0 else f"{agent}.part{index}"


_PART_KEY: Final = re.compile(r"[A-Za-z0-9_-]{1,64}\.part[1-9][0-9]*")


def is_part_key(key: str) -> bool:
    """``agent.part<i>``: a part, not a document of its own."""
    return _PART_KEY.fullmatch(key) is not None


def agent_of(key: str) -> str:
    return key.split(".", 1)[0]


def integrity_of(raw: bytes) -> Integrity:
    return _STAMP.decode(raw).integrity


# --------------------------------------------------------------------------- pure codec

def encode_parts(doc: msgspec.Struct, max_bytes: int = MAX_VALUE_BYTES) -> list[bytes]:
    """``doc`` as values of at most ``max_bytes``, the head first. The items of each split
    list are packed greedily in list order; a document that fits is one value, its plain
    encoding. Raises DocumentTooLarge when a single item cannot fit a part at all."""
    whole = _ENCODER.encode(doc)
    lists = split_lists(type(doc))
    if len(whole) <= max_bytes or not lists:
        return [whole]
    shell = msgspec.structs.replace(doc, **{name: [] for name in lists})
    budget = max_bytes - len(_ENCODER.encode(shell))
    parts: list[dict[str, list[Any]]] = [{name: [] for name in lists}]
    used = 0
    for name in lists:
        for item in getattr(doc, name):
            size = len(_ENCODER.encode(item))
            if size > budget:
                raise DocumentTooLarge(f"one {type(item).__name__} encodes to {size} bytes, "
                                       f"over the part budget of {budget}")
            cost = size + (1 if parts[-1][name] else 0)  # the separating comma
            if used + cost > budget:
                parts.append({n: [] for n in lists})
                used, cost = 0, size
            parts[-1][name].append(item)
            used += cost
    return [_ENCODER.encode(msgspec.structs.replace(doc, **part)) for part in parts]


def join_parts(parts: Sequence[D]) -> D:
    """One document from its decoded parts, the head first."""
    head = parts[0]
    if len(parts) == 1:
        return head
    lists = split_lists(type(head))
    return msgspec.structs.replace(head, **{name: [x for p in parts for x in getattr(p, name)] for name in lists})


# --------------------------------------------------------------------------- writing

async def put_parts(kv: KeyValue, agent: str, values: Sequence[bytes]) -> None:
    """Step one of a write: every part but the head (``values`` from ``encode_parts``).
    Step two is the head, with compare-and-set; step three ``delete_parts``."""
    for index in range(1, len(values)):
        await kv.put(part_key(agent, index), values[index])


async def delete_parts(kv: KeyValue, agent: str, keep: int, stored: int) -> None:
    """Delete part keys ``keep + 1 … stored``, highest first, so that an interrupted
    cleanup leaves its rest contiguous (found and deleted by the next write)."""
    for index in range(stored, keep, -1):
        await kv.delete(part_key(agent, index))


# --------------------------------------------------------------------------- reading

class _Torn(Exception):
    """A part's history no longer reaches back to the head being read."""


async def values_at(kv: KeyValue, agent: str, head: bytes, head_revision: int) -> list[bytes] | None:
    """The values of the document whose head ``head`` was written at ``head_revision``,
    the head first; None when a part's history no longer reaches back to it (torn)."""
    stamp = integrity_of(head)
    values = [head]
    try:
        while (raw := await _part_of(kv, part_key(agent, len(values)), stamp, head_revision)) is not None:
            values.append(raw)
    except _Torn:
        return None
    return values


async def _part_of(kv: KeyValue, key: str, stamp: Integrity, head_revision: int) -> bytes | None:
    """The part of the head's version at ``key``; None when that version ends before it."""
    raw, revision = await kv_read(kv, key)
    if revision < head_revision:  # unchanged since the head was written
        if raw is None:
            return None
        part = integrity_of(raw)
        if part == stamp:
            return raw
        if part.last_seq < stamp.last_seq:
            return None  # a leftover of an older, longer version
    # rewritten or deleted after the head, or another writer's value: look below the head
    return await _search_before(kv, key, stamp, head_revision, revision)


async def _search_before(kv: KeyValue, key: str, stamp: Integrity, head_revision: int,
                         latest: int) -> bytes | None:
    """The part of the head's version among the key's revisions below the head.

    Walks the key's retained revisions down from the one below ``latest`` (the revision the
    caller just read and found wanting), one direct get each (usually one or two). It uses
    no consumer: nats-py's history watcher leaves one on the server for minutes after every
    read, and can end its history early, before the messages already on their way were
    counted, which read a document short and as consistent. When every retained revision is
    walked without an answer and the history is full, the revision the head saw may have
    been pushed out: torn."""
    js, bucket = kv_location(kv)  # a direct get needs both
    below, retained = latest, 1
    while (entry := await kv_revision_below(js, bucket, key, below)) is not None:
        retained += 1
        below = entry.revision
        if entry.revision >= head_revision:
            continue  # rewritten or deleted after the head was written
        if entry.value is None:
            return None  # deleted before the head was written
        part = integrity_of(entry.value)
        if part == stamp:
            return entry.value
        if part.last_seq < stamp.last_seq:
            return None
    if retained >= DOC_HISTORY:
        raise _Torn  # the history may have lost the revision the head saw
    return None


async def read_latest(kv: KeyValue, agent: str) -> tuple[list[bytes], int]:
    """The agent's current document as consistent values (head first; [] when there is
    none) and the head's revision (a delete marker's, for compare-and-set over it)."""
    for attempt in range(READ_ATTEMPTS):
        head, revision = await kv_read(kv, agent)
        if head is None:
            return [], revision
        values = await values_at(kv, agent, head, revision)
        if values is not None:
            return values, revision
        await asyncio.sleep(0.01 * 2**attempt)  # torn: the writer is moving on, read again
    raise TransientError(f"{agent}: its parts kept changing under {READ_ATTEMPTS} reads")


def decode_parts(values: Sequence[bytes], decoder: msgspec.json.Decoder[D]) -> D:
    return join_parts([decoder.decode(v) for v in values])
