"""The issue's "Done when" (issue 21), through a real nats-server and the workers in-process:
a deploy tool fails four times the same way, the agent claims success, the user corrects it
and gives up, the run errors, a long task is started and not finished. The findings (doom
loop, hallucination, correction, dissatisfaction) and the pending operation reach the
next session-start BOOTSTRAP; the task's later result is a ``[NEW RESULT]`` once, then
seen. Secrets in the tool error reach no document. The API, the CLI and the MCP tool's
rendering read the same findings."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest

from schemas.api import OperationsReply, TracesReply
from schemas.docs import BootDoc, OperationsDoc, TraceDoc
from shared.config import load_settings
from shared.kv import kv_read
from shared.names import EVENTS_STREAM
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.cli import build_parser
from workers.cli.query import cmd_traces
from workers.registry import all_specs, consumer_specs

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
AGENT = "ada"
NAMES = ("traces", "threads", "decisions", "boot", "api")
SECRET = "s3cr3tPassw0rd"
Wait = Callable[..., Awaitable[Any]]


class Events:
    """The agent's events, ten seconds apart (``pause`` moves the clock)."""

    def __init__(self) -> None:
        self.t = T0
        self.n = 0
        self.out: list[tuple[str, dict[str, Any]]] = []

    def _add(self, family: str, kind: str, session: str, **fields: Any) -> None:
        self.n += 1
        self.t += timedelta(seconds=10)
        body = {"id": f"e{self.n}", "agent": AGENT, "session": session,
                "ts": self.t.strftime("%Y-%m-%dT%H:%M:%SZ"), **fields}
        self.out.append((f"cortex.{family}.{AGENT}.{kind}", body))

    def session(self, kind: str, session: str) -> None:
        self._add("session", kind, session)

    def user(self, session: str, text: str) -> None:
        self._add("msg", "received", session, role="user", content=text)

    def agent(self, session: str, text: str) -> None:
        self._add("msg", "sent", session, role="assistant", content=text)

    def run(self, kind: str, session: str, **fields: Any) -> None:
        self._add("run", kind, session, **fields)

    def tool(self, kind: str, session: str, tool: str, call_id: str, **fields: Any) -> None:
        self._add("tool", kind, session, tool=tool, call_id=call_id, **fields)

    def pause(self, minutes: int) -> None:
        self.t += timedelta(minutes=minutes)

    async def publish(self, js: Any) -> None:
        for subject, body in self.out:
            await js.publish(subject, msgspec.json.encode(body), headers={"Nats-Msg-Id": body["id"]})
        self.out.clear()


def the_story(ev: Events) -> None:
    ev.session("start", "s1")
    ev.user("s1", "Deploy release 3.2 to production please.")
    ev.run("start", "s1")
    for i in range(4):
        ev.tool("call", "s1", "deploy", f"d{i}", params={"release": "3.2", "env": "prod"})
        ev.tool("result", "s1", "deploy", f"d{i}",
                error=f"connection refused: postgres://deploy:{SECRET}@db-primary:5432/app")
    ev.agent("s1", "Done ✅ release 3.2 is deployed to production.")
    ev.run("end", "s1", success=True)
    ev.user("s1", "No, that's wrong, the deploy failed! Forget it, this is useless.")
    ev.run("start", "s1")
    ev.tool("call", "s1", "sessions_spawn", "spawn-1", params={"task": "rebuild the search index"})
    ev.run("error", "s1", error="model overloaded")
    ev.session("end", "s1")


async def test_failures_and_a_pending_task_reach_the_next_briefing_and_a_late_result_is_shown_once(
    nats_url: str, tmp_path: Path, wait_for: Wait, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_BOOT_WAIT_MS": "2000", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, [all_specs()[n] for n in NAMES], __version__)
    task = asyncio.create_task(host.run())
    ev = Events()

    async def drained() -> bool:
        for name in NAMES[:-1]:
            info = await js.consumer_info(EVENTS_STREAM, name)
            if info.num_pending or info.num_ack_pending:
                return False
        return True

    async def doc(bucket: str, kind: type[Any]) -> Any:
        raw, _ = await kv_read(await js.key_value(bucket), AGENT)
        return msgspec.json.decode(raw, type=kind) if raw is not None else None

    async def briefing_of(session: str) -> BootDoc:
        async def made() -> BootDoc | None:
            boot = await doc("cortex_boot", BootDoc)
            return boot if boot is not None and boot.session == session and boot.trigger == "session_start" else None

        return await wait_for(made, within=60)

    try:
        the_story(ev)
        ev.pause(5)
        ev.session("start", "s2")
        await ev.publish(js)
        await wait_for(drained, within=60)

        traces: TraceDoc = await doc("cortex_traces", TraceDoc)
        assert {f.signal for f in traces.findings} == {"doom_loop", "hallucination", "correction", "dissatisfied"}
        loop = next(f for f in traces.findings if f.signal == "doom_loop")
        assert (loop.count, loop.tool, loop.severity) == (4, "deploy", "high")

        second = (await briefing_of("s2")).markdown
        assert "[PENDING] `sessions_spawn` “rebuild the search index” (started" in second  # what it was asked
        lessons = second.split("Lessons from Recent Failures", 1)[1]
        for line in ("`deploy` failed 4× in a row", "Success was claimed after `deploy` failed",
                     # the claim, the correction of it and the frustrated end: one incident, one line
                     "“Done ✅ release 3.2 is deployed to production.”, and the user corrected you and ended the "
                     "session frustrated: “No, that's wrong, the deploy failed! Forget it, this is useless.” — "
                     "report failures as such"):
            assert line in lessons, line
        assert lessons.count("Forget it, this is useless") == 1
        assert lessons.count("db-primary:5432") == 1 and "(the same error)" in lessons  # the error named once
        assert second.index("Pending Operations") < second.index("Lessons from Recent Failures")

        # the same findings through the API, the CLI (newest first) and the pending operation
        raw = (await nc.request(f"cortex.api.traces.{AGENT}", b'{"severity": "high"}', timeout=5)).data
        high = msgspec.json.decode(raw, type=TracesReply).findings
        assert {f.signal for f in high} == {"doom_loop", "hallucination", "dissatisfied"}
        raw = (await nc.request(f"cortex.api.operations.{AGENT}", b'{"unread": true}', timeout=5)).data
        assert [op.tool for op in msgspec.json.decode(raw, type=OperationsReply).operations] == ["sessions_spawn"]
        assert await cmd_traces(build_parser().parse_args(["traces", AGENT, "--nats-url", nats_url]),
                                 settings) == 0
        printed = capsys.readouterr().out
        assert "hallucination" in printed and "[PENDING]" in printed and "sessions_spawn" in printed

        # the task's result arrives after its session ended: a new result in the next briefing, once
        ev.tool("result", "s2", "sessions_spawn", "spawn-1", result="search index rebuilt: 1200 documents")
        ev.session("end", "s2")
        ev.session("start", "s3")
        await ev.publish(js)
        third = (await briefing_of("s3")).markdown
        assert "[NEW RESULT] `sessions_spawn`" in third and "search index rebuilt: 1200 documents" in third
        assert "[PENDING]" not in third

        async def acknowledged() -> bool:
            ops: OperationsDoc = await doc("cortex_operations", OperationsDoc)
            return [(op.status, op.seen) for op in ops.operations if op.tool == "sessions_spawn"] == [
                ("completed", True)]

        await wait_for(acknowledged, within=30)
        ev.session("end", "s3")
        ev.session("start", "s4")
        await ev.publish(js)
        fourth = (await briefing_of("s4")).markdown
        assert "sessions_spawn" not in fourth.split("Lessons from Recent Failures")[0]
        assert "Pending Operations" not in fourth

        stored = b"".join([msgspec.json.encode(await doc(b, t)) for b, t in (
            ("cortex_traces", TraceDoc), ("cortex_operations", OperationsDoc), ("cortex_boot", BootDoc))])
        assert SECRET.encode() not in stored and b"[REDACTED]" in stored
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()
