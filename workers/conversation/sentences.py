"""Sentences of a message, and text cut the way a person cuts it.

Extracted text (a decision, a reason, a promise) is a sentence or a clause of one, never a
window of characters: the reference's windows ("50 before to 100 after") started and
stopped inside words ("…auf flaky net", "Der Rollba"). A sentence ends at ``.``, ``!``,
``?`` or ``…`` followed by a space or the end, at ``。！？`` or at a line break, so "3.2",
"5,000" and "v4.2" stay inside their sentence — and so does the dot of a day or an ordinal
("am 20. März", "der 3. versuch").
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Final

from workers.render import clip_words

# "am 20. März", "der 3. Versuch ist gescheitert": the dot of a day or an ordinal (one or two
# digits, then a month or a word in lower case) ends no sentence; it cut "Wir haben
# beschlossen, den Release auf den 20. März zu verschieben, weil …" to "… auf den 20".
_MONTHS: Final = (r"(?:jan(?:uar|uary)?|feb(?:ruar|ruary)?|m(?:ärz|aerz|arch)|apr(?:il)?|mai|jun[ei]?|jul[iy]?"
                  r"|aug(?:ust)?|sep(?:t|tember)?|o[ck]t(?:ober)?|nov(?:ember)?|de[cz](?:ember)?)\b")
_END: Final = re.compile(r"[.!?…]+[\"'”’»)\]]*(?=\s|$)|[。！？]+|\n")
_ORDINAL: Final = re.compile(rf"(?<!\d)\d{{1,2}}\.\s+(?:(?i:{_MONTHS})|[a-zäöüß])")
_ORDINAL_DOT: Final = re.compile(rf"(?<!\d)\d{{1,2}}\.(?=\s+(?:(?i:{_MONTHS})|[a-zäöüß]))")


class _EndScan:
    """``_END``'s matches, found faster: the same pattern led by one character class of its three
    alternatives' first characters, each alternative then checking (a look-behind) that the
    character it begins with is its own. ``re`` skips ahead to a position only by a leading class
    (or literal), so ``_END`` — three alternatives — was tried at every position of a text
    (~60 k instructions a bench message, ~15 k led: eighteenth round). The same spans for every
    text (the three first-character sets are disjoint, so the one that begins a match is the
    alternative ``_END`` takes). An object, not a module-level table: the pattern fingerprint
    (``shared.fingerprint``) reads ``_END``, which says what an end is."""

    __slots__ = ("finditer",)

    def __init__(self) -> None:
        self.finditer = re.compile(r"[.!?…。！？\n](?:(?<=[.!?…])[.!?…]*[\"'”’»)\]]*(?=\s|$)"
                                   r"|(?<=[。！？])[。！？]*|(?<=\n))").finditer


_END_SCAN: Final = _EndScan()


# In every "20. März": a scan that skips ahead by its first character (``_ORDINAL``'s look-behind
# is tried at every position of a text), ~3× cheaper, before the exact one.
_DIGIT_DOT: Final = re.compile(r"\d\.\s")
_last_ends: list[tuple[str, list[re.Match[str]]]] = []  # at most one: (text, its ends)


def _ends(text: str) -> list[re.Match[str]]:
    """The sentence ends of ``text``: ``_END``'s matches but for the dot of "20. März". The
    last text's are kept (compared by identity, as ``patterns.prepare_text`` keeps its text):
    a core asks about the sentences of one message at several stages (decisions, arrivals,
    the closing sentence, moods, claims). Never change the list returned."""
    if _last_ends and _last_ends[0][0] is text:
        return _last_ends[0][1]
    ends = _scan_ends(text)
    _last_ends[:] = [(text, ends)]
    return ends


def _scan_ends(text: str) -> list[re.Match[str]]:
    if _DIGIT_DOT.search(text) is None or _ORDINAL.search(text) is None:  # most texts have no such dot
        return list(_END_SCAN.finditer(text))
    days = {found.end() - 1 for found in _ORDINAL_DOT.finditer(text)}
    return [found for found in _END_SCAN.finditer(text) if found.start() not in days]


_STRIP: Final = " \t\r\n"
TRAILING: Final = " \t\r\n.,;:!。！、，；："
LEADING: Final = " \t\r\n,;:、，；：-–—"
ELLIPSIS: Final = "…"


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in _STRIP:
        start += 1
    while end > start and text[end - 1] in _STRIP:
        end -= 1
    return start, end


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every sentence of ``text``, its final punctuation included."""
    spans: list[tuple[int, int]] = []
    start = 0
    for found in _ends(text):
        span = _trimmed(text, start, found.end())
        if span[0] < span[1]:
            spans.append(span)
        start = found.end()
    span = _trimmed(text, start, len(text))
    if span[0] < span[1]:
        spans.append(span)
    return spans


def sentence_ends(text: str) -> list[int]:
    """Where the sentences of ``text`` end (after their punctuation): one pass, in C."""
    return [found.end() for found in _ends(text)]


def sentence_around(text: str, ends: list[int], pos: int) -> tuple[int, int]:
    """(start, end) of the sentence holding ``pos`` (``ends`` from ``sentence_ends``)."""
    i = bisect_right(ends, pos)
    return _trimmed(text, ends[i - 1] if i else 0, ends[i] if i < len(ends) else len(text))


def tidy(text: str) -> str:
    """A clause as a person writes it down: no dangling punctuation at either end."""
    return text.strip(LEADING).rstrip(TRAILING)


def clip_around(text: str, pos: int, limit: int) -> str:
    """``text`` within ``limit`` characters, keeping the part from just before ``pos``
    (where the text says what matters) and marking each cut end with "…"."""
    if len(text) <= limit:
        return text
    if pos <= limit // 2:
        return clip_words(text, limit)
    start = max(0, pos - limit // 4)
    space = text.rfind(" ", 0, start + 1)
    if space > 0 and start - space < limit // 4:
        start = space + 1
    return ELLIPSIS + clip_words(text[start:], limit - len(ELLIPSIS))


_CLAUSE_BREAKS: Final = ".,;:!?—–\n。，！？；："
_CLAUSE_REACH: Final = 80
# the last clause break before a position, in one match (the ``max`` of each break's ``rfind``)
_LAST_CLAUSE_BREAK: Final = re.compile(f"(?s:.*)[{re.escape(_CLAUSE_BREAKS)}]")


def clause_before(lowered: str, pos: int) -> str:
    """The words of ``pos``'s clause before it ("who knows if " of "who knows if I'll ever …")."""
    lo = max(0, pos - _CLAUSE_REACH)
    found = _LAST_CLAUSE_BREAK.match(lowered, lo, pos)
    return lowered[found.end() if found is not None else lo : pos]
