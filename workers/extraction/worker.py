"""The extraction worker: with a model configured, a model reads each session window and
records what the patterns missed and what they took wrongly (``cortex_extraction``).

* **Session windows.** The agent's messages gather in the document's window until a trigger
  — session end, compaction, or the next session start — then go to the model in chunks of
  ``CORTEX_EXTRACTION_BATCH_SIZE`` messages, each with the patterns' threads, decisions,
  commitments and facts *as of the trigger* as its prior (``workers.extraction.model``). At
  a trigger the pattern documents hold every event before it whatever the batching
  (``shared.asof``), so the prompt — and the answer, through ``cortex_llm_cache`` — is the
  same on every replay: a replay pays nothing twice.
* **The default stays.** No model configured: this worker reads nothing and writes nothing,
  and the briefing is the patterns'. Nor is it delivered the events: its consumer reads only the
  model's late answers (``reads_nothing``, ``WorkerSpec.idle``), its checkpoint moves to the
  stream's end at each start, and the briefing finds it caught up (nothing pending). A model
  configured later: the next start widens the consumer again (``cortex init`` makes it whole) and
  the model reads the windows of the events from that start on. The model unreachable, refusing, over budget
  (``CORTEX_LLM_DAILY_TOKENS``, ``CORTEX_LLM_HOURLY_TOKENS``): that window's items are the
  patterns' alone, and an answer that comes later (``shared.llm``) is merged then.
* **The briefing** reads this document as of each trigger (its ``BriefingSection``) and shows
  the pattern items without the dropped ones and with the model's (``workers.extraction.view``).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Annotated, Final

import msgspec
from msgspec import Meta

from schemas.docs import (
    CommitmentsDoc,
    DecisionsDoc,
    ExtractionDoc,
    KnowledgeDoc,
    ThreadsDoc,
    WindowMessage,
)
from schemas.events import LlmAnswerValue, MessageEvent
from shared.briefing import BriefingSection
from shared.codec import Envelope
from shared.config import Settings
from shared.footprint import Source
from shared.llm import Later, LlmClient, worker_llm
from shared.names import (
    BUCKET_COMMITMENTS,
    BUCKET_DECISIONS,
    BUCKET_EXTRACTION,
    BUCKET_KNOWLEDGE,
    BUCKET_THREADS,
    TRIGGERS,
)
from shared.projection import Projection, ProjectionHandler
from shared.runtime import WorkerContext, WorkerSpec
from workers.extraction import model
from workers.extraction.core import merge_reading, read_window, said_in, with_message
from workers.extraction.view import model_view

log = logging.getLogger(__name__)

ANSWER_KIND: Final = "llm_answer"
SOURCES: Final = (Source("threads", "threads", BUCKET_THREADS, ThreadsDoc),
                  Source("decisions", "decisions", BUCKET_DECISIONS, DecisionsDoc),
                  Source("commitments", "decisions", BUCKET_COMMITMENTS, CommitmentsDoc),
                  Source("knowledge", "knowledge", BUCKET_KNOWLEDGE, KnowledgeDoc))


class ExtractionSettings(msgspec.Struct, frozen=True, kw_only=True):
    """``CORTEX_EXTRACTION_<KNOB>``: the worker's own settings."""

    enabled: bool = True  # with a model configured; without one it does nothing anyway
    batch_size: Annotated[int, Meta(ge=2, le=200)] = 20  # messages per request


class Asked(msgspec.Struct, frozen=True, kw_only=True):
    """A request's context, kept with it so a late answer is checked and merged as it would
    have been (``shared.llm.Later``)."""

    at: datetime
    prior: list[str]
    source: str
    said: dict[str, datetime] = {}  # the chunk's message ids and times, which date the items


class TriggerInputs(msgspec.Struct, frozen=True, kw_only=True):
    readings: list[model.Reading | None]


def _chunks(window: list[WindowMessage], size: int) -> list[list[WindowMessage]]:
    return [window[i:i + size] for i in range(0, len(window), size)]


class ExtractionProjection(Projection[ExtractionDoc, TriggerInputs | None]):
    bucket = BUCKET_EXTRACTION
    doc_type = ExtractionDoc
    answers = frozenset({model.PURPOSE})

    def __init__(self, ctx: WorkerContext, llm: LlmClient, settings: ExtractionSettings) -> None:
        self._ctx = ctx
        self._llm = llm
        self._settings = settings

    async def aclose(self) -> None:
        """Close its context (its own inputs reader) and its LLM client."""
        await self._ctx.aclose()
        await self._llm.aclose()

    def accepts(self, env: Envelope) -> bool:
        if not (self._settings.enabled and self._llm.enabled):
            return False
        return isinstance(env.event, MessageEvent) or (env.family, env.kind) in TRIGGERS

    async def prepare(self, env: Envelope, doc: ExtractionDoc | None) -> TriggerInputs | None:
        if isinstance(env.event, MessageEvent) or doc is None or not doc.window:
            return None
        docs = (await self._ctx.inputs.at_trigger(self._ctx.worker, SOURCES, env)).docs
        threads, decisions = docs["threads"], docs["decisions"]
        commitments, knowledge = docs["commitments"], docs["knowledge"]
        prior = model.prior_of(threads.threads if threads else [], decisions.decisions if decisions else [],
                               commitments.commitments if commitments else [], knowledge.facts if knowledge else [],
                               doc.window[0].ts)
        readings = []
        for chunk in _chunks(doc.window, self._settings.batch_size):
            asked = Asked(at=env.event.ts, prior=prior.ids(), source=doc.window[-1].id, said=said_in(chunk))
            text = await self._llm.complete(agent=env.agent, purpose=model.PURPOSE, system=model.SYSTEM_PROMPT,
                                            prompt=model.build_prompt(chunk, prior), when=env.event.ts,
                                            tool=model.tool(), later=Later(asked))
            readings.append(model.parse_answer(text, asked.prior))
        return TriggerInputs(readings=readings)

    def compose(self, doc: ExtractionDoc | None, env: Envelope, inputs: TriggerInputs | None) -> ExtractionDoc | None:
        if isinstance(env.event, MessageEvent):
            if env.event.role not in ("user", "assistant"):
                return None
            return with_message(doc, env.event, env.event.ts)
        if doc is None or inputs is None:
            return None
        return read_window(doc, inputs.readings, env.event.ts)

    def enrich(self, doc: ExtractionDoc | None, env: Envelope, answer: LlmAnswerValue) -> ExtractionDoc | None:
        """A window's reading that came after its trigger (the model was unreachable then)."""
        try:
            asked = msgspec.convert(answer.context, Asked)
        except msgspec.ValidationError:
            return None
        reading = model.parse_answer(answer.text, asked.prior)
        if doc is None or reading is None:
            return None
        return msgspec.structs.replace(merge_reading(doc, reading, asked.at, asked.source, asked.said),
                                       updated=env.event.ts)


def reads_nothing(settings: Settings) -> bool:
    """No model configured (or the worker turned off): it derives nothing from the events, so its
    consumer reads only the model's late answers (``WorkerSpec.idle``) — the server delivers it
    none of the messages it would take, decode and ack just to ignore."""
    return settings.model_provider is None or not settings.section("extraction", ExtractionSettings).enabled


async def build(ctx: WorkerContext) -> ProjectionHandler:
    llm = await worker_llm(ctx, BUCKET_EXTRACTION, checks={model.PURPOSE: model.usable})
    return ProjectionHandler(ctx.js, ctx.worker, ctx.producer,
                             [ExtractionProjection(ctx, llm, ctx.settings.section("extraction", ExtractionSettings))],
                             bucket_names={BUCKET_EXTRACTION: ctx.bucket(BUCKET_EXTRACTION)}, cut_on_triggers=True)


SPEC = WorkerSpec(name="extraction", priority="throughput", idle=reads_nothing,
                  families=("msg", "session", "compaction", "feedback"),
                  feedback_kinds=(ANSWER_KIND,), feedback=(ANSWER_KIND,), build=build, config=ExtractionSettings,
                  buckets=(BUCKET_EXTRACTION,), sources=SOURCES, llm=True, patterns=("workers.extraction",),
                  # read by the briefing as of each trigger and merged into the other sections' documents
                  briefing=(BriefingSection("Model reading", BUCKET_EXTRACTION, ExtractionDoc, chars=0,
                                            revise=model_view),))
