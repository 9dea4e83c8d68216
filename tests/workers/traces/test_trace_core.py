"""The trace core's chains, bounds and determinism: the reference's chain reconstruction
cases (``test/trace-analyzer/chain-reconstructor.test.ts``) ported where a chain that grows
event by event has the same notion, and Cortex's own.

Not applicable: grouping by agent (a document holds one agent), re-ordering by timestamp
(stream order is the order: an agent's events are applied as the stream holds them),
deduplicating Schema A/B copies by a one-second fingerprint (duplicates are dropped by
event id before any worker sees them, ``shared.duplicates``), ``simpleHash``, the
``boundaryType`` label and ``typeCounts`` (not kept), chains of fewer than two events
(a one-event chain settles no signal), the analyzer's time-range runs, incremental state
files, report assembly and persistence (``analyzer.test.ts``, ``report.test.ts``: the
document is the state and the report), and the output generator (SOUL.md rules,
governance policies: out of Cortex's scope).
"""

from __future__ import annotations

import copy

import msgspec
import pytest
from trace_testkit import Agent, Call, End, Result, RunEnd, RunStart, Start, User, Wait, case_events, fail, trace_doc

from schemas.docs import TraceDoc
from shared.config import SettingsError, TracesSettings, load_settings
from workers.evals.traces import Case
from workers.traces.config import MAX_CHAINS, MAX_FAILURE_PRINTS, MAX_STEPS, trace_config
from workers.traces.core import apply_event


def test_each_session_has_its_own_chain() -> None:
    """chain-reconstructor.test.ts: groups events by (session, agent) into separate chains."""
    doc = trace_doc(Start(session="a"), User(text="hi"), Start(session="b"), User(text="hello"))
    assert sorted(c.session for c in doc.chains) == ["a", "b"]
    assert all(c.events == 1 for c in doc.chains)


def test_a_session_start_begins_a_new_chain() -> None:
    """chain-reconstructor.test.ts: splits chain on session.start event."""
    first = trace_doc(Start(session="a"), User(text="one"))
    again = trace_doc(Start(session="a"), User(text="one"), Start(session="a"), User(text="two"))
    assert len(again.chains) == 1 and again.chains[0].events == 1
    assert again.chains[0].id != first.chains[0].id


def test_a_session_end_closes_the_chain() -> None:
    """chain-reconstructor.test.ts: splits chain on session.end event."""
    assert trace_doc(Start(session="a"), User(text="one"), End()).chains == []


def test_inactivity_past_the_gap_splits_and_below_it_does_not() -> None:
    """chain-reconstructor.test.ts: splits chain on inactivity gap > 30 min; does NOT split
    on gap < 30 min; respects configurable gapMinutes parameter."""
    split = trace_doc(User(text="a"), Wait(minutes=31), User(text="b"))
    assert [c.events for c in split.chains] == [1]
    kept = trace_doc(User(text="a"), Wait(minutes=29), User(text="b"))
    assert [c.events for c in kept.chains] == [2]
    short = trace_doc(User(text="a"), Wait(minutes=6), User(text="b"), gap_minutes=5)
    assert [c.events for c in short.chains] == [1]


def test_a_run_starting_long_after_the_last_one_ended_splits() -> None:
    """chain-reconstructor.test.ts: splits on run.end → run.start with >5 min gap; does NOT
    split with <5 min gap."""
    split = trace_doc(RunStart(), User(text="a"), RunEnd(), Wait(minutes=6), RunStart())
    assert [c.events for c in split.chains] == [1]
    kept = trace_doc(RunStart(), User(text="a"), RunEnd(), Wait(minutes=4), RunStart())
    assert [c.events for c in kept.chains] == [4]


def test_chain_ids_are_deterministic_and_distinct() -> None:
    """chain-reconstructor.test.ts: computes chain ID deterministically; computeChainId:
    16-char hex, deterministic, different inputs → different IDs."""
    one = trace_doc(Start(session="a"), User(text="x"), Start(session="b"), User(text="y"))
    two = trace_doc(Start(session="a"), User(text="x"), Start(session="b"), User(text="y"))
    ids = [c.id for c in one.chains]
    assert ids == [c.id for c in two.chains]
    assert len(set(ids)) == 2 and all(len(i) == 16 and int(i, 16) >= 0 for i in ids)


def test_a_chain_remembers_its_last_steps_and_counts_all() -> None:
    """chain-reconstructor.test.ts: caps chain at maxEventsPerChain (here a sliding window:
    the oldest steps are forgotten, the chain goes on)."""
    doc = trace_doc(*[User(text=f"m{i}") for i in range(MAX_STEPS + 10)])
    chain = doc.chains[0]
    assert len(chain.steps) == MAX_STEPS and chain.events == MAX_STEPS + 10
    assert chain.steps[-1].text == f"m{MAX_STEPS + 9}"


def test_an_empty_stream_and_a_session_named_unknown_are_fine() -> None:
    """chain-reconstructor.test.ts: handles empty event stream; handles events with
    session='unknown'; records startTs and endTs from first/last events."""
    doc = trace_doc(Start(session="unknown"), User(text="a"), Agent(text="b"))
    chain = doc.chains[0]
    assert chain.session == "unknown" and chain.started < chain.last_ts


def test_at_most_max_chains_are_followed_the_idlest_closed_first() -> None:
    """Cortex's bound: more sessions at once than MAX_CHAINS close the least recently
    active ones (and judge them)."""
    steps = [x for i in range(MAX_CHAINS + 3) for x in (Start(session=f"s{i}"), User(text="forget it"))]
    doc = trace_doc(*steps)
    assert len(doc.chains) == MAX_CHAINS
    assert [c.session for c in doc.chains] == [f"s{i}" for i in range(3, MAX_CHAINS + 3)]
    assert [f.session for f in doc.findings if f.signal == "dissatisfied"] == ["s0", "s1", "s2"]


def test_findings_and_fingerprints_are_capped() -> None:
    """Cortex's bound: at most max_findings findings (oldest first out) and
    MAX_FAILURE_PRINTS failure fingerprints."""
    steps = [x for i in range(MAX_FAILURE_PRINTS + 20)
             for x in (User(text="go"), *fail("exec", {"command": f"job {i}"}, f"error {i}"), Agent(text="ok"))]
    doc = trace_doc(*steps, max_findings=10)
    assert len(doc.findings) == 10
    assert doc.findings[-1].error == f"error {MAX_FAILURE_PRINTS + 19}"
    assert len(doc.failures) == MAX_FAILURE_PRINTS


def test_a_result_pairs_with_its_call_by_call_id() -> None:
    """Interleaved calls: each result finds its call by the runtime's call id."""
    doc = trace_doc(Call(tool="a", params={"x": 1}, id="k1"), Call(tool="a", params={"x": 2}, id="k2"),
                    Result(tool="a", error="late", id="k1"))
    result = doc.chains[0].steps[-1]
    assert result.call == doc.chains[0].steps[0].event


def _replay(case: Case, settings: TracesSettings) -> list[bytes]:
    config = trace_config(settings, ("en", "de"))
    doc, encoded = None, []
    for event, kind in case_events(case):
        before = copy.deepcopy(doc)
        new = apply_event(doc, event, kind, config)
        assert doc == before, "the core mutated its input"
        doc = new or doc
        encoded.append(msgspec.json.encode(doc))
    return encoded


def test_the_same_events_make_the_same_document_byte_for_byte_and_inputs_stay_untouched() -> None:
    """Determinism: derived in event time only, so a replay reproduces every revision."""
    case = Case(name="r", steps=[Start(session="a"), User(text="deploy"), *[fail("d", {"e": 1}, "x")] * 4,
                                 Agent(text="Done ✅"), User(text="wrong, forget it"), End()])
    assert _replay(case, TracesSettings()) == _replay(case, TracesSettings())


def test_bad_extra_redaction_patterns_stop_the_process_with_one_line() -> None:
    with pytest.raises(SettingsError, match="CORTEX_TRACES_REDACT_PATTERNS"):
        load_settings({"CORTEX_TRACES_REDACT_PATTERNS": '["(unclosed"]'})
    with pytest.raises(SettingsError, match="CORTEX_TRACES_SIGNALS"):
        load_settings({"CORTEX_TRACES_SIGNALS": "doom_loop,bogus"})
    assert load_settings({"CORTEX_TRACES_REDACT_PATTERNS": '["ACME-[0-9]+"]'}).traces.redact_patterns


def _main_chat_days() -> TraceDoc:
    """Two days of OpenClaw's main chat as the gateway's nats-eventstore plugin publishes them
    (``toolday_history``'s envelopes: one session key, a session start each morning, each turn
    a run), mapped as Cortex maps them: a certificate renewal fails the same way on both days;
    on day 1 a build loops four times in the morning and the same build works in the
    afternoon's session, after a lockfile reinstall."""
    from toolday_history import Day

    from shared.openclaw import Mapped, map_store_event

    renew = {"command": "certbot renew --cert-name shop.acme.dev"}
    challenge = "Challenge failed for domain shop.acme.dev: timeout during connect"
    build = {"command": "npm run build", "cwd": "/srv/app/frontend"}
    one = Day(1)
    one.start("08:55")
    one.user("09:00", "Renew the shop certificate.")
    one.begin("09:00", "renew")
    one.tool("09:01", "exec", renew, "tc-1-r1", error=challenge)
    one.agent("09:02", "The renewal failed: the HTTP challenge timed out.")
    one.finish("09:02")
    one.user("10:00", "Fix the frontend build.")
    one.begin("10:00", "build")
    for i in range(4):
        one.tool(f"10:0{i + 1}", "exec", build, f"tc-1-b{i}", error="Module not found: Can't resolve '@acme/ui'")
    one.agent("10:06", "The build still fails: @acme/ui cannot be resolved.")
    one.finish("10:06")
    one.end("11:00")
    one.start("15:00")
    one.turn("15:05", "Try the build again.", "The build passes after a clean install.",
             ("exec", {"command": "rm -rf node_modules && npm ci", "cwd": "/srv/app/frontend"}, "added 1432 packages"),
             ("exec", build, "built in 38.2s"))
    one.end("16:00")
    two = Day(2)
    two.start("08:55")
    two.user("09:00", "Renew the shop certificate, please.")
    two.begin("09:00", "renew")
    two.tool("09:01", "exec", renew, "tc-2-r1", error=challenge)
    two.agent("09:02", "It failed again: the HTTP challenge timed out.")
    two.finish("09:02")
    two.end("10:00")
    kinds = {"msg_in": "received", "msg_out": "sent", "session_start": "start", "session_end": "end",
             "tool_call": "call", "tool_result": "result", "run_start": "start", "run_end": "end"}
    config = trace_config(TracesSettings(), ("en",))
    doc = None
    for subject, data in [*one.out, *two.out]:
        token = subject.rsplit(".", 1)[1]
        mapped = map_store_event(token, data, subject.split(".")[-2])
        assert isinstance(mapped, Mapped), mapped
        doc = apply_event(doc, mapped.event, kinds[token], config) or doc  # type: ignore[arg-type]
    assert doc is not None
    return doc


def test_the_main_chats_days_in_the_plugins_shapes() -> None:
    """Cortex: the main chat keeps one session key (``agent:forge:main``) across days, so the
    reference's rules never saw the renewal's second failure as a repeat, nor the build loop
    fixed in the afternoon's session as fixed. Both are now, with the real plugin's events."""
    doc = _main_chat_days()
    by_signal = {f.signal: f for f in doc.findings}
    repeat = by_signal["repeat_fail"]
    assert (repeat.count, repeat.severity, repeat.session) == (2, "high", "agent:forge:main")
    loop = by_signal["doom_loop"]
    assert loop.count == 4 and loop.resolved_ts is not None
    assert loop.resolved_ts.strftime("%d %H:%M") == "02 15:05"
    assert loop.resolved_after == "rm -rf node_modules && npm ci"
