"""A thread's summary from the conversation: what it is about and where it stands.

The reference wrote "Topic detected from <sender>" into every summary; the briefing then
said nothing about any thread (issue 18). Here:

* ``about`` is what the conversation said when the thread opened: the rest of the
  sentence after a cue ("Let's get back to the auth migration, *the JWT rotation is still
  open*"), or — when the cue sentence names the topic only ("결제 모듈에 대해 이야기해요.")
  — the sentence after it in the same message, or the whole cue sentence when none follows;
  for a topic nobody announced, the sentence that first named it;
  a thread that closed is about the sentence that closed it ("The auth migration is done ✅
  all services validate tokens against the key service");
* ``summary`` is ``about`` followed by where the thread stands: the latest decision and,
  while open, what it waits for. It is recomposed whenever the thread changes;
* an ``about`` that states a fact follows it: when a later message says the same fact with
  another value ("Our deploy day is Tuesday." → "Our deploy day is Thursday now.", a claim
  of ``workers.conversation.claims``), that sentence is what the thread is about now
  (:func:`follow_claims`), so a briefing never shows the thread saying Tuesday beside
  a memory saying Thursday.
"""

from __future__ import annotations

import functools
import operator
import re
from typing import Final

import msgspec

from schemas.docs import Thread
from workers.conversation.claims import claim_of, conflicts
from workers.conversation.patterns import MatchText, PatternSet
from workers.conversation.sentences import clip_around, sentence_around, sentence_ends, sentence_spans, tidy
from workers.render import clip_words
from workers.summaries import CJK, MIN_REST_WORDS

ABOUT_CHARS: Final = 120


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def _says_something(text: str) -> bool:
    """At least a few words (CJK, written without spaces: twice as many characters)."""
    return len(text.split()) >= MIN_REST_WORDS or (bool(CJK.search(text)) and len(text) >= 2 * MIN_REST_WORDS)


def about_topic(text: MatchText, topic: str) -> str:
    """What a message says about ``topic``, a cue-phrase topic it names."""
    original = text.original
    at = original.find(topic)
    if at < 0:
        at = text.lowered.find(topic.lower())
    if at < 0:
        return ""
    ends = sentence_ends(original)
    start, end = sentence_around(original, ends, at)
    after = at + len(topic)
    # a rest glued to the topic is its cue's tail, no content: "결제 모듈에 대해 이야기해요"
    glued = after < end and original[after].isalnum()
    rest = tidy(original[after:end])
    if not glued and len(rest.split()) >= MIN_REST_WORDS:
        return clip_words(_sentence_case(rest), ABOUT_CHARS)
    # the cue sentence names the topic only: the sentence after it says what it is about
    # ("결제 모듈에 대해 이야기해요. 환불 처리가 자주 실패합니다.")
    if end < len(original):
        next_start, next_end = sentence_around(original, ends, end)
        following = tidy(original[next_start:next_end])
        if _says_something(following):
            return clip_words(_sentence_case(following), ABOUT_CHARS)
    return _sentence_case(clip_around(tidy(original[start:end]), at - start, ABOUT_CHARS))


def closing_sentence(text: MatchText, patterns: PatternSet) -> str:
    """The sentence of a message that closes a thread ("The auth migration is done ✅ …")."""
    at = patterns.first_closure(text)
    if at is None:
        return ""
    original = text.original
    start, end = sentence_around(original, sentence_ends(original), min(at + 1, len(original) - 1))
    return _sentence_case(clip_around(tidy(original[start:end]), at - start, ABOUT_CHARS))


def follow_claims(threads: list[Thread], original: str, sender: str | None) -> list[Thread]:
    """Threads whose ``about`` states a fact this message states otherwise, about that
    sentence now (see the module docstring); the others as they are."""
    # the frames of the facts the threads state (a claim with a value: "… is Tuesday", "… runs on
    # Postgres 14"): every message asks of every thread, one cached look-up of their abouts
    frames = _fact_frames(tuple(map(_ABOUT, threads)))
    if not frames:
        return threads
    # a sentence's words are words of the message, case-folded (``_word_set``: folding is done a
    # character at a time, so a sentence's folded text is a substring of the message's): a message
    # without all of some frame's words anywhere has no sentence with them, and is not split
    folded = original.casefold()
    if not any(all(map(folded.__contains__, frame)) for frame in frames):
        return threads
    # only a sentence with all of a frame's words can state the same fact (a claim costs ~50 us
    # a sentence, and most messages state none of the threads' facts)
    said = [(sentence, claim) for sentence, claim in
            ((original[a:b], claim_of(original[a:b], sender)) for a, b in sentence_spans(original)
             if any(frame <= _word_set(original[a:b]) for frame in frames))
            if claim is not None]
    if not said:
        return threads
    # the facts the threads state
    stated = {t.id: claim for t in threads if t.about and (claim := claim_of(t.about)) is not None and claim.value}
    out = []
    for thread in threads:
        newer = next((sentence for sentence, claim in reversed(said) if conflicts(claim, stated.get(thread.id))),
                     None)
        about = clip_words(_sentence_case(tidy(newer)), ABOUT_CHARS) if newer is not None else None
        out.append(thread if about is None else msgspec.structs.replace(thread, about=about))
    return out


_ABOUT: Final = operator.attrgetter("about")


@functools.lru_cache(maxsize=1 << 10)
def _fact_frames(abouts: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    """The frames of the facts ``abouts`` state (``_fact_frame``), cached per tuple of abouts: a
    thread list's abouts change only when a thread opens, closes or follows a claim."""
    return tuple(frame for frame in map(_fact_frame, abouts) if frame is not None)


@functools.lru_cache(maxsize=1 << 12)
def _fact_frame(about: str) -> frozenset[str] | None:
    """The frame words (``_frame_words``) of the fact ``about`` states with a value, or None
    when it states none."""
    claim = claim_of(about) if about else None
    return _frame_words(about) if claim is not None and claim.value else None


_WORDS = re.compile(r"\w+")


@functools.lru_cache(maxsize=1 << 12)
def _word_set(text: str) -> frozenset[str]:
    return frozenset(_WORDS.findall(text.casefold()))


@functools.lru_cache(maxsize=1 << 12)
def _frame_words(about: str) -> frozenset[str]:
    """An about's words of four letters or more but its value's: what restating its fact repeats
    ("deploy" of "Our deploy day is Tuesday"; none in a language written without spaces)."""
    claim = claim_of(about)
    value = set(claim.value.split()) if claim is not None else set()
    return frozenset(w for w in _word_set(about) if len(w) >= 4 and w not in value and not CJK.search(w))

