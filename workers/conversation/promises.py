"""Promises in one message: what someone committed to, and by when.

Ported from the reference's ``detectCommitments`` and ``CommitmentTracker.processMessage``
(openclaw-cortex ``src/commitment-patterns.ts``, ``src/commitment-tracker.ts``): a phrase
such as "I'll" or "ich werde" followed by the promise, or a fixed phrase ("I'm on it",
"mach ich"). Differences, each to make ``what`` the promise rather than a slice of text:

* a captured promise ends at the end of its sentence (the reference took 80 characters,
  so "I'll fix it. Lunch?" promised "fix it. Lunch?"), and the search continues after it,
  so two promises in two sentences are two commitments;
* a fixed phrase has no object, so its ``what`` is the sentence around it, not the bare
  phrase ("Mach ich morgen." rather than "mach ich");
* a match inside text already taken by an earlier promise is the same promise, not a
  second one (the reference only compared the strings);
* ``due`` is the first day phrase of the promise's sentence ("tomorrow", "bis Freitag").
"""

from __future__ import annotations

import re
from collections import deque
from typing import Final, NamedTuple

from workers.conversation.patterns import MAX_MATCHES_PER_FAMILY, MatchText, Pattern, PatternSet

MAX_WHAT_CHARS: Final = 200
_SENTENCE_REACH: Final = 100  # how far before and after a phrase its sentence is looked for
_SENTENCE_END: Final = re.compile(r"[.!?…](?=\s|$)|[。！？\n]")


class Promise(NamedTuple):
    what: str
    due: str | None
    start: int  # span of the promise in the message
    end: int


def _sentence_end(text: str, pos: int, limit: int) -> int:
    found = _SENTENCE_END.search(text, pos, limit)
    return found.start() if found else limit


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    lo = max(0, start - _SENTENCE_REACH)
    last = deque(_SENTENCE_END.finditer(text, lo, start), maxlen=1)
    begin = last[0].end() if last else lo
    return begin, _sentence_end(text, end, min(len(text), end + _SENTENCE_REACH))


def _due(text: MatchText, patterns: PatternSet, start: int, stop: int) -> str | None:
    best: re.Match[str] | None = None
    for pattern in patterns.due:
        subject = pattern.subject(text)
        if not pattern.may_match(subject[start:stop]):
            continue
        found = pattern.regex.search(subject, start, stop)
        if found is not None and (best is None or found.start() < best.start()):
            best = found
    return None if best is None else text.original[best.start() : best.end()].strip()


def _promise(text: MatchText, patterns: PatternSet, found: re.Match[str]) -> Promise:
    original = text.original
    if found.re.groups and found.group(1) is not None:
        start = found.start(1)
        end = _sentence_end(original, start, found.end(1))
        what = original[start:end].strip()
        if what:
            _, sentence_stop = _sentence(original, found.start(), end)
            due = _due(text, patterns, found.start(), sentence_stop)
            return Promise(what[:MAX_WHAT_CHARS], due, start, end)
    begin, stop = _sentence(original, found.start(), found.end())
    what = original[begin:stop].strip()[:MAX_WHAT_CHARS]
    return Promise(what, _due(text, patterns, begin, stop), found.start(), found.end())


def _promises_of(pattern: Pattern, text: MatchText, patterns: PatternSet) -> list[tuple[Promise, int]]:
    subject = pattern.subject(text)
    out: list[tuple[Promise, int]] = []
    if not pattern.may_match(subject):
        return out
    pos = 0
    while len(out) < MAX_MATCHES_PER_FAMILY and (found := pattern.regex.search(subject, pos)) is not None:
        promise = _promise(text, patterns, found)
        out.append((promise, found.start()))
        # Continue after the promise, not after the greedy capture, so the next
        # sentence's "I'll" is found.
        pos = max(promise.end, found.start() + 1)
    return out


def find_promises(text: MatchText, patterns: PatternSet) -> list[Promise]:
    """Distinct promises of the enabled languages' commitment patterns, in pattern order."""
    taken: list[tuple[int, int]] = []
    seen: set[str] = set()
    result: list[Promise] = []
    if not patterns.commitment.may_match(text):
        return result
    for pattern in patterns.commitment:
        for promise, phrase_start in _promises_of(pattern, text, patterns):
            span = (min(phrase_start, promise.start), promise.end)
            if not promise.what or promise.what in seen or any(s < span[1] and span[0] < e for s, e in taken):
                continue
            seen.add(promise.what)
            taken.append(span)
            result.append(promise)
    return result[:MAX_MATCHES_PER_FAMILY]
