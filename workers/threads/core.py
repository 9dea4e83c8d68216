"""Thread lifecycle as pure functions over the contract's ``ThreadsDoc``.

Ported from the reference's ``ThreadTracker`` (openclaw-cortex ``src/thread-tracker.ts``):
topics open threads, decisions and waits attach to the open threads they mention (word
overlap, design appendix B), closure words close them, closed threads age out after
``prune_days`` and the list is capped at ``max_threads``. Differences, all for replay or
bounded documents:

* "now" is the event's ``ts``; ids derive from the event id (``unique_id``: unique within
  the document even when a publisher reuses an event id);
* the cap drops the oldest closed threads first and then, unlike the reference (which
  never dropped an open thread), the oldest open ones, so the document stays bounded;
* a thread keeps its latest ``MAX_THREAD_DECISIONS`` decisions (unbounded there);
* a thread's summary is what the conversation said about it and where it stands
  (``workers.threads.summary``), not "Topic detected from <sender>";
* ``session_mood`` is the mood of the latest message's session: a new session's first
  message without a mood word resets it to neutral (the reference kept an earlier
  session's mood for ever);
* a topic that names a known open thread ("Back to the payment gateway integration: …")
  resumes it, and so does any message naming an open thread: its ``last_activity`` is the
  message's (the reference moved it only for a closure, a decision or a wait);
* topics nobody announced with a cue phrase open threads too, when the conversation keeps
  coming back to them with work attached (``workers.threads.topics``);
* a user's correction of the agent's closure ("Done ✅ the frontend build is fixed." — "No,
  that's wrong, the build is still red on CI!") reopens the threads it closed, and the
  agent's answer with a closure closes them again (``workers.threads.corrections``); the
  reference closed a thread for good on any closure word;
* a wait ends when the thread moves on past it — what was awaited arrived ("Jonas hat die
  Crash-Logs endlich geschickt"), or the awaited party answered in the thread
  (``workers.threads.waits``); the reference kept ``waiting_for`` until a newer wait.

The functions return a new document and never mutate their input. Threads a message does
not change are shared between the old and the new document: treat both as values.
Documents change with ``msgspec.structs.replace``, so a field this module does not know
(a new one with a default) is carried over; ``integrity`` too: the shell owns it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from functools import lru_cache
from operator import attrgetter, is_
from typing import Final

import msgspec

from schemas.docs import Integrity, RecentMessage, Thread, ThreadsDoc
from schemas.events import FeedbackEvent, MessageEvent
from schemas.types import PRIORITIES, Mood, Priority
from shared.config import ThreadsSettings
from workers.conversation.feedback import FeedbackError, feedback_target
from workers.conversation.ids import unique_id
from workers.conversation.patterns import MatchText, PatternSet, prepare_text
from workers.conversation.sentences import sentence_spans
from workers.conversation.signals import (
    Signals,
    Words,
    detect_mood,
    extract_signals,
    is_noise_topic,
    matches_title,
    may_name,
    title_substrings,
    words_of,
)
from workers.conversation.statements import DecisionText
from workers.render import clip_words
from workers.summaries import CJK, compose_summary, without_title_frame
from workers.threads.corrections import answered, reopen_corrected
from workers.threads.summary import about_topic, closing_sentence, follow_claims
from workers.threads.topics import PhraseMemory, Topic, phrases_of, track
from workers.threads.waits import end_waits

MAX_THREAD_DECISIONS: Final = 20
SNIPPET_CHARS: Final = 160  # decisions and waiting_for are cut to this (between words, "…")

_replace = msgspec.structs.replace
_LAST_ACTIVITY: Final = attrgetter("last_activity")
_TITLE: Final = attrgetter("title")
_STATUS: Final = attrgetter("status")


def empty_threads_doc(ts: datetime) -> ThreadsDoc:
    return ThreadsDoc(updated=ts, session_mood="neutral", threads=[], integrity=Integrity())


def infer_priority(text: str, patterns: PatternSet) -> Priority:
    """``high`` when the text names a high-impact keyword of any enabled language."""
    return "high" if patterns.is_high_impact(text.lower()) else "medium"


def _is_known(threads: list[Thread], topic: str) -> bool:
    """A thread's title is the topic, or shares two of its words with it:
    the titles compared in C, and their words (``matches_title``, two of them) looked for only
    when one is even a substring of the topic (``signals.may_name``)."""
    titles = tuple([t.title for t in threads])
    if topic.lower() in map(str.lower, titles):
        return True
    topic_words = words_of(topic)
    return may_name(titles, topic_words.lowered) and any(
        matches_title(title, topic_words, one_word=False) for title in titles)


def _new_thread(thread_id: str, title: str, about: str, event: MessageEvent, mood: Mood,
                patterns: PatternSet) -> Thread:
    return Thread(
        id=thread_id,
        title=title,
        status="open",
        priority=infer_priority(title, patterns),
        summary="",
        decisions=[],
        waiting_for=None,
        mood=mood,
        last_activity=event.ts,
        created=event.ts,
        channel=event.channel,
        about=about,
    )


def _open_threads_for_topics(
    threads: list[Thread], topics: Iterable[str], event: MessageEvent, mood: Mood, patterns: PatternSet,
    text: MatchText,
) -> list[Thread]:
    """New threads for the message's topics. A topic that names a known thread ("Back to the
    payment gateway integration: …") opens none; the message names that thread, so it is
    active now if open (``_touch_named``)."""
    taken: set[str] | None = None
    for index, topic in enumerate(topics):
        if is_noise_topic(topic, patterns) or _is_known(threads, topic):
            continue
        taken = {t.id for t in threads} if taken is None else taken
        thread_id = unique_id(event.id, "thread", index, taken)
        taken.add(thread_id)
        threads.append(_new_thread(thread_id, _headed(topic, text, patterns), about_topic(text, topic), event,
                                   mood, patterns))
    return threads


def _headed(topic: str, text: MatchText, patterns: PatternSet) -> str:
    """The title of a cue topic of one word said right after a noun phrase of two words and the
    cue ("I'm thinking about starting a community project regarding infrastructure"): the noun
    phrase is what the topic is about, the word alone a fragment of it — the title is the
    speaker's own words from the phrase on ("community project regarding infrastructure"; issue
    37, twentieth round). A topic after an article or a possessive ("… regarding the
    infrastructure"), after a clause mark ("OK, back to pricing") or after function words ("a
    question regarding pricing", "let's talk about pricing") keeps its one word; so does every
    topic of two words or more. Asked only of a message whose cue opens a thread."""
    if " " in topic or "-" in topic:
        return topic
    at = text.lowered.find(topic.lower())
    if at <= 0:
        return topic
    before = text.original[:at].split()
    if len(before) < 3 or before[-1].lower() in patterns.definite:
        return topic
    head = " ".join(before[-3:-1])
    if phrases_of(head.lower(), patterns.phrase_breaks) != {head.lower(): 2}:
        return topic
    return f"{head} {before[-1]} {topic}"


# Ids of threads opened from candidates follow the cue topics' (a message has at most
# MAX_MATCHES_PER_FAMILY of those), so the two never derive the same id.
_CANDIDATE_INDEX = 1000


def _open_threads_for_candidates(
    threads: list[Thread], promoted: list[Topic], event: MessageEvent, mood: Mood, patterns: PatternSet,
    earlier: list[RecentMessage],
) -> list[Thread]:
    """New threads for the phrases the window promoted, each with the window's earlier mentions
    of it counted (``_said_before``)."""
    taken = {t.id for t in threads}
    for index, topic in enumerate(promoted, _CANDIDATE_INDEX):
        thread_id = unique_id(event.id, "thread", index, taken)
        taken.add(thread_id)
        thread = _new_thread(thread_id, topic.title, topic.about, event, mood, patterns)
        said, sure = _said_before(topic.title, earlier, patterns.definite)
        threads.append(_replace(thread, mentions=said, definite=sure) if said else thread)
    return threads


def _said_before(title: str, earlier: list[RecentMessage], definite: frozenset[str]) -> tuple[int, int]:
    """How the window's messages before the one that opened a phrase's thread referred to it
    (``_reference``: ``Thread.mentions``, ``Thread.definite``), which the counts began only at the
    opening message: "I'm trying to get my head around the visa requirements …" and, five
    messages on, "I'm proud of researching visa requirements …" opened "visa requirements" as a
    thing only ever said as a kind (``briefing.talked_of_in_general``; issue 37, twenty-third
    round). Asked only when a phrase opens a thread: the window's heads, one substring search
    each."""
    if not definite:  # no enabled language has articles: nothing is counted (``_touch_named``)
        return 0, 0
    said = sure = 0
    for m in earlier:
        a, b = _reference(title, m.text.lower(), definite)
        said += a
        sure += b
    return said, sure


def _carries_work(text: MatchText, signals: Signals, patterns: PatternSet) -> bool:
    """A decision, a wait, a closure or a high-impact word: work, not chit-chat (a promise
    counts too; ``topics`` looks for one only when it matters)."""
    return bool(signals.decisions or signals.waits or signals.closes) or patterns.is_high_impact(text.lowered)


class _Summaries:
    """``compose_summary`` of a thread, kept by what it reads of it — ``about``, ``title``, the
    last decision, ``status`` and ``waiting_for`` — and nothing else: a message that names a
    thread changes its ``last_activity`` and its counts, which the summary does not say, and the
    thread's summary was composed again (~2 µs) each time. Bounded (emptied when full). An object,
    not a module-level dict: the pattern fingerprint (``shared.fingerprint``) reads those."""

    LIMIT: Final = 4096

    def __init__(self) -> None:
        self.by_parts: dict[tuple[str | None, str, str | None, str, str | None], str] = {}

    def of(self, thread: Thread) -> str:
        key = (thread.about, thread.title, thread.decisions[-1] if thread.decisions else None, thread.status,
               thread.waiting_for)
        summary = self.by_parts.get(key)
        if summary is None:
            if len(self.by_parts) >= self.LIMIT:
                self.by_parts.clear()
            summary = self.by_parts[key] = compose_summary(thread)
        return summary


_summary_of = _Summaries().of


def _summarised(threads: list[Thread], before: list[Thread]) -> list[Thread]:
    """Threads this message changed, with their summary recomposed (``_Summaries``: a thread
    whose summary reads as it did keeps it). The message keeps the order of ``before`` and
    appends new threads, so a position compares old and new."""
    n = len(before)
    if len(threads) == n and all(map(is_, threads, before)):  # (most messages change no thread)
        return threads
    return [t if (i < n and before[i] is t) or (summary := _summary_of(t)) == t.summary
            else _replace(t, summary=summary) for i, t in enumerate(threads)]


def _close_matching(threads: list[Thread], named: set[str], ts: datetime, text: MatchText,
                    patterns: PatternSet, also: frozenset[str] = frozenset()) -> list[Thread]:
    """Close the open threads the message names (``named``: their ids, ``_named``) and those of
    ``also`` (ids of threads the message answers, ``corrections.answered``)."""
    closing: str | None = None
    closed = []
    for t in threads:
        if t.status == "open" and (t.id in named or t.id in also):
            closing = closing_sentence(text, patterns) if closing is None else closing
            about = without_title_frame(closing, t.title) if closing else t.about
            closed.append(_replace(t, status="closed", last_activity=ts, about=about))
        else:
            closed.append(t)
    return closed


def _with_decision(thread: Thread, snippet: str, ts: datetime) -> Thread:
    decisions = [*thread.decisions, snippet][-MAX_THREAD_DECISIONS:]
    return _replace(thread, decisions=decisions, last_activity=ts)


def _append_decisions(threads: list[Thread], decisions: Iterable[DecisionText], ts: datetime) -> list[Thread]:
    for decision in decisions:
        # The thread is found by the whole sentence ("For the auth migration we decided …");
        # what it records is the decision, cut between words.
        context_words = words_of(f"{decision.sentence} {decision.why}")
        snippet = clip_words(decision.what, SNIPPET_CHARS)
        threads = [
            _with_decision(t, snippet, ts)
            if t.status == "open" and snippet not in t.decisions and matches_title(t.title, context_words)
            else t
            for t in threads
        ]
    return threads


def _set_waiting(threads: list[Thread], wait: str, named: set[str], event: MessageEvent) -> list[Thread]:
    # The reference assigns every wait in turn to every matching thread: the last one wins.
    snippet = clip_words(wait, SNIPPET_CHARS)
    return [
        _replace(t, waiting_for=snippet, waiting_role=event.role, last_activity=event.ts) if t.id in named else t
        for t in threads
    ]


def _thread_mood(thread: Thread, mood: Mood, text: MatchText, sentences: list[tuple[int, int]],
                 patterns: PatternSet) -> Mood:
    """The mood a message gives a thread it names: the mood of its sentences that name the
    thread, when some do (else the message's: the title is named across sentences). The
    reference gave every named thread the message's mood, so "Thanks! Next I'll look at the
    dashboard performance bug once Maria sends the profile. Nice momentum today!" made the
    frustrating bug "excited"; a sentence naming the thread without a mood word keeps its own."""
    if len(sentences) < 2:
        return mood
    said = [text.original[a:b] for a, b in sentences if matches_title(thread.title, words_of(text.original[a:b]))]
    if not said:
        return mood
    return detect_mood(" ".join(said), patterns)


def _set_mood(threads: list[Thread], mood: Mood, named: set[str], text: MatchText, patterns: PatternSet
              ) -> list[Thread]:
    if not named:
        return threads
    sentences = sentence_spans(text.original)
    moods = {t.id: _thread_mood(t, mood, text, sentences, patterns) for t in threads if t.id in named}
    return [_replace(t, mood=m) if (m := moods.get(t.id, "neutral")) != "neutral" and m != t.mood else t
            for t in threads]


@lru_cache(maxsize=8)
def _days(days: int) -> timedelta:
    """``timedelta(days=days)``, made once per setting (``prune_and_cap`` asks it every message)."""
    return timedelta(days=days)


def prune_and_cap(threads: list[Thread], settings: ThreadsSettings, now: datetime) -> list[Thread]:
    """Drop closed threads idle for ``prune_days``, then cap at ``max_threads``.

    The cap removes the oldest closed threads first, then the oldest open ones; the
    survivors keep their order.
    """
    cutoff = now - _days(settings.prune_days)
    if len(threads) <= settings.max_threads and min(map(_LAST_ACTIVITY, threads), default=cutoff) >= cutoff:
        return threads  # none idle that long, none over the cap: as they are (compared in C)
    kept = [t for t in threads if not (t.status == "closed" and t.last_activity < cutoff)]
    excess = len(kept) - settings.max_threads
    if excess <= 0:
        return kept
    def age(i: int) -> tuple[bool, datetime, int]:
        return (kept[i].status == "open", kept[i].last_activity, i)  # closed sorts first

    dropped = set(sorted(range(len(kept)), key=age)[:excess])
    return [t for i, t in enumerate(kept) if i not in dropped]


def _rebuilt(base: ThreadsDoc, updated: datetime, session_mood: Mood, threads: list[Thread],
             **more: object) -> ThreadsDoc:
    return _replace(base, updated=updated, session_mood=session_mood, threads=threads, **more)


def _apply_signals(
    threads: list[Thread], text: MatchText, signals: Signals, mood: Mood, event: MessageEvent, patterns: PatternSet,
    recent: list[RecentMessage],
) -> list[Thread]:
    # The reference's order: close first, so decisions, waits and mood reach only the
    # threads that stay open; then every open thread the message names is active now.
    ts = event.ts
    words = words_of(text)
    # the open threads the message names (decisions below are matched by their own sentence):
    # asked once — the waits, the closures and the touches below ask it of the same titles and
    # the same words, and none of the stages before the last changes a title or opens a thread
    naming = _named(threads, words)
    # a wait the message ends (what was awaited came, the awaited party answered) is over
    # before a wait the message says replaces it (``workers.threads.waits``)
    threads = end_waits(threads, text, event, patterns, recent, signals.closes, naming)
    named = naming
    if signals.closes:
        also = answered(threads, recent, event, words, patterns)
        threads = _close_matching(threads, naming, ts, text, patterns, also)
        # (the threads it closed are named no more: only open ones are)
        named = {t.id for t in threads if t.id in naming and t.status == "open"} if naming else naming
    threads = _append_decisions(threads, signals.decisions, ts)
    threads = follow_claims(threads, text.original, event.sender or event.role)  # one value of a fact
    if signals.waits:
        threads = _set_waiting(threads, signals.waits[-1], named, event)
    if mood != "neutral":
        threads = _set_mood(threads, mood, named, text, patterns)
    return _touch_named(threads, named, ts, text.lowered, patterns.definite)


def _named(threads: list[Thread], words: Words) -> set[str]:
    """The ids of the open threads the message names (``matches_title``): none at once when no
    word of their titles is even a substring of it (``signals.may_name``; the open titles' words
    cached per list of titles and statuses, both read in C)."""
    if not threads:
        return set()
    said = _open_title_substrings(tuple(map(_TITLE, threads)), tuple(map(_STATUS, threads)))
    if not any(map(words.lowered.__contains__, said)):
        return set()
    return {t.id for t in threads if t.status == "open" and matches_title(t.title, words)}


@lru_cache(maxsize=1024)
def _open_title_substrings(titles: tuple[str, ...], statuses: tuple[str, ...]) -> tuple[str, ...]:
    return title_substrings(tuple(title for title, status in zip(titles, statuses, strict=True) if status == "open"))


_QUOTE_S: Final = ("'s", "’s")


def _reference(title: str, lowered: str, definite: frozenset[str]) -> tuple[int, int]:
    """(1, 1) when the message says ``title`` as a phrase right after a definite article or a
    possessive (``PatternSet.definite``: "the dance studio", "my online store", "le déménagement")
    or a word ending on an English "'s" ("Jon's investors"), (1, 0) when it says it otherwise, (0,
    0) when it names the thread without saying its title as a phrase, or its title is CJK (written
    without spaces or articles): the first occurrence."""
    if not title.isascii() and CJK.search(title):  # no spaces, no articles: nothing to read
        return 0, 0
    title = title.lower()
    at = lowered.find(title)
    while at > 0 and lowered[at - 1].isalnum():  # inside a longer word: the next occurrence
        at = lowered.find(title, at + 1)
    if at < 0:
        return 0, 0
    before = lowered[max(0, at - 24):at].rstrip()
    word = before.rsplit(None, 1)[-1].lstrip("\"“„«(*_[") if before else ""
    return 1, 1 if word in definite or word.endswith(_QUOTE_S) else 0


def _touch_named(threads: list[Thread], named: set[str], ts: datetime, lowered: str,
                 definite: frozenset[str]) -> list[Thread]:
    """An open thread the message names is active now, whatever the message says of it
    ("Next I'll look at the dashboard performance bug once Maria sends the profile"; "Back to
    the payment gateway integration: …" ten days later): the reference moved ``last_activity``
    only for a closure, a decision or a wait, so a thread talked about all afternoon showed
    "Last:" at its morning wait, and one resumed after ten quiet days "Last:" ten days ago.

    It also counts how the message referred to it (``_reference``: ``Thread.mentions``,
    ``Thread.definite``), which Active Threads reads (``workers.threads.briefing.
    talked_of_in_general``; issue 37, twelfth round): one substring search a named thread, in
    the one copy of it the message makes."""
    if not named:
        return threads
    if not definite:  # no enabled language has articles (``PatternSet.definite``): nothing is counted
        lowered = ""
    out = []
    for t in threads:
        if t.id in named:
            said, sure = _reference(t.title, lowered, definite)
            if said or t.last_activity < ts:
                out.append(_replace(t, last_activity=max(ts, t.last_activity), mentions=t.mentions + said,
                                    definite=t.definite + sure))
                continue
        out.append(t)
    return out


def apply_message(
    doc: ThreadsDoc | None, event: MessageEvent, settings: ThreadsSettings, patterns: PatternSet
) -> ThreadsDoc:
    """The threads document after one message (the reference's ``processMessage``)."""
    base = doc if doc is not None else empty_threads_doc(event.ts)
    text = prepare_text(event.content)
    signals = extract_signals(text, patterns)
    mood = detect_mood(text, patterns)
    ts = event.ts

    ordinal = base.messages + 1
    threads = _open_threads_for_topics(list(base.threads), signals.topics, event, mood, patterns, text)
    memory = PhraseMemory(base.settled, base.heard, base.returns)
    update = track(base.recent, memory, ordinal, text.original, text.lowered,
                   lambda: _carries_work(text, signals, patterns), threads, patterns, event.role, event.session)
    if update.promoted:
        threads = _open_threads_for_candidates(threads, update.promoted, event, mood, patterns, update.recent[:-1])
    if threads:
        if event.role == "user":  # a correction of the agent's closure reopens what it closed
            threads = reopen_corrected(threads, base.recent, event, text, patterns)
        threads = _summarised(_apply_signals(threads, text, signals, mood, event, patterns, base.recent),
                              base.threads)
    # The mood of the session this message is in: a message of a new session without a mood
    # word starts it neutral (the reference kept the last mood of any earlier session, so a
    # briefing after a calm session said "Last session mood: frustrated" of the one before).
    previous = base.recent[-1].session if base.recent else ""
    same_session = not previous or previous == event.session
    session_mood = mood if mood != "neutral" else base.session_mood if same_session else "neutral"
    return _rebuilt(base, ts, session_mood, prune_and_cap(threads, settings, ts), messages=ordinal,
                    recent=update.recent, settled=update.settled, heard=update.heard, returns=update.returns)


def _thread_change(event: FeedbackEvent) -> dict[str, object] | None:
    if event.kind == "thread_close":
        return {"status": "closed", "last_activity": event.ts}
    if event.kind == "thread_priority":
        if event.value not in PRIORITIES:
            levels = ", ".join(PRIORITIES)
            raise FeedbackError(f"thread_priority {event.id}: {event.value!r} is not one of {levels}")
        return {"priority": event.value}
    return None


def apply_feedback(doc: ThreadsDoc | None, event: FeedbackEvent, settings: ThreadsSettings) -> ThreadsDoc:
    """Apply ``thread_close`` or ``thread_priority`` (target = thread id, value = level).

    Other kinds change nothing but ``updated``; an unknown thread id (pruned meanwhile) is
    a no-op. A missing target or an invalid priority raises ``FeedbackError``.
    """
    base = doc if doc is not None else empty_threads_doc(event.ts)
    change = _thread_change(event)
    threads = list(base.threads)
    if change is not None:
        target = feedback_target(event)
        threads = [_replace(t, **change) if t.id == target else t for t in threads]
        threads = prune_and_cap(_summarised(threads, base.threads), settings, event.ts)
    return _rebuilt(base, event.ts, base.session_mood, threads)
