"""The decisions worker: DecisionsDoc and CommitmentsDoc per agent."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar
from zoneinfo import ZoneInfo

from schemas.docs import CommitmentsDoc, DecisionsDoc
from schemas.events import FeedbackEvent, MessageEvent
from shared.codec import Envelope
from shared.config import CommitmentsSettings, DecisionsSettings, Settings
from shared.names import BUCKET_COMMITMENTS, BUCKET_DECISIONS
from shared.projection import D, EventProjection, ProjectionHandler
from shared.runtime import WorkerContext, WorkerSpec
from workers.conversation.patterns import PatternSet, get_patterns
from workers.decisions import commitments, core
from workers.decisions.briefing import SECTIONS as BRIEFING

DONE_KIND = "commitment_done"
REJECT_COMMITMENT = "commitment_reject"  # "not a commitment"
REJECT_DECISION = "decision_reject"  # "this decision is wrong"
# the FeedbackEvent kinds it applies (the only ones its consumer is delivered)
FEEDBACK_KINDS = (DONE_KIND, REJECT_COMMITMENT, REJECT_DECISION)
S = TypeVar("S", DecisionsSettings, CommitmentsSettings)


class _FromMessages(EventProjection[D], Generic[D, S]):
    """A document made of the agent's messages and of the feedback kinds ``feedback``, while
    its section of the settings is enabled."""

    feedback: ClassVar[tuple[str, ...]]

    def __init__(self, settings: S, patterns: PatternSet, tz: ZoneInfo) -> None:
        self._settings: S = settings
        self._patterns = patterns
        self._tz = tz

    def accepts(self, env: Envelope) -> bool:
        if not self._settings.enabled:
            return False
        return isinstance(env.event, MessageEvent) or (isinstance(env.event, FeedbackEvent)
                                                       and env.event.kind in self.feedback)


class DecisionsProjection(_FromMessages[DecisionsDoc, DecisionsSettings]):
    bucket = BUCKET_DECISIONS
    doc_type = DecisionsDoc
    feedback = (REJECT_DECISION,)

    def apply(self, doc: DecisionsDoc | None, env: Envelope) -> DecisionsDoc | None:
        if isinstance(env.event, FeedbackEvent):
            return core.apply_feedback(doc, env.event)
        assert isinstance(env.event, MessageEvent)
        return core.apply_message(doc, env.event, self._settings, self._patterns, self._tz)


class CommitmentsProjection(_FromMessages[CommitmentsDoc, CommitmentsSettings]):
    bucket = BUCKET_COMMITMENTS
    doc_type = CommitmentsDoc
    feedback = (DONE_KIND, REJECT_COMMITMENT)

    def apply(self, doc: CommitmentsDoc | None, env: Envelope) -> CommitmentsDoc | None:
        event = env.event
        if isinstance(event, MessageEvent):
            return commitments.apply_message(doc, event, self._settings, self._patterns, self._tz)
        assert isinstance(event, FeedbackEvent)
        return commitments.apply_feedback(doc, event, self._tz)


def projections(settings: Settings) -> list[EventProjection[Any]]:
    """Its documents, derived from the events alone (also a composed reader's, ``WorkerSpec.derive``)."""
    patterns, tz = get_patterns(settings.languages), ZoneInfo(settings.timezone)
    return [DecisionsProjection(settings.decisions, patterns, tz),
            CommitmentsProjection(settings.commitments, patterns, tz)]


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
