"""Recall: indexing rate of one ``cortex worker recall`` process on a backlog, then query
latency of ``cortex.api.recall.<agent>`` on what it stored (contract-level only), then the
query of one agent holding ``recall_scale`` memories (``workers.bench.recallscale``)."""

from __future__ import annotations

import asyncio
import time
from typing import Final

import msgspec
import nats.errors
import nats.js.errors

from schemas.docs import RecallDoc
from shared.names import BUCKET_RECALL, EVENTS_STREAM, api_subject
from workers.bench import recallscale
from workers.bench.events import TOPICS_DE, TOPICS_EN, backlog
from workers.bench.results import RecallResult
from workers.bench.session import Session
from workers.bench.stats import summarize
from workers.bench.throughput import drain_worker, unavailable

ERROR_HEADER: Final = "Nats-Service-Error-Code"


async def _pause(session: Session, limit_s: float = 120.0) -> None:
    """Stop deliveries to the recall consumer and wait for its in-flight batch, so queries
    measure the store as indexed rather than queueing behind indexing."""
    await session.js.pause_consumer(EVENTS_STREAM, "recall", "2099-01-01T00:00:00Z")
    deadline = time.monotonic() + limit_s
    while (await session.js.consumer_info(EVENTS_STREAM, "recall")).num_ack_pending:
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    session.progress("[recall] consumer paused for the queries")


async def _memories(session: Session) -> int | None:
    try:
        kv = await session.js.key_value(BUCKET_RECALL)
        keys = await kv.keys()
    except (nats.js.errors.NoKeysError, nats.js.errors.BucketNotFoundError):
        return None
    total = 0
    for key in keys:
        entry = await kv.get(key)
        if entry.value:
            total += msgspec.json.decode(entry.value, type=RecallDoc).memories
    return total


async def _queries(session: Session, agents: list[str]) -> tuple[list[float], int]:
    queries = [*TOPICS_EN, *TOPICS_DE]
    samples: list[float] = []
    failures = 0
    for i in range(session.config.api_requests):  # the same count as each query API
        subject = api_subject(session.prefix, "recall", agents[i % len(agents)])
        body = msgspec.json.encode({"query": f"what did we decide about the {queries[i % len(queries)]}"})
        started = time.perf_counter()
        try:
            reply = await session.nc.request(subject, body, timeout=10.0)
        except (nats.errors.TimeoutError, TimeoutError):
            failures += 1
            continue
        elapsed = time.perf_counter() - started
        if reply.headers and ERROR_HEADER in reply.headers:
            failures += 1
        else:
            samples.append(elapsed)
    return samples, failures


async def run(session: Session) -> RecallResult:
    reason = unavailable("recall")
    embedder = session.procs.env.get("CORTEX_EMBEDDER", "default")
    if reason is not None:
        return RecallResult(skipped=reason, embedder=embedder)
    cfg = session.config
    await session.reset()
    events = backlog(cfg.recall_messages, cfg.agents, cfg.seed + 5, session.prefix)
    last_seq = await session.publish_all(events)
    session.progress(f"[recall] indexing {len(events)} events with the {embedder!r} embedder …")
    indexed = await drain_worker(session, "recall", len(events), last_seq, None,
                                 limit_s=cfg.recall_limit_s, partial=True)
    proc = indexed.proc
    try:
        if indexed.result.events < len(events):
            await _pause(session)
        memories = await _memories(session)
        session.progress(f"[recall] {indexed.result.msgs_per_s:,.0f} events/s indexed (CPU {indexed.result.cpu_s} s), "
                         f"{memories} memories; "
                         f"{cfg.api_requests} queries …")
        agents = sorted({e.agent for e in events})
        samples, failures = await _queries(session, agents)
        rss = proc.peak_rss_mb()
    finally:
        proc.stop()
    latency = summarize(samples, lost=failures)
    session.progress(f"[recall] query p50 {latency.p50_ms} ms, p95 {latency.p95_ms} ms")
    cpu_s = indexed.result.cpu_s
    per_cpu = round(indexed.result.events / cpu_s, 1) if cpu_s else None
    result = RecallResult(embedder=embedder, messages=indexed.result.events, memories=memories,
                          index_msgs_per_s=indexed.result.msgs_per_s, index_cpu_s=cpu_s,
                          index_msgs_per_cpu_s=per_cpu, query=latency, peak_rss_mb=rss)
    if cfg.recall_scale:
        result = await _at_scale(session, result)
    return result


async def _at_scale(session: Session, result: RecallResult) -> RecallResult:
    """The query of one agent holding ``recall_scale`` memories, filled through the store layer
    into the store the worker processes open."""
    cfg = session.config
    settings = msgspec.structs.replace(session.settings, data_dir=str(session.workdir / "data"), qdrant_url=None)
    session.progress(f"[recall] filling one agent's store with {cfg.recall_scale:,} memories …")
    started = time.perf_counter()
    filled = await asyncio.to_thread(recallscale.fill, settings, cfg.recall_scale, cfg.seed + 9)
    fill_s = round(time.perf_counter() - started, 1)
    proc = session.procs.start("recall")
    try:
        latency, cpu_ms = await recallscale.queries(session, proc.cpu_seconds)
    finally:
        proc.stop()
    session.progress(f"[recall] {filled.stored:,} memories of one agent (filled in {fill_s} s, of which the "
                     f"vector index {filled.index_s} s): query p50 {latency.p50_ms} ms, p95 {latency.p95_ms} ms, "
                     f"{cpu_ms} ms of the worker's CPU a query")
    return msgspec.structs.replace(result, scale_memories=filled.stored, scale_fill_s=fill_s,
                                   scale_index_s=filled.index_s, scale_query=latency, scale_query_cpu_ms=cpu_ms)
