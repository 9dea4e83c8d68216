"""A closure the user contradicts: the thread it closed opens again, until the agent's real fix.

The reference closed a thread for good on any closure word: an agent's "Done ✅ the frontend
build is fixed." answered by "No, that's wrong, the build is still red on CI!" left the thread
closed, and every later briefing told it as done. Here (Cortex's own, pure functions of the
threads document and its window of recent messages, ``ThreadsDoc.recent``):

* **a correction reopens** — the user's next message in the session after the agent's turn
  that closed threads corrects it (the trace analyzer's correction phrases,
  ``workers.conversation.signal_languages``: "that's wrong", "das stimmt nicht", …; not a message that also
  thanks or praises, nor a plain "no" answering the agent's question): the threads the
  turn's latest message closed open again, and those an earlier message of the turn closed
  when the correction names their title's words. A thread closed by a message is recognised
  by what the closure wrote: its ``about`` is that message's closing sentence. The reopened
  thread is about the correction ("No, that's wrong, the build is still red on CI");
* **the answer to it closes again** — the agent's next message in the session, when it has a
  closure word and names one of the thread's title words ("… the build passes locally and on
  CI"), closes the threads the correction reopened, though it names fewer of their words than
  a closure otherwise needs: the conversation is about that thread.

Only a message's first ``HEAD_CHARS`` characters are in the window: a closure said later in a
long message is not recognised, and a correction of it reopens nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import attrgetter

import msgspec

from schemas.docs import RecentMessage, Thread
from schemas.events import MessageEvent
from workers.conversation.patterns import MatchText, PatternSet, prepare_text
from workers.conversation.signal_patterns import SignalPatterns, get_signal_patterns
from workers.conversation.signals import Words, matches_title, words_of
from workers.render import clip_words
from workers.threads.summary import ABOUT_CHARS, closing_sentence
from workers.threads.topics import HEAD_CHARS

_replace = msgspec.structs.replace
_STATUS = attrgetter("status")


def _earlier(recent: Sequence[RecentMessage], session: str) -> Iterator[RecentMessage]:
    """The session's earlier messages in the window, latest first."""
    return (m for m in reversed(recent) if m.session == session)


def _agent_turn(recent: Sequence[RecentMessage], session: str) -> list[RecentMessage]:
    """The agent's messages since the user last spoke in the session, latest first."""
    turn = []
    for m in _earlier(recent, session):
        if m.role != "assistant":
            break
        turn.append(m)
    return turn


def _corrects(text: MatchText, signals: SignalPatterns, after_question: bool) -> bool:
    return signals.is_correction(text, after_question=after_question) and not signals.is_satisfied(text)


def correction_about(head: str) -> str:
    """What a reopened thread is about: the correction that reopened it (its first
    ``HEAD_CHARS`` characters, as the window keeps it, so the answer can recognise it)."""
    said = " ".join(head[:HEAD_CHARS].split()).strip(" ,;:")
    return clip_words(said[:1].upper() + said[1:], ABOUT_CHARS)


def _closed_by(message: RecentMessage, threads: list[Thread], patterns: PatternSet) -> list[Thread]:
    if not message.work:
        return []
    text = prepare_text(message.text)
    if not patterns.closes(text):
        return []
    closing = closing_sentence(text, patterns)
    if not closing:
        return []
    words = words_of(text)
    return [t for t in threads if t.status == "closed" and t.about == closing and matches_title(t.title, words)]


def reopen_corrected(threads: list[Thread], recent: Sequence[RecentMessage], event: MessageEvent,
                     text: MatchText, patterns: PatternSet) -> list[Thread]:
    """``threads`` with those the agent's last turn closed and this user message corrects open again."""
    if event.role != "user" or "closed" not in map(_STATUS, threads):
        return threads
    # (the agent's turn first: a closure is work, and a turn without work — ~5 in 6 of the bench's —
    # is known from the window, where a correction is looked for by the signal patterns' own scan)
    turn = _agent_turn(recent, event.session)
    if not any(m.work for m in turn):
        return threads
    signals = get_signal_patterns(patterns.languages)
    if not signals.is_correction(text, after_question=False):  # most messages correct nothing
        return threads
    if not _corrects(text, signals, signals.is_question(prepare_text(turn[0].text))):
        return threads
    reopen = {t.id for t in _closed_by(turn[0], threads, patterns)}
    if len(turn) > 1:
        words = words_of(text)
        for message in turn[1:]:
            reopen.update(t.id for t in _closed_by(message, threads, patterns) if matches_title(t.title, words))
    if not reopen:
        return threads
    about = correction_about(text.original)
    return [_replace(t, status="open", last_activity=event.ts, about=about) if t.id in reopen else t
            for t in threads]


def answered(threads: list[Thread], recent: Sequence[RecentMessage], event: MessageEvent, words: Words,
             patterns: PatternSet) -> frozenset[str]:
    """The ids of the open threads the user's correction just before this agent message
    reopened and this message names a title word of: its closure closes them."""
    if event.role != "assistant":
        return frozenset()
    previous = next(_earlier(recent, event.session), None)
    if previous is None or previous.role != "user":
        return frozenset()
    about = correction_about(previous.text)
    candidates = [t for t in threads if t.status == "open" and t.about == about
                  and matches_title(t.title, words, min_overlap=1, one_word=False)]
    if not candidates:
        return frozenset()
    signals = get_signal_patterns(patterns.languages)
    if not _corrects(prepare_text(previous.text), signals, after_question=False):
        return frozenset()
    return frozenset(t.id for t in candidates)
