"""Feedback filtered by kind in the server, on a real nats-server: a worker that applies a few
kinds of FeedbackEvent declares them (``WorkerSpec.feedback_kinds``) and its consumer is
delivered only those, so a ``remember`` or a ``recall_access`` wakes the workers that apply it
and no other (the MCP tools that publish feedback, docs/BENCHMARKS.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, get_args
from zoneinfo import ZoneInfo

import msgspec
import pytest
from nats.aio.client import Client

from schemas.events import FeedbackEvent
from schemas.types import FeedbackKind
from shared.codec import Envelope
from shared.config import load_settings
from shared.consume import ConsumeLoop, Handler, LoopConfig
from shared.health import Health
from shared.llm import LlmClient
from shared.names import EVENTS_STREAM, consumer_filter_subjects, slot_of
from shared.provision import ConsumerSpec, ensure_consumer, provision
from shared.runtime import WorkerSpec
from workers.conversation.patterns import get_patterns
from workers.decisions.worker import CommitmentsProjection, DecisionsProjection
from workers.knowledge.worker import KnowledgeProjection
from workers.registry import all_specs, consumer_specs
from workers.threads.worker import ThreadsProjection
from workers.traces.config import trace_config
from workers.traces.operations import operations_config
from workers.traces.worker import OperationsProjection, TracesProjection

WaitFor = Callable[..., Awaitable[Any]]
KINDS: tuple[str, ...] = get_args(FeedbackKind)


def test_a_consumer_of_some_feedback_kinds_filters_on_each_kind_token() -> None:
    assert consumer_filter_subjects("cortex", ("feedback",), feedback_kinds=("thread_priority", "thread_close")) == [
        "cortex.feedback.*.*.thread_close", "cortex.feedback.*.*.thread_priority",
        "cortex.feedback.*.thread_close", "cortex.feedback.*.thread_priority"]
    assert consumer_filter_subjects("cortex", ("feedback",), 1, 32, feedback_kinds=("remember",)) == [
        "cortex.feedback.1.*.remember", "cortex.feedback.33.*.remember"]
    # every kind: one wildcard per slot, as before; other families are untouched by the kinds
    assert consumer_filter_subjects("cortex", ("feedback", "notes"), feedback_kinds=None) == [
        "cortex.feedback.*.*.*", "cortex.notes.*.*.*", "cortex.feedback.*.*", "cortex.notes.*.*"]
    assert consumer_filter_subjects("cortex", ("notes",), feedback_kinds=("remember",)) == [
        "cortex.notes.*.*.*", "cortex.notes.*.*"]


def test_each_feedback_kind_reaches_the_workers_that_apply_it_and_only_those() -> None:
    """Who is delivered which kind: the owning worker, and boot (every kind changes a source of
    the briefing, and it dead-letters a kind nobody knows) — no worker is woken by a kind it drops."""
    readers = {kind: sorted(name for name, spec in all_specs().items() if "feedback" in spec.families
                            and (spec.feedback_kinds is None or kind in spec.feedback_kinds)) for kind in KINDS}
    assert readers == {
        "recall_access": ["boot", "recall"], "memory_pin": ["boot", "recall"], "memory_forget": ["boot", "recall"],
        "remember": ["boot", "recall"], "memory_update": ["boot", "recall"],
        "thread_close": ["boot", "threads"], "thread_priority": ["boot", "threads"],
        "commitment_done": ["boot", "decisions"], "commitment_reject": ["boot", "decisions"],
        "decision_reject": ["boot", "decisions"], "fact_access": ["boot", "knowledge"],
        "operation_seen": ["boot", "traces"],
        # a late answer of the model goes to every worker whose calls may have one (shared.llm)
        "llm_answer": ["boot", "extraction", "knowledge", "narrative", "recall", "traces"]}
    for spec in consumer_specs(partitions=2):
        assert spec.feedback_kinds == all_specs()[spec.name.rsplit("-", 1)[0]].feedback_kinds


def _feedback(kind: str) -> Envelope:
    event = FeedbackEvent(id=f"f-{kind}", agent="alice", ts=datetime(2026, 2, 17, tzinfo=UTC), kind=kind,  # type: ignore[arg-type]
                          target="x")
    return Envelope(subject=f"cortex.feedback.{slot_of('alice')}.alice.{kind}", family="feedback", agent="alice",
                    kind=kind, event=event, seq=1)


def test_a_projection_applies_exactly_the_kinds_its_worker_declares() -> None:
    """The filter must never hold back a kind a projection applies (it would silently never
    happen) — nor let one through that it drops (a wasted wake-up)."""
    settings = load_settings({})
    patterns = get_patterns(settings.languages)
    llm = LlmClient(settings, js=None)  # type: ignore[arg-type]
    projections: dict[str, list[Any]] = {
        "threads": [ThreadsProjection(settings.threads, patterns)],
        "decisions": [CommitmentsProjection(settings.commitments, patterns, ZoneInfo(settings.timezone)),
                      DecisionsProjection(settings.decisions, patterns, ZoneInfo(settings.timezone))],
        "knowledge": [KnowledgeProjection(settings.knowledge, llm)],
        "traces": [OperationsProjection(settings.traces, operations_config(settings.traces)),
                   TracesProjection(settings.traces, trace_config(settings.traces, settings.languages), llm)],
    }
    for worker, mine in projections.items():
        declared = all_specs()[worker].feedback_kinds
        assert declared is not None
        # a late answer is handed to ``enrich`` (``Projection.answers``), never to ``accepts``
        applied = [k for k in KINDS if any(p.accepts(_feedback(k)) or (k == "llm_answer" and p.answers)
                                           for p in mine)]
        assert applied == [k for k in KINDS if k in declared], worker


def test_feedback_kinds_must_be_kinds_of_the_feedback_family_it_reads() -> None:
    with pytest.raises(ValueError, match="feedback_kinds"):
        WorkerSpec(name="w", families=("msg",), feedback_kinds=("remember",), build=lambda ctx: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="feedback_kinds"):
        WorkerSpec(name="w", families=("feedback",), feedback_kinds=("remembr",), build=lambda ctx: None)  # type: ignore[arg-type,return-value]


class Recorder(Handler):
    def __init__(self) -> None:
        self.applied: list[str] = []

    async def apply(self, env: Envelope) -> bool:
        self.applied.append(env.subject)
        return True

    async def commit(self) -> None:
        return None

    def reset(self) -> None:
        return None


async def _publish(js: Any, agent: str, *kinds: str) -> None:
    for i, kind in enumerate(kinds):
        if kind == "received":
            payload: dict[str, Any] = {"id": f"m{i}", "agent": agent, "session": "s", "ts": "2026-02-17T10:00:00Z",
                                       "role": "user", "content": f"message {i}"}
            await js.publish(f"cortex.msg.{agent}.received", msgspec.json.encode(payload))
        else:
            payload = {"id": f"f{i}-{kind}", "agent": agent, "ts": "2026-02-17T10:00:00Z", "kind": kind,
                       **({"value": {"content": "a memory"}} if kind == "remember" else {"target": "t"})}
            await js.publish(f"cortex.feedback.{agent}.{kind}", msgspec.json.encode(payload))


async def _consume(js: Any, consumer: str, want: int, wait_for: WaitFor) -> list[str]:
    recorder = Recorder()
    loop = ConsumeLoop(js, worker="tally", consumer=consumer, handler=recorder,
                       config=LoopConfig(batch_size=20, fetch_timeout_s=0.1), health=Health(consumer), label=consumer)
    task = asyncio.create_task(loop.run())

    async def done() -> bool:
        return len(recorder.applied) >= want

    try:
        await wait_for(done, within=30)
    finally:
        loop.stop()
        await task
    return recorder.applied


async def test_the_server_delivers_a_consumer_only_its_feedback_kinds(nc: Client, wait_for: WaitFor) -> None:
    js = nc.jetstream()
    spec = ConsumerSpec(name="tally", families=("msg", "feedback"), feedback_kinds=("thread_close",))
    await provision(js, load_settings({}), [spec])
    await _publish(js, "alice", "received", "remember", "thread_close", "recall_access", "memory_forget",
                   "thread_close", "received")

    async def four_pending() -> bool:
        # the two messages and the two thread_close, not the three others: the server counts a
        # filtered consumer's pending as each stored message reaches it, after the publish's ack
        # (read at once, it said 3 once under load)
        return (await js.consumer_info(EVENTS_STREAM, "tally")).num_pending == 4

    await wait_for(four_pending, within=10)
    assert [s.rsplit(".", 1)[-1] for s in await _consume(js, "tally", 4, wait_for)] == [
        "received", "thread_close", "thread_close", "received"]


async def test_a_consumer_made_for_every_kind_is_narrowed_in_place_where_it_stood(nc: Client,
                                                                                  wait_for: WaitFor) -> None:
    """An existing deployment: the worker of the new version finds its consumer reading every
    feedback kind and updates its filters in place — no replay, nothing it applied is delivered
    again, and of what is still to come it is delivered only its kinds."""
    js = nc.jetstream()
    settings = load_settings({})
    every = ConsumerSpec(name="tally", families=("msg", "feedback"))
    await provision(js, settings, [every])
    await _publish(js, "alice", "received", "remember", "thread_close")
    assert len(await _consume(js, "tally", 3, wait_for)) == 3
    await _publish(js, "bob", "remember", "thread_close", "received", "recall_access")

    narrowed = msgspec.structs.replace(every, feedback_kinds=("thread_close",))
    assert await ensure_consumer(js, narrowed, settings) == "updated"
    info = await js.consumer_info(EVENTS_STREAM, "tally")
    assert sorted(info.config.filter_subjects or []) == sorted(narrowed.filter_subjects("cortex"))
    assert info.num_pending == 2 and info.delivered.stream_seq == 3
    assert [s.rsplit(".", 2)[-2:] for s in await _consume(js, "tally", 2, wait_for)] == [
        ["bob", "thread_close"], ["bob", "received"]]
    assert await ensure_consumer(js, narrowed, settings) == "unchanged"
