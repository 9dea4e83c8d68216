"""Server backend: a Qdrant server via qdrant-client, gRPC preferred (``CORTEX_QDRANT_URL``).

The collection has the same named vectors as the embedded shard (``dense`` cosine,
``bm25`` sparse with the IDF modifier), keyword payload indexes on agent (a tenant
index), type, scope, project and tier, and records :class:`CollectionInfo` in Qdrant's
collection metadata. BM25 vectors are computed client-side with Qdrant's own BM25
tokenizer (from ``qdrant-edge-py``), so both backends index identical terms.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from workers.recall.models import Memory, SearchHit, Tier, memory_from_payload, memory_to_payload
from workers.recall.store_base import (
    DENSE,
    INDEXED_FIELDS,
    RANGE_FIELDS,
    RRF_K,
    SPARSE,
    AtLeast,
    CollectionInfo,
    Condition,
    FloatVector,
    LexicalEncoder,
    MemoryFilter,
    MemoryPoint,
    StoreBase,
    StoreError,
    StoreUnavailable,
    by_similarity,
    check_compatible,
    conditions,
    cosine,
    dense_of,
    point_ids,
)

# gRPC status names that mean "try again later" (grpc ships no type stubs, so the
# status is read by name from the error rather than imported).
_TRANSIENT_GRPC = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "ABORTED"})


def _grpc_status(exc: Exception) -> str | None:
    code = getattr(exc, "code", None)
    if not callable(code):
        return None
    status = code()
    return str(getattr(status, "name", status))


def _translate(exc: Exception, where: str) -> StoreError:
    status = _grpc_status(exc)
    if status is not None:
        kind = StoreUnavailable if status in _TRANSIENT_GRPC else StoreError
        details = getattr(exc, "details", None)  # the one-line reason; str(exc) is a multi-line repr
        return kind(f"qdrant {where}: gRPC {status}: {details() if callable(details) else exc}")
    if isinstance(exc, ResponseHandlingException | ConnectionError | TimeoutError):
        return StoreUnavailable(f"qdrant {where}: {exc}")
    if isinstance(exc, UnexpectedResponse):
        code = exc.status_code or 0
        kind = StoreUnavailable if code >= 500 or code == 429 else StoreError
        return kind(f"qdrant {where}: HTTP {code}")
    return StoreError(f"qdrant {where}: {exc}")


def _filter(conds: list[Condition], ids: Sequence[str] | None = None) -> models.Filter:
    must: list[Any] = []
    for key, value in conds:
        if value is None:
            must.append(models.IsEmptyCondition(is_empty=models.PayloadField(key=key)))
            continue
        if isinstance(value, AtLeast):
            must.append(models.FieldCondition(key=key, range=models.Range(gte=value.value)))
            continue
        match: Any = models.MatchAny(any=list(value)) if isinstance(value, tuple) else models.MatchValue(value=value)
        must.append(models.FieldCondition(key=key, match=match))
    if ids is not None:
        must.append(models.HasIdCondition(has_id=list(point_ids(ids))))
    return models.Filter(must=must)


def server_collection_exists(url: str, collection: str, *, api_key: str | None = None, grpc_port: int = 6334,
                             timeout_s: int = 10) -> bool:
    """Does the server at ``url`` hold ``collection``? (StoreUnavailable: it cannot be asked.)"""
    client = QdrantClient(url=url, prefer_grpc=True, grpc_port=grpc_port, api_key=api_key, timeout=timeout_s)
    try:
        return bool(client.collection_exists(collection))
    except Exception as exc:
        raise _translate(exc, f"{url} collection_exists") from exc
    finally:
        client.close()


class ServerMemoryStore(StoreBase):
    """``MemoryStore`` over a Qdrant server collection: ``cortex_memories`` (its shadow twin
    ``cortex_shadow_memories`` in shadow mode)."""

    def __init__(
        self,
        url: str,
        wanted: CollectionInfo,
        lexical: LexicalEncoder,
        *,
        api_key: str | None = None,
        grpc_port: int = 6334,
        timeout_s: int = 10,
    ) -> None:
        self._url = url
        self._info = wanted
        self._name = wanted.collection
        self._lexical = lexical
        self._client = QdrantClient(url=url, prefer_grpc=True, grpc_port=grpc_port, api_key=api_key,
                                    timeout=timeout_s)
        self._call("open", self._ensure_collection)

    def _call(self, what: str, operation: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return operation(*args, **kwargs)
        except StoreError:
            raise
        except Exception as exc:
            raise _translate(exc, f"{self._url} {what}") from exc

    def _ensure_collection(self) -> None:
        if self._client.collection_exists(self._name):
            self._check_existing()
            self._index_ranges()  # a collection made before an index was added gets it now
            return
        self._client.create_collection(
            self._name,
            vectors_config={DENSE: models.VectorParams(size=self._info.dim, distance=models.Distance.COSINE)},
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata={"cortex": _info_dict(self._info)},
        )
        for field in INDEXED_FIELDS:
            schema: Any = (
                models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
                if field == "agent"
                else models.PayloadSchemaType.KEYWORD
            )
            self._client.create_payload_index(self._name, field, field_schema=schema)
        self._index_ranges()

    def _index_ranges(self) -> None:
        for field in RANGE_FIELDS:
            self._client.create_payload_index(self._name, field, field_schema=models.PayloadSchemaType.INTEGER)

    def _check_existing(self) -> None:
        config = self._client.get_collection(self._name).config
        vectors = config.params.vectors
        dense = vectors.get(DENSE) if isinstance(vectors, dict) else None
        if dense is None:
            raise StoreError(f"qdrant {self._url}: collection {self._name} has no '{DENSE}' vector; not ours")
        recorded = (config.metadata or {}).get("cortex")
        if not isinstance(recorded, dict):
            raise StoreError(f"qdrant {self._url}: collection {self._name} carries no cortex metadata; not ours")
        stored = CollectionInfo(
            collection=self._name,
            embedder=str(recorded.get("embedder", "?")),
            dim=int(dense.size),
            lexical=str(recorded.get("lexical", "?")),
        )
        check_compatible(stored, self._info, f"qdrant {self._url}")

    def _point(self, item: MemoryPoint) -> models.PointStruct:
        dense, indices, values = self._point_vectors(item)
        vector: dict[str, Any] = {DENSE: dense}
        if indices:
            vector[SPARSE] = models.SparseVector(indices=indices, values=values)
        return models.PointStruct(
            id=str(uuid.UUID(item.memory.id)), vector=vector, payload=memory_to_payload(item.memory)
        )

    # --- writes --------------------------------------------------------------------

    def upsert(self, points: Sequence[MemoryPoint]) -> None:
        if points:
            structs = [self._point(p) for p in points]
            self._call("upsert", self._client.upsert, self._name, points=structs, wait=True)

    def update_payloads(self, memories: Sequence[Memory]) -> None:
        for memory in memories:
            selector = models.FilterSelector(filter=_filter(conditions(memory.agent, None), [memory.id]))
            self._call(
                "update payload",
                self._client.overwrite_payload,
                self._name,
                payload=memory_to_payload(memory),
                points=selector,
                wait=True,
            )

    def set_tier(self, agent: str, ids: Sequence[str], tier: Tier) -> None:
        if ids:
            selector = models.FilterSelector(filter=_filter(conditions(agent, None), ids))
            self._call("set tier", self._client.set_payload, self._name, payload={"tier": tier}, points=selector,
                       wait=True)

    def delete(self, agent: str, ids: Sequence[str]) -> None:
        if ids:
            selector = models.FilterSelector(filter=_filter(conditions(agent, None), ids))
            self._call("delete", self._client.delete, self._name, points_selector=selector, wait=True)

    def delete_agent(self, agent: str) -> None:
        selector = models.FilterSelector(filter=_filter(conditions(agent, None)))
        self._call("delete agent", self._client.delete, self._name, points_selector=selector, wait=True)

    def flush(self) -> None:
        """Writes use ``wait=True``: the server has applied them when the call returns."""

    def writable(self) -> bool:
        """Nothing of the server's is synced from here (a failing server fails the writes)."""
        return True

    def close(self) -> None:
        """Close the client; closing twice is harmless."""
        self._client.close()

    # --- reads ---------------------------------------------------------------------

    def _records(self, conds: list[Condition], ids: Sequence[str] | None, with_vector: bool,
                 page_size: int = 256) -> Iterator[Any]:
        flt = _filter(conds, ids)
        offset: Any = None
        while True:
            records, offset = self._call(
                "scroll",
                self._client.scroll,
                self._name,
                scroll_filter=flt,
                limit=page_size,
                offset=offset,
                with_payload=True,
                with_vectors=[DENSE] if with_vector else False,
            )
            yield from records
            if offset is None:
                return

    def count(self, agent: str, flt: MemoryFilter | None = None) -> int:
        result = self._call(
            "count", self._client.count, self._name, count_filter=_filter(conditions(agent, flt)), exact=True
        )
        return int(result.count)

    def search(
        self,
        agent: str,
        vector: FloatVector | Sequence[float],
        *,
        text: str | None = None,
        flt: MemoryFilter | None = None,
        limit: int = 50,
    ) -> list[SearchHit]:
        query_unit = self._query_unit(vector)
        qfilter = _filter(conditions(agent, flt))
        prefetch_limit = max(limit * 2, 20)
        prefetch = [models.Prefetch(query=query_unit.tolist(), using=DENSE, filter=qfilter, limit=prefetch_limit)]
        indices, values = self._lexical.query(text) if text else ([], [])
        # IDF over this agent's points only, as in the embedded backend.
        idf = models.SearchParams(idf=models.IdfCorpusParams(corpus=_filter(conditions(agent, None))))
        if indices:
            prefetch.append(
                models.Prefetch(
                    query=models.SparseVector(indices=indices, values=values),
                    using=SPARSE,
                    filter=qfilter,
                    limit=prefetch_limit,
                    params=idf,
                )
            )
        response = self._call(
            "search",
            self._client.query_points,
            self._name,
            prefetch=prefetch,
            query=models.RrfQuery(rrf=models.Rrf(k=RRF_K)),
            query_filter=qfilter,
            limit=limit,
            with_payload=True,
            with_vectors=[DENSE],
        )
        lexical: dict[str, float] = {}
        if indices and response.points:
            # each hit's BM25 score (the fused scores are ranks): one sparse query over just the hits
            ids = [str(p.id) for p in response.points]
            scored = self._call(
                "search",
                self._client.query_points,
                self._name,
                query=models.SparseVector(indices=indices, values=values),
                using=SPARSE,
                query_filter=_filter(conditions(agent, flt), ids),
                search_params=idf,
                limit=len(ids),
                with_payload=False,
            )
            lexical = {str(p.id): float(p.score) for p in scored.points}
        return [_hit(point, query_unit, lexical.get(str(point.id), 0.0)) for point in response.points]

    def nearest(self, agent: str, vector: FloatVector | Sequence[float], *, flt: MemoryFilter | None = None,
                limit: int = 4) -> list[SearchHit]:
        query_unit = self._query_unit(vector)
        # exact: the server's optimizers index the collection when they like; what the worker
        # writes (capture's near-duplicates) must not depend on when (the edge store's reason)
        response = self._call("search", self._client.query_points, self._name, query=query_unit.tolist(), using=DENSE,
                              query_filter=_filter(conditions(agent, flt)), limit=limit, with_payload=True,
                              with_vectors=[DENSE], search_params=models.SearchParams(exact=True))
        return by_similarity([SearchHit(memory=memory_from_payload(point.payload or {}), fused=0.0,
                                        similarity=cosine(query_unit, dense_of(point.vector)))
                              for point in response.points])


    def similar(self, agent: str, vector: FloatVector | Sequence[float], *, threshold: float,
                flt: MemoryFilter | None = None, limit: int = 64) -> list[SearchHit]:
        """An exact search for the memories at ``threshold`` or above (the edge store's)."""
        response = self._call("search", self._client.query_points, self._name, query=self._query_unit(vector).tolist(),
                              using=DENSE, query_filter=_filter(conditions(agent, flt)), limit=limit,
                              score_threshold=threshold, search_params=models.SearchParams(exact=True),
                              with_payload=True)
        return by_similarity([SearchHit(memory=memory_from_payload(point.payload or {}), fused=0.0,
                                        similarity=float(point.score)) for point in response.points])

def _hit(point: models.ScoredPoint, query_unit: FloatVector, lexical: float = 0.0) -> SearchHit:
    return SearchHit(
        memory=memory_from_payload(point.payload or {}),
        similarity=cosine(query_unit, dense_of(point.vector)),
        fused=float(point.score),
        lexical=lexical,
    )


def _info_dict(info: CollectionInfo) -> dict[str, Any]:
    return {
        "embedder": info.embedder,
        "dim": info.dim,
        "lexical": info.lexical,
        "schema_version": info.schema_version,
    }
