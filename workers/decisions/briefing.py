"""The decisions worker's briefing sections: Recent Decisions and Commitments.

Formats follow the reference's ``buildDecisions`` (openclaw-cortex ``boot-context.ts``) and
the commitments section of its architecture addendum; both in Claude's wording where the
narrative holds one. Cortex's own: a vague promise made right after tool calls names them
(``promise_calls``), pointing to the calls Pending Operations lists (``OPERATIONS``); a
commitment closed by a claim the trace analyzer found false is open again.

Each fact once: Recent Decisions says the decisions it shows or a later one reversed
(``DECISIONS``: no thread or narrative says them again), and both say the whats, whys and
promises they show (``SENTENCES``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from datetime import date, datetime, time, timedelta
from typing import Annotated, Any, Final
from zoneinfo import ZoneInfo

import msgspec
from msgspec import Meta

from schemas.docs import (
    Commitment,
    CommitmentsDoc,
    Decision,
    DecisionsDoc,
    Finding,
    NarrativeDoc,
    Operation,
    OperationsDoc,
    TraceDoc,
)
from shared.briefing import DECISIONS, OPERATIONS, SENTENCES, Briefing, BriefingSection, Rendered, Said
from shared.names import BUCKET_COMMITMENTS, BUCKET_DECISIONS, BUCKET_NARRATIVES, BUCKET_OPERATIONS, BUCKET_TRACES
from workers.briefing import enhance_commitments, enhance_decisions, section
from workers.conversation.languages import PACKS
from workers.decisions.commitments import names_task, too_thin
from workers.render import (
    PRIORITY_EMOJI,
    UNKNOWN_EMOJI,
    as_utc,
    clip_words,
    commitment_task,
    day_and_age,
    local_minutes,
    one_line,
    plural,
)

WHY_CHARS = 100
# A promise made in the agent's turn right after its tool calls ("Both tasks are running in the
# background; I'll report when they finish.") is about those calls: started at most this long
# before it, in event time.
CALLS_BEFORE_PROMISE = timedelta(minutes=5)
MAX_CALLS_NAMED = 3
CALL_REQUEST_CHARS = 60
# a task that refers back to what it is about ("report when they finish", "tell you how it
# went", "Bescheid geben, wenn es fertig ist"); German "Sie" capitalised is the polite "you"
_REFERS_BACK = re.compile(r"\b(?:[Ii]t|its|[Tt]hey|them|their|es|sie)\b")
MAX_COMMITMENTS_IN_BOOT = 10
PAST_DAY_MIN: Final = timedelta(days=1)
"""The least lateness a person's dated promise bears before it is past its day (``past_its_day``):
a promise made the hour it was due is still listed the day after."""


# "… from Redis to Memcached", "… instead of Redis", "… statt Redis", "… von Redis auf …":
# group 1 is what a decision moves away from.
_AWAY_FROM = re.compile(
    r"\b(?:from|von)\s+(?:the\s+|dem\s+|der\s+|den\s+)?([\w][\w.+#-]*)\s+(?:to|auf|zu)\s+\S"
    r"|\b(?:instead\s+of|rather\s+than|statt|anstatt|anstelle\s+von)\s+(?:the\s+|dem\s+|der\s+|den\s+)?"
    r"([\w][\w.+#-]*)",
    re.IGNORECASE,
)
# Words every decision may share ("We decided to …", "Wir haben beschlossen, …"): no topic.
_DECISION_WORDS = frozenset({
    "decided", "decision", "agreed", "plan", "approach", "after", "all", "with", "that", "this", "then",
    "instead", "rather", "than", "from", "will", "have", "haben", "wir", "beschlossen", "entschieden",
    "machen", "doch", "statt", "anstatt", "anstelle", "nehmen", "switch", "move", "use", "going",
})


def _moves_away_from(what: str) -> set[str]:
    """What a decision moves away from ("Redis" of "… from Redis to Memcached"), lower-cased,
    without a plural s. Every match of ``_AWAY_FROM`` holds from, von, instead, rather or
    statt, lower-cased — or a character its IGNORECASE reads in their place that ``str.lower``
    does not make that letter (ı and İ for i, ſ for s): a decision with none of them is not searched (most are
    not, and a briefing asks of every decision)."""
    lowered = what.lower()
    if not ("from" in lowered or "von" in lowered or "instead" in lowered or "rather" in lowered
            or "statt" in lowered or "ı" in what or "İ" in what or "ſ" in what):
        return set()
    return {(m.group(1) or m.group(2)).lower().removesuffix("s") for m in _AWAY_FROM.finditer(what)}


def _topic_words(text: str) -> set[str]:
    return {w.removesuffix("s") for w in re.findall(r"\w{4,}", text.lower()) if w not in _DECISION_WORDS}


def replaced_decisions(decisions: Sequence[Decision]) -> set[str]:
    """Ids of the decisions a later one reverses: the later one moves away from a thing the
    earlier one names ("We decided to switch the catalog cache from Redis to Memcached after
    all" a week after "We decided to cache the product catalog with Redis") and they share
    another word of their topic (catalog, cache). The briefing showed both as current."""
    ordered = sorted(decisions, key=lambda d: (d.date, as_utc(d.extracted_at), d.id))
    aways = [_moves_away_from(d.what) for d in ordered]
    if not any(aways):  # most agents never reverse a decision: no word sets to build
        return set()
    words = [_topic_words(d.what) for d in ordered]  # each decision's words once, not once per pair
    names = [{w.removesuffix("s") for w in re.findall(r"[\w.+#-]+", d.what.lower())} for d in ordered]
    replaced: set[str] = set()
    for at, away in enumerate(aways):
        if not away:
            continue
        for before in range(at):
            if away & names[before] and (words[before] & words[at]) - away:
                replaced.add(ordered[before].id)
    return replaced


def recent_decisions(
    decisions: Sequence[Decision], now: datetime, tz: ZoneInfo, days: int, limit: int,
    replaced: Collection[str] | None = None,
) -> list[Decision]:
    """Decisions dated within ``days`` of ``now``'s local date that no later decision reversed
    (``replaced``: ``replaced_decisions`` of them when not given), newest first.

    ``Decision.date`` is a local date (CORTEX_TIMEZONE), so the cutoff is one too; the
    extraction time and the id order decisions of the same day.
    """
    cutoff = (as_utc(now).astimezone(tz).date() - timedelta(days=days)).isoformat()
    if replaced is None:
        replaced = replaced_decisions(decisions)
    recent = [d for d in decisions if d.date >= cutoff and d.id not in replaced]
    recent.sort(key=lambda d: d.id)
    recent.sort(key=lambda d: (d.date, as_utc(d.extracted_at)), reverse=True)
    return recent[:limit]


def _decision_block(d: Decision) -> str:
    line = f"- {PRIORITY_EMOJI.get(d.impact, UNKNOWN_EMOJI)} **{one_line(d.what)}** ({d.date})"
    why = clip_words(one_line(d.why), WHY_CHARS)
    return f"{line}\n  Why: {why}" if why else line


def decisions_section(decisions: Sequence[Decision], budget: int) -> tuple[str, int]:
    """The given decisions (already filtered and ordered) within ``budget``."""
    return section("## 🎯 Recent Decisions", [_decision_block(d) for d in decisions], budget)


def _due_moment(due: str, tz: ZoneInfo) -> datetime | None:
    """A due string as a moment: a bare date means the end of that local day."""
    text = due.strip()
    try:
        if len(text) == len("YYYY-MM-DD"):
            day = date.fromisoformat(text) + timedelta(days=1)
            return datetime.combine(day, time(), tzinfo=tz)
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=tz)


def promise_calls(c: Commitment, operations: Sequence[Operation], listed: Collection[str] = (),
                  tz: ZoneInfo | None = None) -> str:
    """The tool calls a vague promise is about, as its line names them: "`sessions_spawn`
    “Rebuild the search index…”, “Summarise the support inbox…”" for "report when they
    finish" said a minute after the two calls. Only for a task that refers back ("they", "it")
    and has no topic of its own, to the calls started within ``CALLS_BEFORE_PROMISE`` before
    it (oldest first, at most ``MAX_CALLS_NAMED``); else empty. Told alone, "🔴 OVERDUE: report
    when they finish" left the reader a week later no way to tell what was promised. Calls the
    Pending Operations section lists (``listed``, their ids) are pointed to, not quoted again:
    "the `sessions_spawn` calls in Pending Operations" (and the others quoted after it). With
    ``tz``, calls quoted that have all finished say when: a week-old "🔴 OVERDUE: report when
    they finish" did not tell the reader that they had ("…; all finished by 2026-03-05 09:41")."""
    if c.topic or not _REFERS_BACK.search(c.what):
        return ""
    made = as_utc(c.created)
    calls = sorted((op for op in operations if made - CALLS_BEFORE_PROMISE <= as_utc(op.started) <= made),
                   key=lambda op: (as_utc(op.started), op.id))
    if not calls:
        return ""
    shown = [op for op in calls if op.id in listed]
    rest = [op for op in calls if op.id not in listed]
    named: dict[str, list[str]] = {}  # a tool's requests after its name once
    for op in rest[:MAX_CALLS_NAMED]:
        asked = named.setdefault(one_line(op.tool), [])
        if op.request:
            asked.append(f"“{clip_words(one_line(op.request), CALL_REQUEST_CHARS)}”")
    quoted = "; ".join(f"`{tool}` {', '.join(asked)}".rstrip() for tool, asked in named.items())
    if len(rest) > MAX_CALLS_NAMED:
        quoted += f"; {len(rest) - MAX_CALLS_NAMED} more"
    ends = [op.finished for op in rest if op.finished is not None]
    if tz is not None and ends and len(ends) == len(rest):
        quoted += f"; {'all finished by' if len(rest) > 1 else 'finished'} {local_minutes(max(ends), tz)}"
    if not shown:
        return quoted
    tools = " and ".join(dict.fromkeys(f"`{one_line(op.tool)}`" for op in shown))
    pointer = f"the {tools} {'call' if len(shown) == 1 else 'calls'} in Pending Operations"
    return f"{pointer} and {quoted}" if quoted else pointer


REOPENED: Final = "reopened: the claim that closed it was false, see Lessons"


def _commitment_line(c: Commitment, now: datetime, tz: ZoneInfo, operations: Sequence[Operation] = (),
                     listed: Collection[str] = (), reopened: bool = False) -> str:
    overdue = _is_overdue(c, now, tz)
    what = commitment_task(c)
    calls = promise_calls(c, operations, listed, tz)
    if calls:
        what = f"{what} ({calls})"
    if overdue:
        said = "; ".join(part for part in (_promiser(c), _overdue_since(c, now, tz)) if part)
        return f"- 🔴 **OVERDUE**: {what} ({said})"
    notes = "; ".join(part for part in (_promiser(c), REOPENED if reopened else "") if part)
    who = f" ({notes})" if notes else ""
    if c.due:
        return f"- 🟡 Due {_due_text(c.due, tz)}: {what}{who}"
    return f"- ⚪ Open: {what}{who}"


# a promiser known by the message's role only (an OpenClaw gateway's messages name no sender for
# the agent's own): "(assistant)" on every line of the agent's own promises, in a briefing that
# calls the agent "you" ("The user corrected you"); a promise of the agent's is "(you)" also
# under a sender name ("claudia"), when the commitment keeps its role
_ROLE_NAMES = {"assistant": "you", "user": "the user"}


def _promiser(c: Commitment) -> str:
    """"you" for the agent's own promise, else the sender's name ("the user" for a message
    known by its role only); empty when the commitment names nobody."""
    if c.role == "assistant":
        return "you"
    name = one_line(c.who)
    return _ROLE_NAMES.get(name, name)


def _due_text(due: str, tz: ZoneInfo) -> str:
    """A due time as the briefing's other times read: "2026-02-18 09:00" in local time for
    "2026-02-18T09:00:00+01:00"; a bare date or words ("Friday") as said."""
    text = one_line(due)
    moment = _due_moment(text, tz) if len(text) > len("YYYY-MM-DD") else None
    return local_minutes(moment, tz) if moment is not None else text


def _overdue_since(c: Commitment, now: datetime, tz: ZoneInfo) -> str:
    """Since when an overdue promise is overdue: "due 2026-03-15, yesterday" (a due time of
    today's: "due today 09:00"). "OVERDUE" alone left the reader to guess whether it was a day
    late or two weeks, and what to tell the person it was promised to."""
    text = (c.due or "").strip()
    moment = _due_moment(text, tz) if text else None
    if moment is None:  # (only a commitment with a due is overdue: ``_is_overdue``)
        return ""
    at_time = len(text) > len("YYYY-MM-DD")  # a bare date is due at the end of its day
    day = moment.astimezone(tz).date() if at_time else date.fromisoformat(text)
    days = (as_utc(now).astimezone(tz).date() - day).days
    return f"due today {moment.astimezone(tz):%H:%M}" if at_time and days <= 0 else f"due {day_and_age(day, days)}"


def _is_overdue(c: Commitment, now: datetime, tz: ZoneInfo) -> bool:
    """Overdue: its stated due has passed. The decisions worker marks that in event time; a
    passed due is overdue here too, even before the next event re-marks it. A commitment
    without a due is never overdue — not even one an older document marked so by its age
    (the reference's rule, which showed "keep ya posted" OVERDUE for 294 days)."""
    moment = _due_moment(c.due, tz) if c.due else None
    if moment is None:
        return False
    return c.status == "overdue" or moment <= as_utc(now)


# every language's stop words: a claim is checked against a commitment's task as a closure is
STOPWORDS: Final = frozenset(w.lower() for pack in PACKS.values() for w in (*pack.stopwords, *pack.topic_blacklist))


def false_closures(commitments: Sequence[Commitment], findings: Sequence[Finding]) -> frozenset[str]:
    """The ids of done commitments that a claim the trace analyzer found false names: "I'll
    deploy the payment service now", then the agent's "Done! … deployed ✅" after the deploy
    failed (a ``hallucination``) marked it done, and it stayed done while the briefing's
    Lessons said the claim was false (issue 37). Such a one is open again, and says why, as
    long as the trace document keeps the finding; the claim must come after the promise."""
    claims = [f for f in findings if f.signal == "hallucination" and f.quote]
    if not claims:
        return frozenset()
    return frozenset(c.id for c in commitments if c.status == "done" and any(
        as_utc(f.last_ts) >= as_utc(c.created) and names_task(c, f.quote, STOPWORDS) for f in claims))


def _commitment_rank(c: Commitment, now: datetime, tz: ZoneInfo) -> tuple[int, float, str, datetime, str]:
    """Overdue first (oldest first), then those with a due date (soonest first), then the rest,
    newest first: of the undated ones the briefing has room for, yesterday's promise is the one
    still owed (oldest first listed a week-old "watch your routine" before it, issue 37).

    A due string that is no date ("Friday") sorts after every real date, by its text.
    """
    created = as_utc(c.created)
    if _is_overdue(c, now, tz):
        return (0, 0.0, "", created, c.id)
    if c.due:
        moment = _due_moment(c.due, tz)
        due_ts = moment.timestamp() if moment is not None else math.inf
        return (1, due_ts, c.due, created, c.id)
    return (2, -created.timestamp(), "", created, c.id)


def _listed(c: Commitment, since: datetime, due_since: datetime | None, tz: ZoneInfo,
            now: datetime | None = None) -> bool:
    """A commitment the briefing lists: one made since ``since``, or one with a stated due
    that is still to come or passed since ``due_since`` (any passed one when None) — and, a
    person's, not past its day for longer than it was given (``past_its_day``)."""
    if not (c.due and c.due.strip()):
        return as_utc(c.created) >= since
    if due_since is None:
        return True
    moment = _due_moment(c.due, tz)
    return moment is None or (moment >= due_since and (now is None or not past_its_day(c, moment, now)))


def past_its_day(c: Commitment, due: datetime, now: datetime) -> bool:
    """A person's own dated promise late by more than it was given (twenty-third round, issue 37):
    "I'll come over tomorrow", "I'm going to make it for my family this weekend" a week after
    that day — a plan between people whose day came and went (it happened or it did not; the
    conversation moved on) — while "the deck by the end of the month", said a month ahead, is
    still worth a shout a month late (``overdue_days`` bounds both). The lateness a promise
    bears is its own horizon, from when it was made to its due (at least a day): dates only, no
    words, every language alike. Only a speaker's own (role ``user``): what the agent owes, what
    was asked of it and what a named third person owes the user keep the whole window."""
    if c.role != "user":
        return False
    late = as_utc(now) - as_utc(due)
    return late > max(as_utc(due) - as_utc(c.created), PAST_DAY_MIN)


def _vague(c: Commitment, operations: Sequence[Operation]) -> bool:
    """An undated promise whose task is too thin to act on (``too_thin``: "send new", "share
    with you") and whose line names no tool calls it is about: counted, not listed. On the
    mornings after every session of the development conversations such lines were 5 of the 43
    the list showed and none of what a reader needed (docs/briefing-eval.md, seventh round). A
    promise with a stated day is owed that day, however briefly it was said."""
    return not (c.due and c.due.strip()) and too_thin(c, STOPWORDS) and not promise_calls(c, operations)


def commitments_section(
    commitments: Sequence[Commitment], now: datetime, tz: ZoneInfo, budget: int,
    operations: Sequence[Operation] = (), listed: Collection[str] = (), findings: Sequence[Finding] = (),
    *, undated_days: int, overdue_days: int | None = None,
) -> tuple[str, int]:
    """Open and overdue commitments, the most urgent first; returns the text and open count.
    ``operations``: the agent's tool calls, which a vague promise made right after some is
    about (``promise_calls``); ``listed``: the ids of those the briefing's Pending Operations
    shows; ``findings``: the trace analyzer's, by which a commitment closed by a claim it found
    false is open again (``false_closures``). A commitment without a due date is listed for
    ``undated_days`` after it was made, then only counted: a promise that named no day never
    turns overdue, and a month-old "send you the recipe" would otherwise stand in every
    briefing for good. One with a due is listed until ``overdue_days`` after it (always when
    None), then only counted: "🔴 OVERDUE: go hiking with friends (due 2026-06-05, 160 days
    ago)" is no longer owed, and in a chat of months such plans filled the list (issue 37). A
    person's own dated promise leaves the list sooner, once it is late by more than it was given
    (``past_its_day``), and is counted "past its day"."""
    reopened = false_closures(commitments, findings)
    open_ones = [c for c in commitments if c.status != "done" or c.id in reopened]
    since = as_utc(now) - timedelta(days=undated_days)
    due_since = as_utc(now) - timedelta(days=overdue_days) if overdue_days is not None else None
    listed_ones = [c for c in open_ones if _listed(c, since, due_since, tz, now) or c.id in reopened]
    vague = [c for c in listed_ones if c.id not in reopened and _vague(c, operations)]
    shown = [c for c in listed_ones if c not in vague]
    shown.sort(key=lambda c: _commitment_rank(c, now, tz))
    lines = [_commitment_line(c, now, tz, operations, listed, c.id in reopened)
             for c in shown[:MAX_COMMITMENTS_IN_BOOT]]
    hidden = [c for c in open_ones if c not in listed_ones]
    dated = [c for c in hidden if c.due and c.due.strip()]
    passed = sum(1 for c in dated if due_since is not None
                 and (moment := _due_moment(c.due or "", tz)) is not None and moment >= due_since)
    stale = len(dated) - passed
    if aged := len(hidden) - len(dated):
        lines.append(f"_… {plural(aged, 'older open commitment')} without a due date not shown_")
    if stale:
        lines.append(f"_… {plural(stale, 'commitment')} overdue for more than {plural(overdue_days or 0, 'day')}"
                     " not shown_")
    if passed:
        lines.append(f"_… {plural(passed, 'commitment')} past its day not shown_" if passed == 1
                     else f"_… {plural(passed, 'commitment')} past their day not shown_")
    if vague:
        lines.append(f"_… {plural(len(vague), 'open commitment')} too vague to list not shown_")
    text, _ = section(f"## 📋 Commitments ({len(open_ones)} open)", lines, budget)
    return text, len(open_ones)


class DecisionsBriefingSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Recent Decisions' knobs (``CORTEX_BOOT_<KNOB>``): how many decisions, of how many days."""

    max_decisions_in_boot: Annotated[int, Meta(ge=1, le=30)] = 10
    decision_recency_days: Annotated[int, Meta(ge=1, le=90)] = 14


class CommitmentsBriefingSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Commitments' knobs: an open commitment without a due date is listed this many days
    after it was made, then only counted (``CORTEX_BOOT_COMMITMENT_DAYS``; it is never
    overdue: nothing said when it was due); an overdue one this many days after its due
    (``CORTEX_BOOT_OVERDUE_DAYS``: a work promise a month late is still worth a shout; "going
    hiking this weekend" five months on is not)."""

    commitment_days: Annotated[int, Meta(ge=1, le=90)] = 7
    overdue_days: Annotated[int, Meta(ge=1, le=365)] = 30


def _overlay(b: Briefing) -> Any:
    narrative = b.doc(BUCKET_NARRATIVES, NarrativeDoc)
    return narrative.enhanced if narrative is not None else None


def _decisions(b: Briefing, said: Said, budget: int) -> Rendered:
    """Recent Decisions; what it shows, or a later decision reversed, no other section says
    again (by the decisions' whats as extracted)."""
    doc = b.doc(BUCKET_DECISIONS, DecisionsDoc)
    raw = doc.decisions if doc is not None else []
    replaced = replaced_decisions(raw)  # judged on the decisions as said, once
    knobs = b.knob(DecisionsBriefingSettings)
    decisions = recent_decisions(enhance_decisions(raw, _overlay(b)), b.now, b.tz, knobs.decision_recency_days,
                                 knobs.max_decisions_in_boot, replaced)
    text, shown = decisions_section(decisions, budget)
    told = {d.id for d in decisions[:shown]} | replaced
    return Rendered(text, {DECISIONS: [one_line(d.what) for d in raw if d.id in told],
                           SENTENCES: [text for d in decisions[:shown] for text in (d.what, d.why)]},
                    plural(shown, "recent decision"))


def _commitments(b: Briefing, said: Said, budget: int) -> Rendered:
    doc, ops = b.doc(BUCKET_COMMITMENTS, CommitmentsDoc), b.doc(BUCKET_OPERATIONS, OperationsDoc)
    traces = b.doc(BUCKET_TRACES, TraceDoc)
    commitments = enhance_commitments(doc.commitments if doc is not None else [], _overlay(b))
    findings = traces.findings if traces is not None else []
    knobs = b.knob(CommitmentsBriefingSettings)
    text, open_count = commitments_section(commitments, b.now, b.tz, budget,
                                           ops.operations if ops is not None else [], said.of(OPERATIONS), findings,
                                           undated_days=knobs.commitment_days, overdue_days=knobs.overdue_days)
    reopened = false_closures(commitments, findings)
    return Rendered(text, {SENTENCES: [c.what for c in commitments if c.status != "done" or c.id in reopened]},
                    plural(open_count, "open commitment"))


SECTIONS: tuple[BriefingSection[Any], ...] = (
    BriefingSection("🎯 Recent Decisions", BUCKET_DECISIONS, DecisionsDoc, name="decisions", order=600, chars=3000,
                    compose=_decisions, reads=(BUCKET_NARRATIVES,), says=(DECISIONS, SENTENCES),
                    only_when_relevant=False, follows_messages=True, knobs=DecisionsBriefingSettings),
    BriefingSection("📋 Commitments", BUCKET_COMMITMENTS, CommitmentsDoc, name="commitments", order=700, chars=1000,
                    compose=_commitments, reads=(BUCKET_NARRATIVES, BUCKET_OPERATIONS, BUCKET_TRACES),
                    hears=(OPERATIONS,), says=(SENTENCES,), only_when_relevant=False, follows_messages=True,
                    knobs=CommitmentsBriefingSettings),
)
