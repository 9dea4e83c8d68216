"""Signals of one message: decisions, closures, waits, topics, mood; and word overlap.

Ported from the reference's ``extractSignals``, ``detectMood``, ``isNoiseTopic`` and
``matchesThread`` (openclaw-cortex ``src/thread-tracker.ts``, ``src/patterns.ts``).
Everything here is a pure function of the text and a ``PatternSet``.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from functools import lru_cache
from itertools import chain
from typing import Final, NamedTuple

from schemas.types import Mood
from workers.conversation.languages import WAIT_CUES
from workers.conversation.patterns import (
    MOOD_ORDER,
    MatchText,
    PatternSet,
    iter_matches,
    prepare_text,
)
from workers.conversation.sentences import tidy
from workers.conversation.statements import DecisionText, find_decisions
from workers.render import clip_words

WAIT_CHARS: Final = 80
_WAIT_CUE: Final = re.compile(WAIT_CUES)
_CLAUSE_END: Final = re.compile(r"[.!?…;,。！？；，、\n]")
# "first" ending a bare cue's wait says when, not what ("warte auf die Logs zuerst")
_TRAILING_FIRST: Final = re.compile(r"\s+(?:first|zuerst|erst)$", re.IGNORECASE)

MIN_TOPIC_CHARS: Final = 4
MAX_TOPIC_CHARS: Final = 60


class Signals(NamedTuple):
    """What one message says: decisions, closures, wait contexts and topics."""

    decisions: tuple[DecisionText, ...]
    closes: bool  # a close pattern matched, neither negated nor conditional: something was closed
    waits: tuple[str, ...]
    topics: tuple[str, ...]


_new_tuple: Final = tuple.__new__


def _as_match_text(text: str | MatchText) -> MatchText:
    return text if isinstance(text, MatchText) else prepare_text(text)


def extract_signals(text: str | MatchText, patterns: PatternSet) -> Signals:
    """Run every pattern family over ``text`` (the reference's ``extractSignals``)."""
    mt = _as_match_text(text)
    decisions = tuple(find_decisions(mt, patterns))
    closes = patterns.closes(mt)  # (not how many: the first close word found is enough)
    # (most messages have no wait or topic cue: the family's pre-check, the scan's answer, says so
    # before a generator is made for each)
    waits = tuple(w for m in iter_matches(patterns.wait, mt) if (w := wait_text(mt, m))) \
        if patterns.wait.may_match(mt) else ()
    topics = tuple(topic for _, topic in cue_topics(mt, patterns)) if patterns.topic.may_match(mt) else ()
    return _new_tuple(Signals, (decisions, closes, waits, topics))  # (in C, as ``prepare_text``'s)


def cue_topics(text: MatchText, patterns: PatternSet) -> Iterator[tuple[int, str]]:
    """The topics of the message's cue phrases ("Back to X", "Zurück zum X"), where each starts."""
    original = text.original
    for m in iter_matches(patterns.topic, text):
        if topic := cut_topic(original[m.start(1) : m.end(1)], patterns):
            yield m.start(1), topic


_WORD_RUN: Final = re.compile(r"\S+")


def cut_topic(topic: str, patterns: PatternSet) -> str:
    """A cue's topic (which its pattern ends before a conjunction, a pronoun, an auxiliary or a
    time word of its language: ``languages._topic_until``) without the function words it ends
    on ("the budget for our team" → "budget"). The reference took the cue's next 40 characters."""
    kept = [(w.end(), w.group().lower()) for w in _WORD_RUN.finditer(topic)]
    while kept and kept[-1][1] in patterns.stopwords:
        kept.pop()
    return topic[: kept[-1][0]].strip() if kept else ""


MAX_FRAME_WORDS: Final = 3


def _frame_topic(words: list[str], stopwords: frozenset[str]) -> str:
    """The topic words a frame is followed by: up to the first function word ("For the
    quarterly report export the plan …") and, once a capitalised word is taken, up to the
    first lower-case one (German nouns: "Beim Onboarding-Flow liegt es …"), at most three."""
    kept: list[str] = []
    for word in words[:MAX_FRAME_WORDS]:
        lowered = word.lower()
        if lowered in stopwords or re.split(r"['’]", lowered, maxsplit=1)[0] in stopwords:
            break
        if word[:1].islower() and any(w[:1].isupper() for w in kept):
            break
        kept.append(word)
    return " ".join(kept)


def message_topics(text: MatchText, patterns: PatternSet) -> list[tuple[int, str]]:
    """What the message says it is about, each with where it starts, in order: the topics of
    its cue phrases (as threads find them) and of the frames its sentences open on ("Beim
    Onboarding-Flow …", "For the quarterly report export …", ``PatternSet.frame``); noise
    ("For example …", "it") aside."""
    found = list(cue_topics(text, patterns))
    original = text.original
    for m in iter_matches(patterns.frame, text):
        if topic := _frame_topic(original[m.start(1) : m.end(1)].split(), patterns.stopwords):
            found.append((m.start(1), topic))
    return sorted({(at, topic) for at, topic in found if not is_noise_topic(topic, patterns)})


def wait_text(text: MatchText, found: re.Match[str]) -> str:
    """What a wait waits for: the rest of its clause after a bare "waiting for" / "warte
    auf", or the whole phrase when it holds it ("need the new node pool first"), cut
    between words with "…" (the reference took the match and 80 more characters)."""
    cue = _WAIT_CUE.fullmatch(text.lowered, found.start(), found.end())
    start = found.end() if cue is not None else found.start()
    stop = _CLAUSE_END.search(text.original, max(start, found.end()))
    end = stop.start() if stop is not None else len(text.original)
    waited = tidy(text.original[start:end])
    if cue is not None:  # "waiting for the PDF library upgrade first": the wait is the upgrade
        waited = _TRAILING_FIRST.sub("", waited) or waited
    return clip_words(waited, WAIT_CHARS)


def detect_mood(text: str | MatchText, patterns: PatternSet) -> Mood:
    """The mood whose pattern matches last in the text; ``neutral`` when none matches.

    A mood word right after a negation word ("Nothing urgent.", "nicht dringend") counts for
    none: Cortex's own (``PatternSet.is_mood_negated``), the reference ignored negation."""
    mt = _as_match_text(text)
    best: Mood = "neutral"
    best_pos = -1
    family = patterns.mood
    if not family.may_match(mt):
        return best
    for mood, pattern, may in zip(MOOD_ORDER, family.patterns, family.flags(mt), strict=True):
        if not may:
            continue
        # deque(maxlen=1) runs the scan in C and keeps only the last match.
        last = deque(pattern.find_all(pattern.subject(mt)), maxlen=1)
        if not last:
            continue
        at = last[0].start()
        if patterns.is_mood_negated(mt.lowered, at):  # rare: the latest one not negated
            at = next((m.start() for m in reversed(list(pattern.find_all(pattern.subject(mt))))
                       if not patterns.is_mood_negated(mt.lowered, m.start())), -1)
        if at > best_pos:
            best, best_pos = mood, at
    return best


def is_noise_topic(topic: str, patterns: PatternSet) -> bool:
    """True when a topic candidate is not a thread: too short or long, stop words only,
    a sentence fragment starting with a pronoun, or spanning lines (``isNoiseTopic``)."""
    trimmed = topic.strip()
    if len(trimmed) < MIN_TOPIC_CHARS or len(trimmed) > MAX_TOPIC_CHARS or "\n" in trimmed:
        return True
    lowered = trimmed.lower()
    blacklist = patterns.topic_blacklist
    # Two-syllable words are ordinary in Korean and Chinese ("결제 모듈"): the length rule
    # is for alphabetic scripts.
    if all(word in blacklist or (len(word) < 3 and not _CJK.search(word)) for word in lowered.split()):
        return True
    return patterns.noise_prefix is not None and patterns.noise_prefix.match(lowered) is not None


# Word overlap (design appendix B). Punctuation at a word's edges is stripped so "migration."
# at the end of a sentence still counts as "migration"; the reference compares raw tokens.
_EDGE_PUNCTUATION: Final = ".,;:!?()[]{}<>\"'`“”‘’«»…。，！？、：；"
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
MIN_WORD_CHARS: Final = 3


class Words:
    """The distinct words of a text (lower-cased, at least 3 characters) and the text lowered.

    The words are split out when first asked for: a message is matched against the open
    threads' titles, and a title word that is not even a substring of the text is no word
    of it (``has``), so a message naming no thread never needs them."""

    __slots__ = ("_tokens", "lowered")

    def __init__(self, lowered: str) -> None:
        self.lowered = lowered
        self._tokens: frozenset[str] | None = None

    @property
    def tokens(self) -> frozenset[str]:
        if self._tokens is None:
            self._tokens = _tokens(self.lowered, with_parts=True)
        return self._tokens

    def has(self, term: str) -> bool:
        """``term in self.tokens``, answered where the term stands while the words are not
        split out: a word is a substring of the lowered text, so a term that is none is no word,
        and one said once or twice is a word when a word around one of its places is it (or,
        hyphenated, has it as a part). Splitting a bench message cost ~7 µs, its open threads'
        titles ~5 µs more (every open thread's title is matched against every message)."""
        if self._tokens is not None:
            return term in self._tokens
        lowered = self.lowered
        at = lowered.find(term)
        if at < 0:
            return False
        if len(term) < MIN_WORD_CHARS or _SPACE.search(term) is not None:
            return term in self.tokens  # (no word: the split says so without a special case)
        for _ in range(_PLACES_LOOKED_AT):
            if _word_at(lowered, at, term):
                return True
            at = lowered.find(term, at + 1)
            if at < 0:
                return False
        return term in self.tokens  # said often: split once


_SPACE: Final = re.compile(r"\s")
_NOT_SPACE: Final = re.compile(r"\S*")
_PLACES_LOOKED_AT: Final = 4


def _word_at(lowered: str, at: int, term: str) -> bool:
    """Whether the word ``_tokens`` splits out around ``lowered[at:]``'s ``term`` is it, or
    has it as a hyphenated part (``term``: no white space, ``MIN_WORD_CHARS`` or more)."""
    start = at
    while start and not lowered[start - 1].isspace():
        start -= 1
    end = _NOT_SPACE.match(lowered, at + len(term))
    word = lowered[start : end.end() if end is not None else len(lowered)].strip(_EDGE_PUNCTUATION)
    if len(word) < MIN_WORD_CHARS:
        return False
    return word == term or ("-" in word and term in word.split("-"))


def _tokens(lowered: str, *, with_parts: bool = False) -> frozenset[str]:
    """The words; ``with_parts``: a hyphenated word's parts too ("performance-bug" says
    "performance" and "bug"), so a title "dashboard performance bug" is named by "der
    Performance-Bug im Dashboard"."""
    words = {w for word in lowered.split() if len(w := word.strip(_EDGE_PUNCTUATION)) >= MIN_WORD_CHARS}
    if with_parts:
        words.update([part for word in words if "-" in word for part in word.split("-") if len(part) >= MIN_WORD_CHARS])
    return frozenset(words)


def words_of(text: str | MatchText) -> Words:
    return Words(text.lowered if isinstance(text, MatchText) else text.lower())


@lru_cache(maxsize=8192)
def title_terms(title: str) -> frozenset[str]:
    """The words of a title that count for overlap (cached: titles repeat on every message)."""
    return _tokens(title.lower())


@lru_cache(maxsize=8192)
def _title_words(title: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A title's words (``title_terms``), each with its parts when it is hyphenated and each
    part is a word ("performance-bug": performance, bug; "e-mail" is one word)."""
    out = []
    for term in title_terms(title):
        parts = tuple(term.split("-")) if "-" in term else ()
        ok = len(parts) >= 2 and all(len(p) >= MIN_WORD_CHARS for p in parts)
        out.append((term, parts if ok else ()))
    return tuple(out)


def _cjk_whole(title: str) -> str | None:
    # CJK text has no spaces between words, so a Chinese or Japanese title is one "word"
    # and could never reach an overlap of two; such a title matches when it appears whole.
    if len(title_terms(title)) >= 2 or not _CJK.search(title):
        return None
    return title.strip().lower() or None


@lru_cache(maxsize=8192)
def _title_match(title: str) -> tuple[str | None, tuple[tuple[str, tuple[str, ...]], ...]]:
    """What ``matches_title`` looks for of a title, in one cached call (every open thread's
    title is matched against every message): its whole text when it is CJK (``_cjk_whole``),
    else its words (``_title_words``)."""
    whole = _cjk_whole(title)
    return whole, () if whole is not None else _title_words(title)


def matches_title(title: str, words: Words, min_overlap: int = 2, one_word: bool = True) -> bool:
    """True when at least ``min_overlap`` words of ``title`` occur in the text (appendix B).

    With ``one_word``, a title of a single word ("Onboarding-Flow", "Kubernetes") matches when
    that word occurs: under the reference's overlap of two such a thread was never closed,
    never given a decision or a wait, whatever the conversation said about it. (Whether a new
    topic is a known thread still needs two words, so "Dashboard" does not swallow "Dashboard
    performance bug".)"""
    whole, terms = _title_match(title)
    if whole is not None:
        return whole in words.lowered
    need = 1 if one_word and len(terms) == 1 else min_overlap
    has = words.has
    hits = 0
    for term, parts in terms:
        # a title word occurs: itself, or a hyphenated one as its parts ("Performance-Bug" in
        # "the dashboard performance bug")
        if has(term) or (parts and all(map(has, parts))):
            hits += 1
            if hits >= need:
                return True
    return False


def may_name(titles: tuple[str, ...], lowered: str) -> bool:
    """False when ``matches_title`` (any overlap) is False for each of ``titles`` on a text
    lowered to ``lowered``: none of their words (a CJK title: itself) is even a substring of it.
    One look-up of all the titles' words (cached per tuple of titles) and ``in`` tests in C,
    where each title was matched in turn; a message names none of its open threads two times in three."""
    return any(map(lowered.__contains__, title_substrings(titles)))


@lru_cache(maxsize=1024)
def title_substrings(titles: tuple[str, ...]) -> tuple[str, ...]:
    """What ``matches_title`` asks ``Words.has`` of ``titles`` (a word, or a hyphenated word's
    parts) or looks for whole (a CJK title): one of them is a substring of a text that any of
    the titles matches (``may_name``)."""
    # (each title's cached apart: a list of titles changes when one thread opens or closes)
    return tuple(dict.fromkeys(chain.from_iterable(map(_title_literals, titles))))


@lru_cache(maxsize=8192)
def _title_literals(title: str) -> tuple[str, ...]:
    """``title_substrings`` of one title, in order."""
    whole, terms = _title_match(title)
    return (whole,) if whole is not None else tuple(w for term, parts in terms for w in (term, *parts))
