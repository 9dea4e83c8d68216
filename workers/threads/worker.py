"""The threads worker: ThreadsDoc per agent in ``cortex_threads``."""

from __future__ import annotations

from typing import Any

from schemas.docs import ThreadsDoc
from schemas.events import FeedbackEvent, MessageEvent
from shared.codec import Envelope
from shared.config import Settings, ThreadsSettings
from shared.names import BUCKET_THREADS
from shared.projection import EventProjection, ProjectionHandler
from shared.runtime import WorkerContext, WorkerSpec
from workers.conversation.patterns import PatternSet, get_patterns
from workers.threads.briefing import SECTIONS as BRIEFING
from workers.threads.core import apply_feedback, apply_message

FEEDBACK_KINDS = frozenset({"thread_close", "thread_priority"})


class ThreadsProjection(EventProjection[ThreadsDoc]):
    bucket = BUCKET_THREADS
    doc_type = ThreadsDoc

    def __init__(self, settings: ThreadsSettings, patterns: PatternSet) -> None:
        self._settings = settings
        self._patterns = patterns

    def accepts(self, env: Envelope) -> bool:
        if not self._settings.enabled:
            return False  # CORTEX_THREADS_ENABLED=false: consumed (composed workers wait on it), never applied
        if isinstance(env.event, MessageEvent):
            return True
        return isinstance(env.event, FeedbackEvent) and env.event.kind in FEEDBACK_KINDS

    def apply(self, doc: ThreadsDoc | None, env: Envelope) -> ThreadsDoc | None:
        event = env.event
        if isinstance(event, MessageEvent):
            return apply_message(doc, event, self._settings, self._patterns)
        assert isinstance(event, FeedbackEvent)
        return apply_feedback(doc, event, self._settings)


def projections(settings: Settings) -> list[EventProjection[Any]]:
    """Its document, derived from the events alone (also a composed reader's, ``WorkerSpec.derive``)."""
    return [ThreadsProjection(settings.threads, get_patterns(settings.languages))]


async def build(ctx: WorkerContext) -> ProjectionHandler:
    return ProjectionHandler(ctx.js, ctx.worker, ctx.producer, projections(ctx.settings),
                             bucket_names={BUCKET_THREADS: ctx.bucket(BUCKET_THREADS)},
                             cut_on_triggers=True, cut_every=ctx.settings.runtime.cut_every)


# session and compaction events are consumed only as cuts for composed documents
SPEC = WorkerSpec(name="threads", families=("msg", "feedback", "session", "compaction"),
                  feedback_kinds=tuple(sorted(FEEDBACK_KINDS)), build=build, derive=projections,
                  config_sections=("threads",), buckets=(BUCKET_THREADS,),
                  patterns=("workers.conversation", "workers.threads"),
                  briefing=BRIEFING)
