"""A thread's wait ends when the thread moves on past it.

The reference sets a thread's ``waiting_for`` on every wait phrase ("waiting for", "blocked
by", "need … first") and never clears it: after "Zurück zum Onboarding-Flow: Jonas hat die
Crash-Logs endlich geschickt" the briefing still said "Waiting for: die Crash-Logs von Jonas",
and told the agent it was blocked when it was not. Here (Cortex's own; pure functions of
the threads document, its window of recent messages and the message) a wait ends — narrowly
— when one of these comes:

* **what was waited for arrived** — a sentence of the message says it came (an arrival word:
  "arrived", "sent", "replied", "is ready", "geschickt", "ist da", …, ``PatternSet.arrival``;
  or a closure word: "the staging fix is done") and names what the thread waits for: when the
  message names the thread, at least half of the wait's own words (not the thread's title
  words, function words or the cue's "need … first"; "replied" counts for "reply"), else all
  of them (two at least). Not when negated ("the keys haven't arrived", "noch nicht
  geschickt"), asked ("Did Jonas send the credentials?"; "has Jonas sent …?") or a condition
  ("once the keys arrived", "sobald Jonas sie geschickt hat");
* **the awaited party answered in the thread** — the wait names the other speaker ("I'm
  waiting for your go-ahead", "warte auf deine Freigabe": "you", "your", "dein…", "euch", …),
  was said by one role (``Thread.waiting_role``, kept with the wait however many messages
  ago; in a document written before it was kept, the role of the window's message that said
  it), and the other role's message names the thread and asks nothing (a message ending in
  "?" keeps it);
* **a newer wait replaces it** (as in the reference: the last wait of a message wins).

A wait mentioned again ("still waiting for the vendor") is a wait: it stays. A message on
another thread changes nothing. Either way the thread's ``last_activity`` is the message's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Final, NamedTuple

import msgspec

from schemas.docs import RecentMessage, Thread
from schemas.events import MessageEvent
from workers.conversation.patterns import MatchText, PatternSet, iter_matches
from workers.conversation.sentences import sentence_around, sentence_ends
from workers.conversation.signals import Words, matches_title, title_terms, words_of

_replace = msgspec.structs.replace

# Words of a wait that say it is one, not what it waits for ("need the keys first",
# "the missing credentials", "brauche erst die Logs").
_CUE_WORDS: Final = frozenset({"need", "needs", "first", "missing", "brauche", "brauchen", "erst", "fehlende",
                               "fehlenden", "fehlendes"})
SECOND_PERSON: Final = frozenset({"you", "your", "yours", "you're", "you’re", "du", "dein", "deine", "deinen",
                                  "deinem", "deiner", "dir", "dich", "euch", "eure", "euer", "euren"})
_QUESTION: Final = "?？"
_SUFFIXES: Final = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def _stem(word: str) -> str:
    """A crude English stem, so "replied" names "reply" and "keys" "key"."""
    word = word.removesuffix("'s").removesuffix("’s")
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def _stems(tokens: frozenset[str]) -> frozenset[str]:
    return frozenset(map(_stem, tokens))


def awaited_words(thread: Thread, patterns: PatternSet) -> frozenset[str]:
    """The words of what the thread waits for, stemmed: not its title's, function or cue words."""
    if not thread.waiting_for:
        return frozenset()
    return _awaited(thread.waiting_for, thread.title, patterns.stopwords)


# A waiting thread is looked at on every message until its wait ends: what it waits for is
# worked out once per wait (cached per process; a pure function of its arguments).
@lru_cache(maxsize=4096)
def _awaited(waiting_for: str, title: str, stopwords: frozenset[str]) -> frozenset[str]:
    ignored = stopwords | _CUE_WORDS | title_terms(title)
    return _stems(frozenset(w for w in words_of(waiting_for.removesuffix("…")).tokens if w not in ignored))


class _Wait(NamedTuple):
    awaited: frozenset[str]  # ``awaited_words``
    cut_stems: tuple[str, ...]  # each less its last letter: a substring of every word it stems
    second_person: bool  # ``names_second_person``


@lru_cache(maxsize=4096)
def _wait_of(waiting_for: str, title: str, stopwords: frozenset[str]) -> _Wait:
    """What a thread's wait is, worked out once per wait (a waiting thread is looked at on every
    message until its wait ends)."""
    awaited = _awaited(waiting_for, title, stopwords)
    return _Wait(awaited, tuple(w[:-1] for w in awaited), names_second_person(waiting_for))


@lru_cache(maxsize=4096)
def names_second_person(waiting_for: str) -> bool:
    """The wait names the other speaker ("waiting for your go-ahead", "warte auf deine Freigabe")."""
    return not SECOND_PERSON.isdisjoint(words_of(waiting_for).tokens)


def _arrivals(text: MatchText, patterns: PatternSet, closes: bool) -> list[frozenset[str]]:
    """The stemmed words of each sentence saying something came or is done, as said
    (``closes``: a close pattern matches the message, ``Signals.closes``)."""
    starts = [m.start() for m in iter_matches(patterns.arrival, text)]
    if closes:
        starts += [m.start() for p in patterns.close.candidates(text) for m in p.find_all(p.subject(text))]
    if not starts:
        return []
    original, lowered = text.original, text.lowered
    ends = sentence_ends(original)
    found: dict[tuple[int, int], frozenset[str]] = {}
    for at in sorted(starts):
        start, end = sentence_around(original, ends, at)
        if (start, end) in found or original[start:end].rstrip()[-1:] in _QUESTION:
            continue
        if not patterns.says(lowered, at):  # negated, or a condition ("once the keys arrived")
            continue
        found[(start, end)] = _stems(words_of(lowered[start:end]).tokens)
    return list(found.values())


def _arrived(awaited: frozenset[str], arrivals: list[frozenset[str]], named: bool) -> bool:
    """A sentence names what was awaited: half its words when the thread is named, else all."""
    if not awaited:
        return False
    need = max(1, math.ceil(len(awaited) / 2)) if named else len(awaited)
    if not named and need < 2:
        return False
    return any(len(awaited & said) >= need for said in arrivals)


def _normalised(text: str) -> str:
    return " ".join(text.split()).lower()


def _setter_role(recent: Sequence[RecentMessage], waiting_for: str) -> str:
    """The role of the window's latest message that said the wait, or ""."""
    needle = _normalised(waiting_for.removesuffix("…"))
    if not needle:
        return ""
    return next((m.role for m in reversed(recent) if needle in _normalised(m.text)), "")


def _answered(thread: Thread, recent: Sequence[RecentMessage], event: MessageEvent, asks: bool) -> bool:
    """The other speaker, whom the wait names, answered (the thread is named: the caller's)."""
    if asks or event.role not in ("user", "assistant") or thread.waiting_for is None:
        return False
    if not names_second_person(thread.waiting_for):
        return False
    setter = thread.waiting_role or _setter_role(recent, thread.waiting_for)
    return setter in ("user", "assistant") and setter != event.role


def end_waits(threads: list[Thread], text: MatchText, event: MessageEvent, patterns: PatternSet,
              recent: Sequence[RecentMessage], closes: bool, named: AbstractSet[str] | None = None) -> list[Thread]:
    """The threads with the waits this message ends cleared (see the module doc);
    ``closes`` is the message's ``Signals.closes`` (its close words are not looked for again);
    ``named``, when given, the ids of the open threads the message names (``matches_title`` of
    their titles and the message's words: the core's ``_named``, asked once a message)."""
    stopwords = patterns.stopwords
    # each waiting thread with what its wait is (``_wait_of``, one cached look-up a thread)
    waiting = [(t, _wait_of(t.waiting_for or "", t.title, stopwords)) for t in threads
               if t.status == "open" and t.waiting_for]
    if not waiting:
        return threads
    # a sentence can name what a thread waits for only if the text holds a stem of it (a
    # stem less its last letter is in every word it stems: "repl" of "reply" in "replied")
    holds = text.lowered.__contains__
    named_somewhere = any(any(map(holds, wait.cut_stems)) for _, wait in waiting)
    arrivals = _arrivals(text, patterns, closes) if named_somewhere else []
    if not arrivals and not any(wait.second_person for _, wait in waiting):
        return threads
    if named is None:
        words: Words = words_of(text)
        named = {t.id for t, _ in waiting if matches_title(t.title, words)}
    asks = text.original.rstrip()[-1:] in _QUESTION
    ended = set()
    for t, wait in waiting:
        said = t.id in named
        if _arrived(wait.awaited, arrivals, said) or (said and _answered(t, recent, event, asks)):
            ended.add(t.id)
    if not ended:
        return threads
    return [_replace(t, waiting_for=None, waiting_role=None, last_activity=event.ts) if t.id in ended else t
            for t in threads]
