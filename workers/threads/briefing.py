"""The threads worker's briefing section: Active Threads.

Format follows the reference's ``buildThreads`` (openclaw-cortex ``boot-context.ts``). Each
fact once: a thread's summary leaves out the "Decided: …" of a decision Recent Decisions
shows (``DECISIONS``), a thread that only states a fact Known Facts shows (``FACTS``) is no
thread to follow, and a summary that a claim found false states says so instead. It says
the summaries and waits it shows (``SENTENCES``) and the titles a narrative need not list
again (``THREAD_TITLES``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import Annotated, Any, Final
from zoneinfo import ZoneInfo

import msgspec
from msgspec import Meta

from schemas.docs import NarrativeDoc, Thread, ThreadsDoc, TraceDoc
from schemas.types import Mood
from shared.briefing import DECISIONS, FACTS, SENTENCES, THREAD_TITLES, Briefing, BriefingSection, Rendered, Said
from shared.names import BUCKET_NARRATIVES, BUCKET_THREADS, BUCKET_TRACES
from workers.briefing import enhance_threads, false_claims, section
from workers.render import (
    PRIORITY_EMOJI,
    UNKNOWN_EMOJI,
    as_utc,
    decision_listed,
    local_minutes,
    one_line,
    plural,
    ranked_open_threads,
)
from workers.summaries import compose_summary, is_composed, said_in
from workers.threads.topics import RETURN_GAP

# Room kept for the "… N more open threads not shown" note, so the budget never cuts it.
_NOTE_ROOM = 48


_MENTION_CHARS = 60  # a decision whose first words a summary holds is said there (cut or not)


_JOINED: Final = re.compile(r"^(?:(?:and|so|but|then|well|okay|ok|yeah|um|uh)\b[,]?\s+)+", re.IGNORECASE)


def thread_summary(t: Thread, shown: Collection[str]) -> str:
    """The summary without its "Decided: …" when Recent Decisions shows that decision with
    its why (a summary Cortex did not compose — Claude's wording, an import — as it is), and
    none when all it says is a decision Recent Decisions shows: a thread opened on the very
    sentence that decided something ("… and I decided to include it at the beginning") said it
    twice (issue 37)."""
    if not shown or not is_composed(t):
        return one_line(t.summary)
    decided = not (t.decisions and decision_listed(t.decisions[-1], shown))
    summary = one_line(compose_summary(t, decided=False) if not decided else t.summary)
    # the sentence as said, without the word that joined it to the talk before ("And we can keep
    # our LCD screen, …" says the decision "We can keep our LCD screen, …"; issue 37, eleventh round)
    core = _JOINED.sub("", summary.rstrip(" .!…"), count=1)
    return "" if core and any(said_in(core, what) for what in shown) else summary


QUIET_DAYS = 2  # a thread quiet this many local days or more says for how long


def _quiet(t: Thread, now: datetime | None, tz: ZoneInfo) -> str:
    """`` (quiet 12 days)`` for a thread whose last activity is ``QUIET_DAYS`` local days or
    more before ``now``: beside yesterday's threads, one untouched for twelve days read as
    just as current (its date alone left the reader to count)."""
    if now is None:
        return ""
    days = (as_utc(now).astimezone(tz).date() - as_utc(t.last_activity).astimezone(tz).date()).days
    return f" (quiet {days} days)" if days >= QUIET_DAYS else ""


MIN_EPISODES = 2  # a subject said in this many stretches of talk is one the conversation came back to
ONE_STRETCH_QUIET = timedelta(days=1)  # before the last message: quiet this long, a subject said once is left
UNKNOWN_QUIET = timedelta(days=7)  # the same for a thread whose phrase the table does not hold
# A subject said in one sitting: its whole life (opened → last activity) this short, and the sitting
# over (its last activity this long before the briefing) — the morning after a meeting, its
# one-stretch subjects; a compaction's briefing in the same sitting keeps them.
SITTING = timedelta(hours=4)


def _said_once_and_left(t: Thread, doc: ThreadsDoc, now: datetime | None) -> bool:
    """The thread's phrase was said in one episode (``ThreadsDoc.returns``), ``RETURN_GAP``
    messages or more back, and the talk left it: a day before the last message, or in a
    sitting that is over by ``now``."""
    said = doc.returns.get(t.title.lower())
    if said is None:
        return as_utc(doc.updated) - as_utc(t.last_activity) >= UNKNOWN_QUIET
    episodes, last = said
    if episodes >= MIN_EPISODES or doc.messages - last < RETURN_GAP:
        return False
    if as_utc(doc.updated) - as_utc(t.last_activity) >= ONE_STRETCH_QUIET:
        return True
    one_sitting = as_utc(t.last_activity) - as_utc(t.created) < SITTING
    return one_sitting and now is not None and as_utc(now) - as_utc(t.last_activity) >= SITTING


# Of the open threads with no state (``has_state``), Active Threads shows this many by default,
# the first in its order; the others are counted ("… N more open threads not shown"). A subject
# the talk keeps naming is a thread by its phrase alone, and a chat of months or a meeting names
# many: the morning after, most of them were what the reader did not need ("big impact",
# "dairy-free", a meeting's last-day design words). Chosen leaving one development conversation
# out, every fold choosing two (docs/briefing-eval.md, ninth round).
DEFAULT_TOPICS = 2


def has_state(t: Thread) -> bool:
    """Whether something about the thread is still open: a decision taken in it (what follows
    from it), a wait, or a priority someone set to critical. A high priority read from a
    title's word ("costs budget", "company strategy") says the subject matters, not that
    anything about it is open."""
    return bool(t.decisions or t.waiting_for) or t.priority == "critical"


def _raised_once(t: Thread, doc: ThreadsDoc, now: datetime | None) -> bool:
    """Opened on a cue or a single word — a title the phrase table does not hold — and never
    named again (its last activity is its opening), in a sitting over by ``now``: "let's talk
    about our bonuses", "regarding costs budget …", said once and left (issue 37, eleventh
    round). Only a thread the threads core opened (it keeps what the conversation said then,
    ``about``) and so moves on when a later message names it (``core._touch_named``): a thread
    the model found (``extraction.view``) is never touched again, and the model judged it."""
    return (now is not None and bool(t.about) and t.created == t.last_activity
            and t.title.lower() not in doc.returns and as_utc(now) - as_utc(t.last_activity) >= SITTING)


def _left_in_an_earlier_sitting(t: Thread, doc: ThreadsDoc) -> bool:
    """The thread's whole life (opened → last activity) fits one ``SITTING``, and the conversation
    went on a ``SITTING`` or more past it without naming it: a later sitting moved on ("shared
    documents" of one meeting, the next meeting and the morning after; issue 37, eleventh round).
    A phrase said within the last ``RETURN_GAP`` messages was not left; a thread the threads core
    did not open (no ``about``: the model's) is never touched by a later mention, so none of this
    can be read of it (``_raised_once``)."""
    last = as_utc(t.last_activity)
    if not t.about or not timedelta(0) <= last - as_utc(t.created) < SITTING or as_utc(doc.updated) - last < SITTING:
        return False
    said = doc.returns.get(t.title.lower())
    return said is None or doc.messages - said[1] >= RETURN_GAP


def not_returned_to(doc: ThreadsDoc, now: datetime | None = None) -> frozenset[str]:
    """The ids of open threads Active Threads leaves out (and counts): subjects the
    conversation moved on from. A thread with a state (``has_state``) is never one. Else: its
    phrase said in one stretch of talk only (``ThreadsDoc.returns``: one episode), its last
    mention ``RETURN_GAP`` messages or more back, and quiet for
    ``ONE_STRETCH_QUIET`` before the last message or said in one ``SITTING`` that is over by
    ``now`` (the briefing's time); or, a thread whose phrase the table does not hold (opened on
    a cue, a single word, or dropped from the table as said once long ago), quiet for
    ``UNKNOWN_QUIET``, or never named again after the message that opened it, its sitting over
    (``_raised_once``); or a thread whose whole life fits one sitting that a later sitting went
    on from (``_left_in_an_earlier_sitting``).

    In a chat of months such threads were most of what the list showed ("customer base",
    "dairy-free", "political goals" seven months quiet): on the mornings after every session of
    the development conversations, leaving them out took 49 of the 128 wrong threads and none
    that a reader needed (docs/briefing-eval.md, seventh round); the sitting took 3 more of the
    79 left, a meeting's subjects of one stretch the morning after it, and none that a reader
    needed (eighth round). The day of quiet and the sitting keep what a working session said
    this morning in a briefing given at its compaction. The last two took 9 more of the 66 wrong
    threads over all mornings (in five of the nine conversations) and one true one (one morning of
    one chat), chosen leaving one conversation out with precision weighted first (eleventh
    round)."""
    return frozenset(t.id for t in doc.threads
                     if t.status == "open" and not has_state(t)
                     and (_said_once_and_left(t, doc, now) or _raised_once(t, doc, now)
                          or _left_in_an_earlier_sitting(t, doc)))


def talked_of_in_general(t: Thread) -> bool:
    """Open, with no state (``has_state``), opened by the threads core (``about``), and never once
    referred to as a particular thing since it opened: said as its phrase (``Thread.mentions``)
    but never after a definite article or a possessive (``Thread.definite``: "the dance studio",
    "my online store", "your adoption", "Jon's investors"). What is only ever said as a kind — "a
    big impact", "dairy-free desserts", "elderly people", "my favorite fantasy novels" — is a
    subject the talk touches, not a thing whose state can change (issue 37, twelfth round:
    docs/briefing-eval.md). A thread whose title the conversation never said as a phrase, or of a
    document written before the counts were kept (``mentions`` 0), or that the model found, is
    not judged."""
    return (t.status == "open" and not has_state(t) and bool(t.about) and t.mentions > 0
            and t.definite == 0)


# What may follow a title that ends its sentence: the sentence's closing marks and quotes. Not
# "…": an ``about`` clipped after its title (``topics.ABOUT_CHARS``) said more of it.
_SENTENCE_CLOSE: Final = " .!?\"')»“”"


def between_people(doc: ThreadsDoc) -> bool:
    """Every message of the window (``ThreadsDoc.recent``) is a user's: people talking among
    themselves (a chat the agent reads, a meeting), no agent answering. A document of an older
    version (no roles kept) or with no window is not."""
    return bool(doc.recent) and all(m.role == "user" for m in doc.recent)


def named_in_passing(t: Thread, doc: ThreadsDoc, people: bool | None = None) -> bool:
    """Open, with no state (``has_state``), opened by the threads core on a phrase of its table
    (``ThreadsDoc.returns``: not a cue's topic — "back to the costs" ends on its topic by form),
    in talk between people (``between_people``), and the sentence that opened it (``about``) ends
    on its title: the subject was named as the last words of what was said — "I will show you, in
    shared documents", "… talk about uh flat, single and double curved", "have there been any
    developments regarding your political goals?" — and nothing was said of it there: no state
    going on ("… is behind schedule"), no plan for it. A meeting's process and the product it is
    about, a detail listed among others, an aside asked about: on the development split's
    mornings it took 5 wrong threads and 1 true one, and in the QMSum train series read by hand
    some fourteen wrong for three a reader might keep (issue 37, twenty-second round:
    docs/briefing-eval.md). Where the agent answers, a sentence ending on its subject is as often
    the problem the agent is to act on ("Hi, I was charged twice for the March invoice"): there
    the rule is not asked. Language-free: it reads where the title stands in its sentence and who
    spoke, no word of any pack. ``people``: ``between_people(doc)`` when the caller asked it already
    (``set_aside`` asks it once a document, not once a thread)."""
    if t.status != "open" or has_state(t) or not t.about:
        return False
    title = t.title.lower()
    if title not in doc.returns or not (between_people(doc) if people is None else people):
        return False
    said = t.about.rstrip(_SENTENCE_CLOSE).lower()
    return said.endswith(title) and (len(said) == len(title) or not said[-len(title) - 1].isalnum())


def set_aside(doc: ThreadsDoc, now: datetime | None = None) -> tuple[frozenset[str], frozenset[str]]:
    """The ids of the open threads Active Threads counts and does not show: those the conversation
    moved on from (``not_returned_to``), and — the second set, a subset of the first — those
    only talked of in general (``talked_of_in_general``) or only named in passing
    (``named_in_passing``) that it did not move on from."""
    left = not_returned_to(doc, now)
    people = between_people(doc)  # (once a document: every thread's window is the document's)
    general = frozenset(t.id for t in doc.threads
                        if t.id not in left and (talked_of_in_general(t) or named_in_passing(t, doc, people)))
    return left | general, general


def _listed(threads: Sequence[Thread], shown_decisions: Collection[str], facts: Collection[str],
            aside: Collection[str]) -> list[Thread]:
    """The open threads in Active Threads' order, not those ``aside`` (``not_returned_to``) nor
    those that only state a fact Known Facts shows."""
    return [t for t in ranked_open_threads(threads)
            if t.id not in aside and not _only_a_fact(t, shown_decisions, facts)]


def _with_few_topics(listed: Sequence[Thread], topics: int) -> list[Thread]:
    """``listed`` with only the first ``topics`` of its threads that have no state."""
    out: list[Thread] = []
    stateless = 0
    for t in listed:
        if not has_state(t):
            stateless += 1
            if stateless > topics:
                continue
        out.append(t)
    return out


def briefed_threads(threads: Sequence[Thread], shown_decisions: Collection[str] = (),
                    facts: Collection[str] = (), aside: Collection[str] = (),
                    topics: int = DEFAULT_TOPICS) -> list[Thread]:
    """The open threads Active Threads may show, in its order (``threads_section``): not those
    ``aside`` (``not_returned_to``), and of those with no state (``has_state``) the first
    ``topics`` (``ThreadsBriefingSettings.max_topics_in_boot``)."""
    return _with_few_topics(_listed(threads, shown_decisions, facts, aside), topics)


def _only_a_fact(t: Thread, shown_decisions: Collection[str], facts: Collection[str]) -> bool:
    if not facts or t.waiting_for or t.decisions:
        return False
    summary = thread_summary(t, shown_decisions)
    return bool(summary) and any(said_in(fact, summary) for fact in facts)


FOUND_FALSE = "the last claim here was found false (see Lessons)"


def _thread_block(t: Thread, shown: Collection[str], tz: ZoneInfo, now: datetime | None = None,
                  false_claims: Collection[str] = ()) -> str:
    mood_tag = f" [{t.mood}]" if t.mood and t.mood != "neutral" else ""
    summary = thread_summary(t, shown)
    if summary and any(said_in(summary, claim) for claim in false_claims):
        # "The staging deploy is done …" after the deploy failed: the Lessons quote the claim
        # and say it was false; the thread saying it as where things stand would contradict them
        summary = FOUND_FALSE
    lines = [
        "",
        f"### {PRIORITY_EMOJI.get(t.priority, UNKNOWN_EMOJI)} {one_line(t.title)}{mood_tag}",
        # local, as the header's "Local:" and the narrative's timeline (the reference's UTC
        # "2026-02-17T08:16" read as an hour before the thread opened at "09:06")
        f"Priority: {t.priority} | Last: {local_minutes(t.last_activity, tz)}{_quiet(t, now, tz)}",
        f"Summary: {summary or 'no summary'}",
    ]
    # The summary says where the thread stands (its latest decision, what it waits for):
    # what it already says, or Recent Decisions shows, is not said twice.
    if t.waiting_for and not said_in(t.waiting_for, summary):
        lines.append(f"⏳ Waiting for: {one_line(t.waiting_for)}")
    earlier = [one_line(d) for d in t.decisions
               if not said_in(d.removesuffix("…")[:_MENTION_CHARS], summary) and not decision_listed(d, shown)]
    if earlier:
        lines.append(f"Decisions: {'; '.join(earlier)}")
    return "\n".join(lines)


def threads_section(
    threads: Sequence[Thread], limit: int, budget: int, tz: ZoneInfo, shown_decisions: Collection[str] = (),
    now: datetime | None = None, false_claims: Collection[str] = (), facts: Collection[str] = (),
    aside: Collection[str] = (), topics: int = DEFAULT_TOPICS, general: Collection[str] = (),
) -> tuple[str, int]:
    """Open threads only: the top ``limit`` by priority, then recency, within ``budget``.

    ``shown_decisions`` are the whats Recent Decisions shows: a thread does not repeat them.
    With ``now``, a thread quiet for days says so (``_quiet``). A summary that one of
    ``false_claims`` (the quotes of claims the trace analyzer found false) states says so
    instead (``FOUND_FALSE``). A thread that says nothing but one of ``facts`` (the
    sentences Known Facts shows: "By the way, Maria works at Globex Corp now …") is no thread
    to follow: Known Facts says it. Threads ``aside`` (``not_returned_to``) are counted, not
    shown; so are the threads with no state after the first ``topics``. Those of ``aside`` also
    in ``general`` (``set_aside``) are counted as subjects only talked of in general."""
    listed = _listed(threads, shown_decisions, facts, aside)
    listed_few = _with_few_topics(listed, topics)[:limit]
    blocks = [_thread_block(t, shown_decisions, tz, now, false_claims) for t in listed_few]
    text, shown = section("## 🧵 Active Threads", blocks, budget - _NOTE_ROOM)
    hidden = len(listed) - shown
    if text and hidden > 0:
        text += f"\n_… {plural(hidden, 'more open thread')} not shown_\n"
    left = sum(1 for t in threads if t.id in aside and t.id not in general and t.status == "open")
    if text and left:
        text += f"\n_… {plural(left, 'open thread')} the conversation moved on from not shown_\n"
    kinds = sum(1 for t in threads if t.id in aside and t.id in general and t.status == "open")
    if text and kinds:
        text += f"\n_… {plural(kinds, 'subject')} only talked of in general not shown_\n"
    return text, shown


class ThreadsBriefingSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Active Threads' knobs: how many open threads it lists (``CORTEX_BOOT_MAX_THREADS_IN_BOOT``),
    and how many of them may be threads with no state (``CORTEX_BOOT_MAX_TOPICS_IN_BOOT``:
    no decision, no wait, no critical priority — a subject the talk names, ``has_state``)."""

    max_threads_in_boot: Annotated[int, Meta(ge=1, le=20)] = 7
    max_topics_in_boot: Annotated[int, Meta(ge=0, le=20)] = DEFAULT_TOPICS


def _threads(b: Briefing, said: Said, budget: int) -> Rendered:
    """Active Threads, in Claude's wording where the narrative holds one."""
    doc, narrative = b.doc(BUCKET_THREADS, ThreadsDoc), b.doc(BUCKET_NARRATIVES, NarrativeDoc)
    traces = b.doc(BUCKET_TRACES, TraceDoc)
    raw = doc.threads if doc is not None else []
    threads = enhance_threads(raw, narrative.enhanced if narrative is not None else None)
    decisions, facts = said.of(DECISIONS), said.of(FACTS)
    findings = traces.findings if traces is not None else []
    knobs = b.knob(ThreadsBriefingSettings)
    aside, general = set_aside(doc, b.now) if doc is not None else (frozenset(), frozenset())
    text, shown = threads_section(threads, knobs.max_threads_in_boot, budget, b.tz, decisions, b.now,
                                  false_claims(findings), facts, aside, knobs.max_topics_in_boot, general)
    briefed = briefed_threads(threads, decisions, facts, aside, knobs.max_topics_in_boot)
    shown_open = briefed[:shown]
    # the narrative's Open items of threads shown here, or closed since it was written, or that
    # only state a fact Known Facts shows
    told = {t.id for t in shown_open} | ({t.id for t in threads} - {t.id for t in briefed})
    titles = [t.title for t in raw if t.id in told or t.status != "open"]
    sentences = [text for t in shown_open for text in (thread_summary(t, decisions), t.waiting_for or "")]
    return Rendered(text, {THREAD_TITLES: titles, SENTENCES: sentences}, plural(shown, "active thread"))


def _mood(doc: ThreadsDoc) -> Mood:
    return doc.session_mood


SECTIONS: tuple[BriefingSection[Any], ...] = (
    BriefingSection("🧵 Active Threads", BUCKET_THREADS, ThreadsDoc, name="threads", order=300, chars=8000,
                    compose=_threads, reads=(BUCKET_NARRATIVES, BUCKET_TRACES), hears=(DECISIONS, FACTS),
                    says=(THREAD_TITLES, SENTENCES), only_when_relevant=False,
                    follows_messages=True, mood=_mood, ages="Thread data", knobs=ThreadsBriefingSettings),
)
