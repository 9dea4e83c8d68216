"""Claude's triage of new findings (the reference classifier's triage stage), through the real
anthropic SDK against a fake HTTP transport and a real nats-server (the cache bucket).

Ported from ``classifier.test.ts``: "triage filters out findings when triage says keep:
false" (here: marked dismissed, left out of the API's default answer and the briefing),
"triage passes findings through when keep: true", "applies redaction before sending chain
to LLM", "handles invalid JSON from LLM gracefully". Not applicable: the deep-analysis
stage (rules, policies, patterns) and its actionType defaults. The OpenAI-style endpoint
settings are the client's (``shared.llm``: tests/shared/test_llm_openai_server.py).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import msgspec
import nats

from schemas.docs import Finding, TraceDoc
from schemas.types import SEVERITIES
from shared.config import load_settings
from shared.kv import kv_read
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs
from workers.traces.triage import build_prompt, parse_answer

SECRET = "hunter2hunter2"


def test_an_answer_is_a_triage_only_when_it_has_the_right_shape() -> None:
    assert parse_answer('{"keep": false, "severity": "low", "reason": "a test run"}') is not None
    for bad in (None, "", "not json", "[]", '{"keep": "yes", "severity": "low", "reason": ""}',
                '{"keep": true, "severity": "fatal", "reason": ""}'):
        assert parse_answer(bad) is None, bad
    reason = parse_answer(json.dumps({"keep": True, "severity": "high", "reason": "token=abc123secret " * 50}))
    assert reason is not None and "abc123secret" not in reason.reason and len(reason.reason) <= 300


def test_the_prompt_quotes_the_finding_and_escapes_the_trace() -> None:
    when = datetime(2026, 3, 2, tzinfo=UTC)
    finding = Finding(id="f", signal="correction", severity="medium", summary="User corrected </finding>",
                      events=[], first_ts=when, last_ts=when)
    prompt = build_prompt(finding, [])
    assert "</finding>" in prompt and prompt.count("</finding>") == 1  # the summary's is escaped


class FakeAnthropic:
    def __init__(self, verdict: dict[str, Any]) -> None:
        self.requests: list[dict[str, Any]] = []
        self.verdict = verdict

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        content = [{"type": "tool_use", "id": "toolu_1", "name": "triage", "input": self.verdict}]
        return httpx2.Response(200, json={"id": "msg", "type": "message", "role": "assistant",
                                          "model": "claude-haiku-4-5", "content": content, "stop_reason": "tool_use",
                                          "stop_sequence": None, "usage": {"input_tokens": 90, "output_tokens": 20}})


def events(agent: str) -> list[tuple[str, dict[str, Any]]]:
    base = {"agent": agent, "session": "s1"}
    out: list[tuple[str, dict[str, Any]]] = []
    for i, (family, kind, extra) in enumerate([
        ("msg", "received", {"role": "user", "content": "Deploy it"}),
        ("tool", "call", {"tool": "deploy", "call_id": "k1", "params": {"password": SECRET}}),
        ("tool", "result", {"tool": "deploy", "call_id": "k1", "error": f"auth failed for password={SECRET}"}),
        ("msg", "sent", {"role": "assistant", "content": "Done ✅"}),
    ]):
        out.append((f"cortex.{family}.{agent}.{kind}",
                    {**base, **extra, "id": f"{agent}-{i}", "ts": f"2026-03-02T09:00:0{i}Z"}))
    return out


async def test_new_findings_are_triaged_once_with_a_redacted_trace(nats_url: str, tmp_path: Path,
                                                                   wait_for: Any) -> None:
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path),
                              "ANTHROPIC_API_KEY": "sk-test-key", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100"})
    fake = FakeAnthropic({"keep": False, "severity": "low", "reason": "a deliberate failure in a test run"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, [all_specs()["traces"], all_specs()["api"]], __version__,
                      extras={"llm_http_client": httpx2.AsyncClient(transport=httpx2.MockTransport(fake.handler))})
    task = asyncio.create_task(host.run())
    try:
        for subject, body in events("ada"):
            await js.publish(subject, msgspec.json.encode(body), headers={"Nats-Msg-Id": body["id"]})

        async def triaged() -> TraceDoc | None:
            raw, _ = await kv_read(await js.key_value("cortex_traces"), "ada")
            doc = msgspec.json.decode(raw, type=TraceDoc) if raw else None
            return doc if doc is not None and len(doc.findings) == 2 and all(f.triage for f in doc.findings) else None

        doc = await wait_for(triaged, within=30)
        assert sorted(f.signal for f in doc.findings) == ["hallucination", "tool_fail"]
        assert {(f.triage.keep, f.triage.severity) for f in doc.findings if f.triage} == {(False, "low")}
        assert {f.severity for f in doc.findings} <= set(SEVERITIES)  # the rule's severity stays
        assert len(fake.requests) == 2  # one per new finding
        sent = json.dumps(fake.requests)
        assert SECRET not in sent and "[REDACTED]" in sent and "triage" in sent

        default = json.loads((await nc.request("cortex.api.traces.ada", b"{}", timeout=5)).data)
        everything = json.loads((await nc.request("cortex.api.traces.ada", b'{"dismissed": true}', timeout=5)).data)
        assert default["findings"] == [] and len(everything["findings"]) == 2
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()


async def test_findings_made_while_the_model_is_down_are_triaged_once_it_answers(nats_url: str, tmp_path: Path,
                                                                                  wait_for: Any) -> None:
    """Issue 38: the API failing, the findings are written untriaged within the call's bound
    (the worker does not wait); once the API answers, each finding's triage lands as an
    ``llm_answer`` event and is set on it."""
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path),
                              "ANTHROPIC_API_KEY": "sk-test-key", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100",
                              "CORTEX_LLM_RETRY_BASE_MS": "10", "CORTEX_LLM_PROBE_MAX_MS": "100"})
    fake = FakeAnthropic({"keep": True, "severity": "high", "reason": "the deploy failed"})
    up = asyncio.Event()

    def handler(request: httpx2.Request) -> httpx2.Response:
        if not up.is_set():
            return httpx2.Response(503, json={"type": "error", "error": {"type": "overloaded_error",
                                                                         "message": "overloaded"}})
        return fake.handler(request)

    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, [all_specs()["traces"]], __version__,
                      extras={"llm_http_client": httpx2.AsyncClient(transport=httpx2.MockTransport(handler))})
    task = asyncio.create_task(host.run())

    async def findings() -> list[Finding]:
        raw, _ = await kv_read(await js.key_value("cortex_traces"), "ada")
        return msgspec.json.decode(raw, type=TraceDoc).findings if raw else []

    try:
        for subject, body in events("ada"):
            await js.publish(subject, msgspec.json.encode(body), headers={"Nats-Msg-Id": body["id"]})

        async def untriaged() -> bool:
            info = await js.consumer_info("CORTEX_EVENTS", "traces")
            found = await findings()
            return not info.num_pending and not info.num_ack_pending and len(found) == 2

        await wait_for(untriaged, within=30)
        assert [f.triage for f in await findings()] == [None, None] and fake.requests == []
        up.set()

        async def triaged() -> bool:
            return all(f.triage is not None for f in await findings())

        await wait_for(triaged, within=30)
        assert {(f.triage.keep, f.triage.severity) for f in await findings() if f.triage} == {(True, "high")}
        assert len(fake.requests) == 2  # each finding asked again once, answered
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()


def _envelopes(agent: str) -> list[Any]:
    from schemas.events import MessageEvent, ToolEvent
    from shared.codec import Envelope

    types = {"msg": MessageEvent, "tool": ToolEvent}
    return [Envelope(seq=i, subject=subject, family=subject.split(".")[1], kind=subject.split(".")[3], agent=agent,
                     event=msgspec.convert(body, types[subject.split(".")[1]]))
            for i, (subject, body) in enumerate(events(agent), 1)]


async def test_compose_is_pure_and_the_findings_are_counted_once_per_event() -> None:
    """Issue 42: compose updated the findings metric, so a rebase (which composes an event
    again on the newer document) counted its findings twice; prepare counts them, once."""
    from prometheus_client import REGISTRY

    from workers.traces.config import trace_config
    from workers.traces.worker import TracesProjection

    settings = load_settings({})
    projection = TracesProjection(settings.traces, trace_config(settings.traces, settings.languages), None)

    def counted() -> float:
        return sum(REGISTRY.get_sample_value("cortex_traces_findings_total", {"signal": s}) or 0.0
                   for s in ("hallucination", "tool_fail"))

    doc: TraceDoc | None = None
    before = counted()
    for env in _envelopes("pure"):
        inputs = await projection.prepare(env, doc)
        after_prepare = counted()
        composed = [projection.compose(doc, env, inputs) for _ in range(3)]  # the first, and two rebases
        assert counted() == after_prepare and composed[0] == composed[1] == composed[2]
        doc = composed[0] if composed[0] is not None else doc
    assert doc is not None and sorted(f.signal for f in doc.findings) == ["hallucination", "tool_fail"]
    assert counted() == before + 2
