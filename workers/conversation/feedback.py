"""Validation shared by the cores that apply FeedbackEvents."""

from __future__ import annotations

from schemas.events import FeedbackEvent


class FeedbackError(ValueError):
    """A FeedbackEvent that can never be applied (no target, a bad value).

    The same event fails the same way on every delivery, so the worker shell should
    dead-letter it with this message rather than retry.
    """


def feedback_target(event: FeedbackEvent) -> str:
    """The id the feedback is about; an event without one is bad input."""
    if not event.target:
        raise FeedbackError(f"{event.kind} feedback {event.id} has no target id")
    return event.target
