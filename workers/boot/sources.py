"""What a BOOTSTRAP document reads: the document of every briefing section, as of its trigger.

The sections are the workers' (``WorkerSpec.briefing``, found in ``WorkerContext.catalog``):
boot keeps no list of its own. Consistency: a BootDoc made for the event at stream
sequence S reflects every event of the agent before S. Each section's document is waited
for (bounded, ``CORTEX_BOOT_WAIT_MS``) until its worker has applied everything before S
(``shared.watermarks``), then read *as of S* (``shared.asof``; the snapshot and narrative
of a compaction and the channel summaries of every trigger are made *for* the trigger
itself, read as of S + 1 then: the section's ``as_of``); a source still behind at the bound
is named in ``lagging`` — and the document is completed once it catches up
(``workers.boot.complete``).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from shared.briefing import placed
from shared.codec import Envelope
from shared.config import Settings
from shared.inputs import Reading
from shared.names import BUCKET_KNOWLEDGE, BUCKET_RECALL
from shared.projection import boundary
from shared.runtime import WorkerContext, briefing_knobs, briefings
from workers.boot.inputs import BootInputs, last_activity


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
        return await self._inputs.at_trigger(self._ctx.worker, sources, env, before=cut, until=until)

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

