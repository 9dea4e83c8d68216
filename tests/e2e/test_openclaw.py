"""Cortex reads the OpenClaw NATS event store as it is deployed.

The REAL `@vainplex/nats-eventstore` plugin (npm, installed by `npm ci` in tests/node) is
registered against a stand-in of OpenClaw's plugin API (tests/node/driver.mjs) and its hooks
are fired at a real nats-server: it creates its own stream and publishes the demo
conversation the way a gateway would. Then `cortex init` wires that stream as a source and
`cortex up` derives the documents — the same ones the same conversation makes when it is
published as contract events on a second server.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from cortex_testkit import cortex, differences, drained, snapshot_docs
from nats.js.client import JetStreamContext
from openclaw_driver import NODE, STORE, drive, ensure_plugin

from shared.embedded import EmbeddedNats
from shared.names import DLQ_STREAM, EVENTS_STREAM

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed: the real plugin cannot be driven")

# The documents the contract twin must match (integrity aside: stream positions differ).
COMPARED = ("cortex_threads", "cortex_decisions", "cortex_commitments", "cortex_boot")


# --------------------------------------------------------------------------- the OpenClaw side


def demo_hooks(agent: str = "main") -> list[dict[str, Any]]:
    """The demo conversation as the hooks an OpenClaw gateway fires for it, plus the run,
    tool, model and gateway hooks around a turn (Cortex ignores those for documents)."""
    events = [json.loads(line) for line in
              resources.files("workers.demo").joinpath("conversation.jsonl").read_text().splitlines()]
    hooks: list[dict[str, Any]] = [{"hook": "gateway_start", "event": {"port": 18789}}]
    for e in events:
        at = int(datetime.fromisoformat(e["ts"]).timestamp() * 1000)
        ctx = {"agentId": agent, "sessionKey": f"{agent}:{e['session']}", "channelId": e.get("channel", "webchat")}
        kind = e["type"]
        if kind == "session.start":
            hooks.append({"hook": "session_start", "event": {"sessionId": e["session"]}, "ctx": ctx, "at": at})
        elif kind == "msg.received":
            hooks.append({"hook": "message_received", "ctx": ctx, "at": at,
                          "event": {"from": e["sender"], "content": e["content"], "timestamp": at}})
            hooks += turn(ctx, at, e["content"])
        elif kind == "msg.sent":
            hooks.append({"hook": "message_sending", "ctx": ctx, "at": at,
                          "event": {"to": "albert", "content": e["content"]}})
            hooks.append({"hook": "message_sent", "ctx": ctx, "at": at,
                          "event": {"to": "albert", "content": e["content"], "success": True}})
        elif kind == "compaction.before":
            hooks.append({"hook": "before_compaction", "ctx": ctx, "at": at, "event": {
                "messageCount": e["message_count"], "compactingCount": e["compacting_count"], "tokenCount": 9000}})
        elif kind == "compaction.after":
            hooks.append({"hook": "after_compaction", "ctx": ctx, "at": at, "event": {
                "messageCount": e["message_count"], "compactedCount": 8, "tokenCount": 2000}})
    return hooks


def turn(ctx: dict[str, str], at: int, prompt: str) -> list[dict[str, Any]]:
    """One agent run: its start, a model call, a tool call and its result, its end."""
    return [
        {"hook": "before_agent_start", "ctx": ctx, "at": at + 100, "event": {"prompt": prompt}},
        {"hook": "llm_input", "ctx": ctx, "at": at + 200, "event": {
            "runId": f"run-{at}", "provider": "anthropic", "model": "claude", "prompt": prompt, "historyMessages": []}},
        {"hook": "before_tool_call", "ctx": ctx, "at": at + 300, "event": {"toolName": "read", "params": {"p": "x"}}},
        {"hook": "after_tool_call", "ctx": ctx, "at": at + 400, "event": {
            "toolName": "read", "params": {"p": "x"}, "result": {"content": [{"type": "text", "text": "ok"}]},
            "durationMs": 12}},
        {"hook": "llm_output", "ctx": ctx, "at": at + 500, "event": {"runId": f"run-{at}", "assistantTexts": ["ok"]}},
        {"hook": "agent_end", "ctx": ctx, "at": at + 600, "event": {"success": True, "durationMs": 600}},
    ]


# --------------------------------------------------------------------------- the contract twin


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")


def contract_twin(token: str, e: dict[str, Any]) -> dict[str, Any] | None:
    """The contract event a gateway would have published for one store event (the contract's
    mapping, written out here independently of shared.openclaw)."""
    p = e["payload"]
    base = {"id": e["id"], "agent": e["agent"], "session": e["session"], "ts": iso(e["ts"])}
    table: dict[str, dict[str, Any]] = {
        "msg_in": {"type": "msg.received", "role": "user", "content": p.get("content"), "sender": p.get("from"),
                   "channel": p.get("channel")},
        "msg_out": {"type": "msg.sent", "role": "assistant", "content": p.get("content"), "channel": p.get("channel")},
        "session_start": {"type": "session.start"},
        "session_end": {"type": "session.end"},
        "session_reset": {"type": "session.end"},
        "session_compaction_start": {"type": "compaction.before", "message_count": p.get("messageCount"),
                                     "compacting_count": p.get("compactingCount"), "messages": []},
        "session_compaction_end": {"type": "compaction.after", "message_count": p.get("messageCount"),
                                   "compacting_count": p.get("compactedCount"), "messages": []},
        "tool_call": {"type": "tool.call", "tool": p.get("toolName"), "params": p.get("params")},
        "tool_result": {"type": "tool.result", "tool": p.get("toolName"), "params": p.get("params"),
                        "result": p.get("result"), "duration_ms": p.get("durationMs")},
        "run_start": {"type": "run.start", "prompt": p.get("prompt")},
        "run_end": {"type": "run.end", "success": p.get("success"), "duration_ms": p.get("durationMs")},
    }
    extra = table.get(token)
    return None if extra is None else {**base, **extra}


async def store_messages(js: JetStreamContext) -> list[tuple[str, bytes]]:
    info = await js.stream_info(STORE)
    return [((m := await js.get_msg(STORE, seq)).subject or "", m.data or b"")
            for seq in range(info.state.first_seq, info.state.last_seq + 1)]


# --------------------------------------------------------------------------- pipelines


def up(url: str, data: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CORTEX_NATS_URL": url, "CORTEX_DATA_DIR": str(data), "CORTEX_LOG_LEVEL": "WARNING",
           "CORTEX_RUNTIME_LEASE_TTL_S": "2", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_BOOT_WAIT_MS": "10000",
           "CORTEX_EMBEDDER": "hashing"}  # recall's quick embedder: the test is about the source, not ranking
    data.mkdir(parents=True, exist_ok=True)
    log = open(data / "up.log", "wb")  # noqa: SIM115 - the child owns it
    proc = subprocess.Popen([sys.executable, "-m", "workers", "up"], env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    log.close()
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


@pytest.fixture(scope="module")
def plugin_installed() -> None:
    ensure_plugin()


@pytest.fixture
def second_server(tmp_path: Path) -> Iterator[EmbeddedNats]:
    server = EmbeddedNats(str(tmp_path / "nats-twin"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def store_js(nats_url: str) -> AsyncIterator[JetStreamContext]:
    nc = await nats.connect(nats_url)
    try:
        yield nc.jetstream()
    finally:
        await nc.close()


def without_integrity(raw: bytes | None) -> Any:
    if raw is None:
        return None
    doc = msgspec.json.decode(raw)
    doc.pop("integrity", None)
    return doc


async def settled(js: JetStreamContext, data: Path, wait_for: Any, within: float = 120) -> None:
    """Every worker has applied everything; on a timeout, say who has not and what it logged."""
    try:
        await wait_for(lambda: drained(js), within=within)
    except AssertionError as exc:
        left = {c.name: (c.num_pending, c.num_ack_pending) for c in await js.consumers_info(EVENTS_STREAM)}
        log = (data / "up.log").read_text(errors="replace")[-3000:]
        raise AssertionError(f"not drained within {within}s: (pending, unacked) {left}\n{log}") from exc


async def copied(js: JetStreamContext) -> bool:
    """The server has copied the whole store into CORTEX_EVENTS."""
    info = await js.stream_info(EVENTS_STREAM)
    store = await js.stream_info(STORE)
    return all(s.lag == 0 for s in info.sources or []) and (
        (await js.stream_info(EVENTS_STREAM, subjects_filter="cortex.openclaw.>")).state.messages
        == store.state.messages)


# --------------------------------------------------------------------------- the test


@pytest.mark.timeout(300)  # two whole pipelines and a replay: ~20 s alone, longer on a loaded machine
async def test_the_real_plugin_s_store_yields_the_documents_of_the_same_conversation_as_contract_events(
    plugin_installed: None, nats_url: str, second_server: EmbeddedNats, store_js: JetStreamContext,
    tmp_path: Path, wait_for: Any,
) -> None:
    js = store_js
    # 1. OpenClaw ran before Cortex was switched on: its store holds the history (backfill)
    report = drive(nats_url, demo_hooks(), tmp_path, "history")
    assert report["acknowledged"] == report["fired"] == 66  # every hook one event (no run failed)
    stored = await store_messages(js)
    assert len(stored) == report["acknowledged"]
    assert (await js.stream_info(STORE)).config.subjects == ["openclaw.events.>"]

    # 2. the same conversation as contract events, on a second server
    twin = [t for subject, data in stored
            if (t := contract_twin(subject.rsplit(".", 1)[1], json.loads(data))) is not None]
    twin_file = tmp_path / "twin.jsonl"
    twin_file.write_text("\n".join(json.dumps(t) for t in twin) + "\n")
    assert cortex("init", url=second_server.url).returncode == 0
    published = cortex("publish", str(twin_file), url=second_server.url)
    assert published.returncode == 0, published.stdout + published.stderr

    # 3. Cortex for OpenClaw: the one setting, init, up
    init = cortex("init", url=nats_url, CORTEX_OPENCLAW_STREAM=STORE)
    assert init.returncode == 0, init.stderr
    assert f"wired     source {STORE} → CORTEX_EVENTS: {len(stored)} messages" in init.stdout
    pipelines = [up(nats_url, tmp_path / "cortex"), up(second_server.url, tmp_path / "cortex-twin")]
    twin_nc = await nats.connect(second_server.url)
    try:
        twin_js = twin_nc.jetstream()
        await wait_for(lambda: copied(js), within=30)
        await settled(js, tmp_path / "cortex", wait_for)
        await settled(twin_js, tmp_path / "cortex-twin", wait_for)
        ours, theirs = await snapshot_docs(js, ["main"]), await snapshot_docs(twin_js, ["main"])
    finally:
        stop(pipelines.pop())
        await twin_nc.close()
    for key in ours:
        if key.split("/")[0] in COMPARED:
            assert ours[key] is not None, key
            assert without_integrity(ours[key]) == without_integrity(theirs[key]), key
    boot = msgspec.json.decode(ours["cortex_boot/main"] or b"")
    assert boot["trigger"] == "session_start" and "Redis" in boot["markdown"] and boot["lagging"] == []
    # OpenClaw's compaction carries counts, no messages: the snapshot quotes the last ones said before it
    hot = boot["markdown"].split("## 🔥 Last Session Snapshot\n", 1)[1].split("\n## ", 1)[0]
    assert "**Recent messages:**\n" in hot
    assert hot.rstrip().endswith("- [user] Yes! Let's keep going, this is awesome 🎯")  # the last said, whole
    assert "- 10:00 Compaction: 8 of 13 messages compacted\n" in boot["markdown"]  # the counts it carries

    try:
        await _live_malformed_duplicate_and_replay(js, nats_url, tmp_path, wait_for)
    finally:
        stop(pipelines.pop())


async def _live_malformed_duplicate_and_replay(js: JetStreamContext, url: str, tmp: Path, wait_for: Any) -> None:
    # 4. a second agent's events while Cortex runs are picked up live
    viola = {"agentId": "viola", "sessionKey": "viola:telegram:12345", "channelId": "telegram"}
    drive(url, [{"hook": "session_start", "event": {"sessionId": "v1"}, "ctx": viola, "at": 1771322400000},
                {"hook": "message_received", "ctx": viola, "at": 1771322460000, "event": {
                    "from": "matrix:@albert:example.org", "content": "We decided to ship the beta on Monday."}}],
          tmp, "viola")

    async def viola_decided() -> bool:
        raw = (await snapshot_docs(js, ["viola"]))["cortex_decisions/viola"]
        return raw is not None and b"beta on Monday" in raw

    await wait_for(viola_decided, within=60)

    # 5. a malformed store message is dead-lettered with its reason, and the next one applies
    await js.publish("openclaw.events.main.msg_in", json.dumps(
        {"ts": 1771323000000, "agent": "main", "session": "main:s-demo-2", "type": "msg.in",
         "payload": {"from": "albert", "content": "lost?"}}).encode())
    drive(url, [{"hook": "message_received", "at": 1771323060000,
                 "ctx": {"agentId": "main", "sessionKey": "main:s-demo-2", "channelId": "webchat"},
                 "event": {"from": "albert", "content": "We decided to use Grafana for the dashboards."}}],
          tmp, "after-malformed")

    async def grafana_decided() -> bool:
        raw = (await snapshot_docs(js, ["main"]))["cortex_decisions/main"]
        return raw is not None and b"Grafana" in raw

    await wait_for(grafana_decided, within=60)
    dlq = await js.stream_info(DLQ_STREAM)
    letters = [await js.get_msg(DLQ_STREAM, seq) for seq in range(dlq.state.first_seq, dlq.state.last_seq + 1)]
    assert letters and all((m.headers or {}).get("Cortex-Error") == "OpenClaw event without an id" for m in letters)
    assert {(m.headers or {}).get("Cortex-Original-Subject") for m in letters} == {"cortex.openclaw.main.msg_in"}

    # 6. the same store message seen twice changes nothing
    await wait_for(lambda: drained(js), within=60)
    before = await snapshot_docs(js, ["main", "viola"])
    for subject, data in (await store_messages(js))[1:7]:  # a session start, a message, a run and its calls
        await js.publish(subject, data)
    await wait_for(lambda: copied(js), within=30)
    await wait_for(lambda: drained(js), within=60)
    assert await snapshot_docs(js, ["main", "viola"]) == before

    # 7. a replay after the backfill reproduces every document byte for byte
    replay = await asyncio.to_thread(cortex, "replay", url=url, CORTEX_RUNTIME_LEASE_TTL_S="2",
                                     CORTEX_BOOT_WAIT_MS="10000", CORTEX_EMBEDDER="hashing",
                                     CORTEX_DATA_DIR=str(tmp / "replay-data"))
    assert replay.returncode == 0, replay.stderr
    await wait_for(lambda: drained(js), within=120)
    after = await snapshot_docs(js, ["main", "viola"])
    assert after == before, differences(before, after)


def test_the_driver_reports_what_the_plugin_published(plugin_installed: None, nats_url: str, tmp_path: Path) -> None:
    """The stand-in API is faithful enough: hooks in, acknowledged publishes out, in order."""
    ctx = {"agentId": "main", "sessionKey": "main:webchat:albert", "channelId": "webchat"}
    report = drive(nats_url, [{"hook": "message_received", "ctx": ctx, "event": {"from": "a", "content": "x"}},
                              {"hook": "agent_end", "ctx": ctx, "event": {"success": False, "error": "boom"}}],
                   tmp_path, "probe")
    assert (report["fired"], report["acknowledged"]) == (2, 3)  # agent_end failed: run.end and run.error

    async def subjects() -> list[str]:
        nc = await nats.connect(nats_url)
        try:
            return [s for s, _ in await store_messages(nc.jetstream())]
        finally:
            await nc.close()

    assert asyncio.run(subjects()) == [  # acknowledged by the stream: stored, in the order fired
        "openclaw.events.main.msg_in", "openclaw.events.main.run_end", "openclaw.events.main.run_error"]
