"""What the boot assembly reads: every briefing section's document of one agent, by bucket,
plus the lag report."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import msgspec

from schemas.docs import ChannelsDoc, NarrativeDoc
from workers.render import as_utc


def activity(doc: Any) -> datetime | None:
    """A source document's latest activity: its last event; for the channels document, made
    *for* each trigger (read as of S + 1) and so stamped with the trigger itself, its last
    message — else every briefing said "Last activity: just now" of its own session start,
    and the age line measured thread data against it."""
    if isinstance(doc, ChannelsDoc):
        return doc.updated if doc.integrity.last_event_ts is not None else None
    last: datetime | None = doc.integrity.last_event_ts
    return last


def _starting_now(listed: Sequence[Any], now: datetime) -> bool:
    """Whether the agent's latest event is the start of a session at ``now`` (the narrative's
    timeline says so; the documents' integrity does not tell an event's kind)."""
    narrative = next((d for d in listed if isinstance(d, NarrativeDoc)), None)
    latest = max(narrative.timeline, key=lambda i: as_utc(i.ts), default=None) if narrative is not None else None
    return latest is not None and latest.kind == "session_start" and as_utc(latest.ts) == as_utc(now)


def last_activity(docs: Iterable[Any], now: datetime) -> tuple[datetime | None, bool]:
    """The agent's latest activity: the latest of its documents' (``activity``) — before the
    session that starts at ``now`` when the agent's latest event is that session's start. A
    briefing asked for at a session's start (``cortex_boot``, ``cortex boot``, the demo), or
    made again for the feedback that request published (stamped with the same time), said
    "Last activity: just now" of the start itself, not how long the agent had been away.

    With it, whether that start is all there is: nothing came before the session (a new
    agent's first briefing asked for said "just now" of it too). None and False: nothing known."""
    listed = [d for d in docs if d is not None]
    stamps = [as_utc(ts) for d in listed if (ts := activity(d)) is not None]
    if not _starting_now(listed, now):
        return max(stamps, default=None), False
    before = [ts for ts in stamps if ts < as_utc(now)]
    return max(before, default=None), not before


class BootInputs(msgspec.Struct, frozen=True, kw_only=True):
    """Everything one BOOTSTRAP document is assembled from.

    ``now`` is the triggering event's time (for a request or a change, the latest event
    time applied for the agent), never the wall clock. ``docs`` are the documents of every
    worker's briefing sections (``WorkerSpec.briefing``) as of the trigger, by bucket; an
    absent one has none. ``lagging`` names source workers whose watermark had not reached
    the trigger when the bounded wait ended; ``missing`` names sources that have no
    document for the agent at all. ``last_activity`` is the agent's latest event time;
    when unknown, the newest ``integrity.last_event_ts`` of the documents stands in.
    ``person``: a briefing for one of the people the agent talks with.
    """

    agent: str
    now: datetime
    docs: dict[str, Any] = msgspec.field(default_factory=dict)
    lagging: list[str] = msgspec.field(default_factory=list)
    missing: list[str] = msgspec.field(default_factory=list)
    last_activity: datetime | None = None
    first_session: bool = False  # the session starting at ``now`` is all Cortex has of the agent
    person: str | None = None

    def for_person(self, person: str) -> BootInputs:
        """The inputs of a briefing for ``person``: its sections leave out what belongs to
        another person (recall's key memories)."""
        return msgspec.structs.replace(self, person=person)

    def with_docs(self, docs: dict[str, Any]) -> BootInputs:
        return msgspec.structs.replace(self, docs=docs)

    def documents(self) -> list[Any]:
        """The documents there are."""
        return [doc for doc in self.docs.values() if doc is not None]
