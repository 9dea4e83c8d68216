"""The context sections: hot snapshot, narrative, known facts, other channels, key memories.

Snapshot and narrative appear only while fresh, measured against the trigger's time: a
snapshot for an hour, a narrative for 36 hours (design section 4.3; the
``CORTEX_BOOT_SNAPSHOT_MAX_AGE_MINUTES`` and ``CORTEX_BOOT_NARRATIVE_MAX_AGE_HOURS`` settings). Facts and channels
follow the layered context of the processing-brain design (``Known Facts``, one line per
background channel as ``[channel] summary (last: time)``, archived channels left out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from schemas.docs import ChannelState, Fact, NarrativeDoc, SnapshotDoc
from workers.boot.budget import section
from workers.render import as_utc, clip_lines, iso_seconds, one_line

SNAPSHOT_MAX_AGE = timedelta(hours=1)
NARRATIVE_MAX_AGE = timedelta(hours=36)
MAX_FACTS_IN_BOOT = 20
MAX_CHANNELS_IN_BOOT = 10
MAX_KEY_MEMORIES_IN_BOOT = 10


def _fresh(ts: datetime, now: datetime, max_age: timedelta) -> bool:
    return as_utc(now) - as_utc(ts) < max_age


def snapshot_section(snapshot: SnapshotDoc | None, now: datetime, budget: int,
                     max_age: timedelta = SNAPSHOT_MAX_AGE) -> str:
    """The hot snapshot, its markdown within ``budget`` (the reference cut at 1000
    characters, mid-sentence): whole lines, a last one cut between words with "…"."""
    if snapshot is None or not _fresh(snapshot.ts, now, max_age):
        return ""
    hot = clip_lines(snapshot.markdown.strip(), budget)
    return f"## 🔥 Last Session Snapshot\n{hot}\n" if hot else ""


def narrative_section(narrative: NarrativeDoc | None, now: datetime, budget: int,
                      max_age: timedelta = NARRATIVE_MAX_AGE) -> str:
    """The narrative, its markdown within ``budget`` (the reference cut at 2000 characters):
    whole lines, a last one cut between words with "…"."""
    if narrative is None or not _fresh(narrative.ts, now, max_age):
        return ""
    text = clip_lines(narrative.markdown.strip(), budget)
    return f"## 📖 Narrative (last 24h)\n{text}\n" if text else ""


def top_facts(facts: Sequence[Fact], limit: int = MAX_FACTS_IN_BOOT) -> list[Fact]:
    """The most relevant facts; recent access, then the id, break ties."""
    ranked = sorted(facts, key=lambda f: f.id)
    ranked.sort(key=lambda f: (f.relevance, as_utc(f.last_accessed)), reverse=True)
    return ranked[:limit]


def _fact_line(f: Fact, names: Mapping[str, str]) -> str:
    # Facts refer to entities by id (`person:maria`); the briefing shows their values.
    subject, obj = names.get(f.subject, f.subject), names.get(f.object, f.object)
    return f"- {one_line(subject)} {one_line(f.predicate)} {one_line(obj)}"


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


def key_memories_section(memories: Sequence[str], budget: int) -> str:
    """Rules and key memories from recall, in recall's order, each once."""
    unique = list(dict.fromkeys(m for m in (one_line(m) for m in memories) if m))
    lines = [f"- {m}" for m in unique[:MAX_KEY_MEMORIES_IN_BOOT]]
    return section("## 📌 Rules & Key Memories", lines, budget)[0]
