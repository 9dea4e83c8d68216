"""What a BOOTSTRAP document reads: each source document of the agent as of its trigger.

Consistency: a BootDoc made for the event at stream sequence S reflects every event of
the agent before S. Each source is waited for (bounded, ``CORTEX_BOOT_WAIT_MS``) until
its worker has applied everything before S (``shared.watermarks``), then read *as of S*
(``shared.asof``); a source still behind at the bound is named in ``lagging`` — and the
document is completed once it catches up (``workers.boot.complete``).

Besides its own sources, a briefing reads the document of every section another worker
declares (``WorkerSpec.briefing``, found in ``WorkerContext.catalog``) the same way.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

import msgspec

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
from shared.codec import Envelope
from shared.config import Settings
from shared.footprint import Source
from shared.inputs import Reading
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
from shared.runtime import WorkerContext, briefings
from workers.boot.inputs import BootInputs, Briefed, last_activity
from workers.traces.operations import orphaned

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


def _switched_off(settings: Settings) -> set[str]:
    """The source fields of workers ``CORTEX_<WORKER>_ENABLED=false`` turns off."""
    return ({"recall"} if not settings.recall.enabled else set()) | (
        {"knowledge"} if not settings.knowledge.enabled else set())


class BootSources:
    """Reads an agent's source documents, as of a sequence or as they are now (through the
    process's ``shared.inputs.Inputs``)."""

    def __init__(self, ctx: WorkerContext, workers: Collection[str] | None = None) -> None:
        self._ctx = ctx
        self._inputs = ctx.inputs
        # the sections the deployment's workers declare (worker → section), by worker name
        self.briefings = [(w, b) for w, b in briefings(ctx.catalog.values()) if workers is None or w in workers]
        declared = [b.source(w) for w, b in self.briefings]
        # occasional too: an agent without such a document has no gap; and a worker switched off
        # makes none (the slim install's demo runs recall disabled: its briefing is not broken)
        self._occasional = _OCCASIONAL | {s.field for s in declared} | _switched_off(ctx.settings)
        self.sources = [s for s in (*SOURCES, *declared) if workers is None or s.worker in workers]

    def operations_at(self, doc: OperationsDoc, now: datetime) -> OperationsDoc:
        """The operations as of ``now``: the document is read as it was before the trigger,
        and a call pending past ``CORTEX_TRACES_ORPHAN_HOURS`` is orphaned there, as the
        traces worker does at the trigger (``workers.traces.operations.orphaned``)."""
        after = timedelta(hours=self._ctx.settings.traces.orphan_hours)
        ops = orphaned(doc.operations, now, after)
        return doc if ops == doc.operations else msgspec.structs.replace(doc, operations=ops)

    def consumers(self, agent: str) -> dict[str, str]:
        """The source consumers that apply ``agent``'s events (its partition's) → worker."""
        return self._inputs.consumers(self.sources, agent)

    def fields_of(self, workers: Collection[str]) -> list[str]:
        """The document fields the given source workers own."""
        return [s.field for s in self.sources if s.worker in workers]

    async def at_trigger(self, env: Envelope, fields: Collection[str] | None = None) -> Reading:
        """Sources (all, or ``fields``) as they were just before ``env`` (and the documents
        made for it, see ``Source.as_of``) — or, for a message or feedback, at the last
        stream cut (``shared.projection.boundary``)."""
        sources = [s for s in self.sources if fields is None or s.field in fields]
        change = env.family in ("msg", "feedback")
        cut = boundary(env.seq, self._ctx.settings.runtime.cut_every) if change else None
        return await self._inputs.at_trigger(self._ctx.worker, sources, env, before=cut)

    def inputs(self, reading: Reading) -> BootInputs:
        """What the assembly reads: ``now`` is the trigger's event time."""
        return self._boot_inputs(reading.env.agent, reading.env.event.ts, dict(reading.docs), reading.lagging)

    async def now(self, agent: str) -> BootInputs:
        docs, lagging, now = await self._inputs.now(self.sources, agent)
        return self._boot_inputs(agent, now, docs, lagging)

    def _boot_inputs(self, agent: str, now: datetime, docs: dict[str, Any], lagging_consumers: list[str]) -> BootInputs:
        names = self.consumers(agent)
        lagging = sorted({names[c] for c in lagging_consumers})
        missing = sorted({s.worker for s in self.sources
                          if docs.get(s.field) is None and s.field not in self._occasional})
        last, first = last_activity(docs.values(), now)
        recall = docs.pop("recall", None)
        briefed = []
        for worker, section in self.briefings:
            doc = docs.pop(section.source(worker).field, None)
            if doc is not None:
                briefed.append(Briefed(worker, section, doc))
        if isinstance(ops := docs.get("operations"), OperationsDoc):
            docs["operations"] = self.operations_at(ops, now)
        return BootInputs(agent=agent, now=now, lagging=lagging, missing=missing,
                          last_activity=last, first_session=first,
                          key_memories=list(recall.key_memories) if recall is not None else [],
                          key_owners=dict(recall.key_owners) if recall is not None else {},
                          briefings=tuple(briefed), **docs)

