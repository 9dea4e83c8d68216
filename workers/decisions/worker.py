"""The decisions worker: DecisionsDoc and CommitmentsDoc per agent."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

from schemas.docs import CommitmentsDoc, DecisionsDoc
from schemas.events import FeedbackEvent, MessageEvent
from shared.codec import Envelope
from shared.config import Settings
from shared.names import BUCKET_COMMITMENTS, BUCKET_DECISIONS
from shared.projection import EventProjection, ProjectionHandler
from shared.runtime import WorkerContext, WorkerSpec
from workers.conversation.patterns import PatternSet, get_patterns
from workers.decisions import commitments, core
from workers.decisions.briefing import SECTIONS as BRIEFING

DONE_KIND = "commitment_done"
REJECT_COMMITMENT = "commitment_reject"  # "not a commitment"
REJECT_DECISION = "decision_reject"  # "this decision is wrong"
# the FeedbackEvent kinds it applies (the only ones its consumer is delivered)
FEEDBACK_KINDS = (DONE_KIND, REJECT_COMMITMENT, REJECT_DECISION)


class DecisionsProjection(EventProjection[DecisionsDoc]):
    bucket = BUCKET_DECISIONS
    doc_type = DecisionsDoc

    def __init__(self, settings: Settings, patterns: PatternSet) -> None:
        self._settings = settings.decisions
        self._patterns = patterns
        self._tz = ZoneInfo(settings.timezone)

    def accepts(self, env: Envelope) -> bool:
        if not self._settings.enabled:
            return False
        return isinstance(env.event, MessageEvent) or (isinstance(env.event, FeedbackEvent)
                                                       and env.event.kind == REJECT_DECISION)

    def apply(self, doc: DecisionsDoc | None, env: Envelope) -> DecisionsDoc | None:
        if isinstance(env.event, FeedbackEvent):
            return core.apply_feedback(doc, env.event)
        assert isinstance(env.event, MessageEvent)
        return core.apply_message(doc, env.event, self._settings, self._patterns, self._tz)


class CommitmentsProjection(EventProjection[CommitmentsDoc]):
    bucket = BUCKET_COMMITMENTS
    doc_type = CommitmentsDoc

    def __init__(self, settings: Settings, patterns: PatternSet) -> None:
        self._settings = settings.commitments
        self._patterns = patterns
        self._tz = ZoneInfo(settings.timezone)

    def accepts(self, env: Envelope) -> bool:
        if not self._settings.enabled:
            return False
        if isinstance(env.event, MessageEvent):
            return True
        return isinstance(env.event, FeedbackEvent) and env.event.kind in (DONE_KIND, REJECT_COMMITMENT)

    def apply(self, doc: CommitmentsDoc | None, env: Envelope) -> CommitmentsDoc | None:
        event = env.event
        if isinstance(event, MessageEvent):
            return commitments.apply_message(doc, event, self._settings, self._patterns, self._tz)
        assert isinstance(event, FeedbackEvent)
        return commitments.apply_feedback(doc, event, self._tz)


def projections(settings: Settings) -> list[EventProjection[Any]]:
    """Its documents, derived from the events alone (also a composed reader's, ``WorkerSpec.derive``)."""
    patterns = get_patterns(settings.languages)
    return [DecisionsProjection(settings, patterns), CommitmentsProjection(settings, patterns)]


async def build(ctx: WorkerContext) -> ProjectionHandler:
    return ProjectionHandler(
        ctx.js, ctx.worker, ctx.producer, projections(ctx.settings),
        bucket_names={b: ctx.bucket(b) for b in (BUCKET_DECISIONS, BUCKET_COMMITMENTS)},
        cut_on_triggers=True, cut_every=ctx.settings.runtime.cut_every,
    )


SPEC = WorkerSpec(name="decisions", families=("msg", "feedback", "session", "compaction"),
                  feedback_kinds=FEEDBACK_KINDS, build=build, derive=projections,
                  config_sections=("decisions", "commitments"), buckets=(BUCKET_DECISIONS, BUCKET_COMMITMENTS),
                  patterns=("workers.conversation", "workers.decisions"),
                  briefing=BRIEFING)
