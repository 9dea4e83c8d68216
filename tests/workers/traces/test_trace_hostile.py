"""Hostile input: the trace and operations cores stay bounded in time and size.

A 64 KiB message or tool payload built from the patterns' own trigger words costs about
what a normal one of the same size costs (both read a bounded head and tail); thousands
of events across hundreds of sessions leave documents far below the 512 KiB value limit.
Timing is relative, best of five, in the same test (no absolute thresholds), as CPU time
(``time.process_time``): a busy machine preempting the test does not count.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import msgspec

from schemas.events import MessageEvent, SessionEvent, ToolEvent
from shared.config import ALL_LANGUAGES, TracesSettings
from workers.traces.config import trace_config
from workers.traces.core import TraceEvent, apply_event
from workers.traces.operations import apply_operation_event, operations_config

SIZE = 64 * 1024
CONFIG = trace_config(TracesSettings(signals="all"), ALL_LANGUAGES)
T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
NORMAL = ("We looked at the deployment and the database migration; the rollout waits for the review. " * 800)[:SIZE]

HOSTILE = {
    "corrections": ("wrong that's not right falsch c'est faux 错了 違う 틀렸 неправильно " * 2000)[:SIZE],
    "completions": ("done ✅ erledigt terminé 完了 완료했 готово " * 3000)[:SIZE],
    "secrets": ("password=x sk-aaaaaaaaaaaaaaaaaaaaaaaa bob@example.com +49 171 1234567 " * 1200)[:SIZE],
    "no closing fence": "```" + ("service is running " * 4000)[:SIZE - 3],
    "unterminated key": "-----BEGIN PRIVATE KEY-----\n" + ("A" * 63 + "\n") * 1000,
    "one long token": "x" * SIZE,
}


def _cost(make: Callable[[int], TraceEvent], kind: str) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for i in range(5):
            apply_event(None, make(i), kind, CONFIG)
        best = min(best, time.process_time() - start)
    return best


def _message(text: str) -> Callable[[int], TraceEvent]:
    return lambda i: MessageEvent(id=f"m{i}", agent="a", session="s", ts=T0, role="assistant", content=text)


def _tool_result(text: str) -> Callable[[int], TraceEvent]:
    return lambda i: ToolEvent(id=f"t{i}", agent="a", session="s", ts=T0, tool="exec", error=text,
                               params={"command": text, **{f"k{j}": text[:50] for j in range(300)}})


def test_hostile_messages_and_tool_payloads_cost_about_a_normal_ones() -> None:
    normal_message = _cost(_message(NORMAL), "sent")
    normal_tool = _cost(_tool_result(NORMAL), "result")
    for name, text in HOSTILE.items():
        assert _cost(_message(text), "sent") < 8 * normal_message, name
        assert _cost(_tool_result(text), "result") < 8 * normal_tool, name


def test_thousands_of_events_over_hundreds_of_sessions_stay_bounded() -> None:
    rng = random.Random(7)
    trace_doc, ops_doc = None, None
    ops_config = operations_config(TracesSettings())
    t = T0
    for i in range(1000):
        t += timedelta(seconds=rng.randint(1, 120))
        session = f"s{rng.randint(0, 150)}"
        choice = rng.random()
        event: TraceEvent
        if choice < 0.3:
            event, kind = ToolEvent(id=f"c{i}", agent="a", session=session, ts=t, tool=f"tool{rng.randint(0, 50)}",
                                    call_id=f"k{i}", params={"command": "x" * rng.randint(0, 2000)}), "call"
        elif choice < 0.6:
            event, kind = ToolEvent(id=f"r{i}", agent="a", session=session, ts=t, tool=f"tool{rng.randint(0, 50)}",
                                    call_id=f"k{rng.randint(0, i)}",
                                    error=f"failure {rng.randint(0, 10**6)} " * 50), "result"
        elif choice < 0.9:
            role, kind = rng.choice([("user", "received"), ("assistant", "sent")])
            event = MessageEvent(id=f"m{i}", agent="a", session=session, ts=t, role=role,
                                 content=rng.choice(["forget it", "done ✅", "wrong", "ok"]) + " " + "y" * 3000)
        else:
            event, kind = SessionEvent(id=f"s{i}", agent="a", session=session, ts=t), rng.choice(["start", "end"])
        trace_doc = apply_event(trace_doc, event, kind, CONFIG) or trace_doc
        if not isinstance(event, MessageEvent):
            ops_doc = apply_operation_event(ops_doc, event, kind, ops_config) or ops_doc
    assert trace_doc is not None and ops_doc is not None
    assert len(msgspec.json.encode(trace_doc)) < 256 * 1024
    assert len(msgspec.json.encode(ops_doc)) < 128 * 1024
    assert len(trace_doc.findings) <= 200 and len(ops_doc.operations) <= 100
