"""The narrative worker's briefing section: the narrative of the last 24 hours.

Shown only while fresh, measured against the trigger's time: 36 hours (design section 4.3;
``CORTEX_BOOT_NARRATIVE_MAX_AGE_HOURS``). The narrative tells the 24 hours up to the event it
was made at, so its heading says which 24 hours (``narrative_heading``): "last 24h" — the
reference's heading — only for one made within the minute before the trigger.

Each fact once: a structured narrative leaves out the open threads Active Threads shows or
that closed since (``THREAD_TITLES``), the decisions Recent Decisions shows or a later one
reversed (``DECISIONS``), and the quotes a sentence the work sections show already says
(``SENTENCES``); it keeps what no other section says: completed work and the timeline.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Annotated, Any
from zoneinfo import ZoneInfo

import msgspec
from msgspec import Meta

from schemas.docs import NarrativeDoc
from shared.briefing import DECISIONS, SENTENCES, THREAD_TITLES, Briefing, BriefingSection, Rendered, Said
from shared.names import BUCKET_NARRATIVES
from workers.briefing import said_before, said_parts
from workers.narrative.core import WINDOW_HOURS, for_briefing
from workers.render import as_utc, clip_lines

NARRATIVE_MAX_AGE = timedelta(hours=36)


def _fresh(ts: datetime, now: datetime, max_age: timedelta) -> bool:
    return as_utc(now) - as_utc(ts) < max_age


NARRATIVE_HEADING = "## 📖 Narrative (last 24h)"


def narrative_heading(ts: datetime, now: datetime, tz: ZoneInfo) -> str:
    """The narrative section's heading: which 24 hours a narrative made at ``ts`` tells, for
    a briefing at ``now`` (both event times).

    The reference's "last 24h" held for a narrative read as it was written; one made at the
    previous session's end is read at the next start, up to 36 hours later, and told the day
    before as the last one. Made within the minute (``describe_age``'s "just now"), it is
    the last 24 hours; else the heading names its window's end in local time: ``24h to 14:05
    today``, ``24h to 21:40 yesterday``, and for an agent silent for days ``24h to
    2026-11-24 18:05, 4 days ago`` (the lessons' "date, N days ago")."""
    if as_utc(now) - as_utc(ts) < timedelta(minutes=1):
        return NARRATIVE_HEADING
    local = as_utc(ts).astimezone(tz)
    days = (as_utc(now).astimezone(tz).date() - local.date()).days
    if days <= 0:
        end = f"{local:%H:%M} today"
    elif days == 1:
        end = f"{local:%H:%M} yesterday"
    else:
        end = f"{local:%Y-%m-%d %H:%M}, {days} days ago"
    return f"## 📖 Narrative ({WINDOW_HOURS}h to {end})"


def narrative_section(
    narrative: NarrativeDoc | None,
    now: datetime,
    budget: int,
    tz: ZoneInfo,
    open_titles: Collection[str] = (),
    decisions: Collection[str] = (),
    max_age: timedelta = NARRATIVE_MAX_AGE,
    said: Collection[str] = (),
) -> str:
    """The narrative under a heading saying which 24 hours it tells (``narrative_heading``),
    its markdown within ``budget`` (the reference cut at 2000 characters): whole lines, a
    last one cut between words with "…". A heading longer than the reference's takes its
    extra characters from the markdown, so the section is never longer than the
    reference's.

    A structured narrative leaves out what the briefing's other sections show
    (``workers.narrative.for_briefing``): the open threads of ``open_titles`` and the
    decisions of ``decisions``, and a session's quoted news that a sentence of ``said`` (what
    the work sections show) already says — and is no section when nothing but its date is
    left. A narrative a model wrote is prose and stays whole, its headings made bold lines
    (``## Tuesday`` would read as a section of the briefing's own)."""
    if narrative is None or not _fresh(narrative.ts, now, max_age):
        return ""
    markdown = narrative.markdown
    if narrative.source != "structured":
        markdown = _HEADING.sub(r"**\1**", markdown)
    else:
        markdown = for_briefing(markdown, open_titles, decisions)
        # a session's news the narrative's own lines say (a Completed item) is not quoted again
        own = [line.split(": ", 1)[-1] for line in markdown.split("\n") if line.strip() and "“" not in line]
        markdown = without_said_quotes(markdown, [*said, *own])
    heading = narrative_heading(narrative.ts, now, tz)
    text = clip_lines(markdown.strip(), budget - max(len(heading) - len(NARRATIVE_HEADING), 0))
    return f"{heading}\n{text}\n" if text else ""


_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)  # a markdown heading (ATX), its text
_QUOTE = re.compile(r"(?:^|(?<=\s))[^\s:“”][^:“”]{0,64}: “[^”]*”")


def without_said_quotes(markdown: str, said: Collection[str]) -> str:
    """``markdown`` without the quotes (``Speaker: “…”``) that a sentence of ``said`` says
    already, or that say one of them (the message a thread is about, quoted as news); a line
    left with nothing goes."""
    if not said or "“" not in markdown:
        return markdown
    parts = said_parts(list(said))

    def kept(found: re.Match[str]) -> str:
        return "" if said_before(found.group().split(": “", 1)[1].rstrip("”"), parts) else found.group()

    lines = [_QUOTE.sub(kept, line) if "“" in line else line for line in markdown.split("\n")]
    return "\n".join(line.rstrip() for line in lines if line.strip() or not line)


class NarrativeBriefingSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The narrative's knob (``CORTEX_BOOT_NARRATIVE_MAX_AGE_HOURS``): it is shown only while
    younger (the plugin design's constant, as a knob)."""

    narrative_max_age_hours: Annotated[int, Meta(ge=1, le=720)] = 36


def _narrative(b: Briefing, said: Said, budget: int) -> Rendered:
    max_age = timedelta(hours=b.knob(NarrativeBriefingSettings).narrative_max_age_hours)
    return Rendered(narrative_section(b.doc(BUCKET_NARRATIVES, NarrativeDoc), b.now, budget, b.tz,
                                      said.of(THREAD_TITLES), said.of(DECISIONS), max_age, said.of(SENTENCES)))


# made at a session's end or a compaction (read as of the compaction itself): only when relevant
SECTIONS: tuple[BriefingSection[Any], ...] = (
    BriefingSection("📖 Narrative", BUCKET_NARRATIVES, NarrativeDoc, name="narrative", order=200, chars=2000,
                    compose=_narrative, as_of="made_for_compaction", hears=(THREAD_TITLES, DECISIONS, SENTENCES),
                    knobs=NarrativeBriefingSettings),
)
