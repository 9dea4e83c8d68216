"""The recall worker's own values: a stored memory, a search hit, a ranked memory.

A ``Memory`` is what one Qdrant point carries as payload (plus its dense and BM25
vectors, which the store computes or receives). Every timestamp in it comes from an
event ``ts`` — capture stamps ``created_at`` / ``last_accessed`` with the source event's
time and a ``recall_access`` FeedbackEvent moves ``last_accessed`` — so a replay of the
stream rebuilds the same points, byte for byte.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import uuid
from typing import Any, Literal

import msgspec

from schemas.api import MemoryVersion
from schemas.types import AgentId, MemoryScope, MemoryType, Timestamp

Tier = Literal["hot", "cold"]

MAX_PROVENANCE = 256
MAX_VERSIONS = 64  # earlier versions a memory keeps (the oldest go first)

MEMORY_TYPES: tuple[MemoryType, ...] = ("rule", "procedure", "fact", "episode", "preference")
MEMORY_SCOPES: tuple[MemoryScope, ...] = ("permanent", "project", "session", "ttl")

# A fixed namespace so point ids are the same on every machine and every replay.
MEMORY_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://cortex/recall/memories")
_NAMESPACE_BYTES = MEMORY_NAMESPACE.bytes


class Memory(msgspec.Struct, frozen=True, kw_only=True):
    """One memory of one agent: the payload of one point in ``cortex_memories``."""

    id: str
    agent: AgentId
    content: str
    type: MemoryType
    scope: MemoryScope
    confidence: float
    source_event: str
    created_at: Timestamp
    last_accessed: Timestamp
    access_count: int = 0
    tags: tuple[str, ...] = ()
    project: str | None = None
    supersedes_id: str | None = None
    pinned: bool = False
    tier: Tier = "hot"
    # When the same content was last seen again (dedup updates it instead of adding a point).
    last_seen: Timestamp | None = None
    # Per-memory TTL for scope "ttl"; None means the policy default (720 h).
    ttl_hours: int | None = None
    sender: str | None = None
    session: str | None = None
    # Stream sequence of the last event that changed this memory: the per-memory
    # watermark that makes a redelivered or replayed event change nothing.
    last_seq: int = 0
    # Stream sequence of the event that created it (0: stored before this was recorded):
    # consolidation at a session start only looks at memories created before it, so a
    # replay over the existing store merges what the first run merged and nothing more.
    first_seq: int = 0
    # Provenance of the near-duplicates folded into this memory (dedup at capture,
    # consolidation at session starts): their ids and their source events, oldest first,
    # each list capped at MAX_PROVENANCE (``merged`` counts them all).
    merged_from: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    merged: int = 0
    # Conflicts (``workers.recall.conflicts``): the claim key of the statement the memory
    # makes, if it makes one; the newer memory that contradicts this one (it then drops
    # out of recall unless history is asked for); ``supersedes_id`` is the other direction.
    claim: str | None = None
    superseded_by: str | None = None
    # One truth over time (``workers.recall.timeline``), in event time: since when the statement
    # has been said (None: since ``created_at``) and when a newer memory superseded it.
    valid_from: Timestamp | None = None
    superseded_at: Timestamp | None = None
    # Offered to Claude as the newer statement already (``workers.recall.supersede``).
    judged: bool = False
    # A knowledge fact mirrored as a memory (type ``fact``, ``workers.recall.facts``): its id.
    fact_id: str | None = None
    # Edits (``memory_update`` feedback, ``workers.recall.edits``): the earlier versions of the
    # statement, oldest first, and the event and time of the current one (None: never edited).
    versions: tuple[MemoryVersion, ...] = ()
    revised_by: str | None = None
    revised_at: Timestamp | None = None
    # The person the agent talked with when it was said (``workers.recall.people``): a user
    # message's sender, or the conversation's person on the event; None: the agent's own.
    person: str | None = None


class SearchHit(msgspec.Struct, frozen=True, kw_only=True):
    """A store candidate: the memory and its cosine similarity to the query.

    ``fused`` is the reciprocal-rank-fusion score of the hybrid (dense + BM25) query
    that found it; ``similarity`` is the dense cosine, which the ranking formula uses;
    ``lexical`` is its BM25 score for the query text (0.0 without text or a shared term).
    """

    memory: Memory
    similarity: float
    fused: float = 0.0
    lexical: float = 0.0


class RankedMemory(msgspec.Struct, frozen=True, kw_only=True):
    """A memory with every factor of the recall score, for explanation and tests.

    ``similarity`` is the value the formula used (the calibrated cosine); ``cosine`` is
    the store's raw dense cosine.
    """

    memory: Memory
    score: float
    similarity: float
    cosine: float
    recency: float
    frequency: float
    type_boost: float
    scope_boost: float
    sender_boost: float = 0.0  # 1.0 when the query names the memory's sender (ranking.py)
    asks: float = 0.0  # 1.0 when the memory's own turn ends by asking (ranking.py)
    lexical: float = 0.0  # its message's BM25 score as a share of the best candidate's (ranking.py)
    explicit: float = 0.0  # its relevance when it was stored on purpose (remembered, noted, a fact; ranking.py)


@functools.lru_cache(maxsize=1 << 16)
def memory_id(agent: str, source_key: str, position: int) -> str:
    """Deterministic point id: uuid5 of the agent, a stable source key and a position.

    The agent is part of the key so two tenants that happen to reuse an event id can
    never overwrite each other's points. Cached: the ``is_*_memory`` tests ask it for
    every memory a session start's lifecycle and consolidation visit (~120 calls per
    event on LoCoMo, ~15 % of the warm indexing time in uuid5).
    """
    # ``uuid.uuid5``'s steps without its UUID object (a third of its time): SHA-1 of the
    # namespace and the name, version 5 and the RFC 4122 variant set, the canonical string
    raw = bytearray(hashlib.sha1(_NAMESPACE_BYTES + f"{agent}\x1f{source_key}\x1f{position}".encode()).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x50
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# The payload's top-level keys: what a store filters on, each present when set (an access
# count of 0 is left out: it is only asked for as "at least 1"; the id is the point's own).
# The memory itself rides whole in one JSON string beside them (``memory``): the embedded
# engine converts a payload key by key (~4.5 µs a string, ~1.7 µs an integer; a memory has
# 30 fields), and a string it only copies.
PAYLOAD_FIELDS = ("agent", "type", "scope", "project", "tier", "pinned", "session", "claim", "superseded_by",
                  "access_count", "merged_from", "person")
_UNSET = (None, (), 0)  # never a key: not set (``pinned`` False stays: a filter may ask for it)
PACKED = "memory"
_ENCODE = msgspec.json.Encoder().encode
_DECODE = msgspec.json.Decoder(Memory).decode


_PAYLOAD_VALUES = operator.attrgetter(*PAYLOAD_FIELDS)


def memory_to_payload(memory: Memory) -> dict[str, Any]:
    """The point payload: the filtered fields (JSON builtins), and the whole memory as JSON.
    (The fields are read in one call, not through ``asdict`` of all 30: ~1.7 µs a point less,
    three points an event.)"""
    payload: dict[str, Any] = {}
    for key, value in zip(PAYLOAD_FIELDS, _PAYLOAD_VALUES(memory), strict=True):
        if value is False or value not in _UNSET:
            payload[key] = list(value) if type(value) is tuple else value
    payload[PACKED] = _ENCODE(memory).decode()
    return payload


def memory_from_payload(payload: dict[str, Any]) -> Memory:
    """Inverse of :func:`memory_to_payload`; a payload of the first layout (every field a
    key of its own, RFC 3339 strings for timestamps) is read too, and unknown keys (future
    fields) are ignored. The ``tier`` key wins over the packed memory's."""
    packed = payload.get(PACKED)
    if isinstance(packed, str):
        memory = _DECODE(packed)
        # the ``tier`` key is the memory's tier: tiering moves many memories in one operation
        # that sets the key alone (``MemoryStore.set_tier``), leaving the packed copy behind
        tier = payload.get("tier")
        return memory if tier in (None, memory.tier) else msgspec.structs.replace(memory, tier=tier)
    return msgspec.convert(payload, Memory)
