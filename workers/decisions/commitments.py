"""Commitments as pure functions over the contract's ``CommitmentsDoc``.

A promise in a message ("I'll fix the build tomorrow", "ich werde das morgen fixen") is
an ``open`` commitment of its sender (``workers.conversation.promises``): its ``what`` the
task ("fix the build"), its ``due`` the day the promise names as ``YYYY-MM-DD``, counted
from the event's time in the agent's time zone (``workers.conversation.due``). It becomes
``overdue`` once its due day has passed, measured against the agent's latest event time and
re-checked on every event — and only then: a promise that named no day is never late (the
reference's age rule made "keep ya posted" OVERDUE for 294 days; a briefing lists an undated
promise for a while, then only counts it: ``workers.decisions.briefing``). It becomes ``done`` when a
later message with a closure word (not negated: "in review, not closed" closes nothing)
names it — most of its words, at least two (or its only one), a word of the same family
counting ("The volume expansion on db-2 is done" names "expand the volume on db-2 by 200
GB") — or a ``commitment_done`` feedback names it. The reference (openclaw-cortex
``src/commitment-tracker.ts``) had only the age rule, against the wall clock, and never
filled ``due``; here every time comes from events.

A promise's task is often vague on its own ("den Fix einbauen"): the message says what it is
about elsewhere ("Beim Onboarding-Flow liegt es am Safari-Autofill. Ich werde den Fix morgen
einbauen."). Such a commitment keeps that ``topic`` — the nearest one the message names before
the promise (``signals.message_topics``: a cue's topic, as threads find them, or the frame a
sentence opens on, "Beim X", "For the X"), unless ``what`` already names it — and a closure
that names the topic (as a thread's title is named: its one word, or two of its words) and at
least one of the task's own words, not the topic's, fulfils it too: "Der Onboarding-Flow ist
gefixt" keeps it, "Der Login-Flow ist gefixt" and "The Onboarding-Flow is done" do not. The
reference has no fulfilment from messages at all (its commitments stay open until they age);
the topic is Cortex's own.

A closure the user contradicts does not stand (Cortex's own): the commitments an agent's turn
closed ("Done! The payment service is deployed ✅") open again when the user's next message in
the session corrects it ("No, that's wrong, the deploy failed" — the trace analyzer's
correction phrases, as a thread's closure is reopened, ``workers.threads.corrections``; not a
message that also thanks, nor a plain "no" to the agent's question). The turn's closures are
kept in the document (``CommitmentsDoc.agent_turn``), so this too is a function of the events.

A new undated commitment said in English is judged again when the next message of the session
— its reply — is said (``learnt.replies_keep``, issue 37's eighth round): "Thanks!" after a task
keeps it, a reply that shows it was a courtesy or a move of the moment drops it. Its sentence's
score waits in the document (``CommitmentsDoc.awaiting``), so this too is a function of the
events; a commitment said last stays as the rules kept it until something answers it.

The functions return a new document and never mutate their input (nor a list they
return): unchanged commitments — and an unchanged list of them — are shared between the
two. The document changes with ``msgspec.structs.replace``: fields not named here
(``integrity``, owned by the shell, a new field) are carried over.
"""

from __future__ import annotations

import functools
import math
import re
from collections import OrderedDict, deque
from datetime import date as date_type
from datetime import datetime, timedelta
from itertools import chain
from typing import Final, NamedTuple
from zoneinfo import ZoneInfo

import msgspec

from schemas.docs import AgentTurn, AwaitingReply, Commitment, CommitmentsDoc, Integrity, Request
from schemas.events import FeedbackEvent, MessageEvent
from schemas.types import Role
from shared.config import CommitmentsSettings
from workers.conversation import learnt
from workers.conversation.due import due_string
from workers.conversation.feedback import feedback_target
from workers.conversation.ids import unique_id
from workers.conversation.past import past_forms
from workers.conversation.patterns import AnyOf, MatchText, PatternSet, any_of, prepare_text
from workers.conversation.promises import Promise, due_phrase, find_delegated, find_promises, sentence_of, shown_task
from workers.conversation.sentences import tidy
from workers.conversation.signal_patterns import get_signal_patterns
from workers.conversation.signals import Words, matches_title, message_topics, title_terms, words_of
from workers.render import clip_words

_replace = msgspec.structs.replace
UTC_ZONE: Final = ZoneInfo("UTC")
FULFIL_SHARE: Final = 0.6  # of a task's words a closure must name
MAX_TURN_CLOSED: Final = 50  # commitment ids an agent's turn remembers closing
RESTATED_WORDS: Final = 3  # words a promise said again shares with the open one at least
# ``who`` of a task given to the one addressed, before the name of who asked ("asked by Project
# Manager"): the addressee is not named (a meeting's "you", the agent), the asker is
ASKED_BY: Final = "asked by "


def empty_commitments_doc(ts: datetime) -> CommitmentsDoc:
    return CommitmentsDoc(updated=ts, commitments=[], integrity=Integrity())


def _latest(base: CommitmentsDoc, ts: datetime) -> datetime:
    # ``updated`` holds the latest event time seen, so an event with an older timestamp
    # (a late producer) does not move "now" backwards.
    return max(base.updated, ts)


def _due_day(due: str | None) -> str | None:
    """``due`` when it is a day (``YYYY-MM-DD``), else None."""
    return due if due is not None and len(due) == 10 and due[4] == "-" and due[7] == "-" else None


class _Open(NamedTuple):
    """What a message asks of a list of commitments before anything else: the earliest due day
    among the open ones (a commitment is late exactly when that one is), and who has one not
    done, with the past forms of those tasks' verbs (only they can report one done, in one of
    those words: ``_close_reported``)."""

    first_deadline: str | None
    reported_by: dict[str, tuple[str, ...]]  # promiser → the past forms of their tasks' verbs
    # asker → the sessions their open tasks for the next meeting were given in (``_close_given``)
    given: dict[str, frozenset[str]]


_OPEN_KEPT: Final = 4096
# id(list) → (the list, its ``_Open``); the list is held so that its id cannot be reused while
# the entry exists
_open_cache: OrderedDict[int, tuple[list[Commitment], _Open]] = OrderedDict()


def _open_of(commitments: list[Commitment]) -> _Open:
    """``_Open`` of a list, computed once per list — the functions here share an unchanged list
    between documents (never mutating it), so on most messages this is a lookup instead of a
    scan of every commitment."""
    hit = _open_cache.get(id(commitments))
    if hit is not None and hit[0] is commitments:
        return hit[1]
    first = min((day for c in commitments if c.status == "open" and (day := _due_day(c.due)) is not None),
                default=None)
    reported_by: dict[str, set[str]] = {}
    for c in commitments:
        if c.status != "done" and (forms := _past_forms_of(c.what)):
            reported_by.setdefault(c.who, set()).update(forms)
    given: dict[str, set[str]] = {}
    for c in commitments:
        if c.session is not None and c.status != "done":
            given.setdefault(c.who.removeprefix(ASKED_BY), set()).add(c.session)
    found = _Open(first, {who: tuple(sorted(forms)) for who, forms in reported_by.items()},
                  {who: frozenset(sessions) for who, sessions in given.items()})
    _open_cache[id(commitments)] = (commitments, found)
    if len(_open_cache) > _OPEN_KEPT:
        _open_cache.popitem(last=False)
    return found


def _overdue(commitments: list[Commitment], now: datetime, tz: ZoneInfo = UTC_ZONE) -> list[Commitment]:
    """A new list with open commitments past their due day overdue; the same list when none
    is (``_open_of`` tells without a scan).

    A due day (``YYYY-MM-DD``, local) is over once the local date of ``now`` is later:
    ISO dates compare as strings. A commitment without a due day — or with a due that is no
    date (a document from before due dates) — is never overdue."""
    first_day = _open_of(commitments).first_deadline
    if first_day is None:  # (most documents: no open commitment has a day, no local date to work out)
        return commitments
    today = _local_day(now, tz)
    if first_day >= today:
        return commitments
    flags = [c.status == "open" and (d := _due_day(c.due)) is not None and d < today for c in commitments]
    return [_replace(c, status="overdue") if flag else c for c, flag in zip(commitments, flags, strict=True)]


# the local day last worked out: (zone, the instants it spans [start, end), its ISO date)
_last_day: list[tuple[ZoneInfo, datetime, datetime, str]] = []


def _local_day(now: datetime, tz: ZoneInfo) -> str:
    """The ISO date of ``now`` in ``tz`` (``now.astimezone(tz).date().isoformat()``). The day last
    worked out is kept with the instants it spans: a worker's next event is almost always on the
    same local day, and two comparisons answer it (an ``astimezone`` and a date cost ~1 µs on each
    message of an agent with a dated promise open: most of the bench's)."""
    if now.tzinfo is None:  # (a naive time is the machine's local time to ``astimezone``: not kept)
        return now.astimezone(tz).date().isoformat()
    if _last_day:
        zone, start, end, day = _last_day[0]
        if zone is tz and start <= now < end:
            return day
    date = now.astimezone(tz).date()
    # the day's first and next day's first instants (a zone's midnight may be skipped or repeated:
    # the span is the instants whose local date is this one, worked out from the zone's own rules)
    start = _day_start(date, tz)
    end = _day_start(date + timedelta(days=1), tz)
    day = date.isoformat()
    # kept only when the span is this date's at both ends (a zone that skipped a whole day, as
    # Samoa did in 2011, is worked out at every call)
    if start <= now < end and start.astimezone(tz).date() == date \
            and (end - timedelta(microseconds=1)).astimezone(tz).date() == date:
        _last_day[:] = [(tz, start, end, day)]
    return day


def _day_start(date: date_type, tz: ZoneInfo) -> datetime:
    """The first instant whose local date in ``tz`` is ``date``."""
    midnight = datetime(date.year, date.month, date.day, tzinfo=tz)
    first = midnight.astimezone(UTC_ZONE)
    # a midnight in a gap (a zone moving its clocks at 00:00) maps past the day's first instant, or
    # a repeated one to its later instant: step back while the instant before is still this date
    while (first - timedelta(minutes=1)).astimezone(tz).date() == date:
        first -= timedelta(minutes=1)
    return first


_SUFFIXES: Final = ("ing", "ed", "es", "en", "er", "s", "t", "e")


@functools.lru_cache(maxsize=1 << 14)
def _stem(word: str) -> str:
    """A crude stem, so "fix", "fixed", "fixen" and "gefixt" name the same thing (cached: every
    word of a closure message is stemmed, ~40 µs a bench message that says one, and words repeat)."""
    if len(word) > 5 and word.startswith("ge"):
        word = word[2:]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


_FAMILY_PREFIX: Final = 5  # letters two words must start with alike to be of one family ("expan")


class _Said(NamedTuple):
    """A closure message's stemmed words, and those of five letters or more by their first
    five (found once per message, looked up for every word of every open commitment)."""

    stems: frozenset[str]
    families: dict[str, list[str]]


def _said_in(words: Words) -> _Said:
    stems = frozenset(map(_stem, words.tokens))  # (``map``: the cached stems taken in C)
    families: dict[str, list[str]] = {}
    for stem in stems:
        if len(stem) >= _FAMILY_PREFIX:
            families.setdefault(stem[:_FAMILY_PREFIX], []).append(stem)
    return _Said(stems, families)


def _named(terms: frozenset[str], said: _Said) -> int:
    """How many of ``terms`` the message says: as a stem, or as a word of the same family —
    one that starts alike for five letters and four fifths of the shorter word: "expand" and
    "expansion", "migrate" and "migration", "deploy" and "deployment" (the crude stem leaves
    them apart)."""
    exact = terms & said.stems
    return len(exact) + sum(
        1 for term in terms - exact
        # a shorter term's first letters are no key: families hold stems of five letters or more
        if any(5 * _shared_start(term, stem) >= 4 * min(len(term), len(stem))
               for stem in said.families.get(term[:_FAMILY_PREFIX], ())))


def _shared_start(a: str, b: str) -> int:
    """How many letters ``a`` and ``b`` start with alike (both start with the family prefix)."""
    n, i = min(len(a), len(b)), _FAMILY_PREFIX
    while i < n and a[i] == b[i]:
        i += 1
    return i


@functools.lru_cache(maxsize=4096)
def _task_terms(what: str, stopwords: frozenset[str]) -> frozenset[str]:
    """The stemmed words of a task, stop words aside (a commitment's ``what`` is checked
    against every closure message while it is open: computed once)."""
    return frozenset(_stem(t) for t in title_terms(what) - stopwords)


def _fulfilled(commitment: Commitment, said: _Said, words: Words, stopwords: frozenset[str]) -> bool:
    """The closure names the task: most of its words (at least two, or its only one) — or
    the commitment's topic and one of the task's own words.

    "The auth migration is done" names two of "write the rollback script for the auth
    migration"'s five words: the script is not written. A task without words of three
    letters (a CJK one, without spaces) is matched whole.
    """
    terms = _task_terms(commitment.what, stopwords)
    if not terms:
        whole = commitment.what.strip().lower()
        return bool(whole) and whole in words.lowered
    needed = max(min(2, len(terms)), math.ceil(FULFIL_SHARE * len(terms)))
    if _named(terms, said) >= needed:
        return True
    topic = commitment.topic
    return topic is not None and _named(terms - _task_terms(topic, stopwords), said) > 0 \
        and matches_title(topic, words)


class _Owed(NamedTuple):
    """Which commitments of a list a closure may fulfil, by the words it says: every commitment
    not done is listed under each of its task's terms and their first five letters (a closure
    names a task only by naming one of its terms, as a stem or as a word of its family:
    ``_named``), or — a task without such words, matched whole — in ``whole``."""

    by_key: dict[str, tuple[int, ...]]
    whole: tuple[int, ...]


_OWED_KEPT: Final = 1024
# id(list) → (the list, the stop words, its ``_Owed``): as ``_open_cache``, the list held
_owed_cache: OrderedDict[int, tuple[list[Commitment], frozenset[str], _Owed]] = OrderedDict()


def _owed_of(commitments: list[Commitment], stopwords: frozenset[str]) -> _Owed:
    """``_Owed`` of a list, computed once per list (an unchanged list is shared between documents)."""
    hit = _owed_cache.get(id(commitments))
    if hit is not None and hit[0] is commitments and hit[1] is stopwords:
        return hit[2]
    by_key: dict[str, list[int]] = {}
    whole: list[int] = []
    for i, c in enumerate(commitments):
        if c.status == "done":
            continue
        terms = _task_terms(c.what, stopwords)
        if not terms:
            whole.append(i)
        for key in {*terms, *(t[:_FAMILY_PREFIX] for t in terms)}:
            by_key.setdefault(key, []).append(i)
    found = _Owed({k: tuple(v) for k, v in by_key.items()}, tuple(whole))
    _owed_cache[id(commitments)] = (commitments, stopwords, found)
    if len(_owed_cache) > _OWED_KEPT:
        _owed_cache.popitem(last=False)
    return found


def _close_fulfilled(commitments: list[Commitment], text: MatchText, stopwords: frozenset[str]) -> list[Commitment]:
    """The commitments with those the closure names done (``_fulfilled``), asked only of those
    listed under a word it says (``_owed_of``: a closure message with 17 open commitments
    judged each; it now looks up its words)."""
    owed = _owed_of(commitments, stopwords)
    if not owed.by_key and not owed.whole:  # (nothing is owed: the words need not be split out)
        return commitments
    words = words_of(text)
    said = _said_in(words)
    by_key = owed.by_key
    asked = set(owed.whole)
    for key in chain(said.stems, said.families):
        if (listed := by_key.get(key)) is not None:
            asked.update(listed)
    done = [i for i in sorted(asked) if _fulfilled(commitments[i], said, words, stopwords)]
    if not done:
        return commitments
    closed = set(done)
    return [_replace(c, status="done") if i in closed else c for i, c in enumerate(commitments)]


# What a task says before its verb ("make sure to spread the word", "definitely check it out").
_TASK_PREFIX: Final = re.compile(r"^(?:(?:definitely|just|also|really|actually|finally|make sure to|be sure to"
                                 r"|have to|try to|try and|start|go and)\s+)*")
_REPORT_SENTENCE: Final = re.compile(r"[^.!?\n]+[.!?]*")


def _verb(what: str) -> str:
    """The verb a task starts with ("go" of "go to a transgender conference")."""
    rest = _TASK_PREFIX.sub("", what.lower(), count=1)
    return rest.split(maxsplit=1)[0] if rest.strip() else ""


@functools.lru_cache(maxsize=4096)
def _past_forms_of(what: str) -> frozenset[str]:
    """The past forms of a task's verb (none when it has none known)."""
    return past_forms(_verb(what))


class _Report(NamedTuple):
    """What a past-tense report of a task must say: its verb's past forms (a first cheap check,
    and as a word), and its other words, how many of them."""

    forms: tuple[str, ...]
    said_verb: re.Pattern[str]
    terms: frozenset[str]
    needed: int


@functools.lru_cache(maxsize=4096)
def _report_of(what: str, stopwords: frozenset[str]) -> _Report | None:
    """A task's ``_Report`` (cached: an open promise is checked against each of its
    promiser's messages), or None when its verb has no past form known."""
    verb = _verb(what)
    forms = _past_forms_of(what)
    if not forms:
        return None
    verb_stems = {_stem(verb), *(_stem(f) for f in forms)}
    terms = frozenset(t for t in _task_terms(what, stopwords) if t not in verb_stems)
    # as a closure must name the task (``_fulfilled``), the verb counting as one of its words
    needed = max(min(2, len(terms) + 1), math.ceil(FULFIL_SHARE * (len(terms) + 1))) - 1
    return _Report(tuple(sorted(forms)), re.compile(rf"\b(?:{'|'.join(sorted(forms))})\b"), terms,
                   max(needed, 1 if terms else 0))


# A verb whose past form is its base form ("put", "read", "set") after a modal, "to" or "let's"
# is the promise said again, not its report: a chair's "Then I'll put the minutes in the project
# folder", said at the end of each meeting, closed the one before (issue 37, AMI)
_UNREPORTED: Final = re.compile(r"(?:['’]ll|\bwill|\bwould|\bshall|\bshould|\bcan|\bcould|\bmay|\bmight|\bmust"
                                r"|\bto|\bgonna|\bwanna|\blet['’]?s|\blet me|\bplease)\s+(?:\w+\s+)?\Z")


def _reports(commitment: Commitment, lowered: str, patterns: PatternSet, stopwords: frozenset[str]) -> bool:
    """A sentence of the promiser's message says the task was done, in the past tense of its
    own verb, not negated, not asked, not on a condition ("I went to an LGBTQ conference two
    days ago" keeps "go to a transgender conference"; "I didn't go to the conference" and "Did
    you send the recipe?" do not), and names the task as a closure must, the verb counting as
    one of its words."""
    report = _report_of(commitment.what, stopwords)
    if report is None or not any(form in lowered for form in report.forms):
        return False
    for sentence in _REPORT_SENTENCE.finditer(lowered):
        if sentence.group().rstrip().endswith("?"):
            continue
        found = report.said_verb.search(lowered, sentence.start(), sentence.end())
        if found is None or not patterns.says(lowered, found.start()) \
                or _UNREPORTED.search(lowered, sentence.start(), found.start()) is not None:
            continue
        if _named(report.terms, _said_in(words_of(sentence.group()))) >= report.needed:
            return True
    return False


def _close_reported(commitments: list[Commitment], event: MessageEvent, text: MatchText,
                    patterns: PatternSet) -> list[Commitment]:
    """The promiser's own open promises that this message reports done (``_reports``; English
    only: ``workers.conversation.past``)."""
    if "en" not in patterns.languages:
        return commitments
    speaker = event.sender or event.role
    # most messages say no past form of their speaker's open tasks' verbs: one look, no scan
    forms = _open_of(commitments).reported_by.get(speaker)
    if forms is None or not any(map(text.lowered.__contains__, forms)):
        return commitments
    done = [c.status != "done" and c.who == speaker and _reports(c, text.lowered, patterns, patterns.stopwords)
            for c in commitments]
    if True not in done:
        return commitments
    return [_replace(c, status="done") if flag else c for c, flag in zip(commitments, done, strict=True)]


def _close_given(commitments: list[Commitment], event: MessageEvent) -> list[Commitment]:
    """Tasks for the next meeting after this message. An undated task a user asked of the one
    addressed ("So you look at competition and design", ``find_delegated``) keeps the session it
    was given in (``Commitment.session``): once its asker speaks in a later session, the meeting
    it was for has happened and it is done — on the development split every such task was
    reported at the next meeting, and nothing else closes it (its doer is not named, so no
    report of theirs is read as its report). An agent's message in that session makes it the
    agent's task, which only a report or feedback closes: it keeps no session."""
    given = _open_of(commitments).given
    if not given:
        return commitments
    if event.role == "assistant":
        if not any(event.session in sessions for sessions in given.values()):
            return commitments
        return [_replace(c, session=None) if c.session == event.session and c.status != "done" else c
                for c in commitments]
    sessions = given.get(event.sender or event.role)
    if sessions is None or sessions == {event.session}:
        return commitments
    # the asker's task for the one addressed, or a titled role's task when that role speaks
    speakers = (f"{ASKED_BY}{event.sender or event.role}", event.sender or event.role)
    return [_replace(c, status="done") if c.session is not None and c.session != event.session
            and c.status != "done" and c.who in speakers else c for c in commitments]


def _topic(promise: Promise, topics: list[tuple[int, str]], stopwords: frozenset[str]) -> str | None:
    """The nearest topic the message names before the promise, unless its task names it."""
    before = [topic for at, topic in topics if at < promise.start]
    if not before:
        return None
    named = _task_terms(before[-1], stopwords)
    return None if not named or named <= _task_terms(promise.what, stopwords) else before[-1]


def _cap(commitments: list[Commitment], limit: int) -> list[Commitment]:
    excess = len(commitments) - limit
    if excess <= 0:
        return commitments

    def age(i: int) -> tuple[bool, datetime, int]:
        return (commitments[i].status != "done", commitments[i].created, i)  # done sorts first

    dropped = set(sorted(range(len(commitments)), key=age)[:excess])
    return [c for i, c in enumerate(commitments) if i not in dropped]


def _rebuilt(base: CommitmentsDoc, updated: datetime, commitments: list[Commitment]) -> CommitmentsDoc:
    return _replace(base, updated=updated, commitments=commitments)


def _reopened(base: CommitmentsDoc, event: MessageEvent, text: MatchText, patterns: PatternSet) -> list[Commitment]:
    """The commitments with those the agent's last turn closed open again when this user
    message corrects it ("No, that's wrong, the deploy failed": the trace analyzer's correction
    phrases; not one that also thanks, nor a plain "no" to the agent's question). The
    reference kept a promise done for good on the agent's own "Done ✅"."""
    turn = base.agent_turn
    if turn is None or not turn.closed or event.role != "user" or event.session != turn.session:
        return base.commitments
    signals = get_signal_patterns(patterns.languages)
    if not signals.is_correction(text, after_question=turn.question) or signals.is_satisfied(text):
        return base.commitments
    closed = set(turn.closed)
    return [_replace(c, status="open") if c.id in closed and c.status == "done" else c for c in base.commitments]


def _turn_after(base: CommitmentsDoc, event: MessageEvent, text: MatchText, before: list[Commitment],
                after: list[Commitment], patterns: PatternSet) -> AgentTurn | None:
    """The agent's turn after this message: a user message ends it (a message of another role
    leaves it as it is); an agent message adds the commitments it closed — a turn that closed
    none is not kept."""
    if event.role != "assistant":
        return None if event.role == "user" else base.agent_turn
    same = base.agent_turn if base.agent_turn is not None and base.agent_turn.session == event.session else None
    closed = [] if after is before else [c.id for c, was in zip(after, before, strict=True)
                                         if c.status == "done" and was.status != "done"]
    if not closed and (same is None or not same.closed):
        return None
    turn = same if same is not None else AgentTurn(session=event.session)
    question = get_signal_patterns(patterns.languages).is_question(text)
    if not closed and question == turn.question:
        return turn
    return _replace(turn, closed=[*turn.closed, *closed][-MAX_TURN_CLOSED:], question=question)


def _judged_by_reply(base: CommitmentsDoc, event: MessageEvent, commitments: list[Commitment]) -> list[Commitment]:
    """The commitments without those of the message before that its reply — this message, when
    it is in the same session; none otherwise — tells the learnt reader are no commitments
    ("I'll take a look at the dashboard." answered "Thanks!" stays, answered "haha same here" it
    does not; "Let me check the logs first." leaves once anything follows it). Leaving one dev
    conversation out, with the threshold chosen inside the folds, this raised precision
    .429 -> .556 at recall .273 -> .227 (docs/briefing-eval.md, eighth round)."""
    waiting = base.awaiting
    if waiting is None:
        return commitments
    reply = event.content if event.session == waiting.session else None
    dropped = {cid for cid, said in waiting.said.items() if not learnt.replies_keep("commitments", said, reply)}
    return [c for c in commitments if c.id not in dropped] if dropped else commitments


def _awaiting(event: MessageEvent, text: MatchText, added: list[tuple[Commitment, Promise]],
              patterns: PatternSet) -> AwaitingReply | None:
    """This message's new undated commitments the reader judges when the next turn is said (a
    promise that names a day is concrete enough; a sentence the reader does not read —
    not English — keeps what the rules decided)."""
    said: dict[str, float] = {}
    for commitment, promise in added:
        # (a task given to the one addressed is not the reader's: none of its rows is one)
        if commitment.due is None and not asked(commitment) and (found := learnt.awaits_reply(
                "commitments", sentence_of(text, promise), patterns.languages)) is not None:
            said[commitment.id] = found
    return AwaitingReply(session=event.session, said=said) if said else None


_SIGNALS: dict[int, tuple[PatternSet, AnyOf]] = {}  # id(patterns) → (the set, ``_signals``)


def _signals(patterns: PatternSet) -> AnyOf:
    """What a message must hold for a closure, a promise or a request to be looked for in it: a
    close word, a commitment's, a plan's, a named person's promise, a request to the agent, a task
    given to the one addressed or a request to the one addressed (``AnyOf``, one set test of the
    message's scan; ``closes``, ``find_promises``, ``find_delegated`` and ``_request`` find nothing
    in a message that holds none)."""
    hit = _SIGNALS.get(id(patterns))
    if hit is None or hit[0] is not patterns:
        hit = _SIGNALS[id(patterns)] = (patterns, any_of(
            patterns.close, patterns.commitment, patterns.plan, patterns.delegated, patterns.requested,
            patterns.assigned, patterns.request, patterns.object_request))
    return hit[1]


def apply_message(
    doc: CommitmentsDoc | None, event: MessageEvent, settings: CommitmentsSettings, patterns: PatternSet,
    tz: ZoneInfo = UTC_ZONE,
) -> CommitmentsDoc:
    """The commitments document after one message: reopened by a correction, overdue,
    fulfilled, then new promises."""
    base = doc if doc is not None else empty_commitments_doc(event.ts)
    now = _latest(base, event.ts)
    text = prepare_text(event.content)
    judged = _judged_by_reply(base, event, _reopened(base, event, text, patterns))
    before = _overdue(judged, now, tz)  # never mutated: shared if unchanged
    commitments = before
    signalled = _signals(patterns).may_match(text)
    if signalled and patterns.closes(text):
        commitments = _close_fulfilled(commitments, text, patterns.stopwords)
    commitments = _close_reported(commitments, event, text, patterns)
    commitments = _close_given(commitments, event)
    turn = _turn_after(base, event, text, before, commitments, patterns)
    if not signalled and (base.request is None or _accepted(base, event, text, [], patterns) is None):
        # no closure, no promise of anyone's, no request, none before that this one accepts (half
        # the bench backlog's messages say none): what the stages below find in it is nothing
        return _replace(base, updated=now, commitments=_cap(commitments, settings.max_commitments),
                        agent_turn=turn, awaiting=None, request=None)
    own: list[tuple[str, Role | None, Promise]] = [(event.sender or event.role, event.role, p)
                                                  for p in find_promises(text, patterns)]
    # a named person's promise is theirs (no role: not the agent's, not the user's); a request
    # to the agent ("remind me to …") is the agent's; a task given to the one addressed ("you have
    # to work on the component concept") is whoever's was asked: the line says who asked
    speaker = event.sender or event.role
    delegated = find_delegated(text, patterns)
    others: list[tuple[str, Role | None, Promise]] = [
        (f"{ASKED_BY}{speaker}", None, d.promise) if d.assigned
        else (d.who, None, d.promise) if d.who else ("assistant", "assistant", d.promise)
        for d in delegated]
    # a titled role's task the chair gives ("the Industrial Designer will do …") is for the next
    # meeting, as one given to the one addressed is (``_close_given``)
    titled = {id(d.promise) for d in delegated if d.titled}
    promises = [*own, *others]
    taken = {c.id for c in commitments} if promises else set()
    topics = message_topics(text, patterns) if promises else []
    added: list[tuple[Commitment, Promise]] = []
    for index, (who, role, promise) in enumerate(promises):
        commitment_id = unique_id(event.id, "commitment", index, taken)
        taken.add(commitment_id)
        due = due_string(promise.due, event.ts, tz)
        # a user's undated task for the one addressed is for the next meeting (``_close_given``)
        given = event.session if due is None and role is None \
            and (who.startswith(ASKED_BY) or id(promise) in titled) and event.role == "user" else None
        added.append((Commitment(id=commitment_id, who=who, what=shown_task(promise), status="open",
                                 created=event.ts, source_event=event.id, due=due,
                                 topic=_topic(promise, topics, patterns.stopwords), role=role, session=given),
                      promise))
    if own and base.request is not None:  # (a promise of the message's own, after a request)
        added = _referents(base, event, added[: len(own)], patterns) + added[len(own):]
    accepted = _accepted(base, event, text, own, patterns)
    if accepted is not None:  # the accepter's own task-less promise is the request's task
        own_ids = {c.id for c, p in added[: len(own)]}
        task, said_due = accepted
        due = next((c.due for c, _ in added[: len(own)] if c.due is not None), None) \
            or due_string(said_due, event.ts, tz)
        added = [(c, p) for c, p in added if c.id not in own_ids]
        commitment_id = unique_id(event.id, "commitment", len(promises), taken)
        taken.add(commitment_id)
        commitments = _with(commitments, Commitment(
            id=commitment_id, who=speaker, what=task, status="open", created=event.ts, source_event=event.id,
            due=due, role=event.role), patterns.stopwords)
    added = [(c, p) for c, p in added if _owed(c, patterns)]
    for commitment, _ in added:
        commitments = _with(commitments, commitment, patterns.stopwords)
    return _replace(_rebuilt(base, now, _cap(commitments, settings.max_commitments)), agent_turn=turn,
                    awaiting=_awaiting(event, text, added, patterns), request=_request(event, text, patterns))


ACCEPTED_WORDS: Final = 6
"""How many words an acceptance's first sentence says after its yes ("Yes, I will. Yes.", "Sure
thing! I can give it to you tomorrow"): more, and the answer says its own task."""
_ACCEPT_SENTENCE: Final = re.compile(r"[.!?;\n。！？]")


def _request(event: MessageEvent, text: MatchText, patterns: PatternSet) -> Request | None:
    """The message, kept for the next one, when it may ask something of the one addressed: it
    holds a request's words ("could you", "kannst du" …; ``Pattern.may_match``, one literal scan
    shared with the other patterns). The task is read only when the answer accepts it
    (``_accepted``), as a proposal's is (``workers.decisions.core._proposal``)."""
    if not any(found is not None and found.may_match(found.subject(text))
               for found in (patterns.request, patterns.object_request)):
        return None
    return Request(said=text.original[-REQUEST_CHARS:], by=event.sender or event.role, session=event.session)


REFERENT_CHARS: Final = 60
"""The longest object a task named by a pronoun takes from the request it answers (``asked_object``)."""


def asked_object(said: str, patterns: PatternSet) -> str | None:
    """What a message asks the one addressed for, as a reader would name it: the object of its last
    request's task ("Will you show me this presentation?" → "presentation") or the thing it asks to
    get ("Can I get the recipe for it?" → "recipe"; ``LanguagePack.object_request``) — its first
    clause from its first word to its last that are neither function words nor common verbs
    (``PatternSet.phrase_breaks``), after the task's verb. None when it names none, and for
    unspaced text (twentieth round)."""
    text = prepare_text(said)
    last: tuple[int, str, bool] | None = None  # (where, what was asked, it is a task)
    for found, is_task in ((patterns.request, True), (patterns.object_request, False)):
        if found is None or not found.may_match(found.subject(text)):
            continue
        match = deque(found.finditer(text), maxlen=1)
        if match and (last is None or match[0].start() > last[0]):
            group = match[0].lastindex or 0  # the languages' sources are alternatives: the one that matched
            last = (match[0].start(), text.original[match[0].start(group): match[0].end(group)], is_task)
    if last is None or _UNSPACED.search(last[1]):
        return None
    asked = _HESITATION.sub(" ", last[1])
    end = _OBJECT_CLAUSE_END.search(asked)
    clause = asked[: end.start()] if end else asked
    words = [w for w in _TOKEN.finditer(clause)][1 if last[2] else 0:]  # (a task's first word is its verb)
    named = [w for w in words if len(w.group(0)) > 1 and w.group(0).lower() not in patterns.phrase_breaks]
    if not named:
        return None
    # (a verb-final task ends on its verb: "mir die Präsentation zeigen" — its nouns are capitalised)
    nouns = [w for w in named if w.group(0)[:1].isupper()]
    named = nouns or named
    return clip_words(clause[named[0].start(): named[-1].end()], REFERENT_CHARS)


def _refers(what: str, patterns: PatternSet) -> bool:
    """The task's verb acts on a pronoun (``referring``): right after it ("send it to you later", "write
    it down …") or, in a verb-final task, first ("es dir morgen schicken") — not an article before a
    capitalised noun ("das Rezept schicken")."""
    said = _HESITATION.sub(" ", what).strip()
    if patterns.task_lead is not None:
        said = said[len(said) - len(patterns.task_lead.sub("", said.lower(), count=1)):]
    words = _TOKEN.findall(said)[:3]
    return any(word.lower() in patterns.referring and not (i + 1 < len(words) and words[i + 1][:1].isupper())
               for i, word in enumerate(words[:2]))


def _referents(base: CommitmentsDoc, event: MessageEvent, own: list[tuple[Commitment, Promise]],
               patterns: PatternSet) -> list[tuple[Commitment, Promise]]:
    """The message's own promises, each whose task names its object by a pronoun ("I will send it to
    you later") with the object of the request it answers as its topic ("Will you show me this
    presentation?": "presentation") — the message before, another speaker's in the same session. Such a
    task told a later reader nothing ("send it to you later") and was not stored (``_owed``); the
    request said what it is (issue 37, twentieth round)."""
    request = base.request
    if request is None or request.session != event.session or request.by == (event.sender or event.role) \
            or not patterns.referring:
        return own
    out: list[tuple[Commitment, Promise]] = []
    thing: str | None = None
    for commitment, promise in own:
        if commitment.topic is None and _refers(commitment.what, patterns):
            thing = thing if thing is not None else (asked_object(request.said, patterns) or "")
            if thing:
                out.append((_replace(commitment, topic=thing), promise))
                continue
        out.append((commitment, promise))
    return out


REQUEST_CHARS: Final = 2000
"""How much of a message (its end) is kept for the answer that may accept what it asks."""


def asked_task(said: str, patterns: PatternSet) -> str | None:
    """What a message asks of the one addressed ("Would you mind, at the end, could you send us a
    copy of your slides?" → "send us a copy of your slides"): its last request, when the task
    names what it acts on (``names_object``: "can you do that?" asks nothing a reader could
    owe)."""
    found = patterns.request
    if found is None:
        return None
    text = prepare_text(said)
    last = deque(found.finditer(text), maxlen=1)
    if not last:
        return None
    match = last[0]
    group = match.lastindex or 0  # the languages' sources are alternatives: the one that matched
    what = tidy(text.original[match.start(group): match.end(group)]).rstrip("?？ ")
    return clip_words(what, MAX_TASK_CHARS) if names_object(what, patterns) else None


MAX_TASK_CHARS: Final = 160


def _accepted(base: CommitmentsDoc, event: MessageEvent, text: MatchText,
              own: list[tuple[str, Role | None, Promise]], patterns: PatternSet) -> tuple[str, str | None] | None:
    """The task of the message before when this one — another speaker's, in the same session —
    accepts it: its first sentence opens on a first-person yes ("Yes, I will.", "Sure thing! I can
    give it to you tomorrow", "Mach ich.") and says at most ``ACCEPTED_WORDS`` words after it, and
    no promise of the message names its own object. A bare "yes" or "okay" accepts nothing: on
    the development meetings it is the back-channel (issue 37, thirteenth round)."""
    request, acceptance = base.request, patterns.acceptance
    if request is None or acceptance is None or event.session != request.session \
            or (event.sender or event.role) == request.by:
        return None
    lowered = text.lowered
    start = len(lowered) - len(lowered.lstrip())
    opened = acceptance.match(lowered, start)
    if opened is None:
        return None
    after = opened.end() + len(lowered[opened.end():]) - len(lowered[opened.end():].lstrip(" ,.!、，。！"))
    stop = _ACCEPT_SENTENCE.search(lowered, after)
    end = stop.start() if stop else len(lowered)
    if _word_count(lowered[after:end]) > ACCEPTED_WORDS \
            or any(names_object(p.what, patterns) for _, _, p in own):
        return None
    said_due = due_phrase(text, patterns, start, end)  # (before ``asked_task`` prepares another text)
    task = asked_task(request.said, patterns)
    return (task, said_due) if task is not None else None


def _word_count(said: str) -> int:
    """Words of a stretch of text; an unspaced run (Chinese, Japanese) counts a word for every two
    letters ("不过我们先讨论一下预算" is six)."""
    return sum(math.ceil(len(token) / 2) if _UNSPACED.match(token) else 1 for token in _TOKEN.findall(said))


def asked(commitment: Commitment) -> bool:
    """Whether the commitment is a task the speaker gave to the one addressed ("you have to work
    on the component concept"; ``LanguagePack.assigned``)."""
    return commitment.role is None and commitment.who.startswith(ASKED_BY)


def _restates(earlier: Commitment, later: Commitment, stopwords: frozenset[str]) -> bool:
    """The later promise is the earlier one said again by the same promiser, still owed: most
    of the shorter task's words, at least three, are the other's ("Next month I'm having an art
    show with my paintings", then "I'm putting together an art show next month, I'll show my
    paintings")."""
    if earlier.status == "done" or earlier.who != later.who or earlier.role != later.role:
        return False
    first, second = _task_terms(earlier.what, stopwords), _task_terms(later.what, stopwords)
    needed = max(RESTATED_WORDS, math.ceil(FULFIL_SHARE * min(len(first), len(second))))
    shared = len(first & second)
    if shared >= needed:
        return True
    # a task broken off in a transcript ends on a word cut short: that word is its whole word in the
    # task said again ("send you the minutes of meet", then "send you minutes of meeting, …": AMI's
    # cut "meet" stems to "mee"; issue 37, seventeenth round) — a cut only at a task's end
    return shared + 1 >= needed and (_cut_whole(earlier.what, first, second, stopwords)
                                     or _cut_whole(later.what, second, first, stopwords))


RESTATED_CUT: Final = 2
"""How many letters a word cut short at a task's end may lack against its whole word (``_restates``)."""

_LAST_WORD: Final = re.compile(r"(\w+)\W*$")


def _cut_whole(what: str, terms: frozenset[str], other: frozenset[str], stopwords: frozenset[str]) -> bool:
    """The task ``what`` (its stemmed words ``terms``) ends on a word of three letters or more that
    ``other`` does not hold but holds whole: one of its words starts with it, at most
    ``RESTATED_CUT`` letters longer."""
    found = _LAST_WORD.search(what.lower())
    if found is None or found.group(1) in stopwords:
        return False
    cut = _stem(found.group(1))
    return len(cut) >= 3 and cut in terms and cut not in other and any(
        w not in terms and len(w) - len(cut) <= RESTATED_CUT and w.startswith(cut) for w in other)


def _with(commitments: list[Commitment], new: Commitment, stopwords: frozenset[str]) -> list[Commitment]:
    """``commitments`` with a new promise: added, or — when it restates an open one
    (``_restates``) — that one with the day it now names (it was listed twice, one of them
    OVERDUE by the first day)."""
    at = next((i for i, c in enumerate(commitments) if _restates(c, new, stopwords)), None)
    if at is None:
        return [*commitments, new]
    if new.due is None or new.due == commitments[at].due:
        return commitments
    return [*commitments[:at], _replace(commitments[at], due=new.due, status="open"), *commitments[at + 1:]]


def apply_feedback(doc: CommitmentsDoc | None, event: FeedbackEvent, tz: ZoneInfo = UTC_ZONE) -> CommitmentsDoc:
    """Apply ``commitment_done`` (target = commitment id: it is done) or ``commitment_reject``
    (it was never a commitment: it leaves the document); other kinds change nothing.

    Overdue commitments are re-checked against this event's time too. An unknown id is a
    no-op; a missing target raises ``FeedbackError``.
    """
    base = doc if doc is not None else empty_commitments_doc(event.ts)
    now = _latest(base, event.ts)
    commitments = _overdue(base.commitments, now, tz)
    if event.kind == "commitment_done":
        target = feedback_target(event)
        commitments = [_replace(c, status="done") if c.id == target else c for c in commitments]
    elif event.kind == "commitment_reject":
        target = feedback_target(event)
        commitments = [c for c in commitments if c.id != target]
    return _rebuilt(base, now, commitments)


MIN_TASK_TERMS: Final = 2  # content words a task needs to be acted on (the verb is one)
# Chinese, Japanese and Korean: their words are not found by spaces and three letters
_UNSPACED: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


_TOKEN: Final = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_OBJECT_CLAUSE_END: Final = re.compile(r"[,;:!?–—(]|\s-\s|\.(?:\s|$)")
_HESITATION: Final = re.compile(r"\b(?:uh|um|uhm|erm|er|hmm)\b")


def names_object(what: str, patterns: PatternSet) -> bool:
    """Whether a task names what it acts on: a word of its first clause, after its first word
    (the verb, in the packs whose tasks start with it), that is neither a function word nor a
    common verb (``PatternSet.phrase_breaks``) — "send you a vid", "look into shelters", "work on
    the user interface" do; "look into that", "send it to you later", "ask around to see if …",
    "come over if that's fine", "send new" do not. The first clause ends at a clause mark or a
    condition word ("if", "wenn", "si" …); the task's lead words ("have to", "be sure to") and a
    transcript's hesitations are not its verb. A verb-final task keeps its verb as a word
    ("das fixen"): such a pack's tasks are judged leniently."""
    lowered = _HESITATION.sub(" ", what.lower()).strip()
    if _UNSPACED.search(lowered):
        return _unspaced_names_object(lowered, patterns)
    if patterns.task_lead is not None:
        lowered = patterns.task_lead.sub("", lowered, count=1)
    end = _OBJECT_CLAUSE_END.search(lowered)
    clause = lowered[: end.start()] if end else lowered
    if patterns.condition is not None and (condition := patterns.condition.search(clause, 1)) is not None:
        clause = clause[: condition.start()]
    words = _TOKEN.findall(clause)
    return any(len(w) > 1 and w not in patterns.phrase_breaks for w in words[1:])


UNSPACED_OBJECT_LETTERS: Final = 3
"""Letters an unspaced task keeps beyond its yes, its pronouns and its kana ("資料を送って" keeps
資料送; "それをやって", "做这个", "그거 해" keep one or none)."""
_KANA_FUNCTION: Final = re.compile(r"[\u3040-\u309f]")  # hiragana: Japanese particles and endings


@functools.lru_cache(maxsize=16)
def _unspaced_words(blacklist: frozenset[str]) -> tuple[str, ...]:
    """The unspaced words of a pattern set's ``topic_blacklist``, longest first (sorted once, not
    at every task)."""
    return tuple(sorted((w for w in blacklist if _UNSPACED.search(w)), key=lambda w: (-len(w), w)))


def _unspaced_names_object(lowered: str, patterns: PatternSet) -> bool:
    """``names_object`` for Chinese, Japanese and Korean, whose words spaces do not find: what is
    left of the task without the yes it opens on ("はい、やります", "好的，我来"), the packs'
    pronouns and fixed words (``topic_blacklist``: それ, 这个, 그거 …) and hiragana, holds
    ``UNSPACED_OBJECT_LETTERS`` letters."""
    opened = patterns.acceptance.match(lowered) if patterns.acceptance is not None else None
    left = lowered[opened.end():] if opened is not None else lowered
    for word in _unspaced_words(patterns.topic_blacklist):
        left = left.replace(word, " ")
    return sum(ch.isalpha() for ch in _KANA_FUNCTION.sub("", left)) >= UNSPACED_OBJECT_LETTERS


def _owed(commitment: Commitment, patterns: PatternSet) -> bool:
    """A promise is stored when it names what it acts on (``names_object``), or the message's
    topic does, or it states a day — or when it is the agent's (its user's request is what "I'll
    fix it" fixes; issue 37, twelfth round). A person's "I'll look into that", "I'll ask around",
    "I'll send new" told a later reader nothing, and on the development conversations such tasks
    were none of the promises a reader needed but one ("send it to you later")."""
    if commitment.role == "assistant" or commitment.topic or commitment.due is not None \
            or _UNSPACED.search(commitment.what):
        return True
    return names_object(commitment.what, patterns)


def too_thin(commitment: Commitment, stopwords: frozenset[str]) -> bool:
    """A task too thin to act on: fewer than ``MIN_TASK_TERMS`` content words in the task
    and its topic together — "send new", "share with you", "do the notes": the reader of a
    briefing cannot tell what is owed. "send it to you later" with the topic "the recipe"
    names two. A task in a language whose words are not spaced is not judged."""
    if _UNSPACED.search(commitment.what):
        return False
    terms = _task_terms(commitment.what, stopwords)
    if commitment.topic:
        terms |= _task_terms(commitment.topic, stopwords)
    return len(terms) < MIN_TASK_TERMS


def names_task(commitment: Commitment, text: str, stopwords: frozenset[str]) -> bool:
    """``text`` names ``commitment``'s task as a closure must (``_fulfilled``), closure words
    or not: the boot briefing asks it of a claim the trace analyzer found false ("Done! The
    payment service is deployed ✅" names "deploy the payment service")."""
    words = words_of(prepare_text(text))
    return _fulfilled(commitment, _said_in(words), words, stopwords)
