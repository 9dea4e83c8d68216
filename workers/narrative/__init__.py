"""Narrative worker: the structured 24-hour narrative and its LLM prompt (design section 4.5)."""

from workers.narrative.core import (
    WINDOW_HOURS,
    build_narrative_prompt,
    build_structured_narrative,
    date_header,
    for_briefing,
)
from workers.narrative.timeline import TimelineEntry, TimelineKind, timeline_from_threads

__all__ = [
    "WINDOW_HOURS",
    "TimelineEntry",
    "TimelineKind",
    "build_narrative_prompt",
    "build_structured_narrative",
    "date_header",
    "for_briefing",
    "timeline_from_threads",
]
