"""Timeline entries of the structured narrative, all in event time.

The reference read its timeline from the headers of daily notes (``memory/YYYY-MM-DD.md``:
its ``##`` and ``###`` headings); here the entries are the agent's own events (session
starts and ends, compactions), thread openings and closings, and the sections of daily
notes that ``cortex index`` publishes (a NoteEvent whose file is named ``YYYY-MM-DD.md``:
its heading path, date headings left out), each stamped with the time of the event that
caused it (a note's is the file's modification time, as ``cortex index`` sends it).
A session's entries name it short and only when the session entry above names another
(``named_sessions``): Cortex's own, as the session entries are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

import msgspec

from schemas.docs import ThreadsDoc
from workers.render import as_utc, local_minutes, one_line

TimelineKind = Literal["session_start", "session_end", "compaction", "thread_opened", "thread_closed", "note"]

TIMELINE_LABELS: dict[TimelineKind, str] = {
    "session_start": "Session started",
    "session_end": "Session ended",
    "compaction": "Compaction",
    "thread_opened": "Thread opened",
    "thread_closed": "Thread closed",
    "note": "Daily note",
}
DAILY_NOTE = re.compile(r"(?:^|/)(\d{4}-\d{2}-\d{2})\.md$")
_DATE_HEADING = re.compile(r"^\d{4}-\d{2}-\d{2}\b")


def is_daily_note(path: str) -> bool:
    """A section of a daily note file (``memory/2026-02-17.md``, any directory)."""
    return DAILY_NOTE.search(path) is not None


def note_text(headings: Iterable[str], content: str) -> str:
    """What a daily note's section says in a timeline: its heading path without date
    headings ("Standup › Auth migration"), or its first line when it has none."""
    path = [h.strip() for h in headings if h.strip() and not _DATE_HEADING.match(h.strip())]
    if path:
        return " › ".join(path)
    return next((line.strip() for line in content.splitlines() if line.strip()), "")


class TimelineEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One moment of the narrative's timeline; ``text`` may be empty. A session start with
    ``until`` is the whole session, start to end, on one line (``with_spans``)."""

    ts: datetime
    kind: TimelineKind
    text: str = ""
    until: datetime | None = None


def timeline_from_threads(threads: ThreadsDoc | None) -> list[TimelineEntry]:
    """Openings (``created``) and closings (``last_activity`` of a closed thread).

    A closed thread's last activity is its closing: closing is the last thing that
    happens to it.
    """
    if threads is None:
        return []
    entries = [TimelineEntry(ts=t.created, kind="thread_opened", text=t.title) for t in threads.threads]
    entries.extend(
        TimelineEntry(ts=t.last_activity, kind="thread_closed", text=t.title)
        for t in threads.threads
        if t.status == "closed"
    )
    return entries


def window(entries: Iterable[TimelineEntry], now: datetime, hours: int) -> list[TimelineEntry]:
    """Entries in ``(now - hours, now]``, oldest first (``_ORDER`` at the same moment), exact
    duplicates dropped.

    Entries after ``now`` belong to a later document; sorting on every field makes the
    order independent of how the caller gathered them.
    """
    end = as_utc(now)
    start = end - timedelta(hours=hours)
    kept = {e for e in entries if start <= as_utc(e.ts) <= end}
    return sorted(kept, key=lambda e: (as_utc(e.ts), _ORDER[e.kind], e.text))


# Of entries at the same moment, the order things happen in: a session starts before a thread
# opens in it, a thread opens before it closes ("I sent Maria the API spec, that's done." opens
# and closes one; sorted by name, "Thread closed" came before "Thread opened"), and a session
# ends last.
_ORDER: dict[TimelineKind, int] = {"session_start": 0, "thread_opened": 1, "note": 2, "compaction": 3,
                                   "thread_closed": 4, "session_end": 5}


_OPENCLAW_KEY = re.compile(r"^agent:[^:]+:(.+)$")
_SUBAGENT = re.compile(r"^subagent:([0-9A-Za-z]{8})[0-9A-Za-z-]*$")
_SESSION_KINDS: frozenset[TimelineKind] = frozenset({"session_start", "session_end"})


def session_name(session: str) -> str:
    """A session as a timeline names it: an OpenClaw session key without its ``agent:<id>:``
    ("agent:forge:main" -> "main"), a sub-agent's by the first 8 characters of its id
    ("agent:forge:subagent:3c1d9e0a-5b7f-…" -> "sub-agent 3c1d9e0a"); any other as it is."""
    key = one_line(session)
    openclaw = _OPENCLAW_KEY.match(key)
    if openclaw is None:
        return key
    rest = openclaw.group(1)
    subagent = _SUBAGENT.match(rest)
    return f"sub-agent {subagent.group(1)}" if subagent is not None else rest


def named_sessions(entries: Iterable[TimelineEntry]) -> list[TimelineEntry]:
    """``entries`` with each session start or end naming its session (``session_name``) only
    when the session entry before it named another: one chat's key on every line
    ("Session started: agent:forge:main", "Session ended: agent:forge:main", …) told the
    reader nothing after the first, and a 50-character sub-agent key nothing at all. Who an
    unnamed one is stays plain: the last session named above it."""
    named: list[TimelineEntry] = []
    last: str | None = None
    for entry in entries:
        if entry.kind not in _SESSION_KINDS:
            named.append(entry)
            continue
        name = session_name(entry.text)
        named.append(msgspec.structs.replace(entry, text="" if name == last else name))
        last = name
    return named


def with_spans(entries: Sequence[TimelineEntry]) -> list[TimelineEntry]:
    """``entries`` (in order) with a session's start and end on one entry when the next
    session entry after the start is that session's end: the timeline said "09:00 Session
    started: s-d03-a" and "09:40 Session ended" on two of every three lines of a quiet day.
    What happened in the session (a thread opened, a compaction) follows its line. A session
    with another's start or end between its own (a sub-agent's inside the main chat's) keeps
    two lines, so no span hides another session."""
    spans: list[TimelineEntry] = []
    ended: set[int] = set()  # indexes of ends folded into a span
    for i, entry in enumerate(entries):
        if i in ended:
            continue
        if entry.kind == "session_start":
            after = next((j for j in range(i + 1, len(entries)) if entries[j].kind in _SESSION_KINDS), None)
            if after is not None and entries[after].kind == "session_end" and entries[after].text == entry.text:
                ended.add(after)
                spans.append(msgspec.structs.replace(entry, until=entries[after].ts))
                continue
        spans.append(entry)
    return spans


def timeline_line(entry: TimelineEntry, now: datetime, tz: ZoneInfo) -> str:
    """``10:30 Thread opened: auth migration``, in local time.

    An entry from an earlier local day carries its date, so yesterday's 23:00 does not
    read as later than today's 09:00.
    """
    label = TIMELINE_LABELS[entry.kind]
    text = one_line(entry.text)
    when = stamp(entry.ts, now, tz)
    if entry.until is not None:  # a whole session: "09:00–09:40 Session: s-d03-a"
        label = "Session"
        start, end = as_utc(entry.ts).astimezone(tz), as_utc(entry.until).astimezone(tz)
        until = end.strftime("%H:%M") if end.date() == start.date() else stamp(entry.until, now, tz)
        same_minute = start.replace(second=0, microsecond=0) == end.replace(second=0, microsecond=0)
        when = when if same_minute else f"{when}–{until}"
    return f"{when} {label}: {text}" if text else f"{when} {label}"


def stamp(moment: datetime, now: datetime, tz: ZoneInfo) -> str:
    """``10:30`` in local time, ``2026-03-15 15:05`` on an earlier local day than ``now``'s."""
    local = as_utc(moment).astimezone(tz)
    same_day = local.date() == as_utc(now).astimezone(tz).date()
    return local.strftime("%H:%M") if same_day else local_minutes(moment, tz)
