"""The context sections: hot snapshot, narrative, known facts, other channels, key memories.

Snapshot and narrative appear only while fresh, measured against the trigger's time: a
snapshot for an hour, a narrative for 36 hours (design section 4.3; the
``CORTEX_BOOT_SNAPSHOT_MAX_AGE_MINUTES`` and ``CORTEX_BOOT_NARRATIVE_MAX_AGE_HOURS`` settings).
The narrative tells the 24 hours up to the event it was made at, so its heading says which
24 hours (``narrative_heading``): "last 24h" — the reference's heading — only for one made
within the minute before the trigger. Facts and channels
follow the layered context of the processing-brain design (``Known Facts``, one line per
background channel as ``[channel] summary (last: time)``, archived channels left out).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from schemas.docs import ChannelState, Fact, NarrativeDoc, SnapshotDoc
from workers.boot.budget import section
from workers.boot.state import describe_age
from workers.narrative.core import WINDOW_HOURS, for_briefing
from workers.render import as_utc, clip_lines, fact_parts, fact_sentence, iso_seconds, one_line
from workers.snapshot.core import messages_part

SNAPSHOT_MAX_AGE = timedelta(hours=1)
NARRATIVE_MAX_AGE = timedelta(hours=36)
MAX_FACTS_IN_BOOT = 20
MAX_CHANNELS_IN_BOOT = 10
MAX_KEY_MEMORIES_IN_BOOT = 10


def _fresh(ts: datetime, now: datetime, max_age: timedelta) -> bool:
    return as_utc(now) - as_utc(ts) < max_age


def snapshot_section(snapshot: SnapshotDoc | None, now: datetime, budget: int,
                     max_age: timedelta = SNAPSHOT_MAX_AGE) -> str:
    """The hot snapshot's messages within ``budget`` (the reference cut at 1000 characters,
    mid-sentence, so the newest messages were the ones lost): the oldest messages leave
    first, the last one said stays; a single message longer than the room is cut between
    words with "…".

    The snapshot's own headings give way to one line saying when it was taken (pasted, its
    ``# Hot Snapshot`` read as a heading of the briefing), and its thread count at
    compaction to Active Threads, which shows the threads as they are now. A snapshot of no
    messages is no section: "(No recent messages captured)" under a heading tells the agent
    nothing (the narrative's timeline has the compaction)."""
    if snapshot is None or not snapshot.messages_snapshotted or not _fresh(snapshot.ts, now, max_age):
        return ""
    taken = f"Compacted {describe_age(as_utc(now) - as_utc(snapshot.ts))} ({iso_seconds(snapshot.ts)})."
    messages = messages_part(snapshot.markdown)
    hot = clip_lines(_newest_within(f"{taken}\n\n{messages}", budget), budget) if messages else ""
    return f"## 🔥 Last Session Snapshot\n{hot}\n" if hot else ""


def _newest_within(text: str, budget: int) -> str:
    """``text`` without its oldest list items (one per message) while it is over ``budget``;
    the last item always stays."""
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith("- ")), len(lines))
    head, items = lines[:first], lines[first:]
    size = len(text)
    while size > budget and len(items) > 1:
        size -= len(items.pop(0)) + 1
    return "\n".join([*head, *items])


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
    parts = [p for text in said for p in fact_parts(text)]

    def kept(found: re.Match[str]) -> str:
        return "" if _said_before(found.group().split(": “", 1)[1].rstrip("”"), parts) else found.group()

    lines = [_QUOTE.sub(kept, line) if "“" in line else line for line in markdown.split("\n")]
    return "\n".join(line.rstrip() for line in lines if line.strip() or not line)


# Predicates a subject has one object of at a time: a newer statement replaces the older.
SINGLE_VALUED = frozenset({"works-at", "lives-in"})


def current_facts(facts: Sequence[Fact]) -> list[Fact]:
    """``facts`` without those a newer fact replaced: of a subject's single-valued predicate
    (``SINGLE_VALUED``: "Maria works at Globex Corp" two weeks after "Maria works at Acme
    Analytics GmbH") only the one first stated last stays — the briefing showed both, the old
    employer beside the new. The fact store keeps both (a search still finds the old one)."""
    latest: dict[tuple[str, str], Fact] = {}
    for f in facts:
        if f.predicate in SINGLE_VALUED:
            key = (f.subject, f.predicate)
            other = latest.get(key)
            if other is None or (as_utc(f.created_at), f.id) > (as_utc(other.created_at), other.id):
                latest[key] = f
    return [f for f in facts if f.predicate not in SINGLE_VALUED or latest[(f.subject, f.predicate)] is f]


def top_facts(facts: Sequence[Fact], limit: int = MAX_FACTS_IN_BOOT) -> list[Fact]:
    """The most relevant current facts (``current_facts``); recent access, then the id, break ties."""
    ranked = sorted(current_facts(facts), key=lambda f: f.id)
    ranked.sort(key=lambda f: (f.relevance, as_utc(f.last_accessed)), reverse=True)
    return ranked[:limit]


def _fact_line(f: Fact, names: Mapping[str, str]) -> str:
    # Facts refer to entities by id (`person:maria`); the briefing shows their values.
    # Predicates are slugs ("works-at", "located-in"): the briefing reads them as words.
    subject, obj = names.get(f.subject, f.subject), names.get(f.object, f.object)
    return f"- {one_line(fact_sentence(subject, f.predicate, obj))}"


def fact_sentences(facts: Sequence[Fact], names: Mapping[str, str]) -> list[str]:
    """The sentences Known Facts shows (at most; its budget may cut the last)."""
    return [_fact_line(f, names).removeprefix("- ") for f in top_facts(facts)]


def facts_section(facts: Sequence[Fact], budget: int, names: Mapping[str, str] | None = None) -> str:
    lines = [_fact_line(f, names or {}) for f in top_facts(facts)]
    return section("## 🧠 Known Facts", lines, budget)[0]


def shown_facts(markdown: str, facts: Sequence[Fact], names: Mapping[str, str] | None = None) -> list[str]:
    """Ids of the facts whose line a briefing shows (within its budgets and its limit)."""
    lines = set(markdown.split("\n"))
    return [f.id for f in top_facts(facts) if _fact_line(f, names or {}) in lines]


def background_channels(channels: Sequence[ChannelState]) -> list[ChannelState]:
    """Background channels, the most recently active first."""
    background = sorted((c for c in channels if c.layer == "background"), key=lambda c: c.channel)
    background.sort(key=lambda c: as_utc(c.last_message_at), reverse=True)
    return background[:MAX_CHANNELS_IN_BOOT]


def _channel_line(c: ChannelState) -> str:
    # An unsummarised channel still says how much happened there.
    summary = one_line(c.summary) or f"{c.messages} messages"
    return f"[{one_line(c.channel)}] {summary} (last: {iso_seconds(c.last_message_at)})"


def channels_section(channels: Sequence[ChannelState], budget: int) -> str:
    lines = [_channel_line(c) for c in background_channels(channels)]
    return section("## 📡 Other Channels", lines, budget)[0]


# "And remember our rule: never deploy on Fridays." is read as its rule: the lead-in that
# told the agent to keep it says nothing under Rules & Key Memories. Only a short lead-in
# ending in a colon, of words that announce a rule or a note (English and German).
_LEAD_IN = re.compile(
    r"(?:(?:and|also|so|but|oh|ok|okay|und|aber)[, ]+)?(?:please[, ]+|bitte[, ]+)?"
    r"(?:(?:always[, ]+)?remember|don'?t forget|never forget|keep in mind|note|reminder|important|rule|policy"
    r"|merk dir|merke|denk dran|vergiss nicht|wichtig|regel|hinweis)"
    r"(?:[, ]+(?:our|the|this|my|that|team|unsere|unser|die|der|diese)?[, ]*(?:rule|policy|principle|regel|grundsatz))?"
    r"\s*:\s+(?=\S)",
    re.IGNORECASE,
)


def without_lead_in(memory: str) -> str:
    """``memory`` without a lead-in such as "And remember our rule:", its first letter raised."""
    lead = _LEAD_IN.match(memory)
    if lead is None:
        return memory
    rest = memory[lead.end():]
    return rest[:1].upper() + rest[1:]


def _said_before(memory: str, said: Sequence[str]) -> bool:
    lowered = memory.lower()
    mine = fact_parts(memory)
    return any(part in lowered for part in said) or any(part in other for part in mine for other in said)


def key_memories_section(memories: Sequence[str], budget: int, said: Collection[str] = ()) -> str:
    """Rules and key memories from recall, in recall's order, each once — and none that a
    sentence of ``said`` (what the work sections show: summaries, decisions, reasons,
    promises) already says, or that says one of them: the message a thread is about is no
    rule to read again."""
    if not memories:
        return ""
    parts = [p for text in said for p in fact_parts(text)]
    unique = list(dict.fromkeys(m for m in (without_lead_in(one_line(m)) for m in memories)
                                if m and not _said_before(m, parts)))
    lines = [f"- {m}" for m in unique[:MAX_KEY_MEMORIES_IN_BOOT]]
    return section("## 📌 Rules & Key Memories", lines, budget)[0]
