"""The traces worker: TraceDoc per agent in ``cortex_traces`` and OperationsDoc in
``cortex_operations`` (contract: Traces and pending operations).

Both documents derive from the agent's message, session, tool and run events (and the
``operation_seen`` feedback a briefing publishes) through the pure cores
``workers.traces.core`` and ``workers.traces.operations``. With ``ANTHROPIC_API_KEY`` a new
finding is triaged once by Claude (``workers.traces.triage``, cached and budgeted); the
answer is an input of the event, so a replay with the cache reproduces the document.
Compaction events are consumed only as cuts: composed documents (the briefing) read these
documents as of a trigger.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from prometheus_client import Counter

from schemas.docs import Finding, OperationsDoc, TraceDoc, TraceStep, Triage
from schemas.events import FeedbackEvent, LlmAnswerValue, MessageEvent, RunEvent, SessionEvent, ToolEvent
from shared.codec import Envelope
from shared.config import Settings, TracesSettings
from shared.llm import Later, LlmClient, worker_llm
from shared.names import BUCKET_OPERATIONS, BUCKET_TRACES
from shared.projection import EventProjection, Projection, ProjectionHandler
from shared.runtime import WorkerContext, WorkerSpec
from workers.traces import triage
from workers.traces.briefing import SECTIONS as BRIEFING
from workers.traces.config import TraceConfig, trace_config
from workers.traces.core import apply_event
from workers.traces.operations import SEEN_KIND, OperationsConfig, apply_operation_event, operations_config

log = logging.getLogger(__name__)
_replace = msgspec.structs.replace

FINDINGS = Counter("cortex_traces_findings_total", "Failure findings made, by signal", ["signal"])
TRIAGED = Counter("cortex_traces_triaged_total", "New findings triaged by the LLM, by verdict", ["verdict"])

_TRACE_EVENTS = (MessageEvent, SessionEvent, ToolEvent, RunEvent)
ANSWER_KIND = "llm_answer"  # the late answers to its triage calls (shared.llm)


def _new_findings(before: TraceDoc | None, after: TraceDoc | None) -> list[Finding]:
    known = {f.id for f in before.findings} if before is not None else set()
    return [f for f in after.findings if f.id not in known] if after is not None else []


def _steps_of(session: str, *docs: TraceDoc | None) -> list[TraceStep]:
    """The steps of the session's chain: as it is after the event, else as it was before
    (a finding made when the chain closed)."""
    for doc in docs:
        chain = next((c for c in doc.chains if c.session == session), None) if doc is not None else None
        if chain is not None:
            return chain.steps
    return []


class TracesProjection(Projection[TraceDoc, dict[str, Triage]]):
    bucket = BUCKET_TRACES
    doc_type = TraceDoc
    answers = frozenset({triage.PURPOSE})

    def __init__(self, settings: TracesSettings, config: TraceConfig, llm: LlmClient | None) -> None:
        self._settings = settings
        self._config = config
        self._llm = llm if llm is not None and llm.enabled and settings.llm_triage else None
        self._client = llm  # closed with the projection, used or not
        # the last derivation, (event seq, document before, after): ``prepare`` derives the
        # document to find the event's new findings, and the ``compose`` that follows it on
        # the same document reuses it (a rebase composes on another one: derived again)
        self._last: tuple[int, TraceDoc | None, TraceDoc | None] | None = None

    async def aclose(self) -> None:
        """Close the LLM client it was given."""
        if self._client is not None:
            await self._client.aclose()

    def accepts(self, env: Envelope) -> bool:
        return self._settings.enabled and isinstance(env.event, _TRACE_EVENTS)

    def _derive(self, doc: TraceDoc | None, env: Envelope) -> TraceDoc | None:
        if self._last is not None and self._last[0] == env.seq and self._last[1] is doc:
            return self._last[2]
        event = env.event
        assert isinstance(event, MessageEvent | SessionEvent | ToolEvent | RunEvent)
        after = apply_event(doc, event, env.kind or "", self._config)
        self._last = (env.seq, doc, after)
        return after

    async def prepare(self, env: Envelope, doc: TraceDoc | None = None) -> dict[str, Triage]:
        """Claude's triage of the findings this event makes (none without the LLM). The
        findings and verdicts are counted here, once per event applied: ``compose`` is pure
        (a rebase composes the same event again)."""
        fresh = _new_findings(doc, after := self._derive(doc, env))
        for finding in fresh:
            FINDINGS.labels(finding.signal).inc()
        if self._llm is None:
            return {}
        verdicts: dict[str, Triage] = {}
        for finding in fresh:
            prompt = triage.build_prompt(finding, _steps_of(finding.session, after, doc))
            text = await self._llm.complete(agent=env.agent, purpose=triage.PURPOSE, system=triage.SYSTEM_PROMPT,
                                            prompt=prompt, when=env.event.ts, max_tokens=300, tool=triage.TOOL,
                                            later=Later(finding.id))
            verdict = triage.parse_answer(text)
            if verdict is not None:
                verdicts[finding.id] = verdict
                TRIAGED.labels("kept" if verdict.keep else "dismissed").inc()
                log.info("finding_triaged", extra={"agent": env.agent, "finding": finding.id,
                                                   "signal": finding.signal, "keep": verdict.keep})
        return verdicts

    def enrich(self, doc: TraceDoc | None, env: Envelope, answer: LlmAnswerValue) -> TraceDoc | None:
        """A finding's triage that came after the finding (the model was unreachable then),
        if the finding is still there and untriaged."""
        verdict = triage.parse_answer(answer.text)
        if doc is None or verdict is None or not isinstance(answer.context, str):
            return None
        if not any(f.id == answer.context and f.triage is None for f in doc.findings):
            return None
        TRIAGED.labels("kept" if verdict.keep else "dismissed").inc()
        return _replace(doc, findings=[_replace(f, triage=verdict) if f.id == answer.context else f
                                       for f in doc.findings])

    def compose(self, doc: TraceDoc | None, env: Envelope, inputs: dict[str, Triage]) -> TraceDoc | None:
        after = self._derive(doc, env)
        if after is None or not inputs:
            return after
        findings = [_replace(f, triage=inputs[f.id]) if f.id in inputs else f for f in after.findings]
        return _replace(after, findings=findings)


class OperationsProjection(EventProjection[OperationsDoc]):
    bucket = BUCKET_OPERATIONS
    doc_type = OperationsDoc

    def __init__(self, settings: TracesSettings, config: OperationsConfig) -> None:
        self._settings = settings
        self._config = config

    def accepts(self, env: Envelope) -> bool:
        event = env.event
        if not self._settings.enabled:
            return False
        if isinstance(event, FeedbackEvent):
            return event.kind == SEEN_KIND
        # every session event: an end ends a turn, a start moves the clock (an orphan is failed there);
        # a message: a sub-agent's reply, in a child session a spawned task waits on
        return isinstance(event, ToolEvent | RunEvent | SessionEvent | MessageEvent)

    def apply(self, doc: OperationsDoc | None, env: Envelope) -> OperationsDoc | None:
        event = env.event
        assert isinstance(event, ToolEvent | RunEvent | SessionEvent | FeedbackEvent | MessageEvent)
        return apply_operation_event(doc, event, env.kind or "", self._config)


class TracesFromEvents(EventProjection[TraceDoc]):
    """The document as the worker makes it without a model's triage — a pure function of the
    events (late verdicts kept from a run with one included) — for a composed reader whose read
    goes past the bucket's history (``shared.derive``; only for documents made without a model:
    ``shared.runtime.derivation``)."""

    bucket = BUCKET_TRACES
    doc_type = TraceDoc
    answers = TracesProjection.answers

    def __init__(self, settings: TracesSettings, config: TraceConfig) -> None:
        self._worker = TracesProjection(settings, config, None)

    def accepts(self, env: Envelope) -> bool:
        return self._worker.accepts(env)

    def apply(self, doc: TraceDoc | None, env: Envelope) -> TraceDoc | None:
        return self._worker.compose(doc, env, {})

    def enrich(self, doc: TraceDoc | None, env: Envelope, answer: LlmAnswerValue) -> TraceDoc | None:
        return self._worker.enrich(doc, env, answer)


def projections(settings: Settings) -> list[EventProjection[Any]]:
    """Its documents without a model (``WorkerSpec.derive``): the pending operations never ask one."""
    traces = settings.traces
    return [TracesFromEvents(traces, trace_config(traces, settings.languages)),
            OperationsProjection(traces, operations_config(traces))]


async def build(ctx: WorkerContext) -> ProjectionHandler:
    llm = await worker_llm(ctx, BUCKET_TRACES, checks={triage.PURPOSE: lambda text: triage.parse_answer(text)
                                                       is not None})
    settings = ctx.settings.traces
    return ProjectionHandler(
        ctx.js, ctx.worker, ctx.producer,
        [TracesProjection(settings, trace_config(settings, ctx.settings.languages), llm),
         OperationsProjection(settings, operations_config(settings))],
        bucket_names={b: ctx.bucket(b) for b in (BUCKET_TRACES, BUCKET_OPERATIONS)},
        cut_on_triggers=True, cut_every=ctx.settings.runtime.cut_every,
    )


# compaction events are consumed only as cuts for composed documents
SPEC = WorkerSpec(name="traces", priority="throughput",
                  families=("msg", "session", "tool", "run", "feedback", "compaction"),
                  feedback_kinds=(SEEN_KIND, ANSWER_KIND), feedback=(ANSWER_KIND,), build=build, derive=projections,
                  config_sections=("traces",), buckets=(BUCKET_TRACES, BUCKET_OPERATIONS), llm=True,
                  patterns=("workers.conversation", "workers.traces"),
                  briefing=BRIEFING)
