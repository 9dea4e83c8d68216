"""One truth per fact, over time (issue 41): what was believed at a time, in event time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from workers.recall.models import Memory
from workers.recall.timeline import believed_at, reinstated, since, superseded

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def said(mid: str, text: str, hours: float) -> Memory:
    at = T0 + timedelta(hours=hours)
    return Memory(id=mid, agent="a", content=text, type="fact", scope="permanent", confidence=1.0,
                  source_event=mid, created_at=at, last_accessed=at)


def test_a_memory_is_believed_from_its_statement_until_it_is_superseded() -> None:
    tuesday, thursday = said("tue", "Our deploy day is Tuesday.", 0), said("thu", "Our deploy day is Thursday now.", 48)
    old = superseded(tuesday, thursday, seq=7)
    assert (old.superseded_by, old.superseded_at, old.last_seq) == ("thu", thursday.created_at, 7)
    assert not believed_at(old, T0 - timedelta(minutes=1))  # not said yet
    assert believed_at(old, T0 + timedelta(hours=24)) and not believed_at(thursday, T0 + timedelta(hours=24))
    assert not believed_at(old, T0 + timedelta(hours=48)) and believed_at(thursday, T0 + timedelta(hours=48))
    assert believed_at(reinstated(old), T0 + timedelta(hours=72))  # said again, or its correction forgotten


def test_a_restated_memory_is_believed_since_its_first_statement() -> None:
    restated = said("new", "Bob prefers Friday reviews.", 10)
    from msgspec.structs import replace

    restated = replace(restated, valid_from=T0)
    assert since(restated) == T0 and believed_at(restated, T0 + timedelta(hours=1))


def test_a_memory_superseded_at_an_unrecorded_time_is_not_believed() -> None:
    from msgspec.structs import replace

    old = replace(said("tue", "Our deploy day is Tuesday.", 0), superseded_by="thu")  # stored before times were kept
    assert not believed_at(old, T0 + timedelta(hours=1))
