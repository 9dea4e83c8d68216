"""The recall query at scale: one agent holding ``recall_scale`` memories (issue 39: 100 k
of **one** agent, not spread over many).

Indexing 100 k memories through the worker would take most of a run, so the store is
filled through the store layer, as the worker writes it: the bench's own messages of one
agent, each captured as the worker captures it (its turn and any cue sentence), embedded
by the configured embedder and upserted with their BM25 vectors, under the data dir the
worker processes use. Then a ``cortex worker recall`` process opens that store and the
agent is asked through ``cortex.api.recall.<agent>``, like any client would.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Final

import msgspec
import nats.errors

from schemas.events import MessageEvent
from shared.config import Settings
from shared.names import api_subject
from workers.bench.events import TOPICS_DE, TOPICS_EN, EventSource
from workers.bench.results import Latency
from workers.bench.session import BenchError, Session
from workers.bench.stats import summarize

AGENT: Final = "agent-scale"
BATCH: Final = 2000  # memories embedded and upserted at once
ERROR_HEADER: Final = "Nats-Service-Error-Code"


class Filled(msgspec.Struct, frozen=True, kw_only=True):
    stored: int
    index_s: float  # of the fill's seconds: waiting for the vector index (built beside the store)


def fill(settings: Settings, count: int, seed: int) -> Filled:
    """Store ``count`` memories of ``AGENT`` (runs in a thread: the store layer is
    synchronous), and wait for the vector index the store builds for an agent that size."""
    from workers.recall.capture import capture_message
    from workers.recall.embedders import make_embedder
    from workers.recall.models import Memory
    from workers.recall.store import MemoryPoint, store_for
    from workers.recall.store_edge import EdgeMemoryStore

    embedder = make_embedder(settings.embedder)
    store = store_for(settings, embedder.name, embedder.dim)
    source = EventSource(1, seed, settings.prefix, id_prefix="scale")
    stored, seq, index_s = 0, 0, 0.0
    try:
        while stored < count:
            batch: list[Memory] = []
            while len(batch) < min(BATCH, count - stored):
                event = source.message(source.agents[0])
                seq += 1
                message = msgspec.structs.replace(msgspec.json.decode(event.data, type=MessageEvent), agent=AGENT)
                batch += [msgspec.structs.replace(m, last_seq=seq, first_seq=seq)
                          for m in capture_message(message, languages=settings.languages)]
            batch = batch[: count - stored]
            vectors = embedder.embed_documents([m.content for m in batch])
            store.upsert([MemoryPoint(m, v) for m, v in zip(batch, vectors, strict=True)])
            stored += len(batch)
        started = time.perf_counter()
        store.flush()  # an agent this size gets its vector index: the store builds it beside it
        if isinstance(store, EdgeMemoryStore):
            store.await_index()  # the query is measured with it, as a worker's store has it
        index_s = time.perf_counter() - started
    finally:
        store.close()
    return Filled(stored=stored, index_s=round(index_s, 1))


async def _ask(session: Session, body: bytes) -> tuple[float | None, bool]:
    """(seconds, answered) of one request; (None, False) when it failed or timed out."""
    started = time.perf_counter()
    try:
        reply = await session.nc.request(api_subject(session.prefix, "recall", AGENT), body, timeout=10.0)
    except (nats.errors.TimeoutError, nats.errors.NoRespondersError, TimeoutError):  # not serving (yet)
        return None, False
    elapsed = time.perf_counter() - started
    if reply.headers and ERROR_HEADER in reply.headers:
        return None, False
    return elapsed, True


async def _serving(session: Session, limit_s: float = 120.0) -> None:
    """Until the recall worker answers (it opens the store and prepares its embedder first)."""
    deadline = time.monotonic() + limit_s
    while not (await _ask(session, b'{"query":"x"}'))[1]:
        if time.monotonic() > deadline:
            raise BenchError(f"the recall worker did not answer within {limit_s:.0f}s after the store was filled")
        await asyncio.sleep(0.2)


async def queries(session: Session, cpu_s: Callable[[], float | None]) -> tuple[Latency, float | None]:
    """The timed queries' latency, and the CPU per query of the process ``cpu_s`` reads
    (the recall worker's: the engine's search threads are in it)."""
    await _serving(session)
    topics = [*TOPICS_EN, *TOPICS_DE]
    for i in range(5):  # warm-ups
        await _ask(session, msgspec.json.encode({"query": f"what about the {topics[i]}"}))
    samples: list[float] = []
    failures = 0
    cpu_before = cpu_s()
    for i in range(session.config.api_requests):
        body = msgspec.json.encode({"query": f"what did we decide about the {topics[i % len(topics)]}"})
        elapsed, ok = await _ask(session, body)
        if elapsed is None or not ok:
            failures += 1
        else:
            samples.append(elapsed)
    cpu_after = cpu_s()
    cpu_ms = None if cpu_before is None or cpu_after is None or not session.config.api_requests else \
        round((cpu_after - cpu_before) * 1000 / session.config.api_requests, 2)
    return summarize(samples, lost=failures), cpu_ms
