"""Markdown vocabulary shared by the composed documents (snapshot, narrative, boot).

The emoji tables, orderings and timestamp formats come from the plugin design (section 7,
``MOOD_EMOJI`` / ``PRIORITY_EMOJI`` / ``PRIORITY_ORDER``) so every document speaks the same
language. Everything here is pure: no clock, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, tzinfo

from schemas.docs import Commitment, Entity, Operation, Thread
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
    if moment.tzinfo is UTC:  # as documents decode
        return moment
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def iso_seconds(moment: datetime) -> str:
    """``2026-02-17T10:30:00Z``: the reference's ``toISOString().slice(0, 19) + "Z"``."""
    return as_utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def local_minutes(moment: datetime, tz: tzinfo) -> str:
    """``2026-02-17 11:30``: the local time of ``moment`` in ``tz`` (CORTEX_TIMEZONE)."""
    return as_utc(moment).astimezone(tz).strftime("%Y-%m-%d %H:%M")


def days_before(moment: datetime, now: datetime, tz: tzinfo) -> tuple[date, int]:
    """``moment``'s local day in ``tz`` and how many local days before ``now``'s it is."""
    day = as_utc(moment).astimezone(tz).date()
    return day, (as_utc(now).astimezone(tz).date() - day).days


def day_and_age(day: date, days: int) -> str:
    """``2026-03-04, 4 days ago`` (``…, yesterday``) for an earlier day; ``today`` for today's."""
    if days <= 0:
        return "today"
    return f"{day.isoformat()}, {'yesterday' if days == 1 else f'{days} days ago'}"


def one_line(text: str) -> str:
    """Collapse every whitespace run to one space.

    Conversation text inside a list item must not start a new line: a message holding
    ``\\n# Heading`` would otherwise forge structure in the document.
    """
    return " ".join(text.split())


def cut(text: str, limit: int) -> str:
    """The first ``limit`` characters (the reference's ``slice(0, limit)``)."""
    return text[: max(limit, 0)]


CLAUSE_TAIL = " \t,;:-–—(/"  # what a cut text drops from its end before its "…"

# A cut sentence must keep this many words to say something; fewer, and the text ends with
# the sentence before it ("… key service." rather than "… key service. Decided: For…").
MIN_CUT_WORDS = 4
_SENTENCE_BREAK = re.compile(r"[.!?](?=\s)|[。！？]")
_LABEL = re.compile(r"^\s*\w+(?: \w+)?:\s")  # "Decided: ", "Waiting for: " name a clause, say nothing
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_WORDS = re.compile(r"\w+")


def _words_said(text: str) -> int:
    """Words of a clause without its label; CJK text (no spaces) counts two characters a word."""
    text = _LABEL.sub("", text, count=1)
    cjk = len(_CJK_CHAR.findall(text))
    return cjk // 2 + len(_WORDS.findall(_CJK_CHAR.sub(" ", text)))


def _drop_stub(head: str) -> str | None:
    """``head`` up to its last sentence end when the sentence cut after it keeps fewer than
    ``MIN_CUT_WORDS`` words; None when the cut sentence says enough (or is the only one)."""
    ends = [m.end() for m in _SENTENCE_BREAK.finditer(head)]
    if not ends or _words_said(head[ends[-1]:]) >= MIN_CUT_WORDS:
        return None
    return head[: ends[-1]].rstrip()


def fact_parts(text: str) -> list[str]:
    """The sentences of ``text`` that say something — lower-cased, whitespace collapsed,
    without a label ("Decided: ") or cut mark, of at least ``MIN_CUT_WORDS`` words — for
    telling whether another text says the same."""
    parts = []
    flat = one_line(text)
    starts = [0, *(m.end() for m in _SENTENCE_BREAK.finditer(flat))]
    for start, end in zip(starts, [*starts[1:], len(flat)], strict=True):
        part = _LABEL.sub("", flat[start:end], count=1).strip().removesuffix("…").rstrip(" .!?。！？").lower()
        if _words_said(part) >= MIN_CUT_WORDS:
            parts.append(part)
    return parts


def clip_words(text: str, limit: int, ellipsis: str = "…") -> str:
    """``text`` within ``limit`` characters; when cut, cut between words and marked with
    ``ellipsis`` (never "…auf flaky net"). A single word longer than half the limit, or
    text without spaces (CJK), is cut where the limit falls. A cut never leaves a stub: when
    fewer than ``MIN_CUT_WORDS`` words of the last sentence fit, the text ends with the
    sentence before it, whole and unmarked."""
    if len(text) <= limit:
        return text
    room = max(limit - len(ellipsis), 0)
    head = text[:room]
    if room and head[-1:].isalnum() and text[room : room + 1].isalnum():
        space = max(head.rfind(" "), head.rfind("\n"))
        if space > room // 2:
            head = head[:space]
    head = head.rstrip(CLAUSE_TAIL)
    whole = _drop_stub(head)
    return whole if whole else head + ellipsis


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


def decision_listed(decision: str, whats: Iterable[str]) -> bool:
    """Whether ``decision`` — a decision's what as a thread records it, maybe cut with "…" —
    is one of ``whats`` (the decisions a document lists, each already ``one_line``: they are
    made once per document and asked once per thread decision)."""
    core = one_line(decision).removesuffix("…").rstrip()
    return bool(core) and any(w.startswith(core) for w in whats)


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


def entity_names(entities: Iterable[Entity]) -> dict[str, str]:
    """Entity id -> the name a reader is shown (a fact's subject and object are entity ids).
    That is the entity's value, except for an organisation: its value drops the legal suffix
    so that "Acme GmbH" and "Acme" are one entity, and the reader is shown it as first written
    with the suffix ("Maria works at Acme Analytics GmbH", not "... Acme Analytics")."""
    return {e.id: _shown_name(e) for e in entities}


_VOWEL_SOUND = re.compile(r"(?i)[aeio]|u(?!ni|s[aeiu]|r[aeiou]|til|k)|h(?:our|onest|onou?r)")


def fact_sentence(subject: str, predicate: str, obj: str) -> str:
    """A fact as a reader says it: the predicate's hyphens as spaces ("works-at" → "Maria
    works at Acme"); "is a" as "is an" before a vowel ("Atlas is an agent": the reference's
    normal form drops the article said); a predicate starting with "'s" is said of
    something of the subject's ("'s-kids-love" → "Melanie's kids love dinosaurs")."""
    words = " ".join(predicate.replace("-", " ").split())
    if words == "is a" or words.endswith(" is a"):
        words = words + "n" if _VOWEL_SOUND.match(obj) else words
    if words.startswith("'s ") or words == "'s":
        return " ".join(f"{subject}{words} {obj}".split())
    return " ".join(f"{subject} {words} {obj}".split())


def _shown_name(entity: Entity) -> str:
    if entity.type == "organization":
        for mention in entity.mentions:
            written = mention.strip()
            if len(written) > len(entity.value) and written.startswith(entity.value):
                return written
    return entity.value


TOPIC_CHARS = 60


def commitment_task(c: Commitment) -> str:
    """What was promised, with the topic it was made in when the task does not name it:
    "den Fix einbauen (Onboarding-Flow)" (Cortex's own: the reference shows ``what`` alone).
    The briefing, ``cortex commitments`` and the search show it so."""
    what = one_line(c.what)
    topic = one_line(c.topic) if c.topic else ""
    if not topic or topic.casefold() in what.casefold():
        return what
    return f"{what} ({clip_words(topic, TOPIC_CHARS)})"


# An operation as every view tells it (the briefing, the status API, the CLI tables): the
# design's markers of what the agent must hear about.


def is_unread(op: Operation) -> bool:
    """A result the agent has not been shown (``[NEW RESULT]`` / ``[FAILED]``)."""
    return op.status != "pending" and not op.seen


def is_waiting(op: Operation) -> bool:
    """Still pending after its turn ended (``[PENDING]``); a call in a running turn is not."""
    return op.status == "pending" and not op.open


def marker(op: Operation) -> str:
    """The design's marker of an operation the agent must hear about (``[PENDING]``,
    ``[NEW RESULT]``, ``[FAILED]``), else its plain status."""
    if is_waiting(op):
        return "[PENDING]"
    if is_unread(op):
        return "[FAILED]" if op.status == "failed" else "[NEW RESULT]"
    return op.status
