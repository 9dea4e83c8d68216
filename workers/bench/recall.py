"""Recall: indexing rate of one ``cortex worker recall`` process on a backlog (cold: a fresh
process and store), then query latency of ``cortex.api.recall.<agent>`` on what it stored
(contract-level only), then the same process's indexing rate on a second backlog of as many new
events (warm: its store and vocabulary as the first backlog left them), then the query of one
agent holding ``recall_scale`` memories (``workers.bench.recallscale``)."""

from __future__ import annotations

import asyncio
import time
from typing import Final, NamedTuple

import msgspec
import nats.errors
import nats.js.errors

from schemas.docs import RecallDoc
from shared.names import BUCKET_RECALL, EVENTS_STREAM, api_subject
from workers.bench import recallscale
from workers.bench.events import TOPICS_DE, TOPICS_EN, BenchEvent, EventSource
from workers.bench.procs import WorkerProc
from workers.bench.results import RecallResult
from workers.bench.session import BenchError, Session
from workers.bench.stats import summarize
from workers.bench.throughput import drain_worker, unavailable

ERROR_HEADER: Final = "Nats-Service-Error-Code"
PAUSED_UNTIL: Final = "2099-01-01T00:00:00Z"
SETTLE_LIMIT_S: Final = 30.0  # for the queries' aftermath (their access feedback) before the warm backlog
# The phase runs recall alone: its facts mirror is not to wait for a knowledge worker that is not
# running (the bound, CORTEX_BOOT_WAIT_MS, at the first session starts: ~4 s of the cold row's wall
# was that wait, no indexing). What it stores is the same: no knowledge document exists here either way.
ALONE: Final = {"CORTEX_BOOT_WAIT_MS": "0"}


async def _pause(session: Session, limit_s: float = 120.0) -> None:
    """Stop deliveries to the recall consumer and wait for its in-flight batch, so queries
    measure the store as indexed rather than queueing behind indexing."""
    await session.js.pause_consumer(EVENTS_STREAM, "recall", PAUSED_UNTIL)
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


class Indexed(NamedTuple):
    """The warm backlog as the running process indexed it."""

    events: int
    msgs_per_s: float
    cpu_s: float | None


async def _settled(session: Session, limit_s: float = SETTLE_LIMIT_S) -> bool:
    """Wait until the recall consumer has nothing pending or unacked (the queries' access
    feedback applied), at most ``limit_s``; whether it got there."""
    deadline = time.monotonic() + limit_s
    while not await session.drained(["recall"]):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def _warm(session: Session, proc: WorkerProc, events: list[BenchEvent], limit_s: float) -> Indexed:
    """The running process on a second backlog: published with its consumer paused (so it meets
    the whole backlog at once, as the cold process did), then timed from the first delivery of
    it until the consumer is drained; at ``limit_s`` measured on what was acked so far."""
    before = (await session.js.stream_info(EVENTS_STREAM)).state.last_seq
    await session.js.pause_consumer(EVENTS_STREAM, "recall", PAUSED_UNTIL)
    try:
        last_seq = await session.publish_all(events)
    finally:
        await session.js.resume_consumer(EVENTS_STREAM, "recall")
    first: float | None = None
    cpu_first: float | None = None
    done = len(events)
    resumed = time.perf_counter()
    while True:
        session.check_alive([proc])
        info = await session.js.consumer_info(EVENTS_STREAM, "recall")
        now = time.perf_counter()
        delivered = info.delivered.stream_seq if info.delivered else 0
        floor = info.ack_floor.stream_seq if info.ack_floor else 0
        if first is None and max(delivered, floor) > before:
            first, cpu_first = now, proc.cpu_seconds()
        if first is not None and floor >= last_seq and not info.num_pending and not info.num_ack_pending:
            break
        if now - (first if first is not None else resumed) > limit_s:
            if first is None or floor <= before:
                raise BenchError(f"recall indexed none of the warm backlog within {limit_s:.0f}s")
            done = min(len(events), floor - before)
            session.progress(f"[recall] stopped measuring the warm backlog after {limit_s:.0f}s: {done} of "
                             f"{len(events)} events done")
            break
        await asyncio.sleep(0.02)
    cpu_last = proc.cpu_seconds()
    cpu_s = round(cpu_last - cpu_first, 3) if cpu_first is not None and cpu_last is not None else None
    return Indexed(done, round(done / max(now - first, 1e-6), 1), cpu_s)


def _per_cpu(events: int, cpu_s: float | None) -> float | None:
    return round(events / cpu_s, 1) if cpu_s else None


async def run(session: Session) -> RecallResult:
    reason = unavailable("recall")
    embedder = session.procs.env.get("CORTEX_EMBEDDER", "default")
    if reason is not None:
        return RecallResult(skipped=reason, embedder=embedder)
    cfg = session.config
    await session.reset()
    source = EventSource(cfg.agents, cfg.seed + 5, session.prefix)
    events = source.take(cfg.recall_messages)  # the cold backlog
    warm_events = source.take(cfg.recall_messages)  # as many more: new ids, the generator's later sequence
    last_seq = await session.publish_all(events)
    session.progress(f"[recall] indexing {len(events)} events with the {embedder!r} embedder …")
    indexed = await drain_worker(session, "recall", len(events), last_seq, None,
                                 limit_s=cfg.recall_limit_s, partial=True, env=ALONE)
    proc = indexed.proc
    warm: Indexed | None = None
    warm_skipped: str | None = None
    warm_memories: int | None = None
    try:
        if indexed.result.events < len(events):
            await _pause(session)
            warm_skipped = f"the cold backlog was not indexed within {cfg.recall_limit_s:g} s"
        memories = await _memories(session)
        session.progress(f"[recall] cold: {indexed.result.msgs_per_s:,.0f} events/s indexed "
                         f"(CPU {indexed.result.cpu_s} s), {memories} memories; "
                         f"{cfg.api_requests} queries …")
        agents = sorted({e.agent for e in events})
        samples, failures = await _queries(session, agents)
        rss = proc.peak_rss_mb()
        if warm_skipped is None and not await _settled(session):
            warm_skipped = f"the queries' aftermath was not applied within {SETTLE_LIMIT_S:g} s"
        if warm_skipped is None:
            session.progress(f"[recall] warm: indexing {len(warm_events)} more events in the same process …")
            started = time.perf_counter()
            try:
                warm = await _warm(session, proc, warm_events, cfg.recall_limit_s)
            except (BenchError, nats.errors.Error, TimeoutError) as exc:  # the cold row and the queries stand
                warm_skipped = f"failed: {exc}".splitlines()[0][:300]
                session.progress(f"[recall] warm: {warm_skipped}")
            else:
                warm_memories = await _memories(session)
                session.progress(f"[recall] warm: {warm.msgs_per_s:,.0f} events/s indexed (CPU {warm.cpu_s} s), "
                                 f"{warm_memories} memories; {time.perf_counter() - started:.1f} s published "
                                 "and indexed")
    finally:
        proc.stop()
    latency = summarize(samples, lost=failures)
    session.progress(f"[recall] query p50 {latency.p50_ms} ms, p95 {latency.p95_ms} ms")
    result = RecallResult(embedder=embedder, messages=indexed.result.events, memories=memories,
                          index_msgs_per_s=indexed.result.msgs_per_s, index_cpu_s=indexed.result.cpu_s,
                          index_msgs_per_cpu_s=_per_cpu(indexed.result.events, indexed.result.cpu_s),
                          query=latency, peak_rss_mb=rss, warm_skipped=warm_skipped, warm_memories=warm_memories)
    if warm is not None:
        result = msgspec.structs.replace(result, warm_messages=warm.events, warm_index_msgs_per_s=warm.msgs_per_s,
                                         warm_index_cpu_s=warm.cpu_s,
                                         warm_index_msgs_per_cpu_s=_per_cpu(warm.events, warm.cpu_s))
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
