"""What a BOOTSTRAP document reads: the document of every briefing section, as of its trigger.

The sections are the workers' (``WorkerSpec.briefing``, found in ``WorkerContext.catalog``):
boot keeps no list of its own. Consistency: a BootDoc made for the event at stream
sequence S reflects every event of the agent before S. Each section's document is waited
for (bounded, ``CORTEX_BOOT_WAIT_MS``) until its worker has applied everything before S
(``shared.watermarks``), then read *as of S* (``shared.asof``; the snapshot and narrative
of a compaction and the channel summaries of every trigger are made *for* the trigger
itself, read as of S + 1 then: the section's ``as_of``); a source still behind at the bound
is named in ``lagging`` — and the document is completed once it catches up
(``workers.boot.complete``). Within the early path's budget, a throughput worker's document is
waited for so only while that worker is not busy (``BootSources.until_of``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from datetime import datetime
from typing import Any

from prometheus_client import Counter

from shared.briefing import placed
from shared.codec import Envelope
from shared.config import Settings
from shared.footprint import Source
from shared.inputs import Reading
from shared.names import BUCKET_KNOWLEDGE, BUCKET_RECALL
from shared.projection import boundary
from shared.runtime import WorkerContext, briefing_knobs, briefings
from workers.boot.early import BUSY_PACE, FEW_LEFT, THROUGHPUT_BUDGET_S
from workers.boot.inputs import BootInputs, last_activity

log = logging.getLogger(__name__)

SOURCE_BEHIND = Counter(
    "cortex_boot_source_behind_total",
    "Session starts and compactions read as they happen (within the early path's budget) that waited only "
    "a moment (0.05 s) for a throughput worker's document because that worker was busy (its checkpoint moving "
    "10 events a second or more, or more than 16 messages left to apply); shown as of its last cut, named "
    "lagging unless it arrived meanwhile, completed once it catches up",
    ["source"])


def _switched_off(settings: Settings) -> set[str]:
    """The documents of workers ``CORTEX_<WORKER>_ENABLED=false`` turns off."""
    return ({BUCKET_RECALL} if not settings.recall.enabled else set()) | (
        {BUCKET_KNOWLEDGE} if not settings.knowledge.enabled else set())


class BootSources:
    """Reads an agent's source documents, as of a sequence or as they are now (through the
    process's ``shared.inputs.Inputs``)."""

    def __init__(self, ctx: WorkerContext, workers: Collection[str] | None = None) -> None:
        self._ctx = ctx
        self._inputs = ctx.inputs
        # every registered worker's sections (worker → section; the registry's, on boot's spec in
        # the catalog, whichever workers this process runs), in the document's order; the
        # documents read: those of the given workers' (all by default)
        spec = ctx.catalog.get(ctx.worker)
        declared = list(spec.sections) if spec is not None else briefings(ctx.catalog.values())
        self.sections = placed(declared)
        # the sections' own knobs (``CORTEX_BOOT_<KNOB>``), read once: what their composes see
        self.knobs = briefing_knobs(declared, ctx.settings)
        read = [(w, b) for w, b in declared if workers is None or w in workers]
        # an agent without the document of a section made only when relevant has no gap; and a
        # worker switched off makes none (the slim install's demo runs recall disabled: its
        # briefing is not broken)
        self._occasional = {b.bucket for _, b in read if b.only_when_relevant} | _switched_off(ctx.settings)
        self.sources = list({s.field: s for s in (b.source(w) for w, b in read)}.values())
        # the sources whose workers the priority classes run second (``shared.priority``): within
        # the early path's budget waited for only while not busy (``until_of``)
        self._throughput = {s.worker for s in self.sources
                            if (w := ctx.catalog.get(s.worker)) is not None and w.priority == "throughput"}

    def consumers(self, agent: str) -> dict[str, str]:
        """The source consumers that apply ``agent``'s events (its partition's) → worker."""
        return self._inputs.consumers(self.sources, agent)

    def fields_of(self, workers: Collection[str]) -> list[str]:
        """The document fields the given source workers own."""
        return [s.field for s in self.sources if s.worker in workers]

    async def at_trigger(self, env: Envelope, fields: Collection[str] | None = None,
                         until: float | None = None) -> Reading:
        """Sources (all, or ``fields``) as they were just before ``env`` (and the documents
        made for it, see ``Source.as_of``) — or, for a message or feedback, at the last
        stream cut (``shared.projection.boundary``). ``until``: no source is waited for past
        this ``time.monotonic()`` (the early path's budget, ``workers.boot.early``)."""
        sources = [s for s in self.sources if fields is None or s.field in fields]
        change = env.family in ("msg", "feedback")
        cut = boundary(env.seq, self._ctx.settings.runtime.cut_every) if change else None
        if until is None or not any(s.worker in self._throughput for s in sources):
            return await self._inputs.at_trigger(self._ctx.worker, sources, env, before=cut, until=until)
        soon = min(until, time.monotonic() + THROUGHPUT_BUDGET_S)
        ends = await asyncio.gather(*(self.until_of(s, env, until, soon) for s in sources))
        groups: dict[float, list[Source]] = {}
        for source, end in zip(sources, ends, strict=True):
            groups.setdefault(end, []).append(source)
        if len(groups) == 1:
            return await self._inputs.at_trigger(self._ctx.worker, sources, env, before=cut, until=ends[0])
        found = await asyncio.gather(*(self._inputs.at_trigger(self._ctx.worker, group, env, before=cut, until=end)
                                       for end, group in groups.items()))
        docs = {f: d for r in found for f, d in r.docs.items()}
        return Reading(env, {s.field: docs[s.field] for s in sources}, sorted({c for r in found for c in r.lagging}))

    async def until_of(self, source: Source, env: Envelope, until: float, soon: float) -> float:
        """Where the wait for ``source`` ends, for ``env`` read within the early path's budget
        (``until``): a latency worker's document, and a throughput worker's (``shared.priority``)
        there already or not busy, to the budget's end — the machine keeps up, and the document is
        complete; a busy throughput worker's to ``soon`` only (``THROUGHPUT_BUDGET_S`` from now):
        still behind then, it is shown as of its last cut, named lagging and the document completed
        once it catches up. Busy: its checkpoint moved ``BUSY_PACE`` stream events a second or more
        over the last seconds (``WatermarkTracker.pace``), or its consumer has more than ``FEW_LEFT``
        messages left to apply (the server's count of its pending and unacked, shared with the
        waits: ``WatermarkTracker.left``)."""
        if source.worker not in self._throughput:
            return until
        consumer = self._inputs.consumer(source.worker, env.agent)
        tracker = await self._inputs.tracker()
        tracker.follow((consumer,))
        if tracker.checkpoint(consumer) >= env.seq:
            return until
        pace = tracker.pace(consumer)
        busy = pace is not None and pace >= BUSY_PACE
        left: int | None = None
        if not busy:
            left = await tracker.left(consumer)
            busy = left is not None and left > FEW_LEFT
        if not busy:
            return until
        SOURCE_BEHIND.labels(source.worker).inc()
        if log.isEnabledFor(logging.DEBUG):
            log.debug("source_busy", extra={"agent": env.agent, "seq": env.seq, "source": source.worker,
                                            "pace": round(pace, 1) if pace is not None else None, "left": left,
                                            "checkpoint": tracker.checkpoint(consumer)})
        return soon

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
        for s in self.sections:  # each document as of the briefing's time (``BriefingSection.view``)
            doc = docs.get(s.bucket)
            if s.view is not None and isinstance(doc, s.doc_type):
                docs[s.bucket] = s.view(doc, now, self._ctx.settings)
        return BootInputs(agent=agent, now=now, docs=docs, lagging=lagging, missing=missing,
                          last_activity=last, first_session=first)

