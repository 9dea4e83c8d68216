"""What both memory-store backends build on (``workers.recall.store`` is the whole story):
the collection's names and info, filters, the BM25 encoder, vector helpers, ``StoreBase``
and the ``MemoryStore`` protocol. The backends import this module; ``workers.recall.store``
imports them — so no import cycle."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, Protocol

import msgspec
import numpy as np
import numpy.typing as npt
from qdrant_edge import Bm25, Bm25Config, Language, SnowballLanguage, SnowballParams, SparseVector, StopwordsSet

from schemas.types import MemoryScope, MemoryType
from shared.names import QDRANT_COLLECTION
from workers.recall.models import Memory, SearchHit, Tier, memory_from_payload

COLLECTION = QDRANT_COLLECTION  # the live one; shadow mode: shared.names.memory_collection(True)
DENSE = "dense"
SPARSE = "bm25"
SCHEMA_VERSION = 1
INDEXED_FIELDS = ("agent", "type", "scope", "project", "tier", "claim", "superseded_by", "person")
# integer indexes (range conditions): the summary asks for the hot memories recalled at
# least once, which without an index the engine found by reading every hot memory
RANGE_FIELDS = ("access_count",)
RRF_K = 10  # 1/(k + rank): a small k lets the top of each list count (LoCoMo: k 60 → 10 was +0.05 recall@10)

FloatVector = npt.NDArray[np.float32]


class StoreError(RuntimeError):
    """A store failure that retrying will not fix (bad input, incompatible collection)."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or written right now (server down, directory locked
    or not writable): transient — the worker reports not-ready and retries."""


class CollectionMismatch(StoreError):
    """The collection was built with another embedder, dimension or BM25 setting."""


class DimensionMismatch(CollectionMismatch):
    """A vector or the collection has a different dimension than the embedder."""


class CollectionInfo(msgspec.Struct, frozen=True, kw_only=True):
    """What the collection records about how its vectors were made."""

    collection: str = COLLECTION
    embedder: str
    dim: int
    lexical: str
    schema_version: int = SCHEMA_VERSION


def check_compatible(stored: CollectionInfo, wanted: CollectionInfo, where: str) -> None:
    """Refuse to open a collection whose vectors were made differently."""
    from workers.recall.embedders import setting_for

    setting = setting_for(stored.embedder)
    matching = f"CORTEX_EMBEDDER={setting}" if setting else "the matching CORTEX_EMBEDDER"
    reindex = f"re-index into a new data dir or collection (cortex replay) or set {matching}"
    if stored.dim != wanted.dim:
        raise DimensionMismatch(
            f"{where}: collection {stored.collection} holds {stored.dim}-dimensional vectors "
            f"({stored.embedder}); embedder {wanted.embedder} makes {wanted.dim}: {reindex}"
        )
    if stored.embedder != wanted.embedder:
        raise CollectionMismatch(
            f"{where}: collection {stored.collection} was embedded with {stored.embedder}, "
            f"not {wanted.embedder}: {reindex}"
        )
    if stored.lexical != wanted.lexical:
        raise CollectionMismatch(
            f"{where}: collection {stored.collection} was indexed with BM25 {stored.lexical}, "
            f"not {wanted.lexical} (CORTEX_LANGUAGE changed?): {reindex}"
        )


class MemoryFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Extra conditions on top of the agent (which every query has anyway)."""

    types: tuple[MemoryType, ...] = ()
    scopes: tuple[MemoryScope, ...] = ()
    project: str | None = None
    tier: Tier | None = None
    pinned: bool | None = None
    session: str | None = None
    claim: str | None = None
    claims: tuple[str, ...] = ()  # making one of these claims
    superseded_by: tuple[str, ...] = ()  # memories superseded by one of these
    absorbed: tuple[str, ...] = ()  # memories that took one of these ids in (``merged_from``)
    person: str | None = None  # memories of this person (``workers.recall.people``)
    shared: bool = False  # memories of no person: the agent's shared knowledge
    current: bool = False  # leave out superseded memories (recall's default)
    accessed: bool = False  # only memories recalled at least once (``access_count`` ≥ 1)


class AtLeast(msgspec.Struct, frozen=True):
    """A numeric field at or above ``value`` (a range condition in either backend)."""

    value: float


# (field, value): equal to the value, any of a tuple's values, empty (missing or null) for
# None, or at least an ``AtLeast``'s value
Condition = tuple[str, str | bool | tuple[str, ...] | AtLeast | None]


def conditions(agent: str, flt: MemoryFilter | None) -> list[Condition]:
    """Backend-neutral ``(field, value or any-of values)`` conditions, agent first."""
    out: list[Condition] = [("agent", agent)]
    if flt is None:
        return out
    # (field, value, whether the filter asks for it): a value given, or a tuple not empty
    wanted: list[tuple[str, str | bool | tuple[str, ...] | AtLeast | None, bool]] = [
        ("type", tuple(flt.types), bool(flt.types)),
        ("scope", tuple(flt.scopes), bool(flt.scopes)),
        ("project", flt.project, flt.project is not None),
        ("tier", flt.tier, flt.tier is not None),
        ("pinned", flt.pinned, flt.pinned is not None),
        ("session", flt.session, flt.session is not None),
        ("claim", flt.claim, flt.claim is not None),
        ("claim", tuple(flt.claims), bool(flt.claims)),
        ("superseded_by", tuple(flt.superseded_by), bool(flt.superseded_by)),
        ("merged_from", tuple(flt.absorbed), bool(flt.absorbed)),
        ("person", flt.person, flt.person is not None),
        ("person", None, flt.shared),
        ("superseded_by", None, flt.current),
        ("access_count", AtLeast(1), flt.accessed),
    ]
    out.extend((key, value) for key, value, asked in wanted if asked)
    return out


class MemoryPoint(NamedTuple):
    memory: Memory
    vector: FloatVector | Sequence[float]


class LexicalEncoder:
    """BM25 sparse vectors (Qdrant's tokenizer) for the configured conversation languages.

    One language: its Snowball stemmer and stopwords. Several: English stemming (names
    and English inflections conflate; German words are left mostly intact) with the
    union of their stopword lists. The setting is recorded with the collection because
    documents and queries must be tokenised alike.
    """

    _STOPWORDS: ClassVar[dict[str, Language]] = {
        "en": Language.English, "de": Language.German, "fr": Language.French, "es": Language.Spanish,
        "it": Language.Italian, "pt": Language.Portuguese, "ru": Language.Russian,
    }
    _STEMMERS: ClassVar[dict[str, SnowballLanguage]] = {
        "en": SnowballLanguage.English, "de": SnowballLanguage.German, "fr": SnowballLanguage.French,
        "es": SnowballLanguage.Spanish, "it": SnowballLanguage.Italian, "pt": SnowballLanguage.Portuguese,
        "ru": SnowballLanguage.Russian,
    }

    def __init__(self, languages: Sequence[str] = ("en", "de")) -> None:
        langs = tuple(dict.fromkeys(languages)) or ("en",)
        stem_lang = langs[0] if len(langs) == 1 and langs[0] in self._STEMMERS else "en"
        stopwords = {self._STOPWORDS[code] for code in langs if code in self._STOPWORDS}
        stop_codes = "+".join(sorted(c for c in langs if c in self._STOPWORDS))
        self.signature = f"bm25-v1/stem={stem_lang}/stop={stop_codes}"
        self._model = Bm25(
            Bm25Config(
                stemmer=SnowballParams(self._STEMMERS[stem_lang]),
                stopwords=StopwordsSet(languages=stopwords) if stopwords else None,
            )
        )

    def document(self, text: str) -> tuple[list[int], list[float]]:
        vector = self._model.embed_document(text)
        return list(vector.indices), list(vector.values)

    def document_vector(self, text: str) -> SparseVector | None:
        """The document's BM25 vector as the embedded engine takes it (None: no term), without
        the round trip through two Python lists and a new ``SparseVector`` (~6 µs a point)."""
        vector = self._model.embed_document(text)
        return vector if vector.indices else None

    def query(self, text: str) -> tuple[list[int], list[float]]:
        vector = self._model.embed_query(text)
        return list(vector.indices), list(vector.values)


def point_ids(ids: Sequence[str]) -> list[str]:
    """Canonical UUID strings; anything else is bad input (Qdrant ids are UUIDs or ints)."""
    try:
        return [_canonical_id(i) for i in ids]
    except ValueError as exc:
        raise StoreError(f"not a memory id (expected a UUID): {exc}") from exc


@functools.lru_cache(maxsize=1 << 16)
def _canonical_id(text: str) -> str:
    """A memory id's canonical form, remembered: a step asks for each of its ids several
    times (the lookup, the point, the filter; ~3 % of the warm indexing time parsed anew)."""
    return str(engine_id(text))


def point_uuid(text: str) -> uuid.UUID:
    """A memory id as the engine's point id (a UUID object: the engine parses no string)."""
    try:
        return engine_id(text)
    except ValueError as exc:
        raise StoreError(f"not a memory id (expected a UUID): {exc}") from exc


@functools.lru_cache(maxsize=1 << 16)
def engine_id(text: str) -> uuid.UUID:
    """A memory id as the engine takes it (a UUID object; immutable, so one is shared),
    remembered for the same reason; a ValueError for what is not a UUID."""
    return uuid.UUID(text)


def by_similarity(hits: list[SearchHit]) -> list[SearchHit]:
    """Exact hits most similar first, equal similarities by memory id: the engine orders ties
    by where the points lie in its segments, which an index build changes (the near-duplicate
    a memory folds into must not depend on it)."""
    return sorted(hits, key=lambda hit: (-hit.similarity, hit.memory.id))


def unit(vector: FloatVector | Sequence[float]) -> FloatVector:
    arr = np.asarray(vector, dtype=np.float32).reshape(-1)
    # what ``np.linalg.norm`` computes for a vector (the same float32 dot and square root, bit
    # for bit), without its generic checks: ~1.5 µs a point
    norm = float(np.sqrt(arr.dot(arr)))
    return arr / norm if norm > 0 else arr


def dense_of(vectors: object) -> list[float] | None:
    """The dense vector out of a record's named vectors (None when absent or not dense)."""
    if not isinstance(vectors, dict):
        return None
    value = vectors.get(DENSE)
    if isinstance(value, list) and all(isinstance(x, float | int) for x in value[:1]):
        return value
    return None


def cosine(query_unit: FloatVector, stored: Sequence[float] | None) -> float:
    """Dense cosine of a hit (Qdrant stores cosine vectors normalised, we re-normalise anyway)."""
    if stored is None:
        return 0.0
    return float(np.dot(query_unit, unit(stored)))


class StoreBase:
    """What both backends share: the collection's info, checking a point's and a query's
    dense vector, a point's BM25 vector, and the reads built on a backend's scroll."""

    _info: CollectionInfo
    _lexical: LexicalEncoder

    @property
    def vocabulary(self) -> Path | None:
        """Where the agents' word files live beside their memories (``workers.recall.vocabulary``;
        deleted with them), or None: a backend without a local directory keeps none."""
        return None

    @property
    def info(self) -> CollectionInfo:
        return self._info

    def _records(self, conds: list[Condition], ids: Sequence[str] | None, with_vector: bool,
                 page_size: int = 256) -> Iterator[Any]:
        """Every record matching ``conds`` (and ``ids``), page by page, with its payload
        and, when asked, its dense vector."""
        raise NotImplementedError

    def _point_dense(self, item: MemoryPoint) -> FloatVector:
        """The point's unit dense vector, its dimension checked."""
        dense = unit(item.vector)
        if dense.shape[0] != self._info.dim:
            raise DimensionMismatch(
                f"memory {item.memory.id}: vector has {dense.shape[0]} dimensions, the collection {self._info.dim}"
            )
        return dense

    def _point_vectors(self, item: MemoryPoint) -> tuple[list[float], list[int], list[float]]:
        """The point's unit dense vector (dimension checked) and its BM25 indices and values."""
        dense = self._point_dense(item)
        indices, values = self._lexical.document(item.memory.content)
        return dense.tolist(), indices, values

    def _query_unit(self, vector: FloatVector | Sequence[float]) -> FloatVector:
        query_unit = unit(vector)
        if query_unit.shape[0] != self._info.dim:
            raise DimensionMismatch(
                f"query vector has {query_unit.shape[0]} dimensions, the collection {self._info.dim}"
            )
        return query_unit

    def _retrieve(self, agent: str, ids: Sequence[str], with_vector: bool) -> Iterator[Any]:
        """The agent's records among ``ids`` (another agent's point is never returned): by
        default a filtered scroll; a backend with a lookup by id overrides it."""
        return self._records(conditions(agent, None), ids, with_vector)

    def get(self, agent: str, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        records = self._retrieve(agent, ids, False)
        found = {m.id: m for m in (memory_from_payload(r.payload or {}) for r in records)}
        return [found[i] for i in ids if i in found]

    def get_many(self, wanted: Mapping[str, Sequence[str]]) -> dict[str, list[Memory]]:
        """``get`` for several agents at once: ``{agent: get(agent, ids)}`` (a backend with a
        lookup by id makes it one call)."""
        return {agent: self.get(agent, ids) for agent, ids in wanted.items()}

    def vectors(self, agent: str, ids: Sequence[str]) -> dict[str, FloatVector]:
        if not ids:
            return {}
        out: dict[str, FloatVector] = {}
        for record in self._retrieve(agent, ids, True):
            vector = dense_of(record.vector)
            if record.payload and vector is not None:
                out[str(record.id)] = unit(vector)  # the point's id is the memory's (canonical: ``point_ids``)
        return out

    def scroll(self, agent: str, *, flt: MemoryFilter | None = None, page_size: int = 256) -> Iterator[Memory]:
        for record in self._records(conditions(agent, flt), None, False, page_size):
            yield memory_from_payload(record.payload or {})


class MemoryStore(Protocol):
    """Operations the recall worker needs; every one is scoped to one agent."""

    @property
    def info(self) -> CollectionInfo: ...

    def upsert(self, points: Sequence[MemoryPoint]) -> None:
        """Insert or replace points by id (deterministic ids make replays idempotent)."""

    def update_payloads(self, memories: Sequence[Memory]) -> None:
        """Rewrite existing points' payloads (access counts, pins, merges); vectors stay.
        Content must not change here — use ``upsert`` with a new vector for that."""

    def set_tier(self, agent: str, ids: Sequence[str], tier: Tier) -> None:
        """Move the agent's memories ``ids`` to ``tier``, in one operation (the payload's
        ``tier`` key alone: ``memory_from_payload`` takes it over the packed memory's)."""

    def get(self, agent: str, ids: Sequence[str]) -> list[Memory]: ...

    def get_many(self, wanted: Mapping[str, Sequence[str]]) -> dict[str, list[Memory]]:
        """``{agent: get(agent, ids)}`` for every agent of ``wanted``, in one lookup where the
        backend can (a step asks for the memories of all its agents at once)."""

    def vectors(self, agent: str, ids: Sequence[str]) -> dict[str, FloatVector]: ...

    def delete(self, agent: str, ids: Sequence[str]) -> None: ...

    def delete_agent(self, agent: str) -> None:
        """Delete every memory of the agent, and its word file (``vocabulary``)."""

    @property
    def vocabulary(self) -> Path | None: ...

    def search(
        self,
        agent: str,
        vector: FloatVector | Sequence[float],
        *,
        text: str | None = None,
        flt: MemoryFilter | None = None,
        limit: int = 50,
    ) -> list[SearchHit]:
        """Top ``limit`` candidates: dense only, or dense + BM25 fused when ``text`` is given."""

    def nearest(self, agent: str, vector: FloatVector | Sequence[float], *, flt: MemoryFilter | None = None,
                limit: int = 4) -> list[SearchHit]:
        """The ``limit`` memories nearest to ``vector`` by dense cosine alone (``similarity``;
        no fusion: ``fused`` is 0), most similar first: a near-duplicate's lookup."""

    def similar(self, agent: str, vector: FloatVector | Sequence[float], *, threshold: float,
                flt: MemoryFilter | None = None, limit: int = 64) -> list[SearchHit]:
        """Up to ``limit`` memories whose dense cosine to ``vector`` is ``threshold`` or more,
        most similar first, by exact search: every one there is (upkeep's neighbours)."""

    def scroll(self, agent: str, *, flt: MemoryFilter | None = None, page_size: int = 256) -> Iterator[Memory]: ...

    def count(self, agent: str, flt: MemoryFilter | None = None) -> int: ...

    def flush(self) -> None: ...

    def writable(self) -> bool:
        """Could a sync write the store's files now? A cheap look, not a write (the worker asks
        it before leaving a sync for later: a store that turned unwritable fails at once)."""
        ...

    def close(self) -> None: ...

