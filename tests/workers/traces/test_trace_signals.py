"""The failure signals, case by case: the reference's detector tests
(openclaw-cortex ``test/trace-analyzer/signals/*.test.ts``) ported, each named in its
docstring, plus Cortex's own where it goes further.

Not applicable here: ``paramSimilarity`` / ``simpleHash`` unit cases (covered in
test_trace_tools), "handles empty content gracefully" for messages (the contract's
``content`` is a string; empty ones are tested below), the registry's "runs SIG-REPEAT-FAIL
with provided state" (state is the document here) and "each finding has required fields"
(msgspec enforces the Struct).
"""

from __future__ import annotations

from trace_testkit import (
    Agent,
    Call,
    End,
    Result,
    RunEnd,
    RunStart,
    Start,
    User,
    Wait,
    case_events,
    fail,
    findings,
    ok,
    signals_of,
)

# -- correction ---------------------------------------------------------------------------------


def test_nein_das_ist_falsch_after_an_assertion_is_a_correction() -> None:
    """correction.test.ts: detects 'nein, das ist falsch' after agent assertion."""
    found = findings(User(text="Wie spät ist es?"), Agent(text="Es ist 15 Uhr."),
                     User(text="Nein, das ist falsch, es ist 16 Uhr."))
    assert signals_of(found) == ["correction"]
    assert found[0].severity == "medium"
    assert "es ist 16 Uhr" in found[0].quote


def test_thats_not_right_and_wrong_are_corrections() -> None:
    """correction.test.ts: detects 'that's not right' / 'wrong' after agent assertion."""
    for text in ("That's not right.", "wrong", "That’s not right, try again"):
        assert signals_of(findings(Agent(text="The file is in /tmp."), User(text=text))) == ["correction"], text


def test_du_hast_dich_geirrt_is_a_correction() -> None:
    """correction.test.ts: detects correction with German keywords like 'du hast dich geirrt'."""
    found = findings(Agent(text="Der Server läuft auf Port 80."), User(text="Du hast dich geirrt, es ist 8080."),
                     language="de", signals="default")
    assert signals_of(found) == ["correction"]


def test_a_plain_no_answering_the_agents_question_is_no_correction() -> None:
    """correction.test.ts: does NOT detect 'nein' after agent question; does NOT detect 'no'
    as standalone response to 'Should I do X?'."""
    assert findings(Agent(text="Soll ich das deployen?"), User(text="Nein")) == []
    assert findings(Agent(text="Should I deploy now?"), User(text="No.")) == []
    assert findings(Agent(text="Should I delete it?"), User(text="Stop!")) == []


def test_a_clean_chain_has_no_correction() -> None:
    """correction.test.ts: returns empty for clean chain without corrections."""
    assert findings(User(text="Hi"), Agent(text="Hello! How can I help?"), User(text="Show the logs")) == []


def test_every_correction_in_a_chain_is_a_finding() -> None:
    """correction.test.ts: multiple corrections in same chain → multiple signals."""
    found = findings(Agent(text="It is Monday."), User(text="Wrong, it's Tuesday."), Agent(text="Tuesday, the 3rd."),
                     User(text="That's not right either, it's the 4th."))
    assert signals_of(found) == ["correction", "correction"]


def test_a_tool_call_between_the_messages_separates_them() -> None:
    """correction.test.ts: does NOT detect correction in non-adjacent messages
    (msg.out → tool.call → msg.in)."""
    assert findings(Agent(text="It is Monday."), Call(tool="calendar", params={}), User(text="wrong")) == []


def test_run_boundaries_do_not_separate_an_answer_from_the_agents_message() -> None:
    """Cortex: a run's end between the agent's message and the user's answer (OpenClaw's
    order) still makes a correction; the reference's chains never held both."""
    found = findings(RunStart(), Agent(text="The cache is cleared."), RunEnd(), User(text="That's wrong, it is full."))
    assert signals_of(found) == ["correction"]


def test_an_empty_user_message_is_no_correction() -> None:
    """correction.test.ts: handles empty content gracefully."""
    assert findings(Agent(text="Done."), User(text="")) == []


def test_a_longer_sentence_starting_with_nein_is_a_correction() -> None:
    """correction.test.ts: detects 'nein, ich meine etwas anderes' as correction (longer
    sentence with nein) — here through "das meine ich nicht"."""
    found = findings(Agent(text="Soll ich die Tabelle löschen?"), User(text="Nein, das meine ich nicht, nur leeren."),
                     language="de")
    assert signals_of(found) == ["correction"]


# -- dissatisfied -------------------------------------------------------------------------------


def test_vergiss_es_and_forget_it_at_the_end_are_dissatisfied() -> None:
    """dissatisfied.test.ts: detects 'vergiss es' / 'forget it' / 'ich mach's selbst' /
    'this is useless' as last user message."""
    for text in ("Vergiss es.", "forget it", "Ich mach's selbst.", "This is useless."):
        found = findings(User(text="Fix it"), Agent(text="I tried."), User(text=text), End())
        assert signals_of(found) == ["dissatisfied"], text
        assert found[0].severity == "high"


def test_satisfaction_overrides_dissatisfaction() -> None:
    """dissatisfied.test.ts: does NOT detect 'danke, passt' (satisfaction); does NOT flag 'thanks'."""
    assert findings(Agent(text="Erledigt."), User(text="Danke, passt"), End(), language="de") == []
    assert findings(Agent(text="Done."), User(text="thanks, forget the rest"), End()) == []


def test_dissatisfaction_in_the_middle_of_a_chain_is_not_its_end() -> None:
    """dissatisfied.test.ts: does NOT detect dissatisfaction in middle of chain (not session end)."""
    found = findings(User(text="forget it"), Agent(text="Let me look again."), User(text="ok, what did you find?"),
                     Agent(text="The config had a typo."), User(text="great"), End())
    assert found == []


def test_an_apology_after_dissatisfaction_resolves_it() -> None:
    """dissatisfied.test.ts: does NOT detect if agent resolves after dissatisfaction with apology."""
    assert findings(User(text="this is useless"), Agent(text="Sorry, let me try another way."), End()) == []


def test_a_chain_without_user_messages_is_never_dissatisfied() -> None:
    """dissatisfied.test.ts: handles chain with no user messages."""
    assert findings(Agent(text="Morning report ready."), End()) == []


def test_a_run_error_and_a_tool_call_after_the_frustration_still_leave_it_at_the_end() -> None:
    """Cortex: the message is at the end when at most two messages follow it (the
    reference counted three events of any kind, which a run's error and a tool call used up)."""
    found = findings(Agent(text="Deployed."), User(text="Forget it, I'll do it myself."), RunStart(),
                     Call(tool="noop", params={}), RunEnd(error="boom"), End())
    assert signals_of(found) == ["dissatisfied"]


def test_a_chain_is_judged_when_the_agent_is_idle_past_the_gap() -> None:
    """Cortex: without a session end, the next event of the agent more than
    ``gap_minutes`` later closes the chain (event time), so the frustration is found."""
    assert findings(User(text="this is useless"), Wait(minutes=29), Start(session="b")) == []
    found = findings(User(text="this is useless"), Wait(minutes=31), Start(session="b"))
    assert signals_of(found) == ["dissatisfied"]


# -- doom loop ----------------------------------------------------------------------------------


def test_three_identical_exec_failures_are_a_doom_loop() -> None:
    """doom-loop.test.ts: detects 3× identical exec failures as doom loop; loop of exactly 3 → 'high'."""
    found = findings(*[fail("exec", {"command": "ls /nope"}, "No such file")] * 3)
    assert signals_of(found) == ["doom_loop"]
    assert (found[0].severity, found[0].count, found[0].tool) == ("high", 3, "exec")
    assert len(found[0].events) == 6


def test_five_failures_are_a_critical_loop_in_one_finding() -> None:
    """doom-loop.test.ts: detects 5× failures as critical severity (one finding that grows)."""
    found = findings(*[fail("exec", {"command": "npm test"}, "exit 1")] * 5)
    assert signals_of(found) == ["doom_loop"]
    assert (found[0].severity, found[0].count) == ("critical", 5)


def test_similar_commands_loop() -> None:
    """doom-loop.test.ts: detects loop with similar but not identical params (similarity > 0.8)."""
    found = findings(fail("exec", {"command": "curl http://api.local/health"}, "refused"),
                     fail("exec", {"command": "curl http://api.local/health "}, "refused"),
                     fail("exec", {"command": "curl -s http://api.local/health"}, "refused"))
    assert signals_of(found) == ["doom_loop"]


def test_non_exec_tools_loop_on_their_parameters() -> None:
    """doom-loop.test.ts: detects loop for non-exec tools (generic Jaccard similarity)."""
    found = findings(*[fail("read", {"path": "/etc/app.yml", "timeout": t}, "EACCES") for t in (1, 5, 30)])
    assert signals_of(found) == ["doom_loop"]


def test_a_varied_approach_is_no_loop() -> None:
    """doom-loop.test.ts: does NOT detect loop when agent varies approach (different commands);
    does NOT detect loop with dissimilar params (similarity < 0.8)."""
    found = findings(fail("exec", {"command": "ls /var/log"}, "denied"),
                     fail("exec", {"command": "journalctl -u app --since today"}, "no access"),
                     fail("exec", {"command": "docker logs app"}, "not found"))
    assert "doom_loop" not in signals_of(found)


def test_a_success_breaks_the_loop() -> None:
    """doom-loop.test.ts: does NOT detect loop when 2nd attempt succeeds."""
    found = findings(fail("exec", {"command": "make"}, "err"), ok("exec", {"command": "make"}),
                     fail("exec", {"command": "make"}, "err"), fail("exec", {"command": "make"}, "err"))
    assert "doom_loop" not in signals_of(found)


def test_no_tool_calls_no_loop() -> None:
    """doom-loop.test.ts: returns empty for chain with no tool calls."""
    assert findings(User(text="hi"), Agent(text="hello")) == []


def test_the_same_error_from_a_half_alike_call_continues_a_loop() -> None:
    """Cortex: "npm run build" and "npm run build --verbose" failing with one error are one loop."""
    found = findings(*[fail("exec", {"command": c}, "Module not found: react")
                       for c in ("npm run build", "npm run build --verbose", "npm run build")])
    assert signals_of(found) == ["doom_loop"]


def test_a_loop_whose_call_worked_later_in_the_chain_says_so() -> None:
    """Cortex: the tool history's day 2 — `npm run build` failed 4×, then worked after `rm -rf
    node_modules && npm ci` — was taught for a week as if the loop had never ended. The finding
    says when the same call worked and what worked just before it; nothing else resolves it."""
    build = {"command": "npm run build", "cwd": "/srv/app"}
    loop = [fail("exec", build, "Module not found: @acme/ui")] * 4
    found = findings(*loop, ok("exec", {"command": "rm -rf node_modules && npm ci"}), ok("exec", build))
    assert signals_of(found) == ["doom_loop"]
    assert found[0].resolved_ts is not None and found[0].resolved_after == "rm -rf node_modules && npm ci"
    assert found[0].count == 4 and found[0].severity == "high"  # the loop itself is what it was
    retried = findings(*loop, ok("exec", build))[0]  # the same call worked again, nothing in between
    assert retried.resolved_ts is not None and retried.resolved_after == ""
    # another command of the tool working resolves nothing
    assert findings(*loop, ok("exec", {"command": "git status"}))[0].resolved_ts is None


def test_a_loop_whose_call_worked_in_a_later_session_is_resolved() -> None:
    """Cortex: a loop fixed in a later session of the same day (or a later chain of the main
    chat's one session key) was taught as open: only its own chain could resolve it. The loop's
    very call succeeding later, in any chain, resolves it, with what worked just before it
    there; another command of the tool, or the same command with other parameters, does not."""
    build = {"command": "npm run build", "cwd": "/srv/app"}
    loop = [fail("exec", build, "Module not found: @acme/ui")] * 4
    later = findings(*loop, End(), Wait(minutes=240), Start(session="b"), User(text="try again"),
                     ok("exec", {"command": "rm -rf node_modules && npm ci"}), ok("exec", build))
    assert signals_of(later) == ["doom_loop"]
    assert later[0].resolved_ts is not None and later[0].resolved_after == "rm -rf node_modules && npm ci"
    again = findings(*loop, End(), Start(), ok("exec", {"command": " npm  run build", "cwd": "/srv/app"}))[0]
    assert again.resolved_ts is not None and again.resolved_after == ""  # the session again, same command
    main_chat = findings(RunStart(), *loop, RunEnd(), Wait(minutes=180), RunStart(), ok("exec", build), RunEnd())
    assert main_chat[0].resolved_ts is not None  # a later run of the one session key: a later chain
    # a different command, or a different tool's call with the loop's parameters, resolves nothing
    for other in (ok("exec", {"command": "npm run lint", "cwd": "/srv/app"}), ok("read", build)):
        assert findings(*loop, End(), Start(session="b"), other)[0].resolved_ts is None
    searched = [fail("web_search", {"query": "acme ui missing"}, "rate limited")] * 3
    assert findings(*searched, End(), Start(session="b"), ok("web_search", {"query": "acme ui missing"}))[0].resolved_ts
    assert findings(*searched, End(), Start(session="b"),
                    ok("web_search", {"query": "acme ui module"}))[0].resolved_ts is None


# -- hallucination ------------------------------------------------------------------------------


def test_done_after_a_tool_error_is_a_hallucination() -> None:
    """hallucination.test.ts: detects 'Done ✅' after tool error; severity is 'critical'."""
    found = findings(User(text="deploy"), fail("deploy", {"env": "prod"}, "connection refused"), Agent(text="Done ✅"))
    halluc = [f for f in found if f.signal == "hallucination"]
    assert len(halluc) == 1 and halluc[0].severity == "critical"
    assert halluc[0].tool == "deploy" and halluc[0].error == "connection refused"


def test_erledigt_and_successfully_deployed_after_failures_are_hallucinations() -> None:
    """hallucination.test.ts: detects 'erledigt' after tool failure; detects 'Successfully
    deployed' after connection failure."""
    for text in ("Erledigt!", "Successfully deployed."):
        found = findings(User(text="go"), fail("exec", {"command": "deploy"}, "ECONNREFUSED"), Agent(text=text))
        assert "hallucination" in signals_of(found), text


def test_only_claims_after_failures_are_flagged() -> None:
    """hallucination.test.ts: handles multiple msg.out — only flags ones following failures;
    does NOT detect 'Done' after successful tool result."""
    found = findings(User(text="a"), ok("exec", {"command": "a"}), Agent(text="Done."),
                     User(text="b"), fail("exec", {"command": "b"}, "boom"), Agent(text="Done."))
    assert signals_of(found).count("hallucination") == 1


def test_a_question_is_no_claim() -> None:
    """hallucination.test.ts: does NOT detect question 'Is it done?' after tool error."""
    found = findings(User(text="go"), fail("exec", {"command": "x"}, "boom"), Agent(text="Is it done?"))
    assert "hallucination" not in signals_of(found)


def test_claims_without_tool_results_are_no_hallucinations() -> None:
    """hallucination.test.ts: does NOT detect claims in chains without tool results; handles
    chain with no tool calls."""
    assert findings(User(text="thanks"), Agent(text="Done!")) == []


def test_a_negated_or_failure_admitting_claim_is_none() -> None:
    """Cortex: "not deployed yet" and "done checking: it failed" claim no success."""
    for text in ("I have not deployed it yet.", "Done checking: the deploy failed.", "还没完成"):
        found = findings(User(text="go"), fail("exec", {"command": "x"}, "boom"), Agent(text=text))
        assert "hallucination" not in signals_of(found), text


# -- repeat fail --------------------------------------------------------------------------------


def _session(name: str, error: str = "timeout during connect", params: object = None) -> list:
    params = params if params is not None else {"command": "certbot renew"}
    return [Start(session=name), *fail("exec", params, error), End()]


def test_the_same_failure_in_two_sessions_repeats() -> None:
    """repeat-fail.test.ts: detects same tool+params+error across two different sessions;
    severity is 'high' for 2 sessions."""
    found = findings(*_session("a"), *_session("b"))
    assert signals_of(found) == ["repeat_fail"]
    assert (found[0].severity, found[0].count) == ("high", 2)


def test_a_third_session_makes_it_critical() -> None:
    """repeat-fail.test.ts: increments count for 3rd session → severity 'critical'."""
    found = findings(*_session("a"), *_session("b"), *_session("c"))
    assert signals_of(found) == ["repeat_fail"]
    assert (found[0].severity, found[0].count) == ("critical", 3)


def test_timestamps_and_pids_in_errors_do_not_tell_failures_apart() -> None:
    """repeat-fail.test.ts: normalizes timestamps / PIDs in error messages before fingerprinting."""
    found = findings(*_session("a", "2026-03-01T10:00:00Z crash pid=4242"),
                     *_session("b", "2026-03-02T11:30:05Z crash pid=777"))
    assert signals_of(found) == ["repeat_fail"]


def test_within_one_session_it_is_no_repeat() -> None:
    """repeat-fail.test.ts: does NOT flag within same session (that's doom-loop territory)."""
    assert "repeat_fail" not in signals_of(findings(*_session("a"), *_session("a")))


def test_different_parameters_are_different_failures() -> None:
    """repeat-fail.test.ts: different params → different fingerprint (no false match);
    returns empty on first-ever run."""
    found = findings(*_session("a", params={"command": "certbot renew --cert shop"}),
                     *_session("b", params={"command": "certbot renew --cert blog"}))
    assert found == []


def _main_chat_turn(error: str = "timeout during connect") -> list:
    """A turn of OpenClaw's main chat: the session key it keeps across days (``s1``)."""
    return [User(text="Renew the certificate"), RunStart(), *fail("exec", {"command": "certbot renew"}, error),
            Agent(text="The renewal failed."), RunEnd()]


def test_the_same_failure_on_two_days_of_the_main_chat_repeats() -> None:
    """Cortex: OpenClaw's main chat keeps one session key for days (a new sessionId each
    morning), so the reference's rule never saw a second session there. The same failure in
    a turn begun more than 8 hours after it last failed is another occasion."""
    day = [Start(), *_main_chat_turn(), End()]
    found = [f for f in findings(*day, Wait(minutes=1440), *day) if f.signal == "repeat_fail"]
    assert [(f.severity, f.count) for f in found] == [("high", 2)]
    assert found[0].summary.startswith("Same failure on 2 occasions hours apart (1 session): exec")
    third = [f for f in findings(*day, Wait(minutes=1440), *day, Wait(minutes=1440), *day)
             if f.signal == "repeat_fail"]
    assert [(f.severity, f.count) for f in third] == [("critical", 3)]
    # without session starts and ends (a producer that sends none): runs a day apart
    found = findings(*_main_chat_turn(), Wait(minutes=1440), *_main_chat_turn())
    assert "repeat_fail" in signals_of(found)


def test_the_same_failure_again_within_hours_or_one_run_is_no_repeat() -> None:
    """Cortex: the same session's failure counts again only after 8 hours and in a turn begun
    since — twice in one run (however long it lasts), or in two runs an hour apart, is not a
    repeat (the second is the doom loop's territory, as in the reference)."""
    assert "repeat_fail" not in signals_of(findings(*_main_chat_turn(), Wait(minutes=60), *_main_chat_turn()))
    assert "repeat_fail" not in signals_of(findings(*_main_chat_turn(), Wait(minutes=479), *_main_chat_turn()))
    run = [RunStart(), *fail("exec", {"command": "certbot renew"}, "timeout during connect")]
    one_run = findings(User(text="Renew it"), *run, Call(tool="wait_job", params={"id": 1}), Wait(minutes=600),
                       Result(tool="wait_job", result="done"), *fail("exec", {"command": "certbot renew"},
                                                                         "timeout during connect"), RunEnd())
    assert "repeat_fail" not in signals_of(one_run)


def test_fingerprints_persist_in_the_document() -> None:
    """repeat-fail.test.ts: state persists fingerprints across calls (here: across sessions
    hours apart, in the document)."""
    found = findings(*_session("a"), Wait(minutes=600), *_session("b"))
    assert signals_of(found) == ["repeat_fail"]


# -- tool fail ----------------------------------------------------------------------------------


def test_an_unrecovered_failure_before_the_answer_is_a_tool_fail() -> None:
    """tool-fail.test.ts: detects unrecovered tool failure → agent responds without recovery;
    severity is 'low' for single occurrence."""
    found = findings(User(text="check disk"), fail("exec", {"command": "df -h"}, "Permission denied"),
                     Agent(text="Here is the file content."))
    assert signals_of(found) == ["tool_fail"]
    assert (found[0].severity, found[0].error) == ("low", "Permission denied")


def test_a_failing_retry_is_no_recovery() -> None:
    """tool-fail.test.ts: detects failure when retry with same params also fails (one finding
    here, counting both)."""
    found = findings(User(text="connect"), fail("exec", {"command": "ssh server"}, "refused"),
                     fail("exec", {"command": "ssh server"}, "refused"), Agent(text="Connected successfully."))
    fails = [f for f in found if f.signal == "tool_fail"]
    assert len(fails) == 1 and fails[0].count == 2


def test_an_is_error_result_is_a_failure() -> None:
    """tool-fail.test.ts: handles tool.result with toolIsError=true (Schema B)."""
    found = findings(User(text="read file"), Call(tool="read", params={"path": "/etc/missing"}),
                     Result(tool="read", result={"isError": True, "content": [{"text": "ENOENT"}]}),
                     Agent(text="Here is the file content."))
    assert signals_of(found) == ["tool_fail"]
    assert found[0].error == "ENOENT"


def test_failures_of_two_tools_are_two_findings() -> None:
    """tool-fail.test.ts: multiple unrecovered failures → multiple signals."""
    found = findings(User(text="do stuff"), fail("exec", {"command": "cmd1"}, "Error 1"),
                     fail("read", {"path": "/x"}, "Not found"), Agent(text="Everything is fine."))
    assert sorted(f.tool for f in found if f.signal == "tool_fail") == ["exec", "read"]


def test_a_later_success_recovers() -> None:
    """tool-fail.test.ts: does NOT detect failure when agent recovers (different tool succeeds);
    does NOT flag if agent recovers with same tool but different params that succeed.
    Cortex: a retry of the same call that succeeds recovers too."""
    assert findings(User(text="deploy"), fail("exec", {"command": "deploy"}, "x"), ok("exec2", {"command": "deploy2"}),
                    Agent(text="Deployed via the fallback.")) == []
    assert findings(User(text="connect"), fail("exec", {"command": "ssh backup-server"}, "refused"),
                    ok("exec", {"command": "ssh backup-server-alt"}), Agent(text="Connected via alt host.")) == []
    assert findings(User(text="pull"), fail("exec", {"command": "git pull"}, "DNS"),
                    ok("exec", {"command": "git pull"}), Agent(text="Pulled.")) == []


def test_only_successful_calls_no_tool_fail() -> None:
    """tool-fail.test.ts: returns empty for chain with only successful tool calls."""
    assert findings(User(text="go"), ok("exec", {"command": "a"}), ok("exec", {"command": "b"}), Agent(text="ok")) == []


def test_a_failure_at_the_chain_end_is_no_tool_fail() -> None:
    """tool-fail.test.ts: does NOT detect failure at chain end (no msg.out follows)."""
    assert findings(User(text="run test"), fail("exec", {"command": "npm test"}, "Test failed"), End()) == []


def test_failures_inside_a_doom_loop_make_no_separate_tool_fail() -> None:
    """Cortex: one failure, one finding — a loop's failures are the loop's."""
    found = findings(User(text="go"), *[fail("exec", {"command": "make"}, "err")] * 3, Agent(text="It keeps failing."))
    assert signals_of(found) == ["doom_loop"]


# -- unverified claim ---------------------------------------------------------------------------


def test_system_state_without_a_tool_call_is_an_unverified_claim() -> None:
    """unverified-claim.test.ts: detects 'disk usage is at 45%' / 'service is running' /
    'there are 5 errors' without preceding tool call; severity is 'medium'."""
    for text in ("Disk usage is at 45%.", "The service is running.", "There are 5 errors in the log."):
        found = findings(User(text="status?"), Agent(text=text))
        assert signals_of(found) == ["unverified_claim"], text
        assert found[0].severity == "medium"


def test_a_tool_call_in_the_turn_verifies_the_claim() -> None:
    """unverified-claim.test.ts: does NOT detect same claim when preceded by exec tool call;
    does NOT detect claims when ANY tool was called in the turn."""
    assert findings(User(text="disk?"), ok("exec", {"command": "df"}), Agent(text="Disk usage is at 45%.")) == []
    assert findings(User(text="disk?"), ok("search", {"q": "x"}), Agent(text="The service is running.")) == []


def test_hedged_claims_and_code_blocks_are_no_claims() -> None:
    """unverified-claim.test.ts: does NOT detect conversational claim ('I think...'); handles
    claims inside code blocks (skip); returns empty for chains with no claims."""
    assert findings(User(text="?"), Agent(text="I think the service is running.")) == []
    assert findings(User(text="?"), Agent(text="Output:\n```\nservice is running\n```")) == []
    assert findings(User(text="?"), ok("exec", {"command": "ls"}), Agent(text="Listed.")) == []


def test_unverified_claim_is_off_by_default() -> None:
    """index.test.ts: SIG-UNVERIFIED-CLAIM is disabled by default; fires when explicitly enabled."""
    steps = (User(text="disk?"), Agent(text="Disk usage is at 45%."))
    assert findings(*steps, signals="default") == []
    assert signals_of(findings(*steps, signals="all")) == ["unverified_claim"]


# -- the registry -------------------------------------------------------------------------------


def test_all_enabled_detectors_run_and_a_clean_chain_finds_nothing() -> None:
    """index.test.ts: runs all enabled detectors and returns findings; returns empty for clean chain."""
    found = findings(User(text="deploy"), *[fail("deploy", {"env": "prod"}, "refused")] * 3, Agent(text="Done ✅"),
                     User(text="That's wrong. Forget it."), End())
    assert set(signals_of(found)) == {"doom_loop", "hallucination", "correction", "dissatisfied"}
    assert findings(User(text="hi"), ok("exec", {"command": "ls"}), Agent(text="Here you go."), End()) == []


def test_a_disabled_signal_makes_no_findings() -> None:
    """index.test.ts: respects disabled signal config."""
    found = findings(User(text="x"), fail("exec", {"command": "x"}, "e"), Agent(text="Done."),
                     signals="correction,tool_fail")
    assert signals_of(found) == ["tool_fail"]


def test_findings_span_several_sessions_and_chains() -> None:
    """index.test.ts: handles multiple chains."""
    found = findings(Start(session="a"), Agent(text="It is blue."), User(text="wrong"), End(),
                     Start(session="b"), Agent(text="It is red."), User(text="wrong"), End())
    assert [f.session for f in found] == ["a", "b"]


# -- a finding's time span ----------------------------------------------------------------------


def test_a_finding_starts_at_the_first_event_it_lists() -> None:
    """Cortex: a finding that lists a failing result's call starts at the call, not at the
    result (a doom loop's, a hallucination's, an unrecovered failure's, a repeat's)."""
    from workers.evals.traces import Case

    cases = {
        "doom_loop": [step for _ in range(3) for step in fail("exec", {"command": "ls /nope"}, "No such file")],
        "hallucination": [User(text="deploy"), *fail("deploy", {"env": "prod"}, "connection refused"),
                          Agent(text="Done ✅")],
        "tool_fail": [User(text="check disk"), *fail("exec", {"command": "df -h"}, "Permission denied"),
                      Agent(text="Here is the file content.")],
        "repeat_fail": [*_session("a"), *_session("b")],
    }
    for signal, steps in cases.items():
        when = {event.id: event.ts for event, _ in case_events(Case(name="t", steps=steps))}
        found = [f for f in findings(steps) if f.signal == signal]
        assert found, signal
        for finding in found:
            assert finding.first_ts == when[finding.events[0]], (signal, finding.events)
            assert finding.last_ts >= max(when[e] for e in finding.events), signal
