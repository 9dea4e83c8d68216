"""The failure signals, each decided at the event that settles it.

The reference (openclaw-cortex ``src/trace-analyzer/signals/*.ts``) ran its detectors over
whole reconstructed chains after the fact. Here a chain grows event by event and each
signal is decided as soon as the stream settles it, with the reference's rules:

* ``correction`` (medium) — at a user message right after an agent message that matches a
  correction, unless it is a bare "no" answering the agent's question;
* ``hallucination`` (critical) — at an agent message claiming completion (and not asking)
  when the last tool result of the turn failed;
* ``unverified_claim`` (medium, off by default) — at an agent message stating system
  state, not hedged, outside a code block, with no tool called in the turn;
* ``tool_fail`` (low) — at an agent message, for each failed call since the previous one
  that no later call recovered (succeeded before the agent spoke);
* ``doom_loop`` (high, critical from 5) — at the third failing attempt in a row that is
  the same call as the first of them (similarity ≥ 0.8; Cortex also counts a call at
  least half alike that fails with the same error), growing with each further one; once
  the same call (≥ 0.8 alike one of the loop's attempts) succeeds later in the chain, or
  the loop's very call (same tool and command, else the same redacted parameters) in a
  later chain or session, the finding says so (``resolved_ts``, and ``resolved_after`` the
  call that worked just before, e.g. ``rm -rf node_modules && npm ci``) — Cortex's own: a
  loop fixed minutes later, or in the afternoon's session, was taught for a week as if it
  still failed;
* ``repeat_fail`` (high, critical from 3 sessions) — at a failure whose fingerprint already
  failed in another session; Cortex's own: or in the same session more than ``REPEAT_GAP``
  (8 h) before, the failure now in a turn (a run's start or a user message) begun since —
  OpenClaw's main chat keeps one session key for days, so the reference's rule never saw a
  second session there (two failures of one run are never two occasions);
* ``dissatisfied`` (high) — when a chain ends whose last user message was frustrated and
  no apology or new attempt followed.

Differences, where the reference's rules met events it did not expect: run start and end
events do not separate an agent message from the user's answer (the reference's chains
never contained both, its corrections needed them adjacent); a dissatisfied message counts
as "at the end" when at most two messages follow it (the reference counted three events of
any kind, so a tool call or a run's end after "forget it" hid it); a retry of the failed
call that succeeds recovers it (the reference only counted a different call, so a
transient failure that worked the second time was reported); failures that belong to a
doom loop make no separate ``tool_fail``, and the unrecovered failures of one tool in one
turn are one ``tool_fail`` with a count, not one each.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

import msgspec

from schemas.docs import DoomLoop, FailurePrint, Finding, TraceChain, TraceStep
from schemas.types import Severity, Signal
from workers.conversation.patterns import MatchText
from workers.render import clip_words
from workers.traces.config import MAX_FINDING_EVENTS, MAX_PRINT_SESSIONS, REPEAT_GAP, TraceConfig
from workers.traces.tools import call_key, failure_key, loop_similarity, normalise_error

_replace = msgspec.structs.replace

LOOP_SIMILARITY = 0.8
LOOP_SAME_ERROR_SIMILARITY = 0.5
LOOP_LENGTH = 3
LOOP_CRITICAL = 5
_QUOTE_IN_SUMMARY = 100
_LIFECYCLE = frozenset({"run_start", "run_end"})


def finding_id(signal: Signal, anchor: str) -> str:
    return hashlib.sha256(f"{signal}|{anchor}".encode()).hexdigest()[:16]


def _events(ids: Sequence[str]) -> list[str]:
    """At most ``MAX_FINDING_EVENTS`` ids: the first half and the last half of them."""
    unique = list(dict.fromkeys(ids))
    if len(unique) <= MAX_FINDING_EVENTS:
        return unique
    half = MAX_FINDING_EVENTS // 2
    return unique[:half] + unique[-half:]


def _quote(text: str) -> str:
    return f"'{clip_words(text, _QUOTE_IN_SUMMARY)}'"


# -- a user message ---------------------------------------------------------------------------


def _previous_message(chain: TraceChain) -> TraceStep | None:
    """The step before a new one, run boundaries skipped: the agent's message it answers."""
    for step in reversed(chain.steps):
        if step.kind not in _LIFECYCLE:
            return step
    return None


def correction(chain: TraceChain, step: TraceStep, text: MatchText, config: TraceConfig) -> Finding | None:
    previous = _previous_message(chain)
    if previous is None or previous.kind != "out" or not step.text:
        return None
    if not config.patterns.is_correction(text, after_question=previous.question):
        return None
    return Finding(
        id=finding_id("correction", step.event), signal="correction", severity="medium",
        summary=f"User corrected the agent: {_quote(step.text)} (after {_quote(previous.text)})",
        events=[previous.event, step.event], first_ts=previous.ts, last_ts=step.ts, session=chain.session,
        quote=step.text,
    )


# -- an agent message -------------------------------------------------------------------------


def began(step: TraceStep) -> datetime:
    """When what ``step`` stands for began: a result's call (listed in a finding's events
    before it), else the step itself."""
    return step.call_ts or step.ts


def _since(steps: Sequence[TraceStep], kinds: frozenset[str]) -> list[TraceStep]:
    """The steps after the last one of ``kinds``."""
    for index in range(len(steps) - 1, -1, -1):
        if steps[index].kind in kinds:
            return list(steps[index + 1:])
    return list(steps)


def hallucination(chain: TraceChain, step: TraceStep) -> Finding | None:
    """``step`` claims completion: a finding when the turn's last tool result failed."""
    turn = _since(chain.steps, frozenset({"in"}))
    result = next((s for s in reversed(turn) if s.kind == "result"), None)
    if result is None or not result.failed:
        return None
    return Finding(
        id=finding_id("hallucination", step.event), signal="hallucination", severity="critical",
        summary=f"Agent claimed success after {result.tool} failed: {_quote(step.text)} (error: {result.error})",
        events=_events([result.call, result.event, step.event]), first_ts=began(result), last_ts=step.ts,
        session=chain.session, tool=result.tool, error=result.error, quote=step.text,
    )


def unverified_claim(chain: TraceChain, step: TraceStep, claim: str) -> Finding | None:
    """``step`` states ``claim`` about the system: a finding when the turn called no tool."""
    turn = _since(chain.steps, frozenset({"in"}))
    if any(s.kind == "call" for s in turn):
        return None
    anchor = next((s for s in reversed(chain.steps) if s.kind == "in"), step)
    return Finding(
        id=finding_id("unverified_claim", step.event), signal="unverified_claim", severity="medium",
        summary=f"Agent stated system state without checking it: {_quote(claim)}",
        events=_events([anchor.event, step.event]), first_ts=anchor.ts, last_ts=step.ts, session=chain.session,
        quote=step.text,
    )


def _recovered(segment: Sequence[TraceStep], index: int) -> bool:
    """Did a call made after the failure succeed before the agent spoke?"""
    return any(s.kind == "result" and not s.failed and s.call not in _made_before(segment, index)
               for s in segment[index + 1:])


def _made_before(segment: Sequence[TraceStep], index: int) -> set[str]:
    """The calls made before ``segment[index]`` (their late results recover nothing)."""
    return {s.event for s in segment[:index] if s.kind == "call"}


def tool_fails(chain: TraceChain, step: TraceStep, in_loops: set[str]) -> list[Finding]:
    """One finding per tool whose failures since the agent last spoke went unrecovered."""
    segment = _since(chain.steps, frozenset({"out"}))
    groups: dict[str, list[TraceStep]] = {}
    for index, s in enumerate(segment):
        if s.kind == "result" and s.failed and s.event not in in_loops and not _recovered(segment, index):
            groups.setdefault(s.tool, []).append(s)
    findings = []
    for tool, failures in groups.items():
        first, last = failures[0], failures[-1]
        times = f"failed {len(failures)}× " if len(failures) > 1 else "failed "
        findings.append(Finding(
            id=finding_id("tool_fail", first.event), signal="tool_fail", severity="low",
            summary=f"Unrecovered tool failure: {tool} {times}before the agent answered — {last.error}",
            events=_events([e for f in failures for e in (f.call, f.event) if e]),
            first_ts=began(first), last_ts=step.ts, session=chain.session, tool=tool, count=len(failures),
            error=last.error,
        ))
    return findings


# -- a tool result ----------------------------------------------------------------------------


def _same_attempt(loop: DoomLoop, step: TraceStep) -> bool:
    """The reference's test (similarity ≥ 0.8 to the loop's first call), or — Cortex's
    own — the same error again from a call at least half alike ("npm run build" and
    "npm run build --verbose" both failing with one missing module)."""
    if loop.tool != step.tool:
        return False
    similarity = loop_similarity(loop.command, loop.keys, step.command, step.keys)
    if similarity >= LOOP_SIMILARITY:
        return True
    return similarity >= LOOP_SAME_ERROR_SIMILARITY and normalise_error(loop.first_error) == normalise_error(step.error)


def extend_loop(loop: DoomLoop | None, step: TraceStep) -> DoomLoop | None:
    """The doom loop after an attempt: one longer when it failed the same way as the
    loop's first attempt, a new candidate when it failed differently, none on success."""
    if not step.failed:
        return None
    ids = [e for e in (step.call, step.event) if e]
    if loop is not None and _same_attempt(loop, step):
        return _replace(loop, count=loop.count + 1, events=_events([*loop.events, *ids]))
    return DoomLoop(tool=step.tool, keys=step.keys, command=step.command, count=1, events=ids, first_ts=began(step),
                    first_error=step.error)


def doom_loop(loop: DoomLoop, chain: TraceChain, step: TraceStep) -> Finding | None:
    if loop.count < LOOP_LENGTH:
        return None
    severity: Severity = "critical" if loop.count >= LOOP_CRITICAL else "high"
    return Finding(
        id=loop.finding or finding_id("doom_loop", loop.events[0]), signal="doom_loop", severity=severity,
        summary=f"Doom loop: {loop.count}× {loop.tool} with similar parameters, all failing — {loop.first_error}",
        events=loop.events, first_ts=loop.first_ts, last_ts=step.ts, session=chain.session, tool=loop.tool,
        count=loop.count, error=step.error or loop.first_error,
        loop_call=call_key(loop.tool, loop.command, loop.keys),
    )


def resolved_loops(findings: Sequence[Finding], chain: TraceChain, step: TraceStep) -> list[Finding]:
    """The doom loops that ``step``, a result that succeeded, resolves. In the loop's own
    chain: the same call (≥ ``LOOP_SIMILARITY`` alike one of its failed attempts, still among
    the chain's steps) worked after all. In a later chain or another session — Cortex's own
    too: the main chat's loop fixed in the afternoon's run, a session's in the next one —
    the very call of the loop (``loop_call``: its tool and command, else its parameters)
    worked. Each comes back with ``resolved_ts`` and ``resolved_after``: the last other call
    that succeeded in between in this chain (its command, else its tool), what changed."""
    if step.kind != "result" or step.failed:
        return []
    resolved = []
    key = call_key(step.tool, step.command, step.keys)
    for finding in findings:
        if finding.signal != "doom_loop" or finding.resolved_ts is not None or finding.tool != step.tool:
            continue
        loop = set(finding.events)
        attempts = [i for i, s in enumerate(chain.steps) if s.kind == "result" and s.failed and s.event in loop]
        if attempts and finding.session == chain.session:
            if not any(loop_similarity(chain.steps[i].command, chain.steps[i].keys, step.command, step.keys)
                       >= LOOP_SIMILARITY for i in attempts):
                continue  # another call of the tool
            since = attempts[-1] + 1
        elif finding.loop_call and finding.loop_call == key:
            since = 0  # a later chain: what worked before it in this one
        else:
            continue  # another call of the tool, or a loop that left no call to compare
        worked = [s for s in chain.steps[since:] if s.kind == "result" and not s.failed]
        after = (worked[-1].command or worked[-1].tool) if worked else ""
        resolved.append(_replace(finding, resolved_ts=step.ts, resolved_after=after))
    return resolved


REPEAT_OCCASIONS = "Same failure on "  # a repeat_fail's summary, when a session counts more than once


def _returned(known: FailurePrint, chain: TraceChain, step: TraceStep) -> bool:
    """Cortex's own: the failure is back in a session it already failed in, more than
    ``REPEAT_GAP`` after it last failed, in a turn (a run's start or a user message of this
    chain) that began since — the next day in OpenClaw's main chat, whose one session key
    never makes a second session. Two failures of one run are never two occasions, however
    long the run."""
    if step.ts - known.last_ts <= REPEAT_GAP:
        return False
    return any(s.kind in ("run_start", "in") and s.ts > known.last_ts for s in chain.steps)


def repeated_in_one_session(finding: Finding) -> bool:
    """A ``repeat_fail`` that counts a session more than once (its occasions hours apart)."""
    return finding.signal == "repeat_fail" and finding.summary.startswith(REPEAT_OCCASIONS)


def record_failure(
    prints: list[FailurePrint], chain: TraceChain, step: TraceStep
) -> tuple[FailurePrint, Finding | None]:
    """The failure's fingerprint with this occasion added, and a ``repeat_fail`` finding
    when the same failure has now happened on more than one occasion: in another session
    (the reference), or in the same session again after ``REPEAT_GAP`` (``_returned``)."""
    key = failure_key(step.tool, step.keys, step.command, step.error)
    ids = [e for e in (step.call, step.event) if e]
    known = next((p for p in prints if p.key == key), None)
    if known is None:
        return FailurePrint(key=key, tool=step.tool, error=step.error, sessions=[chain.session], events=ids,
                            first_ts=began(step), last_ts=step.ts), None
    if chain.session in known.sessions and not _returned(known, chain, step):
        return _replace(known, last_ts=step.ts), None
    sessions = [*known.sessions, chain.session][-MAX_PRINT_SESSIONS:]
    updated = _replace(known, sessions=sessions, events=_events([*known.events, *ids]), last_ts=step.ts)
    count = len(sessions)
    distinct = len(set(sessions))
    severity: Severity = "critical" if count >= 3 else "high"
    where = (f"Same failure in {count} sessions" if distinct == count else
             f"{REPEAT_OCCASIONS}{count} occasions hours apart ({distinct} session{'s' if distinct > 1 else ''})")
    finding = Finding(
        id=finding_id("repeat_fail", key), signal="repeat_fail", severity=severity,
        summary=f"{where}: {step.tool} — {step.error}",
        events=updated.events, first_ts=known.first_ts, last_ts=step.ts, session=chain.session, tool=step.tool,
        count=count, error=step.error,
    )
    return updated, finding


# -- the end of a chain -----------------------------------------------------------------------

DISSATISFIED_REACH = 2  # messages after the dissatisfied one that still leave it at the end


def dissatisfied(chain: TraceChain) -> Finding | None:
    upset = chain.upset
    if upset is None or upset.resolved or upset.after > DISSATISFIED_REACH:
        return None
    return Finding(
        id=finding_id("dissatisfied", upset.event), signal="dissatisfied", severity="high",
        summary=f"Session ended with the user dissatisfied: {_quote(upset.text)}",
        events=[upset.event], first_ts=upset.ts, last_ts=chain.last_ts, session=chain.session, quote=upset.text,
    )
