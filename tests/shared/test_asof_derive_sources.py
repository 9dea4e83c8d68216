"""Knowledge, traces and pending operations past their bucket's history are read as of a
trigger exactly: derived from the agent's events before it (``shared.derive``), byte for
byte what the worker had stored then — when no model read the events too. Before, a
briefing far behind them (a restart, an eval publishing whole conversations at once) read
their latest documents instead (``history_too_short``: 95 knowledge, 40 traces reads in one
briefing-eval run). A document a model helped make is not the events' alone: its read
still falls back to the latest document, flagged (its producer says a model made it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import msgspec
import pytest
from cortex_testkit import apply_one_per_batch
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.docs import ChannelsDoc, KnowledgeDoc, NarrativeDoc, OperationsDoc, SnapshotDoc, TraceDoc
from shared.asof import DocReader
from shared.codec import Envelope, decode_event, event_limits
from shared.config import Settings, load_settings
from shared.health import Health
from shared.inputs import Inputs
from shared.kv import kv_read
from shared.llm import LlmClient
from shared.names import (
    BUCKET_CHANNELS,
    BUCKET_KNOWLEDGE,
    BUCKET_NARRATIVES,
    BUCKET_OPERATIONS,
    BUCKET_SNAPSHOTS,
    BUCKET_TRACES,
    EVENTS_STREAM,
)
from shared.projection import AnyProjection, ProjectionHandler, is_trigger
from shared.provision import provision
from shared.runtime import WorkerContext, WorkerSpec, derivation, producer_id
from workers.channels.worker import SPEC as CHANNELS
from workers.channels.worker import ChannelsProjection
from workers.decisions.worker import SPEC as DECISIONS
from workers.decisions.worker import projections as decisions_projections
from workers.knowledge.worker import SPEC as KNOWLEDGE
from workers.knowledge.worker import KnowledgeProjection
from workers.narrative.worker import SPEC as NARRATIVE
from workers.narrative.worker import NarrativeProjection
from workers.snapshot.worker import SPEC as SNAPSHOT
from workers.snapshot.worker import SnapshotProjection
from workers.threads.worker import SPEC as THREADS
from workers.threads.worker import projections as threads_projections
from workers.traces.config import trace_config
from workers.traces.operations import operations_config
from workers.traces.worker import SPEC as TRACES
from workers.traces.worker import OperationsProjection, TracesProjection

AGENT = "agent-0"
VERSION = "9.9.9"


class Case(NamedTuple):
    spec: WorkerSpec
    bucket: str
    doc_type: type[Any]
    # the worker's own projections, as its build makes them without a model
    projections: Callable[[Settings, LlmClient], Sequence[AnyProjection]]


def _knowledge(settings: Settings, llm: LlmClient) -> list[AnyProjection]:
    return [KnowledgeProjection(settings.knowledge, llm, languages=settings.languages)]


def _traces(settings: Settings, llm: LlmClient) -> list[AnyProjection]:
    traces = settings.traces
    return [TracesProjection(traces, trace_config(traces, settings.languages), llm),
            OperationsProjection(traces, operations_config(traces))]


CASES = {"knowledge": Case(KNOWLEDGE, BUCKET_KNOWLEDGE, KnowledgeDoc, _knowledge),
         "traces": Case(TRACES, BUCKET_TRACES, TraceDoc, _traces),
         "operations": Case(TRACES, BUCKET_OPERATIONS, OperationsDoc, _traces)}


def _tool(i: int, kind: str) -> tuple[str, bytes, str]:
    """A tool call that keeps failing (a finding for traces), or one left pending (an operation)."""
    body: dict[str, Any] = {"id": f"tool-{i}-{kind}", "agent": AGENT, "session": f"s-{AGENT}",
                            "ts": f"2026-02-17T00:{i // 60 % 60:02d}:{i % 60:02d}Z", "tool": "exec",
                            "call_id": f"c{i}", "params": {"command": "make deploy"}}
    if kind == "result":
        body["error"] = "exit status 2: deploy target missing"
    return f"cortex.tool.{AGENT}.{kind}", msgspec.json.encode(body), str(body["id"])


async def _publish(js: JetStreamContext, chat: list[tuple[str, bytes, str]]) -> int:
    for i, (subject, data, msg_id) in enumerate(chat):
        await js.publish(subject, data, headers={"Nats-Msg-Id": msg_id})
        if i % 9 == 4:
            for kind in ("call", "result") if i % 18 == 4 else ("call",):
                tool_subject, body, tool_id = _tool(i, kind)
                await js.publish(tool_subject, body, headers={"Nats-Msg-Id": tool_id})
    return int((await js.stream_info(EVENTS_STREAM)).state.last_seq)


async def _apply_one_per_batch(js: JetStreamContext, settings: Settings, case: Case, producer: str,
                               last: int) -> dict[int, bytes | None]:
    """The worker's handler over the stream, one event per batch (paced load); the agent's
    stored document just before each of its triggers."""
    llm = LlmClient(settings, js)
    assert not llm.enabled
    handler = ProjectionHandler(js, case.spec.name, producer, case.projections(settings, llm), cut_on_triggers=True)
    try:
        return await apply_one_per_batch(js, settings, handler, case.bucket, AGENT, last)
    finally:
        await llm.aclose()


async def _stored(nc: Client, make_chat_events: Any, case: Case, producer: str) -> tuple[dict[int, bytes | None],
                                                                                      list[int]]:
    """The documents stored before each trigger, and the triggers past the bucket's history."""
    js = nc.jetstream()
    settings = load_settings({})
    await provision(js, settings, [], doc_buckets=list(case.spec.buckets))
    last = await _publish(js, make_chat_events(200, 1, seed=3, triggers_every=30))
    before = await _apply_one_per_batch(js, settings, case, producer, last)
    plain = DocReader(js)  # without derivation: what the readers did before
    short = [seq for seq in sorted(before) if not (await plain.as_of(case.bucket, AGENT, case.doc_type, seq))[1]]
    assert short, "the early triggers should lie past the bucket's history: the test would prove nothing"
    return before, short


@pytest.mark.parametrize("name", sorted(CASES))
async def test_a_source_made_without_a_model_is_derived_as_of_the_trigger(
        nc: Client, make_chat_events: Any, name: str) -> None:
    case = CASES[name]
    settings = load_settings({})
    before, short = await _stored(nc, make_chat_events, case, producer_id(case.spec, settings, VERSION))
    assert any(doc is not None for seq, doc in before.items() if seq in short)
    js = nc.jetstream()
    reader = Inputs(js, settings, derivation(js, settings, [case.spec], VERSION)).docs
    for seq in [*sorted(before), *sorted(before, reverse=True)]:  # in stream order, then from the start again
        doc, exact = await reader.as_of(case.bucket, AGENT, case.doc_type, seq)
        assert exact, seq
        got = msgspec.json.encode(doc) if doc is not None else None
        assert got == before[seq], f"as of the trigger at {seq} ({'derived' if seq in short else 'a revision'})"


async def test_a_source_a_model_helped_make_is_not_passed_off_as_derived(nc: Client, make_chat_events: Any) -> None:
    """The same documents, but their producer says a model read the events too (the worker's
    process had a key; the reading one need not): past the history the read is the latest
    document, flagged — the regex-only derivation would not be what was stored."""
    case = CASES["knowledge"]
    with_model = load_settings({"ANTHROPIC_API_KEY": "sk-test"})
    made_by = producer_id(case.spec, with_model, VERSION)
    assert made_by != producer_id(case.spec, load_settings({}), VERSION)
    _, short = await _stored(nc, make_chat_events, case, made_by)
    js = nc.jetstream()
    for settings in (load_settings({}), with_model):  # whichever the reading process has
        reader = Inputs(js, settings, derivation(js, settings, [case.spec], VERSION)).docs
        for seq in short:
            _, exact = await reader.as_of(case.bucket, AGENT, case.doc_type, seq)
            assert not exact, seq


def _composed(ctx: WorkerContext, llm: LlmClient) -> dict[str, AnyProjection]:
    """The composed workers' own projections, by bucket."""
    return {BUCKET_CHANNELS: ChannelsProjection(ctx), BUCKET_SNAPSHOTS: SnapshotProjection(ctx),
            BUCKET_NARRATIVES: NarrativeProjection(ctx, llm)}


COMPOSED = {BUCKET_CHANNELS: ChannelsDoc, BUCKET_SNAPSHOTS: SnapshotDoc, BUCKET_NARRATIVES: NarrativeDoc}


async def _publish_with_compactions(js: JetStreamContext, chat: list[tuple[str, bytes, str]]) -> int:
    for i, (subject, data, msg_id) in enumerate(chat):
        await js.publish(subject, data, headers={"Nats-Msg-Id": msg_id})
        if i % 9 == 8:  # a compaction without its messages: the snapshot takes the threads' last ones
            body = {"id": f"compact-{i}", "agent": AGENT, "session": f"s-{AGENT}",
                    "ts": f"2026-02-17T00:{i // 60 % 60:02d}:{i % 60:02d}Z", "compacting_count": 40}
            await js.publish(f"cortex.compaction.{AGENT}.before", msgspec.json.encode(body),
                             headers={"Nats-Msg-Id": str(body["id"])})
    return int((await js.stream_info(EVENTS_STREAM)).state.last_seq)


@pytest.mark.parametrize("bucket", sorted(COMPOSED))
async def test_a_composed_document_past_its_history_is_derived_from_its_derived_sources(
        nc: Client, make_chat_events: Any, monkeypatch: pytest.MonkeyPatch, bucket: str) -> None:
    """The channel summaries, the snapshot and the narrative are made at their triggers from
    threads, decisions and commitments (the narrative: and the snapshot) as of each; those
    derive from the events, so these documents derive too — their own history spent (a
    revision per message), each trigger's document made from its sources derived as of it.
    Before: their latest documents (``history_too_short``; in one held-out run 38 channels and
    39 narratives reads)."""
    js = nc.jetstream()
    settings = load_settings({"CORTEX_BOOT_WAIT_MS": "1"})
    specs = [THREADS, DECISIONS, CHANNELS, SNAPSHOT, NARRATIVE]
    await provision(js, settings, [], doc_buckets=[b for s in specs for b in s.buckets])
    last = await _publish_with_compactions(js, make_chat_events(200, 1, seed=11, triggers_every=30))

    # every event is applied to every source before a composed worker takes it, so no trigger
    # need wait for its sources (nor could it: no consumer runs here)
    async def complete(*_: Any) -> None:
        return None

    monkeypatch.setattr(Inputs, "patiently", complete)
    ctx = WorkerContext(nc=nc, js=js, settings=settings, worker="composed", consumer="composed",
                        producer="composed@test", health=Health("composed"), catalog={s.name: s for s in specs})
    llm = LlmClient(settings, js)
    composed = _composed(ctx, llm)
    # in the order the sources feed each other: the snapshot before the narrative made with it
    handlers = [ProjectionHandler(js, "threads", "threads@test", threads_projections(settings)),
                ProjectionHandler(js, "decisions", "decisions@test", decisions_projections(settings)),
                *(ProjectionHandler(js, spec.name, producer_id(spec, settings, VERSION), [composed[b]],
                                    cut_on_triggers=True)
                  for spec, b in ((SNAPSHOT, BUCKET_SNAPSHOTS), (CHANNELS, BUCKET_CHANNELS),
                                  (NARRATIVE, BUCKET_NARRATIVES)))]
    kv = await js.key_value(bucket)
    made: dict[int, bytes | None] = {}  # the document made for each trigger of the agent's
    for seq in range(1, last + 1):
        msg = await js.get_msg(EVENTS_STREAM, seq)
        env = decode_event(settings.prefix, msg.subject or "", seq, msg.data or b"", event_limits(settings))
        assert isinstance(env, Envelope)
        for handler in handlers:
            await handler.apply(env)
            await handler.commit()
        if env.agent == AGENT and is_trigger(env):
            made[seq] = (await kv_read(kv, AGENT))[0]
    await ctx.aclose()
    await llm.aclose()
    doc_type = COMPOSED[bucket]
    plain = DocReader(js)  # made for the trigger: read as of the event after it (``Source.as_of``)
    short = [seq for seq in sorted(made) if not (await plain.as_of(bucket, AGENT, doc_type, seq + 1))[1]]
    assert short, "the early triggers should lie past the bucket's history: the test would prove nothing"
    assert any(made[seq] is not None for seq in short)

    reader = Inputs(js, settings, derivation(js, settings, specs, VERSION)).docs
    for seq in sorted(made):
        doc, exact = await reader.as_of(bucket, AGENT, doc_type, seq + 1)
        assert exact, seq
        assert (msgspec.json.encode(doc) if doc is not None else None) == made[seq], f"made for the trigger at {seq}"
