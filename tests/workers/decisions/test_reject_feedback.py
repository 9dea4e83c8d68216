"""A person's "not a commitment" and "this decision is wrong" (``commitment_reject``,
``decision_reject``: issue 43, from ``cortex web`` and the CLI): the item leaves its document,
in stream order, so a replay leaves it out too; an unknown id changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from schemas.events import FeedbackEvent, MessageEvent
from shared.config import CommitmentsSettings, DecisionsSettings, parse_languages
from workers.conversation.feedback import FeedbackError
from workers.conversation.patterns import get_patterns
from workers.decisions import commitments, core
from workers.decisions.worker import SPEC

T0 = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)
PATTERNS = get_patterns(parse_languages("both"))
UTC_ZONE = ZoneInfo("UTC")


def message(content: str, event_id: str) -> MessageEvent:
    return MessageEvent(id=event_id, agent="agent", session="s", ts=T0, role="user", sender="albert",
                        content=content)


def feedback(kind: str, target: str | None, minutes: int = 5) -> FeedbackEvent:
    return FeedbackEvent(id=f"fb-{kind}-{target}", agent="agent", ts=T0 + timedelta(minutes=minutes), kind=kind,
                         target=target)


def test_a_rejected_commitment_leaves_the_document_and_the_others_stay() -> None:
    doc = commitments.apply_message(None, message("I'll fix the build. I'll also update the docs.", "m1"),
                                    CommitmentsSettings(), PATTERNS, UTC_ZONE)
    assert len(doc.commitments) == 2
    gone, kept = doc.commitments
    after = commitments.apply_feedback(doc, feedback("commitment_reject", gone.id), UTC_ZONE)
    assert [c.id for c in after.commitments] == [kept.id]
    assert commitments.apply_feedback(after, feedback("commitment_reject", "unknown"), UTC_ZONE).commitments == \
        after.commitments
    with pytest.raises(FeedbackError):
        commitments.apply_feedback(doc, feedback("commitment_reject", None), UTC_ZONE)


def test_a_decision_said_to_be_wrong_leaves_the_document() -> None:
    settings = DecisionsSettings()
    doc = core.apply_message(None, message("We decided to use Redis for the cache because the database is slow.",
                                           "m1"), settings, PATTERNS, UTC_ZONE)
    doc = core.apply_message(doc, message("We decided to move the audit log to S3.", "m2"), settings, PATTERNS,
                             UTC_ZONE)
    assert len(doc.decisions) == 2
    wrong = doc.decisions[0]
    after = core.apply_feedback(doc, feedback("decision_reject", wrong.id))
    assert [d.what for d in after.decisions] == [doc.decisions[1].what]
    assert after.updated == T0 + timedelta(minutes=5)
    assert core.apply_feedback(after, feedback("decision_reject", wrong.id, 9)) == after  # again: nothing changes
    with pytest.raises(FeedbackError):
        core.apply_feedback(doc, feedback("decision_reject", None))


def test_the_decisions_worker_is_delivered_both_kinds() -> None:
    assert {"commitment_done", "commitment_reject", "decision_reject"} <= set(SPEC.feedback_kinds or ())
