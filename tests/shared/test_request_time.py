"""The time of a request's feedback (``shared.feedback.request_time``): the latest event time
applied for the agent, the epoch when it has none — never the wall clock; and the time a
person's or agent's own feedback is published with (``publish_time``): the same, but the
wall clock for an agent's very first event (a memory dated 1970 would expire at once)."""

from __future__ import annotations

from datetime import UTC, datetime

from schemas.api import StatusReply, WorkerStatus
from shared.feedback import NO_EVENT_TIME, publish_time, request_time, status_time


def test_the_latest_stamp_is_the_requests_time_and_the_epoch_without_one() -> None:
    early, late = datetime(2026, 2, 17, 9, tzinfo=UTC), datetime(2026, 2, 17, 10, tzinfo=UTC)
    assert request_time([early, None, late]) == late
    assert request_time([]) == request_time([None]) == NO_EVENT_TIME == datetime(1970, 1, 1, tzinfo=UTC)


def test_the_status_apis_workers_give_the_time_a_client_stamps() -> None:
    def worker(name: str, ts: str | None) -> WorkerStatus:
        return WorkerStatus(worker=name, consumer=name, pending=0, checkpoint=1, last_event_ts=ts)

    status = StatusReply(agent="alice", counts={}, mood="neutral",
                         workers=[worker("threads", "2026-02-17T09:58:00+00:00"), worker("recall", None),
                                  worker("knowledge", "2026-02-17T10:00:05+00:00")])
    assert status_time(status) == datetime(2026, 2, 17, 10, 0, 5, tzinfo=UTC)
    before = datetime.now(UTC)
    first = status_time(StatusReply(agent="new", counts={}, mood="neutral", workers=[worker("threads", None)]))
    assert before <= first <= datetime.now(UTC)  # a new agent's first event: stamped as a producer would


def test_a_published_feedback_takes_the_latest_event_time_or_for_a_first_event_the_clock() -> None:
    early, late = datetime(2026, 2, 17, 9, tzinfo=UTC), datetime(2026, 2, 17, 10, tzinfo=UTC)
    assert publish_time([early, None, late]) == late
    before = datetime.now(UTC)
    assert before <= publish_time([None]) <= datetime.now(UTC)
