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
* ``stub_cut``: a cut that leaves fewer than three words of its clause ("Decided: For…").
* ``briefing_defects``: the assembled BOOTSTRAP as a whole — one fact said twice (in two
  sections or in one), a stub, an empty heading, a miscount, a pasted heading, two clocks.
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
    # the months and weekends the packs read since issue 37's sixth round ("later this month")
    "later", "dieses", "diesen", "nächsten", "nächstes", "ende", "fin de", "este", "el próximo", "el mes",
    "ce week-end", "ce mois", "le mois", "le week-end", "la fin", "il prossimo", "il mese", "fine mese", "neste",
    "no próximo", "o próximo", "mês", "o fim", "fim do", "на этих", "на следующих", "к концу", "今月", "来月",
    "今週末", "来週末", "이번", "다음", "本月", "这个月", "下个月", "本周末", "这周末", "下周末",
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


# --- the BOOTSTRAP as a whole --------------------------------------------------------------
#
# What a reader meets in the assembled briefing beyond one fragment: the same fact in two
# places, a cut that leaves a stub, a heading over nothing, a count that miscounts, a
# heading of a document pasted inside another.

STUB_WORDS: Final = 3  # a cut clause with fewer words than this says nothing ("Decided: For…")
REPEAT_WORDS: Final = 5  # shorter clauses (titles, "Priority: high") are references, not facts
REPEAT_CJK_CHARS: Final = 5
_OWN_HEADING: Final = re.compile(r"^## [^\w\s]")  # the briefing's own: "## 🧵 Active Threads"
_SNAPSHOT: Final = "Snapshot"
_TIMELINE_ITEM: Final = re.compile(r"^- (?:\d{4}-\d{2}-\d{2} )?\d{2}:\d{2} ")
_BLOCK_LABEL: Final = re.compile(r"^\*\*[^*]+:\*\*$")  # the narrative's "**Decisions:**"
TITLE_LINE: Final = re.compile(r"^### \S+ (.*?)(?: \[\w+\])?$")
_TIMELINE_TITLE: Final = re.compile(r"Thread (?:opened|closed): (.+)$")
_CLAUSE_SPLIT: Final = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\s+—\s+|:\s+|;\s+|⏳|\*\*|\s\|\s")
_CLAUSE_START: Final = re.compile(r"(?:[.!?。！？;:](?:\s|$))|\s—\s|\*\*|\]\s|^\s*-\s")
_CUT: Final = re.compile(r"(?<=[^\W_])…")  # a cut: "…" right after a word (not "_… 3 more")
# when a promise was made or is due, as a commitment line says it ("(Caroline; promised
# 2023-07-03, 112 days ago)"): a reference to a date, as a title is to a thread, not a fact
_WHEN_PROMISED: Final = re.compile(r"^(?:promised|due) (?:today|\d{4}-\d{2}-\d{2})")
_MISCOUNT: Final = (
    re.compile(r"\b\d+ decisions? pending\b"),  # nothing counts pending decisions: the count was of waits
    re.compile(r"(?<![\d.,])\b1 (?:[a-z]+ )?(?:threads|decisions|commitments|messages|entries|memories|facts"
               r"|channels)\b"),
)


def _cjk_chars(text: str) -> int:
    return len(_CJK.findall(text))


def _size(text: str) -> int:
    """Words, or for CJK text (no spaces) characters over two."""
    cjk = _cjk_chars(text)
    return cjk // 2 + len(_WORD.findall(_CJK.sub(" ", text))) if cjk else len(_WORD.findall(text))


def stub_cut(text: str) -> bool:
    """A text cut with "…" where the cut clause kept fewer than ``STUB_WORDS`` words — "✅
    auth migration: The auth migration is done. Decided: For…" — a label counts for none."""
    for found in _CUT.finditer(text):
        head = text[: found.start()]
        starts = [m.end() for m in _CLAUSE_START.finditer(head)]
        tail = head[max(starts, default=0):]
        if _size(tail) < STUB_WORDS:
            return True
    return False


def briefing_sections(markdown: str) -> list[tuple[str, list[str]]]:
    """The briefing's sections in order: (heading, lines); the lines before the first
    heading of its own belong to ``""``. A heading inside a pasted document (the hot
    snapshot's ``## Last conversation…``) is a line of the section it sits in."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in markdown.splitlines():
        if _OWN_HEADING.match(line):
            out.append((line, []))
        elif line.strip() == "---":
            out.append(("---", []))
        else:
            out[-1][1].append(line)
    return out


def _titles(markdown: str) -> set[str]:
    titles = set()
    for line in markdown.splitlines():
        found = TITLE_LINE.match(line) or _TIMELINE_TITLE.search(line)
        if found:
            titles.add(_bare(found.group(1)))
    return titles


def _facts(lines: Sequence[str], titles: set[str]) -> list[tuple[str, str]]:
    """The clauses of a section long enough to be a fact: (key, clause)."""
    facts = []
    for line in lines:
        if line.startswith("#") or _TIMELINE_ITEM.match(line) or line.startswith(("Priority:", "_")):
            continue
        for clause in _CLAUSE_SPLIT.split(line):
            core = strip_ellipses(clause.strip(" -"))[0]
            key = _bare(core)
            long_enough = (_cjk_chars(core) >= REPEAT_CJK_CHARS if _CJK.search(core)
                           else len(key.split()) >= REPEAT_WORDS)
            if long_enough and key not in titles and not _WHEN_PROMISED.match(core):
                facts.append((key, core))
    return facts


def _same_fact(a: str, b: str) -> bool:
    if _CJK.search(a) or _CJK.search(b):
        return a in b or b in a
    return f" {a} " in f" {b} " or f" {b} " in f" {a} "


def repeated_facts(markdown: str) -> list[tuple[str, str]]:
    """``cross_section_repeat`` / ``repeat_in_section`` for every fact said again: a clause
    of five words or more (or a CJK clause of five characters) that another clause holds
    (cut versions included). The hot snapshot's messages are quotes of what was said and
    are not judged; headings, timeline entries and thread titles are references."""
    titles = _titles(markdown)
    seen: list[tuple[str, str]] = []  # (section, key)
    found = []
    for heading, lines in briefing_sections(markdown):
        if _SNAPSHOT in heading or heading in ("", "---"):
            continue
        for key, clause in _facts(lines, titles):
            earlier = [section for section, other in seen if _same_fact(key, other)]
            if heading in earlier:
                found.append(("repeat_in_section", clause))
            elif earlier:
                found.append(("cross_section_repeat", clause))
            seen.append((heading, key))
    return found


def _empty_headings(markdown: str) -> list[str]:
    empty = [h for h, lines in briefing_sections(markdown) if h not in ("", "---") and not any(x.strip()
                                                                                         for x in lines)]
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if _BLOCK_LABEL.match(line):
            block = []
            for nxt in lines[i + 1:]:
                if not nxt.strip() or _BLOCK_LABEL.match(nxt) or nxt.startswith("#"):
                    break
                block.append(nxt)
            if not block:
                empty.append(line)
    return empty


_LAST: Final = re.compile(r"^Priority: \w+ \| Last: (\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})")
_OPENED: Final = re.compile(r"^- (?:(\d{4}-\d{2}-\d{2}) )?(\d{2}:\d{2}) Thread opened: (.+)$")
_NARRATIVE_DATE: Final = re.compile(r"^\*\w+, (\d{2})\. (\w+) (\d{4}) — Narrative\*$")
_MONTHS: Final = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                  "October", "November", "December")


def _narrative_day(lines: Sequence[str]) -> str:
    for line in lines:
        found = _NARRATIVE_DATE.match(line)
        if found and found.group(2) in _MONTHS:
            return f"{found.group(3)}-{_MONTHS.index(found.group(2)) + 1:02d}-{found.group(1)}"
    return ""


def clock_contradictions(markdown: str) -> list[str]:
    """Threads whose "Last:" activity comes before their opening in the timeline: two
    clocks (UTC in one section, local time in another) read as one."""
    lines = markdown.splitlines()
    day = _narrative_day(lines)
    opened = {}
    for line in lines:
        found = _OPENED.match(line)
        if found and (found.group(1) or day):
            opened[normalize(found.group(3))] = f"{found.group(1) or day} {found.group(2)}"
    found_titles = []
    title = ""
    for line in lines:
        heading = TITLE_LINE.match(line)
        if heading:
            title = normalize(heading.group(1))
        last = _LAST.match(line)
        if last and title in opened and f"{last.group(1)} {last.group(2)}" < opened[title]:
            found_titles.append(f"{title}: last {last.group(1)} {last.group(2)}, opened {opened[title]}")
    return found_titles


def briefing_defects(markdown: str) -> list[tuple[str, str]]:
    """Every defect of the assembled BOOTSTRAP as a whole: (defect, text).

    * ``cross_section_repeat`` / ``repeat_in_section``: one fact said twice
      (``repeated_facts``);
    * ``stub_cut``: a cut that leaves fewer than three words of its clause;
    * ``empty_section``: a heading (or a narrative block label) with nothing under it;
    * ``miscount``: a count that names something else ("2 decisions pending" counted waits)
      or says "1 … threads";
    * ``stray_heading``: a heading of a pasted document ("# Hot Snapshot", "## Last
      conversation…") inside the briefing, where it reads as one of the briefing's own;
    * ``clock_mismatch``: a thread last active before it opened (``clock_contradictions``).
    """
    found = repeated_facts(markdown)
    for i, line in enumerate(markdown.splitlines()):
        if stub_cut(line):
            found.append(("stub_cut", line.strip()))
        if any(p.search(line) for p in _MISCOUNT):
            found.append(("miscount", line.strip()))
        if (i and line.startswith("# ")) or (line.startswith("## ") and not _OWN_HEADING.match(line)):
            found.append(("stray_heading", line))
    found += [("empty_section", heading) for heading in _empty_headings(markdown)]
    found += [("clock_mismatch", text) for text in clock_contradictions(markdown)]
    return found
