"""The compiled pattern registry: one ``PatternSet`` per tuple of enabled languages.

``get_patterns(("en", "de"))`` merges the language packs in the given order (English and
German first when both are enabled, like the reference's "both") and caches the result,
so a worker compiles its patterns once. Unknown language codes are ignored, as in the
reference's registry; ``shared.config.parse_languages`` has already rejected them.

Matching runs on a ``MatchText``: the message and its lower-cased copy, made once per
message. Patterns that were case-insensitive in the reference are written in lower case
and search the lowered copy, which is cheaper than ``re.IGNORECASE`` on every pattern.
Both strings have the same length, so every span found in the copy addresses the original
and extracted text keeps its case.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain, islice
from operator import itemgetter
from typing import Final, NamedTuple

import ahocorasick

from schemas.types import Mood
from workers.conversation import triggers
from workers.conversation.languages import PACKS, UNIVERSAL_DUE, UNIVERSAL_MOOD, LanguagePack
from workers.conversation.triggers import any_literal, required_literals, split_lead, unwrapped

MAX_MATCHES_PER_FAMILY: Final = 50
"""A message yields at most this many signals of one kind. Real messages have a handful;
the cap keeps a hostile one (64 KiB of "decided decided …") from creating thousands of
signals that every later step would have to match against every thread."""

NEGATION_REACH: Final = 24
"""How far before a decision or closure word a negation still negates it (a few words)."""
CONDITION_REACH: Final = 80
"""How far before a closure or arrival word a condition word still makes it one (its clause)."""
_CLAUSE_BREAKS: Final = tuple(",;:.!?。，、！？；：\n")
_CONDITION_BREAKS: Final = (*_CLAUSE_BREAKS, "—", "–")  # "once it landed — the fix is done" closes
# the last break of a window, found in one match (``.*`` runs to the end and backs off to it): the
# ``max`` of the breaks' ``rfind`` asked 16 methods; this is one C call, ~0.7 against ~1.6 µs
_LAST_CLAUSE_BREAK: Final = re.compile(f"(?s:.*)[{re.escape(''.join(_CLAUSE_BREAKS))}]")
_LAST_CONDITION_BREAK: Final = re.compile(f"(?s:.*)[{re.escape(''.join(_CONDITION_BREAKS))}]")


def _last_break(breaks: re.Pattern[str], window: str) -> int:
    """Where the last of ``breaks``' characters stands in ``window``, -1 without one (the ``max``
    of their ``rfind``)."""
    found = breaks.match(window)
    return found.end() - 1 if found is not None else -1
MOOD_NEGATION_REACH: Final = 16
"""How far before a mood word its negation word is looked for (the word and the space after it)."""

MOOD_ORDER: Final[tuple[Mood, ...]] = ("frustrated", "excited", "tense", "productive", "exploratory")
"""Moods in the reference's order; on a tie of positions the earlier mood wins."""


class MatchText(NamedTuple):
    """A message and its lower-cased copy, index-aligned character by character."""

    original: str
    lowered: str


_new_tuple: Final = tuple.__new__


SCAN_HEAD_CHARS: Final = 6144
SCAN_TAIL_CHARS: Final = 2048
SCAN_GAP: Final = "\n\n"


def scan_view(text: str) -> str:
    """The part of a message the pattern cores read: all of it up to 8 K characters,
    else its first 6 K and last 2 K characters joined by a blank line.

    Pattern work is linear in the text, so without a bound a 64 KiB paste costs ~70×
    a normal message (issue 9 budgets 20×). Decisions, promises and topics in a long
    paste sit at its start or its end (the prose around a log or a diff); the middle
    is skipped. The blank line keeps words and sentences from joining across the cut.
    """
    if len(text) <= SCAN_HEAD_CHARS + len(SCAN_GAP) + SCAN_TAIL_CHARS:
        return text  # (so a view is its own view)
    return text[:SCAN_HEAD_CHARS] + SCAN_GAP + text[-SCAN_TAIL_CHARS:]


_last_prepared: list[tuple[str, MatchText]] = []  # at most one: (text, its MatchText)


def prepare_text(text: str) -> MatchText:
    """Lower-case the scanned part of ``text`` (``scan_view``) once, keeping every
    character at its index. The last result is kept: a worker's projections each prepare
    the same event's text (compared by identity, so the check costs nothing)."""
    if _last_prepared and _last_prepared[0][0] is text:
        return _last_prepared[0][1]
    prepared = _prepare(text)
    _last_prepared[:] = [(text, prepared)]
    return prepared


def _prepare(text: str) -> MatchText:
    text = scan_view(text)
    lowered = text.lower()
    if len(lowered) != len(text):
        # Only U+0130 (İ) lowers to two characters; keep such characters as they are
        # so spans stay aligned (this slow path never runs for ordinary text).
        lowered = "".join(ch if len(low := ch.lower()) != 1 else low for ch in text)
    return _new_tuple(MatchText, (text, lowered))  # (in C: the named tuple's ``__new__`` is a Python function)


SCAN_CHARS: Final = 4096


class LiteralScan:
    """Which trigger literals of a pattern set a text contains, all found in one pass.

    A message is asked about by a dozen families and their patterns (decisions, closures,
    moods, waits, topics …), each reading it for its own literals: a trie ``re`` search per
    family (1–4 µs each), ``in`` tests per pattern once its family passed (~1.5 µs a
    pattern). One Aho–Corasick automaton of every literal reports each occurrence of each
    literal in one pass in C (~2.6 µs a bench message for ~250 literals), so every family's
    and pattern's check is a set test — the same answers as the checks it replaces. The
    last two texts of each copy (lowered, original) are kept, compared by identity as
    ``prepare_text``'s is: a core asks of a sentence of the message (a reason marker's, a named
    thread's mood) between two families' questions about the message, and with one kept answer the
    message was scanned again after it (~0.4 scans a message in the threads core).

    A text longer than ``SCAN_CHARS`` keeps the checks the scan replaces: a paste dense in
    trigger words (64 KiB of "entschieden beschlossen …", read as its 8 K ``scan_view``)
    has thousands of occurrences to report, where a family's search stops at the first
    (issue 9's ≤ 20× a normal message)."""

    __slots__ = ("_automata", "_before", "_found")

    def __init__(self, original: Iterable[str], lowered: Iterable[str]) -> None:
        self._automata = (_automaton(original), _automaton(lowered))  # indexed by ``lowered``
        self._found: list[tuple[str, frozenset[str]] | None] = [None, None]
        self._before: list[tuple[str, frozenset[str]] | None] = [None, None]  # the answer before ``_found``'s

    @staticmethod
    def covers(subject: str) -> bool:
        """Whether ``subject`` is scanned (``found``), or checked family by family."""
        return len(subject) <= SCAN_CHARS

    def read(self, subject: str, lowered: bool) -> frozenset[str] | None:
        """``found`` of a text ``covers`` accepts, None of a longer one (checked family by family):
        the pre-checks ask this, the length test and the scan in one call (``covers`` asked apart
        cost a call for each pattern asked: ~0.7 % of the threads core's instructions, ~1.3 % of
        the decisions and commitments cores')."""
        if len(subject) > SCAN_CHARS:  # (not ``covers``)
            return None
        last = self._found[lowered]  # (``found``'s kept answer, read here: one call, not two)
        if last is not None and last[0] is subject:
            return last[1]
        return self.found(subject, lowered)

    def kept(self, subject: str, lowered: bool) -> frozenset[str] | None:
        """The literals ``subject`` contains when it is one of the last two texts of its copy
        ``found`` read (compared by identity), else None: a question that may be asked of other
        texts too (``PatternSet.is_high_impact``) reads the answer without making the scan forget
        the message's."""
        last = self._found[lowered]
        if last is not None and last[0] is subject:
            return last[1]
        before = self._before[lowered]
        return before[1] if before is not None and before[0] is subject else None

    def found(self, subject: str, lowered: bool) -> frozenset[str]:
        """The literals ``subject`` contains (a text ``covers`` accepts)."""
        last = self._found[lowered]
        if last is not None and last[0] is subject:
            return last[1]
        before = self._before[lowered]
        if before is not None and before[0] is subject:  # (the message, asked again after a sentence of it)
            self._found[lowered], self._before[lowered] = before, last
            return before[1]
        automaton = self._automata[lowered]
        # (each occurrence is (its end, the literal): the literals taken in C, not in a generator)
        found = frozenset() if automaton is None else frozenset(map(_LITERAL, automaton.iter(subject)))
        self._found[lowered], self._before[lowered] = (subject, found), last
        return found


_LITERAL: Final = itemgetter(1)
_NOTHING: Final[frozenset[str]] = frozenset()


def _automaton(literals: Iterable[str]) -> ahocorasick.Automaton | None:
    automaton = ahocorasick.Automaton()
    for literal in set(literals):
        automaton.add_word(literal, literal)
    if len(automaton) == 0:
        return None
    automaton.make_automaton()
    return automaton


@dataclass(frozen=True, slots=True)
class Pattern:
    """One compiled pattern, which copy of the text it searches, and its required literals.

    ``triggers`` (see ``triggers.required_literals``) are strings one of which every match
    contains: when none occurs, the regex is not run at all. ``None`` means always run.
    ``lead`` holds the source's leading zero-width assertions (``triggers.split_lead``:
    "not after a letter", a clause's start), checked where a match of the rest starts: the
    same matches, found ~5× faster. Search with ``find``/``finditer``, never ``regex`` alone.
    """

    regex: re.Pattern[str]
    lowered: bool
    triggers: tuple[str, ...] | None
    lead: re.Pattern[str] | None = None
    # the triggers spelled out ("let's do", "let’s do", "lets do" where ``triggers`` has "s do":
    # ``required_literals``' ``spelled_out``), as the scan reads them; a text too long to scan
    # keeps the few ``triggers`` (an ``in`` test each: more of them cost more on a long text, where
    # the scan's automaton costs the same for more). None: ``triggers``.
    scanned: tuple[str, ...] | None = None
    # the last subject asked about and the answer: a message is asked about by several stages
    # of a core (closures are looked for by the signals, the closing sentence, the corrections)
    _last: tuple[str, bool] | None = field(default=None, init=False, repr=False, compare=False)
    # the pattern set's scan of every trigger (``LiteralScan``), set by ``get_patterns``
    _scan: LiteralScan | None = field(default=None, init=False, repr=False, compare=False)
    # what the scan's answer is tested against (``scanned or triggers``, one set); None: no triggers
    _want: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_want", None if self.triggers is None else frozenset(self.scanned or self.triggers))

    @classmethod
    def compile(cls, source: str, lowered: bool, spelled_out: bool = True) -> Pattern:
        """(``spelled_out``: ``triggers.required_literals``'s.)"""
        lead, rest = split_lead(unwrapped(source))
        triggers = required_literals(source, spelled_out=False)
        scanned = required_literals(source, spelled_out=True) if spelled_out and triggers is not None else None
        return cls(compile_led(unwrapped(rest)), lowered, triggers, re.compile(lead) if lead is not None else None,
                   scanned)

    @property
    def scan_triggers(self) -> tuple[str, ...] | None:
        """The literals the scan looks for (``scanned``, else ``triggers``)."""
        return self.scanned if self.scanned is not None else self.triggers

    def subject(self, text: MatchText) -> str:
        return text.lowered if self.lowered else text.original

    def may_match(self, subject: str) -> bool:
        want, triggers = self._want, self.triggers
        if want is None or triggers is None:  # (both or neither)
            return True
        scan = self._scan
        found = scan.read(subject, self.lowered) if scan is not None else None
        if found is not None:
            return not found.isdisjoint(want)
        last = self._last
        if last is not None and last[0] is subject:
            return last[1]
        held = any(map(subject.__contains__, triggers))
        object.__setattr__(self, "_last", (subject, held))
        return held

    def find(self, subject: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """The first match in ``subject[pos:endpos]`` (as ``re.Pattern.search``), triggers not checked."""
        found = self.regex.search(subject, pos, endpos)
        lead = self.lead
        while found is not None and lead is not None and lead.match(subject, found.start(), endpos) is None:
            found = self.regex.search(subject, found.start() + 1, endpos)
        return found

    def find_all(self, subject: str) -> Iterator[re.Match[str]]:
        """Every match in ``subject``, left to right (as ``re.Pattern.finditer``), triggers not checked.
        (Without a lead, ``finditer``'s own iterator: no generator between it and the caller.)"""
        if self.lead is None:
            return self.regex.finditer(subject)
        return self._find_all_led(subject)

    def _find_all_led(self, subject: str) -> Iterator[re.Match[str]]:
        pos = 0
        while (found := self.find(subject, pos)) is not None:
            yield found
            pos = max(found.end(), found.start() + 1)

    def search(self, text: MatchText) -> re.Match[str] | None:
        subject = self.subject(text)
        return self.find(subject) if self.may_match(subject) else None

    def finditer(self, text: MatchText) -> Iterator[re.Match[str]]:
        subject = self.subject(text)
        return self.find_all(subject) if self.may_match(subject) else iter(())


@dataclass(frozen=True, slots=True)
class Family:
    """The patterns of one kind, with one combined pre-check of all their triggers.

    Most messages match no pattern of a kind; one pass over the family's triggers then
    rules out all of its regexes at once: all triggers of a copy of the text are one
    trie-shaped regex (``triggers.any_literal``), so the message is read once, not once
    per trigger (the mood family has ~50 of them).
    """

    patterns: tuple[Pattern, ...]
    lowered_ascii: tuple[str, ...]
    lowered_other: tuple[str, ...]
    original_ascii: tuple[str, ...]
    original_other: tuple[str, ...]
    always: bool  # some pattern has no triggers: never skip the family
    # all triggers of each copy as one regex (``triggers.any_literal``), made from the above
    lowered_any: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    original_any: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _last: tuple[str, str, bool] | None = field(default=None, init=False, repr=False, compare=False)
    _scan: LiteralScan | None = field(default=None, init=False, repr=False, compare=False)  # as ``Pattern``'s
    # the triggers of each copy, indexed by ``lowered`` (for the scan's set test)
    _triggers: tuple[frozenset[str], frozenset[str]] = field(init=False, repr=False, compare=False)
    # per pattern: (its copy is the lowered one, its ``_want``), for ``flags``
    _wants: tuple[tuple[bool, frozenset[str] | None], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_wants", tuple((p.lowered, p._want) for p in self.patterns))
        object.__setattr__(self, "_triggers", (
            frozenset(t for p in self.patterns if not p.lowered for t in p.scan_triggers or ()),
            frozenset(t for p in self.patterns if p.lowered for t in p.scan_triggers or ())))
        object.__setattr__(self, "lowered_any", any_literal((*self.lowered_ascii, *self.lowered_other)))
        object.__setattr__(self, "original_any", any_literal((*self.original_ascii, *self.original_other)))

    @classmethod
    def of(cls, patterns: Iterable[Pattern]) -> Family:
        members = tuple(patterns)
        lowered = _unique(t for p in members if p.lowered for t in p.triggers or ())
        original = _unique(t for p in members if not p.lowered for t in p.triggers or ())
        return cls(
            patterns=members,
            lowered_ascii=tuple(t for t in lowered if t.isascii()),
            lowered_other=tuple(t for t in lowered if not t.isascii()),
            original_ascii=tuple(t for t in original if t.isascii()),
            original_other=tuple(t for t in original if not t.isascii()),
            always=any(p.triggers is None for p in members),
        )

    def __iter__(self) -> Iterator[Pattern]:
        return iter(self.patterns)

    def __len__(self) -> int:
        return len(self.patterns)

    def flags(self, text: MatchText) -> list[bool]:
        """Per pattern, in order, whether it may match ``text`` (its ``may_match`` of its copy),
        answered in one go: a family's patterns were asked one call each (a close word is looked
        for by 16 patterns in English and German, ~0.3 µs a call), where the scan's answer is two
        set tests a pattern."""
        scan = self._scan
        if scan is None or not scan.covers(text.lowered):  # (both copies are one length)
            return [p.may_match(p.subject(text)) for p in self.patterns]
        triggers = self._triggers
        lowered = scan.found(text.lowered, True) if triggers[True] else _NOTHING
        original = scan.found(text.original, False) if triggers[False] else _NOTHING
        return [want is None or not (lowered if low else original).isdisjoint(want) for low, want in self._wants]

    def candidates(self, text: MatchText) -> list[Pattern]:
        """The patterns that may match ``text`` (``flags``), in order; none when the family's
        own pre-check says none does."""
        if not self.may_match(text):
            return []
        return [p for p, ok in zip(self.patterns, self.flags(text), strict=True) if ok]

    def may_match(self, text: MatchText) -> bool:
        """Whether a trigger of the family occurs in ``text``; the last text's answer is kept
        (a message is asked about by several stages of a core: the same string objects)."""
        if self.always:
            return True
        scan = self._scan
        # (a text the scan reads is never kept in ``_last``: the scan keeps its answer)
        if scan is not None:  # (both copies are one length: the scan reads both or neither)
            lowered_triggers, original_triggers = self._triggers[True], self._triggers[False]
            held = scan.read(text.lowered, True) if lowered_triggers else (
                _NOTHING if scan.covers(text.lowered) else None)
            if held is not None:
                return not held.isdisjoint(lowered_triggers) or (
                    bool(original_triggers) and not scan.found(text.original, False).isdisjoint(original_triggers))
        last = self._last
        if last is not None and last[0] is text.lowered and last[1] is text.original:
            return last[2]
        lowered, original = self.lowered_any, self.original_any
        found = (lowered is not None and lowered.search(text.lowered) is not None) or (
            original is not None and original.search(text.original) is not None)
        object.__setattr__(self, "_last", (text.lowered, text.original, found))
        return found


@dataclass(frozen=True, slots=True)
class AnyOf:
    """One pre-check for several families and patterns: whether any of them may match a text —
    the ``or`` of their ``may_match``, answered by the scan in one set test a copy (a core asks
    it first, and a message none of its families may match leaves after it). Made with
    ``any_of`` once the set's scan is given (``get_patterns``)."""

    parts: tuple[Family | Pattern, ...]
    always: bool  # a part with no triggers (every text may match it)
    # the parts' scanned triggers of each copy, indexed by ``lowered``
    triggers: tuple[frozenset[str], frozenset[str]]
    scan: LiteralScan | None

    def may_match(self, text: MatchText) -> bool:
        if self.always:
            return True
        scan = self.scan
        if scan is None or len(text.lowered) > SCAN_CHARS:  # (``LiteralScan.covers``; both copies one length)
            return any(p.may_match(text) if isinstance(p, Family) else p.may_match(p.subject(text))
                       for p in self.parts)
        lowered, original = self.triggers[True], self.triggers[False]
        return (bool(lowered) and not scan.found(text.lowered, True).isdisjoint(lowered)) or (
            bool(original) and not scan.found(text.original, False).isdisjoint(original))


def any_of(*parts: Family | Pattern | None) -> AnyOf:
    """``AnyOf`` the given families and patterns (None: a pattern no enabled language has)."""
    kept = tuple(p for p in parts if p is not None)
    always = any(p.always if isinstance(p, Family) else p._want is None for p in kept)
    lowered: set[str] = set()
    original: set[str] = set()
    for part in kept:
        if isinstance(part, Family):
            lowered |= part._triggers[True]
            original |= part._triggers[False]
        elif part._want is not None:
            (lowered if part.lowered else original).update(part._want)
    scans = {id(p._scan): p._scan for p in kept}
    # one scan for all (``_with_scan`` gives every part the same one, or none to any)
    scan = next(iter(scans.values())) if len(scans) == 1 else None
    return AnyOf(kept, always, (frozenset(original), frozenset(lowered)), scan)


@dataclass(frozen=True, slots=True)
class ReasonMarkers:
    """The enabled languages' reason words, each family one pattern on the lowered text."""

    reason: Pattern | None  # the reason follows the marker ("because …"); the why drops it
    reason_kept: Pattern | None  # likewise, but the why keeps the marker ("weil …")
    reason_before: Pattern | None  # the reason precedes it ("…ので")
    consequence: Pattern | None  # the reason precedes, the decision follows ("…, so …")


def compile_led(source: str, flags: int = 0) -> re.Pattern[str]:
    """``source`` compiled as ``triggers.led_by_class`` writes it: the same matches, spans and
    groups, but opening on its first characters, which ``re`` skips ahead by — a pattern that
    opens on an alternation of assertions, classes or nested groups (``\\b(?:not|never)…|n['’]t``)
    is tried at every position of a text. Every pattern of a ``PatternSet`` and of the signal
    patterns is compiled by this; the language packs keep their sources as written (the pattern
    fingerprint reads those)."""
    # through the module, not the name imported from it: a test compiles the sources as written by
    # replacing ``triggers.led_by_class``, which a mypyc-compiled caller of the imported name would not see
    return re.compile(triggers.led_by_class(source, flags), flags)


def _one_regex(sources: Iterable[str]) -> re.Pattern[str] | None:
    listed = list(sources)
    return compile_led("|".join(f"(?:{s})" for s in listed)) if listed else None


def _one_pattern(sources: Iterable[str], spelled_out: bool = True) -> Pattern | None:
    listed = list(sources)
    return Pattern.compile("|".join(f"(?:{s})" for s in listed), lowered=True,
                           spelled_out=spelled_out) if listed else None


def _reason_markers(packs: tuple[LanguagePack, ...]) -> ReasonMarkers:
    return ReasonMarkers(
        reason=_one_pattern(s for p in packs if not p.keeps_reason_marker for s in p.reason),
        reason_kept=_one_pattern(s for p in packs if p.keeps_reason_marker for s in p.reason),
        reason_before=_one_pattern(s for p in packs for s in p.reason_before),
        consequence=_one_pattern(s for p in packs for s in p.consequence),
    )


@dataclass(frozen=True, slots=True)
class PatternSet:
    """Every pattern family of the enabled languages, compiled and merged."""

    languages: tuple[str, ...]
    decision: Family
    close: Family
    wait: Family
    topic: Family  # group 1 of each pattern is the topic
    commitment: Family  # group 1, when a pattern has one, is the promise
    due: Family
    mood: Family  # one pattern per mood of MOOD_ORDER, all on the lowered text
    high_impact_keywords: tuple[str, ...]
    high_impact: re.Pattern[str] | None  # any keyword, on lowered text
    topic_blacklist: frozenset[str]
    noise_prefix: re.Pattern[str] | None  # on the lowered, stripped topic
    reasons: ReasonMarkers = ReasonMarkers(None, None, None, None)
    negation: re.Pattern[str] | None = None  # any language's negation, on lowered text
    condition: re.Pattern[str] | None = None  # any language's condition word, on lowered text
    agreement: frozenset[str] = frozenset()  # fixed commitment phrases that only agree
    aspiration: re.Pattern[str] | None = None  # a task that is a wish, on the lowered task
    # no promise after all (``LanguagePack.hedge`` …): on the lowered clause and task
    hedge: re.Pattern[str] | None = None
    idle: re.Pattern[str] | None = None  # on the lowered task, its lead words left out
    vague: re.Pattern[str] | None = None  # likewise, when the promise names no day
    task_lead: re.Pattern[str] | None = None
    proposal: Pattern | None = None  # a group: what a message proposes, on lowered text
    ratification: re.Pattern[str] | None = None  # fullmatch on a lowered first sentence
    assent: re.Pattern[str] | None = None  # match at a lowered message's start: a yes to a choice asked
    approval: re.Pattern[str] | None = None  # match at a lowered sentence's start: the idea judged good
    going_on: re.Pattern[str] | None = None  # match at a lowered proposal's start: no choice, only go on
    opinion: re.Pattern[str] | None = None  # the speaker's opinion put before a choice ("i think"), lowered
    request: Pattern | None = None  # a group: the task a message asks of the one addressed, lowered
    acceptance: re.Pattern[str] | None = None  # match at a lowered message's start: a first-person yes
    # a group: the thing a message asks the one addressed for ("can I get the recipe"), lowered
    object_request: Pattern | None = None
    referring: frozenset[str] = frozenset()  # pronouns a task names a thing said before by, lowered
    question_tag: re.Pattern[str] | None = None  # a sentence ending on an assent tag, lowered
    decision_tail: re.Pattern[str] | None = None  # fullmatch: a fragment going on with a decision, lowered
    # a named third person's promise (case-sensitive, original text) and a request to the agent
    delegated: Family = Family((), (), (), (), (), always=False)
    requested: Family = Family((), (), (), (), (), always=False)
    assigned: Family = Family((), (), (), (), (), always=False)  # group 1: a task given to the one addressed
    plan: Family = Family((), (), (), (), (), always=False)  # group 1: an arrangement, a promise with a day
    # a person's own step taken ("I just signed with …"), lowered: the decisions core's only
    step: Family = Family((), (), (), (), (), always=False)
    stopwords: frozenset[str] = frozenset()  # function words of every enabled language, lowered
    # what a topic nobody announced is not made of: the stopwords, common verbs and words of
    # praise (``LanguagePack.verbs``, ``praise``), lowered
    phrase_breaks: frozenset[str] = frozenset()
    mood_negation: re.Pattern[str] | None = None  # a negation word at the end, on lowered text
    # group 1: the words after the frame a sentence opens on ("Beim …", "For the …")
    frame: Family = Family((), (), (), (), (), always=False)
    # what was waited for is here ("the keys arrived"), on lowered text (``workers.threads.waits``)
    arrival: Family = Family((), (), (), (), (), always=False)
    # someone's own stake in a topic nobody announced (``LanguagePack.engaged``, ``owners``);
    # None and empty when no enabled language defines them: every such topic may open
    engaged: re.Pattern[str] | None = None
    owners: frozenset[str] = frozenset()
    # ``owners`` and the articles (``LanguagePack.articles``): a particular thing is said after one;
    # empty when no enabled language has articles (Russian alone, the CJK packs): then nothing is
    # counted and no thread is judged by it (``workers.threads.core._reference``)
    definite: frozenset[str] = frozenset()
    ongoing: re.Pattern[str] | None = None
    recap: re.Pattern[str] | None = None  # a decision recalled, on the lowered clause before its cue
    # the high-impact keywords as a set, for the scan's answer (``is_high_impact``); the scan
    # reads them too (``_with_scan``)
    _impact: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)
    _scan: LiteralScan | None = field(default=None, init=False, repr=False, compare=False)

    def closes(self, text: MatchText) -> bool:
        """Some close pattern matches ``text`` other than negated ("in review, not closed",
        "not done yet") or conditional ("once the login bug is fixed, we deploy"): something
        was closed (the patterns after the first that does are not read)."""
        lowered = text.lowered
        return any(self.says(lowered, m.start()) for p in self.close.candidates(text)
                   for m in p.find_all(p.subject(text)))

    def first_closure(self, text: MatchText) -> int | None:
        """Where the first close word that is neither negated nor conditional starts, or None."""
        lowered = text.lowered
        found = [m.start() for p in self.close.candidates(text) for m in p.find_all(p.subject(text))
                 if self.says(lowered, m.start())]
        return min(found) if found else None

    def says(self, lowered: str, pos: int) -> bool:
        """The word at ``pos`` says it is so: not negated, not a condition."""
        return not self.is_negated(lowered, pos) and not self.is_conditional(lowered, pos)

    def is_conditional(self, lowered: str, pos: int) -> bool:
        """True when a condition word stands before ``pos`` in the same clause ("once the
        login bug is fixed, we deploy", "we deploy when it is done", "sobald Jonas die Logs
        geschickt hat"): it has not happened yet. One in an earlier clause ("If you ask me,
        the login bug is fixed") or after the word ("fixed, once and for all") does not count."""
        if self.condition is None or pos <= 0:
            return False
        window = lowered[max(0, pos - CONDITION_REACH) : pos]
        cut = _last_break(_LAST_CONDITION_BREAK, window)
        return self.condition.search(window, cut + 1) is not None

    def is_negated(self, lowered: str, pos: int) -> bool:
        """True when a negation stands shortly before ``pos`` in the same clause ("in
        review, not closed", "noch nicht entschieden", "还没决定")."""
        if self.negation is None or pos <= 0:
            return False
        window = lowered[max(0, pos - NEGATION_REACH) : pos]
        found = self.negation.search(window)
        if found is None:
            return False
        cut = _last_break(_LAST_CLAUSE_BREAK, window)
        return found.start() > cut or self.negation.search(window, cut + 1) is not None

    def is_mood_negated(self, lowered: str, pos: int) -> bool:
        """True when a negation word stands right before the mood word at ``pos`` ("nothing
        urgent", "nicht dringend")."""
        return self.mood_negation is not None and self.mood_negation.search(
            lowered, max(0, pos - MOOD_NEGATION_REACH), pos) is not None

    def is_high_impact(self, lowered: str) -> bool:
        """True when lower-cased text contains a high-impact keyword (a substring, as in the reference).
        Of the message the scan has just read (a ``MatchText``'s lowered copy: the families asked
        first), its answer says it; of another text, one regex search."""
        if self.high_impact is None:
            return False
        found = self._scan.kept(lowered, True) if self._scan is not None and self._impact else None
        if found is not None:
            return not found.isdisjoint(self._impact)
        return self.high_impact.search(lowered) is not None


def iter_matches(family: Family, text: MatchText) -> Iterator[re.Match[str]]:
    """Matches of every pattern of a family, pattern by pattern, at most MAX_MATCHES_PER_FAMILY."""
    candidates = family.candidates(text)
    if not candidates:  # (most messages, for most families)
        return iter(())
    return islice(chain.from_iterable(p.find_all(p.subject(text)) for p in candidates), MAX_MATCHES_PER_FAMILY)


def _compile(sources: Iterable[str], lowered: bool) -> tuple[Pattern, ...]:
    return tuple(Pattern.compile(source, lowered) for source in sources)


def _family(packs: tuple[LanguagePack, ...], name: str, *extra: Pattern) -> Family:
    compiled: list[Pattern] = []
    for pack in packs:
        compiled.extend(_compile(getattr(pack, name), lowered=not pack.case_sensitive))
    return Family.of((*compiled, *extra))


def _merged_mood(packs: tuple[LanguagePack, ...]) -> Family:
    # One alternation per mood, like the reference: the universal emoji first, then each
    # pack's words. All mood patterns were case-insensitive there, so all run lowered.
    sources: dict[Mood, list[str]] = {mood: [] for mood in MOOD_ORDER}
    for mood, source in UNIVERSAL_MOOD:
        sources[mood].append(source)
    for pack in packs:
        for mood, source in pack.mood:
            sources[mood].append(source)
    # (each source is a whole alternative, so "(?:wtf|argh)|(?:fuck|…)" is "wtf|argh|fuck|…")
    return Family.of(Pattern.compile("|".join(map(unwrapped, sources[mood])), lowered=True) for mood in MOOD_ORDER)


def _mood_negation(packs: tuple[LanguagePack, ...]) -> re.Pattern[str] | None:
    sources = [s for pack in packs for s in pack.mood_negation]
    return compile_led(f"(?:{'|'.join(sources)})\\s+\\Z") if sources else None


def _question_tag(packs: tuple[LanguagePack, ...]) -> re.Pattern[str] | None:
    tags = _unique(t for pack in packs for t in pack.question_tag)
    if not tags:
        return None
    return compile_led(rf"[,，、]\s*(?:{'|'.join(map(re.escape, tags))})\s*[?？]+\s*$")


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _noise_prefix(packs: tuple[LanguagePack, ...]) -> re.Pattern[str] | None:
    prefixes = _unique(p for pack in packs for p in pack.noise_prefixes)
    if not prefixes:
        return None
    return compile_led(rf"(?:{'|'.join(re.escape(p) for p in prefixes)})\s")


def _with_scan(patterns: PatternSet) -> PatternSet:
    """``patterns`` with one ``LiteralScan`` of all their triggers given to each family and pattern
    (``share_scan``)."""
    families = [f for f in (getattr(patterns, name) for name in patterns.__dataclass_fields__) if isinstance(f, Family)]
    reasons = patterns.reasons
    markers = [m for m in (reasons.reason, reasons.reason_kept, reasons.reason_before, reasons.consequence,
                           patterns.proposal, patterns.request,
                           patterns.object_request) if m is not None]
    keywords = frozenset(patterns.high_impact_keywords)
    scan = share_scan(families, markers, () if "" in keywords else keywords)
    if scan is not None and "" not in keywords:
        object.__setattr__(patterns, "_impact", keywords)
        object.__setattr__(patterns, "_scan", scan)
    return patterns


def share_scan(families: Iterable[Family], markers: Iterable[Pattern] = (), lowered: Iterable[str] = ()
               ) -> LiteralScan | None:
    """One ``LiteralScan`` of the triggers of ``families`` and ``markers``, given to each family
    and pattern of them — not when a pattern has an empty trigger, which every text holds (none
    has one): then each keeps its own checks. A registry's families share one (the pattern set's,
    the signal patterns'), so a message is read once for all of a registry's questions. The scan
    also reads ``lowered``'s literals on the lowered copy (a question of the registry's own)."""
    listed = list(families)
    members = [*(p for f in listed for p in f), *markers]
    if any("" in (p.scan_triggers or ()) for p in members):
        return None
    scan = LiteralScan((t for p in members if not p.lowered for t in p.scan_triggers or ()),
                       chain((t for p in members if p.lowered for t in p.scan_triggers or ()), lowered))
    for part in (*listed, *members):
        object.__setattr__(part, "_scan", scan)
    return scan


@lru_cache(maxsize=32)
def get_patterns(languages: tuple[str, ...]) -> PatternSet:
    """The merged, compiled patterns of ``languages`` (cached per tuple)."""
    return _with_scan(_pattern_set(languages))


def _pattern_set(languages: tuple[str, ...]) -> PatternSet:
    codes = _unique(code for code in languages if code in PACKS)
    packs = tuple(PACKS[code] for code in codes)
    keywords = _unique(kw.lower() for pack in packs for kw in pack.high_impact_keywords)
    due = _family(packs, "due", *_compile((UNIVERSAL_DUE,), lowered=True)) if packs else Family.of(())
    stopwords = frozenset(w.lower() for pack in packs for w in (*pack.stopwords, *pack.topic_blacklist))
    return PatternSet(
        languages=codes,
        decision=_family(packs, "decision"),
        close=_family(packs, "close"),
        wait=_family(packs, "wait"),
        topic=_family(packs, "topic"),
        commitment=_family(packs, "commitment"),
        due=due,
        mood=_merged_mood(packs),
        high_impact_keywords=keywords,
        high_impact=any_literal(keywords),  # only "is any keyword in the text" is asked
        topic_blacklist=frozenset(w.lower() for pack in packs for w in pack.topic_blacklist),
        noise_prefix=_noise_prefix(packs),
        reasons=_reason_markers(packs),
        negation=_one_regex(source for pack in packs for source in pack.negation),
        condition=_one_regex(source for pack in packs for source in pack.condition),
        agreement=frozenset(a for pack in packs for a in pack.agreement),
        aspiration=_one_regex(source for pack in packs for source in pack.aspiration),
        hedge=_one_regex(source for pack in packs for source in pack.hedge),
        # (its triggers keep a message for the answer that may ratify it: as the first rule found them)
        proposal=_one_pattern((source for pack in packs for source in pack.proposal), spelled_out=False),
        ratification=_one_regex(source for pack in packs for source in pack.ratification),
        assent=_one_regex(source for pack in packs for source in pack.assent),
        approval=_one_regex(source for pack in packs for source in pack.approval),
        going_on=_one_regex(source for pack in packs for source in pack.going_on),
        opinion=_one_regex(rf"\b{re.escape(word)}\b" for pack in packs for word in pack.opinion),
        request=_one_pattern((source for pack in packs for source in pack.request), spelled_out=False),
        acceptance=_one_regex(source for pack in packs for source in pack.acceptance),
        object_request=_one_pattern((source for pack in packs for source in pack.object_request), spelled_out=False),
        referring=frozenset(w for pack in packs for w in pack.referring),
        question_tag=_question_tag(packs),
        decision_tail=_one_regex(source for pack in packs for source in pack.decision_tail),
        idle=_one_regex(source for pack in packs for source in pack.idle),
        vague=_one_regex(source for pack in packs for source in pack.vague),
        task_lead=_one_regex(source for pack in packs for source in pack.task_lead),
        delegated=Family.of(p for pack in packs for p in _compile(pack.delegated, lowered=False)),
        requested=_family(packs, "requested"),
        assigned=_family(packs, "assigned"),
        plan=_family(packs, "plan"),
        step=_family(packs, "step"),
        stopwords=stopwords,
        phrase_breaks=stopwords | frozenset(w.lower() for pack in packs for w in (*pack.verbs, *pack.praise)),
        mood_negation=_mood_negation(packs),
        frame=_family(packs, "frame"),
        arrival=_family(packs, "arrival"),
        engaged=_one_regex(source for pack in packs for source in pack.engaged),
        owners=frozenset(w for pack in packs for w in pack.owners),
        definite=frozenset(w for pack in packs for w in (*pack.owners, *pack.articles))
        if any(pack.articles for pack in packs) else frozenset(),
        ongoing=_one_regex(source for pack in packs for source in pack.ongoing),
        recap=_one_regex(source for pack in packs for source in pack.recap),
    )
