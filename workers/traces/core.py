"""The trace analyzer as a pure function over one agent's ``TraceDoc``, event by event.

Ported from the reference's trace analyzer (openclaw-cortex ``src/trace-analyzer/``, RFC-005):
events are grouped into chains per session (``chain-reconstructor.ts``), and failure signals
are found in the chains (``signals/``, see ``workers.traces.signals``). The reference read
a time range of the event store on a schedule and rebuilt every chain each run; here the
chains are state in the document and grow with each event, so a finding exists as soon as
the stream settles it and a replay reproduces the document byte for byte. Chain
boundaries are the reference's: a session's start or end, a run starting more than five
minutes after the previous one ended, and inactivity longer than ``gap_minutes`` —
measured in event time against any later event of the agent, so a session that simply
stops is still closed (and judged) once the agent does anything else.

Bounded per agent whatever the input: at most ``MAX_CHAINS`` chains (the least recently
active is closed first), each remembering its last ``MAX_STEPS`` steps; at most
``MAX_FAILURE_PRINTS`` failure fingerprints; at most ``max_findings`` findings (the oldest
go first). Message texts are read through ``prepare_text`` (head and tail of a long one);
every text kept is a redacted excerpt (``workers.traces.redact``).

The functions return a new document and never mutate their input; it changes with
``msgspec.structs.replace``, so fields not named here (``integrity``, owned by the shell; a
new field) are carried over.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

import msgspec

from schemas.docs import Finding, Integrity, TraceChain, TraceDoc, TraceStep, Upset
from schemas.events import MessageEvent, RunEvent, SessionEvent, ToolEvent
from workers.conversation.patterns import MatchText, prepare_text
from workers.traces import signals
from workers.traces.config import (
    ERROR_CHARS,
    MAX_CHAINS,
    MAX_FAILURE_PRINTS,
    MAX_STEPS,
    RUN_GAP,
    TEXT_CHARS,
    TraceConfig,
)
from workers.traces.redact import as_text, excerpt
from workers.traces.tools import command_of, param_keys, tool_error

_replace = msgspec.structs.replace

TraceEvent = MessageEvent | SessionEvent | ToolEvent | RunEvent


def empty_trace_doc(ts: datetime) -> TraceDoc:
    return TraceDoc(updated=ts, findings=[], integrity=Integrity())


class _Work:
    """One event's changes to a document: new lists, elements replaced, never mutated."""

    def __init__(self, doc: TraceDoc, config: TraceConfig) -> None:
        self.config = config
        self.chains = list(doc.chains)
        self.findings = list(doc.findings)
        self.failures = list(doc.failures)

    def add(self, finding: Finding | None) -> None:
        """A new finding, or the newer state of one already there (in its place)."""
        if finding is None or finding.signal not in self.config.signals:
            return
        for index, known in enumerate(self.findings):
            if known.id == finding.id:
                self.findings[index] = _replace(finding, triage=known.triage)
                return
        self.findings.append(finding)
        del self.findings[: max(0, len(self.findings) - self.config.max_findings)]

    def chain_of(self, session: str) -> TraceChain | None:
        return next((c for c in self.chains if c.session == session), None)

    def put(self, chain: TraceChain) -> None:
        self.chains = [c for c in self.chains if c.session != chain.session] + [chain]

    def close(self, chain: TraceChain) -> None:
        self.chains = [c for c in self.chains if c.session != chain.session]
        self.add(signals.dissatisfied(chain))

    def close_idle(self, now: datetime) -> None:
        for chain in [c for c in self.chains if now - c.last_ts > self.config.gap]:
            self.close(chain)

    def close_surplus(self) -> None:
        while len(self.chains) > MAX_CHAINS:
            self.close(min(self.chains, key=lambda c: c.last_ts))

    def loop_events(self) -> set[str]:
        """Events already part of a doom loop finding (they make no separate tool_fail)."""
        return {e for f in self.findings if f.signal == "doom_loop" for e in f.events} | {
            e for c in self.chains if c.loop is not None and c.loop.count >= signals.LOOP_LENGTH for e in c.loop.events
        }

    def doc(self, doc: TraceDoc, now: datetime) -> TraceDoc:
        return _replace(doc, updated=now, chains=self.chains, findings=self.findings, failures=self.failures)


def _new_chain(session: str, event_id: str, ts: datetime) -> TraceChain:
    """A chain's id is a digest of its session and first event (the reference hashed the
    session, agent and first time)."""
    chain_id = hashlib.sha256(f"{session}|{event_id}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return TraceChain(id=chain_id, session=session, started=ts, last_ts=ts, steps=[])


# -- steps ------------------------------------------------------------------------------------


def _message_step(event: MessageEvent, kind: str, config: TraceConfig) -> tuple[TraceStep, MatchText] | None:
    if event.role in ("system", "tool"):
        return None
    step_kind = "in" if kind == "received" else "out"
    text = prepare_text(event.content)
    question = step_kind == "out" and config.patterns.is_question(text)
    step = TraceStep(kind=step_kind, event=event.id, ts=event.ts, text=excerpt(event.content, TEXT_CHARS,
                                                                                 config.redact), question=question)
    return step, text


def _answered(steps: list[TraceStep]) -> set[str]:
    return {s.call for s in steps if s.kind == "result" and s.call}


def _call_of(chain: TraceChain, event: ToolEvent) -> TraceStep | None:
    """The call a result answers: the one with its call id, else the latest unanswered
    call of the same tool."""
    answered = _answered(chain.steps)
    for step in reversed(chain.steps):
        if step.kind != "call" or step.event in answered:
            continue
        if event.call_id and step.call_id == event.call_id:
            return step
        if not event.call_id and step.tool == event.tool:
            return step
    return None


def _tool_step(chain: TraceChain, event: ToolEvent, kind: str, config: TraceConfig) -> TraceStep:
    if kind == "call":
        return TraceStep(kind="call", event=event.id, ts=event.ts, tool=event.tool, call_id=event.call_id or "",
                         keys=param_keys(event.params), command=command_of(event.params))
    call = _call_of(chain, event)
    error = tool_error(event.error, event.result)
    params = event.params if call is None else None
    return TraceStep(
        kind="result", event=event.id, ts=event.ts, tool=event.tool, call_id=event.call_id or "",
        call=call.event if call is not None else "", call_ts=call.ts if call is not None else None,
        keys=call.keys if call is not None else param_keys(params),
        command=call.command if call is not None else command_of(params),
        failed=error is not None, error=excerpt(as_text(error), ERROR_CHARS, config.redact) if error else "",
    )


# -- detectors by step kind -------------------------------------------------------------------


def _on_user(work: _Work, chain: TraceChain, step: TraceStep, text: MatchText) -> TraceChain:
    work.add(signals.correction(chain, step, text, work.config))
    if work.config.patterns.is_dissatisfied(text):
        return _replace(chain, upset=Upset(event=step.event, ts=step.ts, text=step.text))
    return _replace(chain, upset=None)


def _on_agent(work: _Work, chain: TraceChain, step: TraceStep, text: MatchText) -> TraceChain:
    patterns = work.config.patterns
    if step.text and patterns.completion_claim(text) is not None:
        work.add(signals.hallucination(chain, step))
    if "unverified_claim" in work.config.signals and (claim := patterns.state_claim(text)) is not None:
        work.add(signals.unverified_claim(chain, step, claim))
    for finding in signals.tool_fails(chain, step, work.loop_events()):
        work.add(finding)
    if chain.upset is None:
        return chain
    upset = _replace(chain.upset, after=chain.upset.after + 1,
                     resolved=chain.upset.resolved or patterns.is_resolution(text))
    return _replace(chain, upset=upset)


def _on_result(work: _Work, chain: TraceChain, step: TraceStep) -> TraceChain:
    loop = signals.extend_loop(chain.loop, step)
    if loop is not None and (finding := signals.doom_loop(loop, chain, step)) is not None:
        loop = _replace(loop, finding=finding.id)
        work.add(finding)
    for finding in signals.resolved_loops(work.findings, chain, step):
        work.add(finding)
    if step.failed:
        print_, finding = signals.record_failure(work.failures, chain, step)
        work.failures = [p for p in work.failures if p.key != print_.key] + [print_]
        if len(work.failures) > MAX_FAILURE_PRINTS:
            oldest = min(work.failures, key=lambda p: p.last_ts)
            work.failures = [p for p in work.failures if p is not oldest]
        work.add(finding)
    return _replace(chain, loop=loop)


def _grow(chain: TraceChain, step: TraceStep) -> TraceChain:
    steps = [*chain.steps, step]
    return _replace(chain, steps=steps[-MAX_STEPS:], last_ts=max(chain.last_ts, step.ts), events=chain.events + 1)


# -- one event --------------------------------------------------------------------------------


def _step(work: _Work, chain: TraceChain, event: TraceEvent, kind: str) -> tuple[TraceChain, TraceStep] | None:
    """The event as a step, and the chain after the detectors it settles have run."""
    config = work.config
    if isinstance(event, MessageEvent):
        made = _message_step(event, kind, config)
        if made is None:
            return None
        step, text = made
        chain = _on_user(work, chain, step, text) if step.kind == "in" else _on_agent(work, chain, step, text)
        return chain, step
    if isinstance(event, ToolEvent):
        step = _tool_step(chain, event, kind, config)
        return (_on_result(work, chain, step) if step.kind == "result" else chain), step
    assert isinstance(event, RunEvent)
    failed = kind == "error" or event.success is False
    step_kind = "run_start" if kind == "start" else "run_end"
    return chain, TraceStep(kind=step_kind, event=event.id, ts=event.ts, failed=step_kind == "run_end" and failed)


def _chain_for(work: _Work, event: TraceEvent, kind: str) -> TraceChain:
    chain = work.chain_of(event.session)
    if chain is not None and isinstance(event, RunEvent) and kind == "start":
        last = chain.steps[-1] if chain.steps else None
        if last is not None and last.kind == "run_end" and event.ts - last.ts > RUN_GAP:
            work.close(chain)
            chain = None
    return chain if chain is not None else _new_chain(event.session, event.id, event.ts)


def apply_event(doc: TraceDoc | None, event: TraceEvent, kind: str, config: TraceConfig) -> TraceDoc | None:
    """The document after one message, session, tool or run event of its agent
    (``kind``: the subject's last token). None when the event changes nothing."""
    base = doc if doc is not None else empty_trace_doc(event.ts)
    work = _Work(base, config)
    work.close_idle(event.ts)
    if isinstance(event, SessionEvent):
        if (existing := work.chain_of(event.session)) is not None:
            work.close(existing)
        if kind == "start":
            work.put(_new_chain(event.session, event.id, event.ts))
        return work.doc(base, event.ts)
    chain = _chain_for(work, event, kind)
    made = _step(work, chain, event, kind)
    if made is None:
        return work.doc(base, event.ts) if work.chains != base.chains or work.findings != base.findings else None
    chain, step = made
    work.put(_grow(chain, step))
    work.close_surplus()
    return work.doc(base, event.ts)


