"""The api worker: ``cortex.api.{threads,decisions,commitments,search,status,traces,operations}.<agent>``.

Every answer comes from the KV documents (direct gets); an unknown agent gets an empty
result, a malformed request an error reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from nats.js.client import JetStreamContext

from schemas.api import (
    CommitmentsReply,
    CommitmentsRequest,
    DecisionsReply,
    DecisionsRequest,
    OperationsReply,
    OperationsRequest,
    SearchReply,
    SearchRequest,
    StatusReply,
    StatusRequest,
    ThreadsReply,
    ThreadsRequest,
    TracesReply,
    TracesRequest,
    WorkerStatus,
)
from schemas.docs import ChannelsDoc, CommitmentsDoc, DecisionsDoc, KnowledgeDoc, OperationsDoc, ThreadsDoc, TraceDoc
from shared import metrics
from shared.feedback import publish_ids
from shared.kv import checkpoint_value, kv_read
from shared.names import (
    BUCKET_CHANNELS,
    BUCKET_CHECKPOINTS,
    BUCKET_COMMITMENTS,
    BUCKET_DECISIONS,
    BUCKET_KNOWLEDGE,
    BUCKET_OPERATIONS,
    BUCKET_THREADS,
    BUCKET_TRACES,
    EVENTS_STREAM,
    agent_consumer,
)
from shared.runtime import WorkerContext, WorkerSpec
from shared.service import ApiError, Endpoint, serve_worker
from shared.sources import source_states
from shared.tasks import cancel_and_wait
from workers.api.core import (
    QueryError,
    query_commitments,
    query_decisions,
    query_operations,
    query_threads,
    query_traces,
    search,
)

log = logging.getLogger(__name__)
SOURCES_EVERY_S = 15.0


async def watch_sources(ctx: WorkerContext, stop: asyncio.Event, every_s: float = SOURCES_EVERY_S) -> None:
    """Export what the OpenClaw sources hold (``cortex_source_events``: conversation, tool and
    run events, the ignored kinds, unknown types) and their lag, every ``every_s``."""
    while not stop.is_set():
        try:
            for state in await source_states(ctx.js, ctx.settings.prefix, store_info=False):
                for kind, count in state.classes.items():
                    metrics.SOURCE_EVENTS.labels(state.stream, kind).set(count)
                if state.lag is not None:
                    metrics.SOURCE_LAG.labels(state.stream).set(state.lag)
        except Exception as exc:  # metrics only: the next round tries again
            log.debug("source_watch_failed", extra={"error": repr(exc)})
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=every_s)


class Api:
    def __init__(self, ctx: WorkerContext) -> None:
        self._ctx = ctx
        self._reader = ctx.inputs.docs  # the process's document reader

    async def _doc(self, bucket: str, agent: str, doc_type: type[Any]) -> Any:
        try:
            return await self._reader.latest(self._ctx.bucket(bucket), agent, doc_type)
        except Exception as exc:  # a missing bucket reads as no data, with a clear reason
            if "not found" in str(exc).lower():
                return None
            raise

    async def threads(self, agent: str, req: ThreadsRequest) -> ThreadsReply:
        return ThreadsReply(threads=query_threads(await self._doc(BUCKET_THREADS, agent, ThreadsDoc), req))

    async def decisions(self, agent: str, req: DecisionsRequest) -> DecisionsReply:
        return DecisionsReply(decisions=query_decisions(await self._doc(BUCKET_DECISIONS, agent, DecisionsDoc), req))

    async def commitments(self, agent: str, req: CommitmentsRequest) -> CommitmentsReply:
        doc = await self._doc(BUCKET_COMMITMENTS, agent, CommitmentsDoc)
        return CommitmentsReply(commitments=query_commitments(doc, req))

    async def traces(self, agent: str, req: TracesRequest) -> TracesReply:
        return TracesReply(findings=query_traces(await self._doc(BUCKET_TRACES, agent, TraceDoc), req))

    async def operations(self, agent: str, req: OperationsRequest) -> OperationsReply:
        doc = await self._doc(BUCKET_OPERATIONS, agent, OperationsDoc)
        return OperationsReply(operations=query_operations(doc, req))

    async def search(self, agent: str, req: SearchRequest) -> SearchReply:
        threads, decisions, commitments, knowledge = await asyncio.gather(
            self._doc(BUCKET_THREADS, agent, ThreadsDoc), self._doc(BUCKET_DECISIONS, agent, DecisionsDoc),
            self._doc(BUCKET_COMMITMENTS, agent, CommitmentsDoc), self._doc(BUCKET_KNOWLEDGE, agent, KnowledgeDoc))
        reply = SearchReply(hits=search(req.query, req.limit, threads, decisions, commitments, knowledge))
        if knowledge is not None:  # the facts returned are accessed: the knowledge worker promotes them
            await publish_ids(self._ctx.js, self._ctx.settings.prefix, agent, "fact_access",
                              [h.id for h in reply.hits if h.kind == "fact"], knowledge.updated, "search-api")
        return reply

    async def status(self, agent: str, req: StatusRequest) -> StatusReply:
        threads, decisions, commitments, knowledge, channels = await asyncio.gather(
            self._doc(BUCKET_THREADS, agent, ThreadsDoc), self._doc(BUCKET_DECISIONS, agent, DecisionsDoc),
            self._doc(BUCKET_COMMITMENTS, agent, CommitmentsDoc), self._doc(BUCKET_KNOWLEDGE, agent, KnowledgeDoc),
            self._doc(BUCKET_CHANNELS, agent, ChannelsDoc))
        counts = {
            "threads_open": sum(t.status == "open" for t in threads.threads) if threads else 0,
            "threads_closed": sum(t.status == "closed" for t in threads.threads) if threads else 0,
            "decisions": len(decisions.decisions) if decisions else 0,
            "commitments_open": sum(c.status == "open" for c in commitments.commitments) if commitments else 0,
            "commitments_overdue": sum(c.status == "overdue" for c in commitments.commitments) if commitments else 0,
            "facts": len(knowledge.facts) if knowledge else 0,
            "entities": len(knowledge.entities) if knowledge else 0,
            "channels": len(channels.channels) if channels else 0,
        }
        last_ts = {"threads": threads, "decisions": decisions, "knowledge": knowledge, "channels": channels}
        workers = await self._workers(agent, last_ts)
        return StatusReply(agent=agent, counts=counts, workers=workers,
                           mood=threads.session_mood if threads else "neutral")

    async def _workers(self, agent: str, docs: dict[str, Any]) -> list[WorkerStatus]:
        """Each consuming worker's consumer of the agent's partition: its lag and checkpoint
        (asked all at once: one request's wait, not two per worker one after another)."""
        js: JetStreamContext = self._ctx.js
        ckpt = await self._reader.kv(BUCKET_CHECKPOINTS)  # looked up once (a stream info request each)

        async def pending_of(name: str) -> int:
            try:
                info = await js.consumer_info(EVENTS_STREAM, name)
            except Exception:
                return -1  # the consumer does not exist (run `cortex init`)
            return int(info.num_pending or 0) + int(info.num_ack_pending or 0)

        async def one(spec_name: str) -> WorkerStatus:
            name = agent_consumer(spec_name, agent, self._ctx.settings.partitions, self._ctx.shadow)
            pending, (raw, _) = await asyncio.gather(pending_of(name), kv_read(ckpt, name))
            doc = docs.get(spec_name)
            ts = doc.integrity.last_event_ts.isoformat() if doc and doc.integrity.last_event_ts else None
            return WorkerStatus(worker=spec_name, consumer=name, pending=pending,
                                checkpoint=checkpoint_value(raw) or 0, last_event_ts=ts)

        return list(await asyncio.gather(*(one(s.name) for s in self._ctx.catalog.values() if s.consumes)))


def _guard(fn: Any) -> Any:
    async def wrapped(agent: str, req: Any) -> Any:
        try:
            return await fn(agent, req)
        except QueryError as exc:
            raise ApiError(400, str(exc)) from exc

    return wrapped


async def serve(ctx: WorkerContext, stop: asyncio.Event) -> None:
    api = Api(ctx)
    endpoints: list[Endpoint] = [
        ("threads", ThreadsRequest, _guard(api.threads)),
        ("decisions", DecisionsRequest, _guard(api.decisions)),
        ("commitments", CommitmentsRequest, _guard(api.commitments)),
        ("search", SearchRequest, _guard(api.search)),
        ("traces", TracesRequest, _guard(api.traces)),
        ("operations", OperationsRequest, _guard(api.operations)),
        ("status", StatusRequest, _guard(api.status)),
    ]
    ctx.health.set_ready(True, "serving")
    watcher = asyncio.create_task(watch_sources(ctx, stop), name="api-sources")
    try:
        await serve_worker(ctx, endpoints, stop)
    finally:
        await cancel_and_wait(watcher)


# read-only services over the latest documents and the consumers' state; fact_access feedback
# for the facts a search returned
SPEC = WorkerSpec(name="api", families=(), serve=serve,
                  reads=(BUCKET_THREADS, BUCKET_DECISIONS, BUCKET_COMMITMENTS, BUCKET_KNOWLEDGE, BUCKET_CHANNELS,
                         BUCKET_TRACES, BUCKET_OPERATIONS),
                  serves=("threads", "decisions", "commitments", "search", "status", "traces", "operations"),
                  feedback=("fact_access",), inspects_consumers=True, watches_sources=True)
