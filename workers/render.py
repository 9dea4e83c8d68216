"""Markdown vocabulary shared by the composed documents (snapshot, narrative, boot).

The emoji tables, orderings and timestamp formats come from the plugin design (section 7,
``MOOD_EMOJI`` / ``PRIORITY_EMOJI`` / ``PRIORITY_ORDER``) so every document speaks the same
language. Everything here is pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from schemas.docs import Thread
from schemas.types import Mood, Priority

MOOD_EMOJI: dict[Mood, str] = {
    "neutral": "",
    "frustrated": "😤",
    "excited": "🔥",
    "tense": "⚡",
    "productive": "🔧",
    "exploratory": "🔬",
}

PRIORITY_EMOJI: dict[Priority, str] = {
    "critical": "🔴",
    "high": "🟠",
    "medium": "🟡",
    "low": "🔵",
}

PRIORITY_ORDER: dict[Priority, int] = {"critical": 0, "high": 1, "medium": 2, "low": 3}

# The design's fallback for a level outside the table (a newer producer, say).
UNKNOWN_EMOJI = "⚪"


def as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive value is taken as UTC (documents store UTC offsets)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def iso_seconds(moment: datetime) -> str:
    """``2026-02-17T10:30:00Z``: the reference's ``toISOString().slice(0, 19) + "Z"``."""
    return as_utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_minutes(moment: datetime) -> str:
    """``2026-02-17T10:30``: the reference's ``last_activity.slice(0, 16)``."""
    return as_utc(moment).strftime("%Y-%m-%dT%H:%M")


def one_line(text: str) -> str:
    """Collapse every whitespace run to one space.

    Conversation text inside a list item must not start a new line: a message holding
    ``\\n# Heading`` would otherwise forge structure in the document.
    """
    return " ".join(text.split())


def cut(text: str, limit: int) -> str:
    """The first ``limit`` characters (the reference's ``slice(0, limit)``)."""
    return text[: max(limit, 0)]


_CLAUSE_TAIL = " \t,;:-–—(/"


def clip_words(text: str, limit: int, ellipsis: str = "…") -> str:
    """``text`` within ``limit`` characters; when cut, cut between words and marked with
    ``ellipsis`` (never "…auf flaky net"). A single word longer than half the limit, or
    text without spaces (CJK), is cut where the limit falls."""
    if len(text) <= limit:
        return text
    room = max(limit - len(ellipsis), 0)
    head = text[:room]
    if room and head[-1:].isalnum() and text[room : room + 1].isalnum():
        space = max(head.rfind(" "), head.rfind("\n"))
        if space > room // 2:
            head = head[:space]
    return head.rstrip(_CLAUSE_TAIL) + ellipsis


_MIN_PARTIAL_LINE = 24  # a cut line shorter than this says nothing: leave it out


def clip_lines(text: str, limit: int, ellipsis: str = "…") -> str:
    """``text`` within ``limit`` characters, cut at a line end; a line that does not fit
    whole is cut between words with ``ellipsis`` when enough of it fits to say something.
    (The reference cut sections at a character count, mid-sentence, with no mark.)"""
    if len(text) <= limit:
        return text
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        cost = len(line) + (1 if kept else 0)
        if used + cost <= limit:
            kept.append(line)
            used += cost
            continue
        room = limit - used - (1 if kept else 0)
        if room >= _MIN_PARTIAL_LINE and line.strip():
            kept.append(clip_words(line, room, ellipsis))
        break
    return "\n".join(kept).rstrip()


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    word = singular if count == 1 else (plural_form or singular + "s")
    return f"{count} {word}"


def ranked_open_threads(threads: Iterable[Thread]) -> list[Thread]:
    """Open threads by priority, then most recent activity; the id breaks ties.

    The id tie-break keeps the order identical on every replay even when two threads
    share a priority and a timestamp.
    """
    open_threads = [t for t in threads if t.status == "open"]
    by_id = sorted(open_threads, key=lambda t: t.id)
    by_recency = sorted(by_id, key=lambda t: as_utc(t.last_activity), reverse=True)
    return sorted(by_recency, key=lambda t: PRIORITY_ORDER.get(t.priority, len(PRIORITY_ORDER)))


def join_names(names: Sequence[str]) -> str:
    """Sorted, de-duplicated, comma-separated: the same set always reads the same."""
    return ", ".join(sorted(set(names)))
