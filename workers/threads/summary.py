"""A thread's summary from the conversation: what it is about and where it stands.

The reference wrote "Topic detected from <sender>" into every summary; the briefing then
said nothing about any thread (issue 18). Here:

* ``about`` is what the conversation said when the thread opened: the rest of the
  sentence after a cue ("Let's get back to the auth migration, *the JWT rotation is still
  open*"), or the whole sentence when nothing follows the topic, or — for a topic nobody
  announced — the sentence that first named it;
  a thread that closed is about the sentence that closed it ("The auth migration is done ✅
  all services validate tokens against the key service");
* ``summary`` is ``about`` followed by where the thread stands: the latest decision and,
  while open, what it waits for. It is recomposed whenever the thread changes.
"""

from __future__ import annotations

import re
from typing import Final

from schemas.docs import Thread
from workers.conversation.patterns import MatchText, PatternSet
from workers.conversation.sentences import clip_around, sentence_around, sentence_ends, tidy
from workers.render import clip_words

ABOUT_CHARS: Final = 120
DECIDED_CHARS: Final = 140
WAITING_CHARS: Final = 80
_MIN_REST_WORDS: Final = 3
_END: Final = ".!?…。！？"
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def about_topic(text: MatchText, topic: str) -> str:
    """What a message says about ``topic``, a cue-phrase topic it names."""
    original = text.original
    at = original.find(topic)
    if at < 0:
        at = text.lowered.find(topic.lower())
    if at < 0:
        return ""
    start, end = sentence_around(original, sentence_ends(original), at)
    rest = tidy(original[at + len(topic) : end])
    if len(rest.split()) >= _MIN_REST_WORDS:
        return clip_words(_sentence_case(rest), ABOUT_CHARS)
    return _sentence_case(clip_around(tidy(original[start:end]), at - start, ABOUT_CHARS))


def closing_sentence(text: MatchText, patterns: PatternSet) -> str:
    """The sentence of a message that closes a thread ("The auth migration is done ✅ …")."""
    at = patterns.first_closure(text)
    if at is None:
        return ""
    original = text.original
    start, end = sentence_around(original, sentence_ends(original), min(at + 1, len(original) - 1))
    return _sentence_case(clip_around(tidy(original[start:end]), at - start, ABOUT_CHARS))


def _sentence(text: str) -> str:
    text = text.strip()
    if not text or text[-1] in _END:
        return text
    return text + ("。" if _CJK.match(text[-1]) else ".")


def compose_summary(thread: Thread) -> str:
    """``about`` and where the thread stands, in short sentences."""
    parts = [_sentence(thread.about or thread.title)]
    if thread.decisions:
        parts.append(_sentence(f"Decided: {clip_words(thread.decisions[-1], DECIDED_CHARS)}"))
    # a closed thread's about is the sentence that closed it; what it waited for is over
    if thread.status == "open" and thread.waiting_for and thread.waiting_for.lower() not in parts[0].lower():
        parts.append(_sentence(f"Waiting for: {clip_words(thread.waiting_for, WAITING_CHARS)}"))
    return " ".join(parts)
