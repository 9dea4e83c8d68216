"""The traces worker's briefing sections: pending operations and lessons from recent failures.

"Pending operations" follows the unified-brain design's system floor (``seeds/004``): a
call still running after its turn is ``[PENDING]``, a result the agent has not been shown
``[NEW RESULT]`` (with its preview) or ``[FAILED]``. For the results a finished briefing
shows whole (``shown_results``) the boot worker publishes an ``operation_seen`` event, so
the next briefing does not repeat them (the design's acknowledgement).

"Lessons from recent failures" turns the trace analyzer's findings of the last
``LESSON_DAYS`` into at most ``MAX_LESSONS`` lines, one per signal and tool (a long doom
loop and its repeats are one lesson); findings Claude's triage dismissed are left out.
The lessons of the latest local day that has any come first, then the earlier days',
each group most severe and newest first: ranked by severity alone, a busy week's high
findings pushed out the medium "the user corrected you" of the session just before, the
lesson that matters most to an agent waking up. A doom loop whose call worked later (in the
same chain, or its very call in a later one: ``Finding.resolved_ts``) says so ("…, then it
worked after `npm ci`: next time, change the approach after two identical failures") and
weighs a grade less: told as if it
still failed, a loop fixed minutes later read for a week as an open problem. Every line ends
on what to do ("— report failures as such", "— check an answer against its source before
giving it"): a correction or a tool failure told alone said what happened, not what to change. A last line
counts the lessons left out ("- (2 more lessons not shown here)"), as the pending
operations do. Every text in them was redacted when it was stored. (The reference has no
such section: it is Cortex's own.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, Final
from zoneinfo import ZoneInfo

import msgspec

from schemas.docs import Finding, Operation, OperationsDoc, TraceDoc
from schemas.types import SEVERITIES
from shared.briefing import OPERATIONS, Briefing, BriefingSection, Rendered, Said, Seen
from shared.config import Settings
from shared.names import BUCKET_OPERATIONS, BUCKET_TRACES
from workers.briefing import section
from workers.render import clip_words, day_and_age, days_before, is_unread, is_waiting, local_minutes, marker, one_line
from workers.traces.operations import orphaned
from workers.traces.signals import repeated_in_one_session

MAX_OPERATIONS_IN_BOOT: Final = 8
MAX_LESSONS: Final = 5
LESSON_DAYS: Final = 7
PREVIEW_CHARS: Final = 160
QUOTE_CHARS: Final = 100
_RANK: Final = {s: i for i, s in enumerate(SEVERITIES)}
# What each lesson says to do (every line ends on it: "The user corrected you: “…”" alone told
# what happened, not what to do differently)
CORRECTION_ADVICE: Final = "check an answer against its source before giving it"
TOOL_FAIL_ADVICE: Final = "next time, try a fix or another way before answering"
DISSATISFIED_ADVICE: Final = "find out what went wrong before going on"
UTC_ZONE: Final = ZoneInfo("UTC")


def operation_line(op: Operation, tz: ZoneInfo, *, failed_before: bool = False, said: str = "") -> str:
    """One operation as the briefing shows it (its exact text also tells whether it was shown).
    ``failed_before``: a line above already said to tell the user of a failure; ``said``: the
    preview of an orphan above, which this one's repeats."""
    asked = f" “{op.request}”" if op.request else ""  # a redacted excerpt already (workers.traces.operations)
    line = f"- {marker(op)} `{one_line(op.tool)}`{asked} (started {local_minutes(op.started, tz)}"
    if op.finished is not None and not is_waiting(op):  # an orphan did not finish: it was given up on
        line += f", {'given up' if op.orphaned else 'finished'} {local_minutes(op.finished, tz)}"
    line += ")"
    if is_unread(op) and op.preview:
        line += ": no result either" if op.orphaned and op.preview == said else \
            f": {clip_words(one_line(op.preview), PREVIEW_CHARS)}"
    if op.status == "failed" and is_unread(op):
        line += " — tell the user too" if failed_before else " — tell the user it failed"
    return line


def operation_lines(ops: Sequence[Operation], tz: ZoneInfo) -> list[tuple[Operation, str]]:
    """The lines of what the agent must hear about, each thing said once: "tell the user it
    failed" by the first failure ("tell the user too" after it), an orphan's "no result
    within 24 h" by the first orphan ("no result either" after it) — two failures in one
    briefing said both twice."""
    lines = []
    failed_before, said = False, ""
    for op in to_tell(ops):
        lines.append((op, operation_line(op, tz, failed_before=failed_before, said=said)))
        if op.status == "failed" and is_unread(op):
            failed_before = True
            said = said or (op.preview or "" if op.orphaned else "")
    return lines


def _all_to_tell(ops: Sequence[Operation]) -> list[Operation]:
    unread = sorted((op for op in ops if is_unread(op)), key=lambda op: (op.finished or op.started, op.id))
    waiting = sorted((op for op in ops if is_waiting(op)), key=lambda op: (op.started, op.id))
    return [*unread, *waiting]


def to_tell(ops: Sequence[Operation]) -> list[Operation]:
    """What the agent must hear about: unread results (oldest first), then calls still pending."""
    return _all_to_tell(ops)[:MAX_OPERATIONS_IN_BOOT]


def _counted_section(heading: str, lines: Sequence[str], total: int, budget: int,
                     more: Callable[[int], str]) -> str:
    """The section of as many of ``lines`` as the budget holds and, when the budget or a cap
    left some of the ``total`` out, a last line ``more(n)`` saying how many, in place of as
    few lines as it takes."""
    text, shown = section(heading, lines, budget)
    if shown == 0 or shown >= total:
        return text
    for kept in range(shown, 0, -1):
        counted, fitted = section(heading, [*lines[:kept], more(total - kept)], budget)
        if fitted == kept + 1:
            return counted
    return text


def operations_section(ops: Sequence[Operation], tz: ZoneInfo, budget: int) -> str:
    """What the agent must hear about, as many lines as the budget holds (``shown_results``
    tells which results a finished document shows), and how many more there are when the
    budget or the cap left some out: the tasks still pending come last and were dropped
    without a word, so the agent took the list for all of them."""
    lines = [line for _, line in operation_lines(ops, tz)]
    return _counted_section("## ⏳ Pending Operations", lines, len(_all_to_tell(ops)), budget,
                            lambda n: f"- ({n} more not shown here)")


def shown_operations(ops: Sequence[Operation], markdown: str, tz: ZoneInfo) -> list[Operation]:
    """The operations whose lines ``markdown`` shows whole (a line cut by the budget or the
    document's hard limit was not shown)."""
    return [op for op, line in operation_lines(ops, tz) if line in markdown]


def shown_results(ops: Sequence[Operation], markdown: str, tz: ZoneInfo) -> list[str]:
    """The unread results a briefing's markdown shows whole (one cut was not shown: it stays unread)."""
    return [op.id for op in shown_operations(ops, markdown, tz) if is_unread(op)]


_USER_QUOTES = ("correction", "dissatisfied")  # the signals that quote a user's message


def _quote(text: str) -> str:
    return f"“{clip_words(one_line(text), QUOTE_CHARS)}”"


def _tool(f: Finding) -> str:
    return f"`{one_line(f.tool)}`"


def _code(text: str) -> str:
    """A command in backticks (its own backticks made quotes: they would end the span)."""
    return "`" + clip_words(one_line(text), QUOTE_CHARS).replace("`", "'") + "`"


def _error(f: Finding) -> str:
    return f" ({clip_words(one_line(f.error), QUOTE_CHARS)})" if f.error else ""


def lesson_line(f: Finding, error: str | None = None, reply: str = "") -> str:
    """What a finding teaches, in one line; ``error``: how to name its error, when not in full;
    ``reply``: for a success claimed, what the user answered to it (``_claim_reply``)."""
    if error is None:
        error = _error(f)
    if f.signal == "hallucination" and reply:
        return (f"- Success was claimed after {_tool(f)} failed{error}: {_quote(f.quote)}, and {reply} — report "
                "failures as such")
    if f.signal == "doom_loop" and f.resolved_ts is not None:
        after = f" after {_code(f.resolved_after)}" if f.resolved_after else ""
        return (f"- {_tool(f)} failed {f.count}× in a row with the same call{error}, then it worked{after}: "
                "next time, change the approach after two identical failures")
    if f.signal == "doom_loop":
        return (f"- {_tool(f)} failed {f.count}× in a row with the same call{error}: after two identical "
                "failures, change the approach or ask")
    if f.signal == "repeat_fail":
        where = f"on {f.count} occasions hours apart" if repeated_in_one_session(f) else f"in {f.count} sessions"
        return f"- {_tool(f)} failed the same way {where}{error}: fix the cause before retrying"
    if f.signal == "tool_fail":
        times = f" {f.count}×" if f.count > 1 else ""
        return f"- {_tool(f)} failed{times}{error} and the answer went out without a fix — {TOOL_FAIL_ADVICE}"
    if f.signal == "hallucination":
        return f"- Success was claimed after {_tool(f)} failed{error}: {_quote(f.quote)} — report failures as such"
    if f.signal == "correction":
        return f"- The user corrected you: {_quote(f.quote)} — {CORRECTION_ADVICE}"
    if f.signal == "dissatisfied":
        return f"- A session ended with the user frustrated: {_quote(f.quote)} — {DISSATISFIED_ADVICE}"
    return f"- System state was stated without checking it: {_quote(f.quote)} — verify with a tool first"


def ranked_lessons(findings: Sequence[Finding], now: datetime, tz: ZoneInfo = UTC_ZONE) -> list[Finding]:
    """The findings worth a lesson, in the order the briefing shows them (it shows at most
    ``MAX_LESSONS``): recent, not dismissed, one per signal and tool; those of the latest
    local day that has any first, then the earlier ones, each group most severe (by the
    triage's grade when there is one) and newest first."""
    since = now - timedelta(days=LESSON_DAYS)
    kept = [f for f in findings if f.last_ts >= since and (f.triage is None or f.triage.keep)]
    if not kept:
        return []
    latest = max(f.last_ts for f in kept).astimezone(tz).date()

    def grade(f: Finding) -> int:  # a doom loop the agent got out of weighs a grade less than one it did not
        rank = _RANK[f.triage.severity if f.triage is not None else f.severity]
        return rank - 1 if f.resolved_ts is not None and rank > 0 else rank

    # the latest day's lessons are never pushed out by a busy week's more severe ones
    kept.sort(key=lambda f: (f.last_ts.astimezone(tz).date() != latest, -grade(f), -f.last_ts.timestamp(), f.id))
    seen: set[tuple[str, str]] = set()
    lessons = []
    for f in kept:
        key = (f.signal, f.tool)
        if key not in seen:
            seen.add(key)
            lessons.append(f)
    return lessons


def _when_learned(f: Finding, now: datetime | None, tz: ZoneInfo) -> str:
    """`` (2026-03-04, 4 days ago)`` for a lesson of an earlier local day than ``now``'s
    (nothing for today's): a week of lessons read as if each had happened today."""
    if now is None:
        return ""
    day, days = days_before(f.last_ts, now, tz)
    return f" ({day_and_age(day, days)})" if days > 0 else ""


def _claim_corrections(lessons: Sequence[Finding]) -> dict[str, Finding]:
    """The corrections that answer a success claim told before them, by the claim's message
    (a hallucination's last event is the claim; a correction's first is the message it
    corrects): "Done ✅" and the user's "No, that's wrong, it failed!" are one incident."""
    claims: set[str] = set()
    answered: dict[str, Finding] = {}
    for f in lessons:
        if f.signal == "hallucination" and f.events:
            claims.add(f.events[-1])
        elif f.signal == "correction" and f.events and f.events[0] in claims:
            answered.setdefault(f.events[0], f)
    return answered


def lesson_lines(lessons: Sequence[Finding], now: datetime | None = None, tz: ZoneInfo = UTC_ZONE) -> list[str]:
    """One line per lesson, each thing said once: a user's message quoted once (the message
    that corrected the agent and ended the session frustrated is one correction and one
    dissatisfied finding, and one line that says both), a success claimed and the user's
    correction of that claim one line, a tool's error in full once (a later line of the same
    tool and error says "the same error"). With ``now``, a lesson of an earlier day says
    which (``_when_learned``)."""
    lines: list[str] = []
    # a user message's quote -> its line, that line's signal, and the line with another reply
    quoted: dict[str, tuple[int, str, Callable[[str], str] | None]] = {}
    errors: set[tuple[str, str]] = set()  # (tool, error) named in full by an earlier line
    answered = _claim_corrections(lessons)
    told_with_claim = {c.id for c in answered.values()}
    for f in lessons:
        if f.id in told_with_claim:
            continue  # in the line of the claim it corrected
        error = _error(f)
        if error and (f.tool, error) in errors:
            error = " (the same error)"
        elif error:
            errors.add((f.tool, error))
        when = _when_learned(f, now, tz)
        correction = answered.get(f.events[-1]) if f.signal == "hallucination" and f.events else None
        if correction is not None:
            quote = _quote(correction.quote)
            if quote not in quoted:
                def line(reply: str, f: Finding = f, error: str = error, quote: str = quote, when: str = when) -> str:
                    return lesson_line(f, error, f"the user {reply}: {quote}") + when

                quoted[quote] = (len(lines), "correction", line)
                lines.append(line("corrected you"))
                continue
        if f.signal in _USER_QUOTES and f.quote:
            quote = _quote(f.quote)
            if quote in quoted:
                at, signal, again = quoted[quote]
                if signal != f.signal:
                    lines[at] = (again("corrected you and ended the session frustrated") if again is not None else
                                 f"- The user corrected you and ended the session frustrated: {quote} — "
                                 f"{CORRECTION_ADVICE}{when}")
                continue
            quoted[quote] = (len(lines), f.signal, None)
        lines.append(lesson_line(f, error) + when)
    return lines


def _more_lessons(n: int) -> str:
    # not the operations' "(n more not shown here)": two sections saying it read as one fact twice
    return f"- ({n} more {'lesson' if n == 1 else 'lessons'} not shown here)"


def lessons_section(findings: Sequence[Finding], now: datetime, budget: int, tz: ZoneInfo = UTC_ZONE) -> str:
    """At most ``MAX_LESSONS`` lines, as many as the budget holds, and how many lessons
    were left out (the agent took five lines for all there was)."""
    lines = lesson_lines(ranked_lessons(findings, now, tz), now, tz)
    return _counted_section("## ⚠️ Lessons from Recent Failures", lines[:MAX_LESSONS], len(lines), budget,
                            _more_lessons)


def operations_at(doc: OperationsDoc, now: datetime, settings: Settings) -> OperationsDoc:
    """The operations as of ``now``: the document is read as it was before the trigger, and
    a call pending past ``CORTEX_TRACES_ORPHAN_HOURS`` is orphaned there, as the traces
    worker does at the trigger (``workers.traces.operations.orphaned``)."""
    ops = orphaned(doc.operations, now, timedelta(hours=settings.traces.orphan_hours))
    return doc if ops == doc.operations else msgspec.structs.replace(doc, operations=ops)


def _operations(b: Briefing, said: Said, budget: int) -> Rendered:
    doc = b.doc(BUCKET_OPERATIONS, OperationsDoc)
    ops = doc.operations if doc is not None else []
    text = operations_section(ops, b.tz, budget)
    # the calls listed whole: a promise about them points here instead of quoting them again
    return Rendered(text, {OPERATIONS: [op.id for op in shown_operations(ops, text, b.tz)]})


def _lessons(b: Briefing, said: Said, budget: int) -> Rendered:
    doc = b.doc(BUCKET_TRACES, TraceDoc)
    return Rendered(lessons_section(doc.findings if doc is not None else [], b.now, budget, b.tz))


def _shown_results(doc: OperationsDoc, markdown: str, tz: ZoneInfo) -> list[str]:
    return shown_results(doc.operations, markdown, tz)


# The traces worker's documents exist only for agents whose events gave it something to keep
# (an agent without tool calls has no operations): only when relevant. The unread results a
# briefing given to the agent shows are seen (``operation_seen``: the next one does not repeat them).
SECTIONS: tuple[BriefingSection[Any], ...] = (
    BriefingSection("⏳ Pending Operations", BUCKET_OPERATIONS, OperationsDoc, name="operations", order=400,
                    chars=600, compose=_operations, says=(OPERATIONS,), view=operations_at,
                    seen=Seen("operation_seen", _shown_results, given=True, tag="opseen")),
    BriefingSection("⚠️ Lessons from Recent Failures", BUCKET_TRACES, TraceDoc, name="lessons", order=500,
                    chars=800, compose=_lessons),
)
