"""The change throttle (``workers.boot.throttle.change_due``): which messages and feedback
make a briefing, from sequences and event times alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from workers.boot.throttle import Made, change_due

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def due(seq: int, seconds: int, last: Made | None, every: int = 10, interval: timedelta | None = MINUTE) -> bool:
    return change_due(seq, T0 + timedelta(seconds=seconds), last, every, interval)


def test_a_change_before_the_first_stream_cut_makes_nothing() -> None:
    assert not due(9, 600, None)  # nothing to show as of a cut yet
    assert not due(1, 600, None, every=2)


def test_the_first_change_after_a_cut_makes_the_agent_s_first_document() -> None:
    assert due(10, 0, None)
    assert due(2, 0, None, every=2)


def test_a_change_within_the_cut_the_last_document_shows_makes_nothing() -> None:
    last = Made(seq=12, ts=T0)
    assert not due(19, 3600, last)  # the same cut (10) as the last document, however late
    assert not due(15, 3600, Made(seq=20, ts=T0))  # the last document is newer still


def test_a_change_past_the_next_cut_needs_the_interval_of_event_time() -> None:
    last = Made(seq=12, ts=T0)
    assert not due(21, 59, last)
    assert due(21, 60, last)  # exactly the interval
    assert due(35, 61, last)


def test_without_an_interval_every_new_cut_makes_one() -> None:
    last = Made(seq=12, ts=T0)
    assert due(20, 0, last, interval=None)
    assert not due(19, 0, last, interval=None)


def test_the_decision_does_not_depend_on_batching_only_on_the_last_document() -> None:
    """A change of the same batch that was due counts as the last document for the next."""
    first = Made(seq=20, ts=T0 + timedelta(seconds=60))
    assert due(20, 60, Made(seq=12, ts=T0))
    assert not due(25, 200, first)  # the pending change's cut
    assert not due(30, 90, first)  # a new cut, but 30 s after the pending change
    assert due(30, 120, first)
