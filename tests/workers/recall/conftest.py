"""Fixtures of the recall tests: memory factories and real stores (never mocked).

The store suite runs against the embedded Qdrant Edge engine always, and against a
Qdrant server only when ``CORTEX_QDRANT_URL`` points at one (each test then uses its
own throwaway collection, dropped afterwards).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from workers.recall.embedders import HashingEmbedder
from workers.recall.models import Memory, memory_id
from workers.recall.store import CollectionInfo, LexicalEncoder, MemoryStore
from workers.recall.store_edge import EdgeMemoryStore

NOW = datetime(2026, 2, 17, 10, 30, tzinfo=UTC)
MakeMemory = Callable[..., Memory]
OpenStore = Callable[..., MemoryStore]


@pytest.fixture
def now() -> datetime:
    return NOW


@pytest.fixture
def make_memory() -> MakeMemory:
    """Memory(agent, content, ...) with deterministic ids and times relative to NOW."""

    def build(content: str, *, agent: str = "alice", position: int = 0, hours_ago: float = 0.0,
              idle_hours: float | None = None, **fields: Any) -> Memory:
        created = NOW - timedelta(hours=hours_ago)
        accessed = NOW - timedelta(hours=idle_hours) if idle_hours is not None else created
        values: dict[str, Any] = {
            "id": memory_id(agent, f"evt-{content}", position),
            "agent": agent,
            "content": content,
            "type": "fact",
            "scope": "permanent",
            "confidence": 0.9,
            "source_event": "evt-1",
            "created_at": created,
            "last_accessed": accessed,
        }
        values.update(fields)
        return Memory(**values)

    return build


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(256)


def _server_url() -> str | None:
    return os.environ.get("CORTEX_QDRANT_URL") or None


@pytest.fixture(params=["edge", "server"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    """A factory opening the same store location with a given embedder name and dimension."""
    backend = request.param
    url = _server_url()
    if backend == "server" and url is None:
        pytest.skip("server backend: CORTEX_QDRANT_URL is not set (no Qdrant server to test against)")
    collection = f"cortex_test_{uuid.uuid4().hex[:12]}"
    opened: list[MemoryStore] = []

    def factory(
        embedder_name: str = "hashing-v1-256", dim: int = 256, languages: tuple[str, ...] = ("en", "de")
    ) -> MemoryStore:
        lexical = LexicalEncoder(languages)
        wanted = CollectionInfo(collection=collection, embedder=embedder_name, dim=dim, lexical=lexical.signature)
        store: MemoryStore
        if backend == "edge":
            store = EdgeMemoryStore(str(tmp_path / "qdrant"), wanted, lexical)
        else:
            from workers.recall.store_server import ServerMemoryStore

            assert url is not None
            store = ServerMemoryStore(url, wanted, lexical)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()  # idempotent: a test may have closed it already
    if backend == "server" and url is not None:
        from qdrant_client import QdrantClient

        client = QdrantClient(url=url, prefer_grpc=True)
        if client.collection_exists(collection):
            client.delete_collection(collection)
        client.close()


@pytest.fixture
def store(open_store: OpenStore) -> MemoryStore:
    return open_store()
