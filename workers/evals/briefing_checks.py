"""Reader-visible defects of briefing text, as pure checks (``cortex eval briefing``).

Each check reads text the way the agent and its person read it, and knows nothing of how
the text was made: it has its own list of reason words and judges a fragment only by where
it sits in the conversation it came from.

* ``fragment_defect``: a fragment quoted from a message (a decision, a reason, a promise,
  a snapshot line) that stops inside a word, or inside a sentence without "…", or starts
  inside one. A cut before a reason word ("…, because …", "…, weil …") or at a clause
  mark (",", ";", ":") is a clean boundary: the reason is shown on its own line.
* ``repeated_why``: a "why" that says the decision again instead of giving a reason.
* ``near_duplicate``: two texts that are mostly the same words (one decision shown twice).
* ``boilerplate_summary``: a thread summary that says nothing about the thread.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

ELLIPSES: Final = ("…", "...")
_SENTENCE_END: Final = ".!?。！？…"
_CLAUSE_MARKS: Final = ",;:，、；：—–-()（）\"'«»“”„[]"
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")

# Words at which a reason or a consequence clause starts (before) or ends (after): a
# decision cut there, with the reason shown apart, is cut at a clean boundary.
CLAUSE_WORDS: Final = (
    "because", "since", "as", "so that", "so", "therefore", "given that", "due to", "and",
    "weil", "da", "denn", "damit", "deshalb", "daher", "also", "darum", "und",
    "porque", "ya que", "así que", "por eso", "pues", "y",
    "parce que", "car", "puisque", "donc", "et",
    "perché", "poiché", "quindi", "e",
    "pois", "então", "por isso",
    "потому что", "так как", "поэтому", "и",
    "因为", "由于", "所以", "ので", "から", "ため", "때문에",
)
_LEADING_WORD: Final = re.compile(r"[\w'’]+", re.UNICODE)

# Words at which a date starts: a promise's task cut before its due phrase is cut cleanly
# (the briefing shows the date apart: "Due 2026-03-03: send the report").
DATE_WORDS: Final = (
    "today", "tonight", "tomorrow", "by", "on", "this", "next", "in", "end of", "eod",
    "heute", "morgen", "übermorgen", "bis", "am", "nächste", "diese",
    "hoy", "mañana", "pasado mañana", "esta", "la próxima", "el",
    "aujourd", "demain", "après-demain", "ce soir", "cette", "la semaine",
    "oggi", "domani", "dopodomani", "stasera", "questa", "la prossima",
    "hoje", "amanhã", "depois de amanhã", "próxima",
    "сегодня", "завтра", "послезавтра", "на этой", "на следующей", "в",
    "今天", "明天", "后天", "今晚", "明日", "今日", "今夜", "내일", "오늘", "모레",
)

BOILERPLATE: Final = ("topic detected from",)


def normalize(text: str) -> str:
    return " ".join(text.split())


def strip_ellipses(text: str) -> tuple[str, bool, bool]:
    """The text without leading/trailing ellipses, and whether each end had one."""
    core = text.strip()
    lead = core.startswith(ELLIPSES)
    trail = core.endswith(ELLIPSES)
    for mark in ELLIPSES:
        if core.startswith(mark):
            core = core[len(mark):]
        if core.endswith(mark):
            core = core[: -len(mark)]
    return core.strip(), lead, trail


def _word_char(ch: str) -> bool:
    return ch.isalnum() and not _CJK.match(ch)


def _starts_with_clause_word(rest: str, words: tuple[str, ...] = CLAUSE_WORDS) -> bool:
    lowered = rest.lower()
    for word in words:
        if lowered.startswith(word):
            after = lowered[len(word): len(word) + 1]
            if not after or not _word_char(after) or _CJK.match(word):
                return True
    return False


def _ends_with_clause_word(before: str) -> bool:
    lowered = before.lower()
    for word in CLAUSE_WORDS:
        if lowered.endswith(word):
            ahead = lowered[-len(word) - 1: -len(word)] if len(lowered) > len(word) else ""
            if not ahead or not _word_char(ahead) or _CJK.match(word):
                return True
    return False


def _clean_end(source: str, end: int, core: str, before_date: bool) -> bool:
    if core[-1] in _SENTENCE_END or core[-1] in _CLAUSE_MARKS:
        return True
    rest = source[end:].lstrip()
    if not rest or rest[0] in _SENTENCE_END or rest[0] in _CLAUSE_MARKS or _starts_with_clause_word(rest):
        return True
    return before_date and _starts_with_clause_word(rest, DATE_WORDS)


def _clean_start(source: str, start: int) -> bool:
    before = source[:start].rstrip()
    return not before or before[-1] in _SENTENCE_END or before[-1] in _CLAUSE_MARKS or _ends_with_clause_word(before)


def locations(core: str, sources: Iterable[str]) -> list[tuple[str, int]]:
    """Every place ``core`` is quoted: (source, index); the first letter's case may differ."""
    variants = {core, core[:1].lower() + core[1:], core[:1].upper() + core[1:]}
    found = []
    for source in sources:
        for variant in variants:
            at = source.find(variant)
            while at >= 0:
                found.append((source, at))
                at = source.find(variant, at + 1)
    return found


def _defect_at(source: str, start: int, core: str, lead: bool, trail: bool, check_start: bool,
               before_date: bool) -> str | None:
    end = start + len(core)
    inside_end = end < len(source) and _word_char(source[end - 1]) and _word_char(source[end])
    inside_start = check_start and start > 0 and _word_char(source[start - 1]) and _word_char(source[start])
    if inside_end or inside_start:
        return "cut_mid_word"
    if end < len(source) and not trail and not _clean_end(source, end, core, before_date):
        return "cut_without_ellipsis"
    if check_start and start > 0 and not lead and not _clean_start(source, start):
        return "cut_without_ellipsis"
    return None


def fragment_defect(fragment: str, sources: Sequence[str], check_start: bool = True,
                    before_date: bool = False) -> str | None:
    """``cut_mid_word`` / ``cut_without_ellipsis`` for a fragment of one of ``sources``
    (whitespace-normalised), or None when it is clean or not a verbatim quote. A text said
    twice is judged where it sits cleanly, if it does anywhere. With ``before_date`` (a
    promise's task) a cut right before a date is clean."""
    core, lead, trail = strip_ellipses(normalize(fragment))
    if not core:
        return None
    found = locations(core, [normalize(s) for s in sources])
    defects = [_defect_at(source, at, core, lead, trail, check_start, before_date) for source, at in found]
    if not defects or None in defects:
        return None
    return "cut_mid_word" if "cut_mid_word" in defects else defects[0]


_WORD: Final = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _bare(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def repeated_why(what: str, why: str) -> bool:
    """The why restates the decision: equal, one inside the other, or the decision's
    words almost all found in it again."""
    if not why.strip():
        return False
    a, b = _bare(strip_ellipses(what)[0]), _bare(strip_ellipses(why)[0])
    if not a or not b:
        return False
    if a == b or a in b or b in a:
        return True
    what_words = words(what)
    return bool(what_words) and len(what_words & words(why)) / len(what_words) >= 0.8


def near_duplicate(a: str, b: str) -> bool:
    """Two texts that are mostly the same words (or one inside the other)."""
    x, y = _bare(strip_ellipses(a)[0]), _bare(strip_ellipses(b)[0])
    if not x or not y:
        return False
    if x in y or y in x:
        return True
    wa, wb = words(a), words(b)
    return len(wa & wb) / min(len(wa), len(wb)) >= 0.6


def boilerplate_summary(summary: str, title: str) -> bool:
    text = normalize(summary).lower()
    return not text or text == normalize(title).lower() or text.startswith(BOILERPLATE)
