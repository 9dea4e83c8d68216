"""The snapshot worker's briefing section: the hot snapshot of the last compaction.

Shown only while fresh, measured against the trigger's time: an hour (design section 4.3;
``CORTEX_BOOT_SNAPSHOT_MAX_AGE_MINUTES``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from schemas.docs import SnapshotDoc
from shared.briefing import Briefing, BriefingSection, Rendered, Said
from shared.names import BUCKET_SNAPSHOTS
from workers.briefing import describe_age
from workers.render import as_utc, clip_lines, iso_seconds
from workers.snapshot.core import messages_part

SNAPSHOT_MAX_AGE = timedelta(hours=1)


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


class SnapshotBriefingSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The hot snapshot's knob (``CORTEX_BOOT_SNAPSHOT_MAX_AGE_MINUTES``): it is shown only
    while younger (the plugin design's constant, as a knob)."""

    snapshot_max_age_minutes: Annotated[int, Meta(ge=1, le=10_080)] = 60


def _snapshot(b: Briefing, said: Said, budget: int) -> Rendered:
    return Rendered(snapshot_section(b.doc(BUCKET_SNAPSHOTS, SnapshotDoc), b.now, budget,
                                     timedelta(minutes=b.knob(SnapshotBriefingSettings).snapshot_max_age_minutes)))


# made for a compaction (read as of the compaction itself), and only then: only when relevant
SECTIONS: tuple[BriefingSection[Any], ...] = (
    BriefingSection("🔥 Last Session Snapshot", BUCKET_SNAPSHOTS, SnapshotDoc, name="snapshot", order=100,
                    chars=1000, compose=_snapshot, as_of="made_for_compaction", knobs=SnapshotBriefingSettings),
)
