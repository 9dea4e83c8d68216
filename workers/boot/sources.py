"""What a BOOTSTRAP document reads: each source document of the agent as of its trigger.

Consistency: a BootDoc made for the event at stream sequence S reflects every event of
the agent before S. Each source is waited for (bounded, ``CORTEX_BOOT_WAIT_MS``) until
its worker has applied everything before S (``shared.watermarks``), then read *as of S*
(``shared.asof``); a source still behind at the bound is named in ``lagging`` — and the
document is completed once it catches up (``workers.boot.complete``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any, NamedTuple

from schemas.docs import (
    ChannelsDoc,
    CommitmentsDoc,
    DecisionsDoc,
    KnowledgeDoc,
    NarrativeDoc,
    OperationsDoc,
    RecallDoc,
    SnapshotDoc,
    ThreadsDoc,
    TraceDoc,
)
from shared.asof import DocReader
from shared.codec import Envelope
from shared.composed import source_consumer, wait_bound_s
from shared.footprint import Source
from shared.names import (
    BUCKET_CHANNELS,
    BUCKET_COMMITMENTS,
    BUCKET_DECISIONS,
    BUCKET_KNOWLEDGE,
    BUCKET_NARRATIVES,
    BUCKET_OPERATIONS,
    BUCKET_RECALL,
    BUCKET_SNAPSHOTS,
    BUCKET_THREADS,
    BUCKET_TRACES,
)
from shared.projection import boundary
from shared.runtime import WorkerContext
from shared.watermarks import WatermarkTracker
from workers.boot.inputs import BootInputs

# What a briefing reads (``Source.field`` is the BootInputs field): every source's document of
# the agent as of the trigger. The snapshot and narrative of a compaction and the channel
# summaries of every trigger are made *for* the trigger itself (read as of S + 1 then).
SOURCES: tuple[Source, ...] = (
    Source("threads", "threads", BUCKET_THREADS, ThreadsDoc),
    Source("decisions", "decisions", BUCKET_DECISIONS, DecisionsDoc),
    Source("commitments", "decisions", BUCKET_COMMITMENTS, CommitmentsDoc),
    Source("snapshot", "snapshot", BUCKET_SNAPSHOTS, SnapshotDoc, "made_for_compaction"),
    Source("narrative", "narrative", BUCKET_NARRATIVES, NarrativeDoc, "made_for_compaction"),
    Source("knowledge", "knowledge", BUCKET_KNOWLEDGE, KnowledgeDoc),
    Source("channels", "channels", BUCKET_CHANNELS, ChannelsDoc, "made_for_trigger"),
    Source("recall", "recall", BUCKET_RECALL, RecallDoc),
    Source("traces", "traces", BUCKET_TRACES, TraceDoc),
    Source("operations", "traces", BUCKET_OPERATIONS, OperationsDoc),
)
# Sources made only at some triggers (a snapshot at a compaction; a narrative at a session's
# end or a compaction): without one, having no document is what the stream says, not a gap.
# The traces worker's documents exist only for agents whose events gave it something to keep
# (an agent without tool calls has no operations).
_OCCASIONAL = frozenset({"snapshot", "narrative", "traces", "operations"})


class Reading(NamedTuple):
    """The source documents read for a trigger (field → document, None when absent) and
    the source consumers still behind it at the bound."""

    env: Envelope
    docs: dict[str, Any]
    lagging: list[str]


class BootSources:
    """Reads an agent's source documents, as of a sequence or as they are now."""

    def __init__(self, ctx: WorkerContext, tracker: WatermarkTracker, reader: DocReader,
                 workers: Collection[str] | None = None) -> None:
        self._ctx = ctx
        self._tracker = tracker
        self._reader = reader
        self.sources = [s for s in SOURCES if workers is None or s.worker in workers]

    def consumers(self, agent: str) -> dict[str, str]:
        """The source consumers that apply ``agent``'s events (its partition's) → worker."""
        return {source_consumer(self._ctx, s.worker, agent): s.worker for s in self.sources}

    def fields_of(self, workers: Collection[str]) -> list[str]:
        """The document fields the given source workers own."""
        return [s.field for s in self.sources if s.worker in workers]

    async def at_trigger(self, env: Envelope, fields: Collection[str] | None = None) -> Reading:
        """Sources (all, or ``fields``) as they were just before ``env`` (and the documents
        made for it, see ``Source.as_of``) — or, for a message or feedback, at the last
        stream cut.

        Each source is read as soon as *it* has caught up, not when the slowest one has: a
        source that caught up keeps writing while another is waited for, and the as-of
        read must find the wanted revision within the bucket's short history."""
        bound = wait_bound_s(self._ctx)
        change = env.family in ("msg", "feedback")
        consumer_of = {w: c for c, w in self.consumers(env.agent).items()}
        sources = [s for s in self.sources if fields is None or s.field in fields]

        async def read(source: Source) -> tuple[Any, list[str]]:
            lagging = await self._tracker.wait({consumer_of[source.worker]: env.seq}, bound)
            if change:  # the state at the last stream cut (shared.projection.boundary)
                before = boundary(env.seq, self._ctx.settings.runtime.cut_every)
            else:
                before = source.before(env.seq, env.family)
            doc = (await self._reader.as_of(self._ctx.bucket(source.bucket), env.agent, source.doc_type, before))[0]
            return doc, lagging

        found = await asyncio.gather(*(read(source) for source in sources))
        docs = {source.field: doc for source, (doc, _) in zip(sources, found, strict=True)}
        return Reading(env, docs, sorted({c for _, lag in found for c in lag}))

    def inputs(self, reading: Reading) -> BootInputs:
        """What the assembly reads: ``now`` is the trigger's event time."""
        return self._inputs(reading.env.agent, reading.env.event.ts, dict(reading.docs), reading.lagging)

    async def now(self, agent: str) -> BootInputs:
        lagging = await self._tracker.lagging_now({c: 2**62 for c in self.consumers(agent)})
        results = await asyncio.gather(*(self._reader.latest(self._ctx.bucket(s.bucket), agent, s.doc_type)
                                         for s in self.sources))
        docs = {s.field: doc for s, doc in zip(self.sources, results, strict=True)}
        stamps = [d.integrity.last_event_ts for d in docs.values() if d is not None and d.integrity.last_event_ts]
        now = max(stamps) if stamps else datetime(1970, 1, 1, tzinfo=UTC)  # no event yet
        return self._inputs(agent, now, docs, lagging)

    def _inputs(self, agent: str, now: datetime, docs: dict[str, Any], lagging_consumers: list[str]) -> BootInputs:
        names = self.consumers(agent)
        lagging = sorted({names[c] for c in lagging_consumers})
        missing = sorted({s.worker for s in self.sources if docs.get(s.field) is None and s.field not in _OCCASIONAL})
        stamps = [d.integrity.last_event_ts for d in docs.values() if d is not None and d.integrity.last_event_ts]
        recall = docs.pop("recall", None)
        return BootInputs(agent=agent, now=now, lagging=lagging, missing=missing,
                          last_activity=max(stamps) if stamps else None,
                          key_memories=list(recall.key_memories) if recall is not None else [], **docs)
