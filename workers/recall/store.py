"""The memory store: one Qdrant collection, ``cortex_memories``, behind one protocol.
A worker in shadow mode (``CORTEX_MODE=shadow``) has its own, ``cortex_shadow_memories``
(``shared.names.memory_collection``), which it writes and answers from: sharing the store
location with the live worker (the same server or ``CORTEX_DATA_DIR``) changes nothing live.

Two backends share the retrieval design:

* :class:`~workers.recall.store_edge.EdgeMemoryStore` — the default, in-process Qdrant
  Edge engine (``qdrant-edge-py``) under a directory, used when ``CORTEX_QDRANT_URL`` is
  unset;
* :class:`~workers.recall.store_server.ServerMemoryStore` — a Qdrant server through
  qdrant-client over gRPC.

Every point carries ``agent`` in its payload and every read, count and delete filters
on it: an agent's request can never reach another agent's points, even by id.

Each point has two vectors: ``dense`` (the embedder's, cosine) and ``bm25`` (a sparse
BM25 vector with Qdrant's IDF modifier, computed in-process by Qdrant's own BM25
tokenizer so both backends index identical terms). A search with text runs both as
prefetches and fuses them by reciprocal rank (names in a question match the turns that
mention them even when the dense model does not); each hit also reports its dense
cosine, which the ranking formula uses. IDF statistics are computed over the agent's own
points only.

The collection records the embedder's name, its dimension and the BM25 settings (a
metadata file beside the edge shard; collection metadata on a server). Opening it with a
different embedder, dimension or BM25 setting raises :class:`CollectionMismatch`; a
store that cannot be reached or written right now raises :class:`StoreUnavailable`,
which the worker retries.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.config import Settings
from shared.names import memory_collection
from workers.recall.store_base import (
    COLLECTION,
    CollectionInfo,
    CollectionMismatch,
    DimensionMismatch,
    LexicalEncoder,
    MemoryFilter,
    MemoryPoint,
    MemoryStore,
    StoreError,
    StoreUnavailable,
    point_ids,
)

# What readers of the store use from the backends' common ground, re-exported: they import this
# module only (the backends and their tests import ``store_base``).
__all__ = [
    "CollectionInfo", "CollectionMismatch", "DimensionMismatch", "LexicalEncoder", "MemoryFilter", "MemoryPoint",
    "MemoryStore", "StoreError", "StoreUnavailable", "collection_exists", "open_store", "point_ids", "store_for",
]


def store_for(settings: Settings, embedder_name: str, dim: int, shadow: bool | None = None) -> MemoryStore:
    """The store the settings name: the Qdrant server at ``CORTEX_QDRANT_URL`` (with its API key
    and gRPC port), else the embedded engine under ``CORTEX_DATA_DIR`` — for every process that
    opens it (the recall worker, ``cortex forget``), so a new setting reaches them all. Its
    collection is the shadow one in shadow mode (``CORTEX_MODE``), unless ``shadow`` says which."""
    in_shadow = settings.mode == "shadow" if shadow is None else shadow
    return open_store(url=settings.qdrant_url, api_key=settings.qdrant_api_key, grpc_port=settings.qdrant_grpc_port,
                      data_dir=settings.data_path, embedder_name=embedder_name, dim=dim,
                      languages=settings.languages, collection=memory_collection(in_shadow))


def collection_exists(settings: Settings, collection: str) -> bool:
    """Is there a collection ``collection`` in the store the settings name (made by a worker
    that opened it)? Asked before opening one that must not be created (``cortex forget``)."""
    if settings.qdrant_url:
        from workers.recall.store_server import server_collection_exists

        return server_collection_exists(settings.qdrant_url, collection, api_key=settings.qdrant_api_key,
                                        grpc_port=settings.qdrant_grpc_port)
    from workers.recall.store_edge import edge_collection_exists

    return edge_collection_exists(_edge_dir(settings.data_path), collection)


def _edge_dir(data_dir: str) -> str:
    return f"{data_dir.rstrip('/')}/qdrant"


def open_store(
    *,
    url: str | None,
    data_dir: str,
    embedder_name: str,
    dim: int,
    languages: Sequence[str] = ("en", "de"),
    api_key: str | None = None,
    grpc_port: int = 6334,
    collection: str = COLLECTION,
) -> MemoryStore:
    """The server store when ``url`` is set (``CORTEX_QDRANT_URL``; its gRPC on ``grpc_port``,
    ``CORTEX_QDRANT_GRPC_PORT``), else the embedded one under ``<data_dir>/qdrant`` (the shard
    of each collection in a directory of its name there)."""
    lexical = LexicalEncoder(languages)
    wanted = CollectionInfo(collection=collection, embedder=embedder_name, dim=dim, lexical=lexical.signature)
    if url:
        from workers.recall.store_server import ServerMemoryStore  # grpc only when used

        return ServerMemoryStore(url, wanted, lexical, api_key=api_key, grpc_port=grpc_port)
    from workers.recall.store_edge import EdgeMemoryStore

    return EdgeMemoryStore(_edge_dir(data_dir), wanted, lexical)
