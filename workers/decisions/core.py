"""Decisions as pure functions over the contract's ``DecisionsDoc``.

Ported from the reference's ``DecisionTracker`` (openclaw-cortex ``src/decision-tracker.ts``):
every decision-pattern match in a message is a decision whose ``what`` is the text 50
characters before to 100 after the match and whose ``why`` is the wider 100 before to
200 after. Impact is ``high`` when a high-impact keyword of any enabled language appears,
else ``medium``. An identical ``what`` seen within ``dedupe_window_hours`` of the event
is skipped, and the list keeps the newest ``max_decisions``.

Time is the event's: ``extracted_at`` is ``event.ts`` and ``date`` is that instant's day
in the configured time zone. The functions return a new document and never mutate their
input; unchanged decisions are shared between the two. ``integrity`` is copied unchanged.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo

import msgspec

from schemas.docs import Decision, DecisionsDoc, Integrity
from schemas.events import MessageEvent
from schemas.types import Impact
from shared.config import DecisionsSettings
from workers.conversation.ids import derive_id
from workers.conversation.patterns import MatchText, PatternSet, prepare_text
from workers.conversation.signals import DECISION_AFTER, DECISION_BEFORE, context_window, iter_matches

WHY_BEFORE: Final = 100
WHY_AFTER: Final = 200


def empty_decisions_doc(ts: datetime) -> DecisionsDoc:
    return DecisionsDoc(updated=ts, decisions=[], integrity=Integrity())


def infer_impact(text: str, patterns: PatternSet) -> Impact:
    """``high`` when the text names a high-impact keyword, else ``medium`` (``inferImpact``)."""
    return "high" if patterns.is_high_impact(text.lower()) else "medium"


_Match = tuple[int, int, int, str]  # (index, start, end, what)


def _fresh_matches(
    text: MatchText, patterns: PatternSet, decisions: list[Decision], cutoff: datetime
) -> list[_Match]:
    """The message's decision matches whose ``what`` is not recent (extracted at or after
    ``cutoff``).

    The recent ``what``s are a set, so a message with many matches costs linear time (and
    one without a match costs nothing); decisions of this same message count as recent
    too, as in the reference.
    """
    fresh: list[_Match] = []
    recent: set[str] | None = None
    for index, match in enumerate(iter_matches(patterns.decision, text)):
        what = context_window(text.original, match.start(), match.end(), DECISION_BEFORE, DECISION_AFTER)
        if recent is None:
            recent = {d.what for d in decisions if d.extracted_at >= cutoff}
        if what not in recent:
            recent.add(what)
            fresh.append((index, match.start(), match.end(), what))
    return fresh


def apply_message(
    doc: DecisionsDoc | None,
    event: MessageEvent,
    settings: DecisionsSettings,
    patterns: PatternSet,
    tz: ZoneInfo,
) -> DecisionsDoc:
    """The decisions document after one message (the reference's ``processMessage``)."""
    base = doc if doc is not None else empty_decisions_doc(event.ts)
    text = prepare_text(event.content)
    cutoff = event.ts - timedelta(hours=settings.dedupe_window_hours)
    fresh = _fresh_matches(text, patterns, base.decisions, cutoff)
    date = event.ts.astimezone(tz).date().isoformat()
    # Only the newest max_decisions can survive the cap: build no more than those.
    added = [
        _decision(
            event,
            patterns,
            decision_id=derive_id(event.id, "decision", index),
            what=what,
            why=context_window(text.original, start, end, WHY_BEFORE, WHY_AFTER),
            date=date,
        )
        for index, start, end, what in fresh[-settings.max_decisions :]
    ]
    return DecisionsDoc(
        version=base.version,
        updated=event.ts,
        decisions=[*base.decisions, *added][-settings.max_decisions :] if added else base.decisions,
        integrity=msgspec.structs.replace(base.integrity),
    )


def _decision(
    event: MessageEvent, patterns: PatternSet, *, decision_id: str, what: str, why: str, date: str
) -> Decision:
    # ``why`` contains ``what``, so searching it finds every keyword the reference found
    # in ``what + " " + why``.
    return Decision(
        id=decision_id,
        what=what,
        date=date,
        why=why,
        impact=infer_impact(why, patterns),
        who=event.sender or event.role,
        extracted_at=event.ts,
        channel=event.channel,
    )
