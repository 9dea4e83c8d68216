"""The briefing's "Pending Operations" and "Lessons from Recent Failures" sections."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import msgspec
from briefing_sections import SECTIONS, boot_inputs, replaced

from schemas.docs import (
    Commitment,
    CommitmentsDoc,
    Finding,
    Operation,
    OperationsDoc,
    Thread,
    ThreadsDoc,
    TraceDoc,
    Triage,
)
from shared.config import BootSettings
from workers.boot.assemble import assemble_boot
from workers.decisions.briefing import commitments_section, promise_calls
from workers.evals.briefing_checks import briefing_defects
from workers.traces.briefing import (
    MAX_LESSONS,
    lesson_lines,
    lessons_section,
    operation_line,
    operations_section,
    ranked_lessons,
    shown_results,
)
from workers.traces.core import empty_trace_doc
from workers.traces.operations import empty_operations_doc

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def recent_lessons(findings: list[Finding], now: datetime, tz: ZoneInfo | None = None) -> list[Finding]:
    """The lessons the briefing shows: the first ``MAX_LESSONS`` of ``ranked_lessons``."""
    return ranked_lessons(findings, now, tz or ZoneInfo("UTC"))[:MAX_LESSONS]

# what the lesson lines end on
CHECK = "check an answer against its source before giving it"
FIX = "next time, try a fix or another way before answering"
ASK = "find out what went wrong before going on"
UTCZ = ZoneInfo("UTC")


def op(i: str, status: str = "pending", seen: bool = False, open_: bool = False, preview: str | None = None,
       finished: datetime | None = None) -> Operation:
    return Operation(id=i, tool=f"tool_{i}", status=status, started=NOW - timedelta(hours=1), seen=seen,  # type: ignore[arg-type]
                     open=open_, preview=preview, finished=finished)


def finding(signal: str, tool: str = "", age: timedelta = timedelta(hours=1), severity: str = "high",
            quote: str = "", error: str = "", count: int = 0, triage: Triage | None = None, i: str = "",
            events: list[str] | None = None) -> Finding:
    fid = i or f"{signal}-{tool}-{age}"
    return Finding(id=fid, signal=signal, severity=severity, summary="s",  # type: ignore[arg-type]
                   events=events or [f"e-{fid}"], first_ts=NOW - age, last_ts=NOW - age, tool=tool, quote=quote,
                   error=error, count=count, triage=triage)


def test_operations_are_marked_as_the_design_says_and_unread_results_come_first() -> None:
    ops = [op("a"), op("b", "completed", preview="index rebuilt", finished=NOW),
           op("c", "failed", preview="worker crashed", finished=NOW - timedelta(minutes=5)),
           op("d", "completed", seen=True, finished=NOW), op("e", open_=True)]
    text = operations_section(ops, UTCZ, 2000)
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert lines == [
        "- [FAILED] `tool_c` (started 2026-03-02 11:00, finished 2026-03-02 11:55): worker crashed — tell the user "
        "it failed",
        "- [NEW RESULT] `tool_b` (started 2026-03-02 11:00, finished 2026-03-02 12:00): index rebuilt",
        "- [PENDING] `tool_a` (started 2026-03-02 11:00)",
    ]
    assert text.startswith("## ⏳ Pending Operations") and shown_results(ops, text, UTCZ) == ["c", "b"]


def test_an_orphan_says_when_it_was_given_up_not_that_it_finished() -> None:
    """An orphan read "(started 2026-03-04 10:01, finished 2026-03-05 10:01): no result within
    24 h": the task never finished, it was given up on."""
    lost = msgspec.structs.replace(op("o", "failed", preview="no result within 24 h (orphaned)",
                                      finished=NOW + timedelta(hours=23)), orphaned=True)
    assert operation_line(lost, UTCZ) == (
        "- [FAILED] `tool_o` (started 2026-03-02 11:00, given up 2026-03-03 11:00): no result within 24 h "
        "(orphaned) — tell the user it failed")


def test_nothing_to_tell_no_section_and_a_tight_budget_shows_and_acknowledges_less() -> None:
    assert operations_section([op("d", "completed", seen=True), op("e", open_=True)], UTCZ, 2000) == ""
    ops = [op("b", "completed", preview="x" * 100, finished=NOW), op("c", "completed", preview="y", finished=NOW)]
    text = operations_section(ops, UTCZ, 240)
    assert "tool_b" in text and "tool_c" not in text
    assert shown_results(ops, text, UTCZ) == ["b"]
    assert text.endswith("\n- (1 more not shown here)\n")  # the left-out one is not silently gone
    clipped = operations_section(ops, UTCZ, 120)  # the first line cut: it was not shown, it stays unread
    assert "tool_b" in clipped and shown_results(ops, clipped, UTCZ) == []


def test_two_failures_say_tell_the_user_once_and_two_orphans_their_reason_once() -> None:
    """Two [FAILED] lines both ended "— tell the user it failed", two orphans both said "no
    result within 24 h (orphaned)": the briefing checks flagged each as said twice."""
    lost = [msgspec.structs.replace(op(f"o{i}", "failed", preview="no result within 24 h (orphaned)",
                                       finished=NOW + timedelta(minutes=i)), orphaned=True) for i in range(2)]
    ops = [*lost, op("d", "failed", preview="lock timeout", finished=NOW + timedelta(minutes=5))]
    text = operations_section(ops, UTCZ, 2000)
    assert text.splitlines()[1:] == [
        "- [FAILED] `tool_o0` (started 2026-03-02 11:00, given up 2026-03-02 12:00): no result within 24 h "
        "(orphaned) — tell the user it failed",
        "- [FAILED] `tool_o1` (started 2026-03-02 11:00, given up 2026-03-02 12:01): no result either — tell the "
        "user too",
        "- [FAILED] `tool_d` (started 2026-03-02 11:00, finished 2026-03-02 12:05): lock timeout — tell the user too",
    ]
    assert shown_results(ops, text, UTCZ) == ["o0", "o1", "d"]
    assert briefing_defects(f"# Context Briefing\n\n{text}") == []


def test_operations_left_out_are_counted_not_dropped_without_a_word() -> None:
    """Three results filled the 600 characters and the two tasks still pending were left out
    without a word: the agent took the list for all there was."""
    ops = [*(op(f"r{i}", "completed", preview="p" * 150, finished=NOW) for i in range(3)), op("w1"), op("w2")]
    text = operations_section(ops, UTCZ, 600)
    lines = text.splitlines()[1:]
    assert lines[-1] == f"- ({5 - (len(lines) - 1)} more not shown here)" and len(text) <= 600
    assert shown_results(ops, text, UTCZ) == [f"r{i}" for i in range(len(lines) - 1)]
    many = [op(f"w{i:02d}") for i in range(12)]  # more than the 8 a briefing lists
    assert operations_section(many, UTCZ, 4000).endswith("- (4 more not shown here)\n")


def test_an_operation_line_says_what_the_call_asked() -> None:
    asked = [msgspec.structs.replace(op(str(i)), tool="sessions_spawn", request=task)
             for i, task in enumerate(("rebuild the search index", "summarise the inbox"))]
    text = operations_section([*asked, op("x")], UTCZ, 2000)
    assert "- [PENDING] `sessions_spawn` “rebuild the search index” (started 2026-03-02 11:00)\n" in text
    assert "- [PENDING] `sessions_spawn` “summarise the inbox” (started 2026-03-02 11:00)\n" in text
    assert "- [PENDING] `tool_x` (started 2026-03-02 11:00)" in text  # nothing asked: no quotes


def test_lessons_are_recent_kept_one_per_signal_and_tool_most_severe_first() -> None:
    findings = [
        finding("tool_fail", "read", severity="low", error="EACCES"),
        finding("doom_loop", "deploy", severity="high", count=4, error="refused"),
        finding("doom_loop", "deploy", age=timedelta(hours=2), count=3, i="older loop"),
        finding("hallucination", "deploy", severity="critical", quote="Done ✅", error="refused"),
        finding("correction", severity="medium", quote="No, that's wrong"),
        finding("dissatisfied", quote="Forget it", triage=Triage(keep=False, severity="low", reason="a timeout")),
        finding("repeat_fail", "certbot", age=timedelta(days=8), count=2),
    ]
    lessons = recent_lessons(findings, NOW)
    assert [(f.signal, f.tool) for f in lessons] == [
        ("hallucination", "deploy"), ("doom_loop", "deploy"), ("correction", ""), ("tool_fail", "read")]
    text = lessons_section(findings, NOW, 2000)
    assert text.splitlines()[1:5] == [
        "- Success was claimed after `deploy` failed (refused): “Done ✅” — report failures as such",
        "- `deploy` failed 4× in a row with the same call (the same error): after two identical failures, change "
        "the approach or ask",  # the error named in full once, by the line above
        "- The user corrected you: “No, that's wrong” — check an answer against its source before giving it",
        f"- `read` failed (EACCES) and the answer went out without a fix — {FIX}",
    ]
    many = [finding("tool_fail", f"t{i}") for i in range(10)]
    assert len(recent_lessons(many, NOW)) == MAX_LESSONS


def test_every_lesson_line_says_what_to_do() -> None:
    """The tool history's day 11 told "`backup_db` failed (AccessDenied: …) and the answer went
    out without a fix" and "The user corrected you: “That's wrong, it's 16 …”": what happened,
    not what to do, where every other lesson ends on it ("— report failures as such")."""
    said = "That's wrong, it's 16 — you read the file and still said 14."  # a dash of its own inside the quote
    kinds = [finding("tool_fail", "backup_db", severity="low", error="AccessDenied"),
             finding("tool_fail", "exec", severity="low", count=2),
             finding("correction", severity="medium", quote=said),
             finding("dissatisfied", quote="Forget it, this is useless."),
             finding("doom_loop", "deploy", count=3), finding("repeat_fail", "certbot", count=2),
             finding("hallucination", "deploy", severity="critical", quote="Done ✅"),
             finding("unverified_claim", quote="The disk is at 20%.")]
    advice = ("try a fix or another way before answering", "check an answer against its source before giving it",
              "find out what went wrong before going on", "change the approach or ask", "fix the cause before retrying",
              "report failures as such", "verify with a tool first")
    for f in kinds:
        [line] = lesson_lines([f])
        assert line.endswith(advice), line
    assert lesson_lines([kinds[0]]) == [
        "- `backup_db` failed (AccessDenied) and the answer went out without a fix — next time, try a fix or "
        "another way before answering"]
    assert lesson_lines([kinds[2]]) == [
        f"- The user corrected you: “{said}” — check an answer against its source before giving it"]
    both = [kinds[3], msgspec.structs.replace(kinds[2], quote="Forget it, this is useless.")]
    assert lesson_lines(recent_lessons(both, NOW)) == [
        "- The user corrected you and ended the session frustrated: “Forget it, this is useless.” — check an "
        "answer against its source before giving it"]


def test_a_user_message_is_quoted_once_in_the_lessons() -> None:
    said = "No, that's wrong, the deploy failed! Forget it, this is useless."
    findings = [finding("dissatisfied", quote=said), finding("correction", severity="medium", quote=said),
                *(finding("tool_fail", f"t{i}", severity="low") for i in range(5))]
    merged = f"- The user corrected you and ended the session frustrated: “{said}” — {CHECK}"
    assert lesson_lines(recent_lessons(findings, NOW))[:2] == [
        merged, f"- `t0` failed and the answer went out without a fix — {FIX}"]
    text = lessons_section(findings, NOW, 4000)
    assert text.count(said) == 1 and merged in text
    # the merged line frees its slot: five lines, four of them tool failures (three without the merge);
    # the fifth tool failure is counted in a last line, not dropped without a word
    assert len([line for line in text.splitlines() if line.startswith("- ") and "not shown" not in line]) == MAX_LESSONS
    assert sum(line.startswith("- `t") for line in text.splitlines()) == MAX_LESSONS - 1
    assert text.endswith("\n- (1 more lesson not shown here)\n")
    # a correction and a frustrated end in different messages stay two lines
    apart = [finding("dissatisfied", quote="Forget it"), finding("correction", severity="medium", quote="Not that")]
    assert lesson_lines(recent_lessons(apart, NOW)) == [
        f"- A session ended with the user frustrated: “Forget it” — {ASK}",
        f"- The user corrected you: “Not that” — {CHECK}"]


def test_a_success_claimed_and_the_users_correction_of_it_are_one_lesson() -> None:
    """Day 2 of the tool history told "Success was claimed after `exec` failed …: “Done ✅ …”"
    and, a line below, "The user corrected you: “No, that's wrong, the build is still red!”":
    one incident, two lessons (and a slot less for the others)."""
    claim = finding("hallucination", "exec", severity="critical", quote="Done ✅", error="Module not found",
                    events=["call", "result", "claim"])
    reply = "No, that's wrong, the build is still red!"
    findings = [claim, finding("correction", severity="medium", quote=reply, events=["claim", "reply"]),
                finding("tool_fail", "read", severity="low", age=timedelta(hours=2))]
    assert lesson_lines(recent_lessons(findings, NOW)) == [
        f"- Success was claimed after `exec` failed (Module not found): “Done ✅”, and the user corrected you: "
        f"“{reply}” — report failures as such",
        "- `read` failed and the answer went out without a fix — next time, try a fix or another way before answering",
    ]
    other = finding("correction", severity="medium", quote="Not that one", events=["another claim", "r"])
    assert lesson_lines(recent_lessons([claim, other], NOW))[1] == f"- The user corrected you: “Not that one” — {CHECK}"
    upset = finding("dissatisfied", quote=reply, events=["reply"])  # the same message ended the session
    assert lesson_lines(recent_lessons([*findings, upset], NOW))[0] == (
        f"- Success was claimed after `exec` failed (Module not found): “Done ✅”, and the user corrected you and "
        f"ended the session frustrated: “{reply}” — report failures as such")
    assert len(lesson_lines(recent_lessons([*findings, upset], NOW))) == 2


def test_the_sections_come_right_after_the_threads_within_the_budget() -> None:
    thread = Thread(id="t1", title="Release 3.2", status="open", priority="high", summary="the rollout",
                    decisions=[], waiting_for=None, mood="neutral", last_activity=NOW, created=NOW)
    traces = TraceDoc(updated=NOW, findings=[finding("correction", quote="wrong " * 400)],
                      integrity=empty_trace_doc(NOW).integrity)
    ops = OperationsDoc(updated=NOW, operations=[op(str(i), "completed", preview="p" * 150, finished=NOW)
                                                 for i in range(8)],
                        integrity=empty_operations_doc(NOW).integrity)
    inputs = boot_inputs(agent="a", now=NOW, threads=ThreadsDoc(updated=NOW, session_mood="neutral", threads=[thread],
                                                               integrity=traces.integrity),
                        traces=traces, operations=ops)
    markdown = assemble_boot(SECTIONS, inputs, BootSettings(), UTCZ, max_chars=4000)
    threads_at = markdown.index("Active Threads")
    assert threads_at < markdown.index("Pending Operations") < markdown.index("Lessons from Recent Failures")
    pending = markdown.split("## ⏳ Pending Operations", 1)[1].split("##", 1)[0]
    assert len(pending) <= 600 * 4000 // 16000 + 1
    assert len(markdown) <= 4000


def test_a_lesson_of_an_earlier_day_says_when() -> None:
    """Four days after a doom loop (fixed the same afternoon) the briefing still told it as if it
    had just happened: a lesson of an earlier local day says its date and age; today's do not."""
    findings = [finding("doom_loop", "deploy_staging", age=timedelta(days=4), count=4, error="ImagePullBackOff"),
                finding("correction", severity="medium", quote="No, that's wrong", age=timedelta(days=1)),
                finding("tool_fail", "read", severity="low", error="EACCES")]
    lines = lessons_section(findings, NOW, 2000, UTCZ).splitlines()[1:]
    assert lines == [  # today's lesson first (the latest day's come first), then the earlier ones by severity
        f"- `read` failed (EACCES) and the answer went out without a fix — {FIX}",
        "- `deploy_staging` failed 4× in a row with the same call (ImagePullBackOff): after two identical "
        "failures, change the approach or ask (2026-02-26, 4 days ago)",
        f"- The user corrected you: “No, that's wrong” — {CHECK} (2026-03-01, yesterday)",
    ]


def test_a_busy_week_does_not_push_out_the_latest_days_lessons() -> None:
    """Six high findings over the week pushed out the medium "the user corrected you" of the
    session just before the briefing (ranked by severity alone): the latest day's lessons come
    first, the others fill the remaining lines by severity, and those left out are counted."""
    week = [finding("doom_loop", f"tool{d}", age=timedelta(days=d), count=3, i=f"loop{d}") for d in range(1, 7)]
    today = finding("correction", severity="medium", quote="No, the staging host is db-2", age=timedelta(hours=1))
    lessons = recent_lessons([*week, today], NOW, UTCZ)
    assert [f.id for f in lessons] == [today.id, "loop1", "loop2", "loop3", "loop4"]
    lines = lessons_section([*week, today], NOW, 2000, UTCZ).splitlines()[1:]
    assert lines[0] == f"- The user corrected you: “No, the staging host is db-2” — {CHECK}"
    assert len(lines) == MAX_LESSONS + 1 and lines[-1] == "- (2 more lessons not shown here)"
    # the latest day is the latest with a lesson, not the briefing's: yesterday's lead when today has none
    yesterday = msgspec.structs.replace(today, first_ts=NOW - timedelta(hours=30), last_ts=NOW - timedelta(hours=30))
    assert [f.id for f in recent_lessons([*week[1:], yesterday], NOW, UTCZ)][:2] == [today.id, "loop2"]
    # the day is the reader's local day: 23:30 UTC on 03-01 is already 03-02 in Berlin, a day after loop1's
    berlin = ZoneInfo("Europe/Berlin")
    late = msgspec.structs.replace(today, first_ts=NOW - timedelta(hours=12, minutes=30),
                                   last_ts=NOW - timedelta(hours=12, minutes=30))  # 2026-03-01 23:30 UTC
    assert recent_lessons([*week, late], NOW, berlin)[0].signal == "correction"
    assert recent_lessons([*week, late], NOW, UTCZ)[0].id == "loop1"  # in UTC both are 03-01's: by severity


def test_a_doom_loop_the_agent_got_out_of_says_so_and_weighs_less() -> None:
    """Day 2 of the tool history: `npm run build` failed 4×, then worked after `rm -rf
    node_modules && npm ci`; for seven days the lesson read as if the build still failed, and
    ranked above a loop that never ended."""
    fixed = msgspec.structs.replace(finding("doom_loop", "exec", count=4, error="Module not found"),
                                    resolved_ts=NOW - timedelta(minutes=50),
                                    resolved_after="rm -rf node_modules && npm ci")
    stuck = finding("doom_loop", "deploy", age=timedelta(hours=2), count=3, error="refused")
    assert lesson_lines(recent_lessons([fixed, stuck], NOW)) == [
        "- `deploy` failed 3× in a row with the same call (refused): after two identical failures, change the "
        "approach or ask",
        "- `exec` failed 4× in a row with the same call (Module not found), then it worked after `rm -rf "
        "node_modules && npm ci`: next time, change the approach after two identical failures",
    ]
    retried = msgspec.structs.replace(fixed, resolved_after="")  # the same call worked again, nothing between
    assert lesson_lines([retried])[0] == ("- `exec` failed 4× in a row with the same call (Module not found), "
                                          "then it worked: next time, change the approach after two identical "
                                          "failures")
    ticks = msgspec.structs.replace(fixed, resolved_after="make `uname -m`")  # a backtick would end the span
    assert "then it worked after `make 'uname -m'`:" in lesson_lines([ticks])[0]


def test_a_failure_repeated_on_two_days_of_the_main_chat_is_told_as_such() -> None:
    """Cortex: the main chat's one session key made a repeated failure a repeat_fail only in
    Cortex's own rule (8 hours apart, a new turn); its lesson says occasions, not sessions."""
    from trace_testkit import Agent, End, RunEnd, RunStart, Start, User, Wait, fail, findings

    day = [Start(), User(text="Renew the certificate"), RunStart(),
           *fail("exec", {"command": "certbot renew"}, "timeout during connect"), Agent(text="It failed."), RunEnd(),
           End()]
    repeat = next(f for f in findings(*day, Wait(minutes=1440), *day) if f.signal == "repeat_fail")
    assert lesson_lines([repeat]) == ["- `exec` failed the same way on 2 occasions hours apart (timeout during "
                                      "connect): fix the cause before retrying"]
    two_sessions = next(f for f in findings(*day, Start(session="b"), *day[1:]) if f.signal == "repeat_fail")
    assert lesson_lines([two_sessions]) == ["- `exec` failed the same way in 2 sessions (timeout during connect): "
                                            "fix the cause before retrying"]


def test_a_vague_promise_made_right_after_tool_calls_names_them() -> None:
    """The tool history's day 3: two sessions_spawn calls at 10:01, then "Both tasks are running
    in the background; I'll report when they finish." — the briefings said "⚪ Open: report
    when they finish (assistant)" and from day 11 "🔴 **OVERDUE**: report when they finish":
    nothing a reader could tell the promise by. It names the calls it was made about."""
    made = NOW - timedelta(days=8)
    spawn = [Operation(id=f"s{i}", tool="sessions_spawn", status="completed", started=made - timedelta(seconds=s),
                       seen=True, finished=made + timedelta(days=1), request=task)
             for i, (s, task) in enumerate(((60, "Rebuild the search index for docs.acme.dev"),
                                            (40, "Summarise the support inbox of the last week")))]
    earlier = Operation(id="e", tool="exec", status="completed", started=made - timedelta(minutes=6), seen=True,
                        request="df -h")  # another turn's call
    later = Operation(id="l", tool="exec", status="completed", started=made + timedelta(seconds=1), seen=True)

    def promise(what: str, topic: str | None = None, at: datetime = made, i: str = "c") -> Commitment:
        return Commitment(id=i, who="assistant", what=what, status="overdue", created=at, source_event="m",
                          topic=topic, due="2026-02-23")

    ops = [earlier, *reversed(spawn), later]
    text, _ = commitments_section([promise("report when they finish")], NOW, UTCZ, 1000, ops, undated_days=7)
    assert text.splitlines()[1] == (
        "- 🔴 **OVERDUE**: report when they finish (`sessions_spawn` “Rebuild the search index for docs.acme.dev”, "
        "“Summarise the support inbox of the last week”; all finished by 2026-02-23 12:00) (you; due 2026-02-23, "
        "7 days ago)")
    deploy = Operation(id="d", tool="deploy_job", status="failed", started=made - timedelta(minutes=1), seen=True,
                       request="release=3.2, env=prod, window=22:00")
    assert promise_calls(promise("tell you how it went"), [deploy]) == \
        "`deploy_job` “release=3.2, env=prod, window=22:00”"
    assert promise_calls(promise("Bescheid geben, wenn es fertig ist"), [deploy]) != ""
    # a call that has finished says when; one still running (or without ``tz``) does not
    done = msgspec.structs.replace(deploy, finished=made + timedelta(hours=2))
    assert promise_calls(promise("tell you how it went"), [done], tz=UTCZ) == \
        "`deploy_job` “release=3.2, env=prod, window=22:00”; finished 2026-02-22 14:00"
    running = msgspec.structs.replace(deploy, id="d2", request="release=3.3")
    assert promise_calls(promise("tell you how it went"), [done, running], tz=UTCZ).endswith("“release=3.3”")
    # what it is about is said already, or nothing refers back, or no call came just before
    assert promise_calls(promise("report when they finish", topic="search index"), ops) == ""
    assert promise_calls(promise("write the migration guide for the billing schema"), ops) == ""
    assert promise_calls(promise("Ich melde mich bei Ihnen, wenn Sie zurück sind"), [deploy]) == ""
    assert promise_calls(promise("report when they finish", at=made - timedelta(minutes=7)), ops) == ""
    assert promise_calls(promise("report when they finish"), [earlier, later]) == ""
    many = [msgspec.structs.replace(deploy, id=f"d{i}", request=f"job {i}") for i in range(5)]
    assert promise_calls(promise("tell you how it went"), many) == \
        "`deploy_job` “job 0”, “job 1”, “job 2”; 2 more"
    # through the assembly: the briefing reads the agent's operations
    doc = CommitmentsDoc(updated=NOW, commitments=[promise("report when they finish")],
                         integrity=empty_trace_doc(NOW).integrity)
    inputs = boot_inputs(agent="a", now=NOW, commitments=doc,
                        operations=OperationsDoc(updated=NOW, operations=ops,
                                                 integrity=empty_operations_doc(NOW).integrity))
    assert "report when they finish (`sessions_spawn` “Rebuild" in assemble_boot(SECTIONS, inputs, BootSettings(), UTCZ)
    # a promiser known by role only is the agent ("you") or the user; a sender's name stays
    since = "due 2026-02-23, 7 days ago"  # an OVERDUE promise says since when
    for who, shown in (("assistant", "you"), ("user", "the user"), ("telegram:@albert", "telegram:@albert"),
                       ("claudia", "claudia"), ("", "")):
        line = commitments_section([msgspec.structs.replace(promise("write the guide"), who=who)], NOW, UTCZ, 500,
                                   undated_days=7)[0]
        assert line.splitlines()[1] == f"- 🔴 **OVERDUE**: write the guide ({shown}; {since})".replace("(; ", "(")
    # the agent's own promise under its sender name (the demo's "claudia") is "you" when its role is kept
    for who, role, shown in (("claudia", "assistant", "you"), ("albert", "user", "albert")):
        kept = msgspec.structs.replace(promise("write the guide"), who=who, role=role)
        line = commitments_section([kept], NOW, UTCZ, 500, undated_days=7)[0]
        assert line.splitlines()[1] == f"- 🔴 **OVERDUE**: write the guide ({shown}; {since})"
    # the day it was made (day 3) Pending Operations lists the calls still running: pointed to, not quoted twice
    assert promise_calls(promise("report when they finish"), ops, {"s0", "s1"}) == \
        "the `sessions_spawn` calls in Pending Operations"
    assert promise_calls(promise("tell you how it went"), [deploy], {"d"}) == \
        "the `deploy_job` call in Pending Operations"
    assert promise_calls(promise("report when they finish"), ops, {"s1"}) == (  # the other is quoted
        "the `sessions_spawn` call in Pending Operations and `sessions_spawn` “Rebuild the search index for "
        "docs.acme.dev”")
    running = [msgspec.structs.replace(o, status="pending", seen=False, finished=None) for o in spawn]
    pending = replaced(inputs, operations=OperationsDoc(
        updated=NOW, operations=running, integrity=empty_operations_doc(NOW).integrity))
    markdown = assemble_boot(SECTIONS, pending, BootSettings(), UTCZ)
    assert "report when they finish (the `sessions_spawn` calls in Pending Operations)" in markdown
    assert markdown.count("Rebuild the search index") == 1 and not briefing_defects(markdown)


def test_a_commitment_closed_by_a_claim_found_false_is_open_again_and_says_why() -> None:
    """Issue 37: "I'll deploy the payment service now", closed by the agent's "Done! … deployed
    ✅" after four failed deploys, stayed done while the Lessons said the claim was false."""
    promise = Commitment(id="c1", who="claudia", what="deploy the payment service", status="done",
                         created=NOW - timedelta(hours=2), source_event="e1", role="assistant")
    other = Commitment(id="c2", who="claudia", what="write the release notes", status="done",
                       created=NOW - timedelta(hours=2), source_event="e2", role="assistant")
    claim = finding("hallucination", "deploy", severity="critical", error="exit 1",
                    quote="Done! The payment service is deployed ✅")
    text, n_open = commitments_section([promise, other], NOW, UTCZ, 2000, findings=[claim], undated_days=7)
    assert n_open == 1
    assert "- ⚪ Open: deploy the payment service (you; reopened: the claim that closed it was false, see Lessons)" \
        in text
    assert "release notes" not in text  # the claim names another task: it stays done
    earlier = msgspec.structs.replace(claim, last_ts=NOW - timedelta(hours=3))  # before the promise: not its closure
    assert commitments_section([promise], NOW, UTCZ, 2000, findings=[earlier], undated_days=7)[1] == 0
    traces = TraceDoc(updated=NOW, findings=[claim], integrity=empty_trace_doc(NOW).integrity)
    inputs = boot_inputs(agent="a", now=NOW, traces=traces,
                        commitments=CommitmentsDoc(updated=NOW, commitments=[promise], integrity=traces.integrity))
    markdown = assemble_boot(SECTIONS, inputs, BootSettings(), UTCZ)
    assert "reopened: the claim that closed it was false" in markdown
    assert "1 open commitment" in markdown
    assert [d for d in briefing_defects(markdown) if d[0] in ("cross_section_repeat", "miscount")] == []
