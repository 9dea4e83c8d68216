"""MCP tool latency: each tool called through ``cortex mcp`` (a subprocess on stdio, driven by
an MCP SDK's own client, as an agent host would: the Python SDK's in this process, then the
TypeScript SDK's in Node, as a Node host such as OpenClaw runs it) against the api phase's full-size state,
each call beside the very request the tool makes, sent directly on NATS. The difference is
what the MCP layer adds: the client's request and its check of the result against the
tool's output schema, the pipe both ways, the server's argument check, rendering and
serialisation.

Every call starts on a pipeline at rest (each consumer caught up): a recall publishes its
access feedback, a remember or forget is applied by the recall worker, and that work would
otherwise land on whichever call comes next (on two cores the MCP call's two extra process
hops wait behind it), so it would be charged to the MCP layer half the time and inflate it.

``cortex_remember`` and ``cortex_forget`` are compared with a direct JetStream publish of the
same FeedbackEvent, stamped with the agent's latest event time (asked of the status API once:
the tool asks it again after each call, off the call's path); ``cortex_recall`` runs after the
remembered memory is findable.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

import msgspec

from schemas.api import StatusReply
from schemas.events import FeedbackEvent
from shared.feedback import publish_feedback, status_time
from shared.names import api_subject
from workers.bench.apilatency import AGENT
from workers.bench.fullstate import write_full_state
from workers.bench.mcpreference import TOOL
from workers.bench.procs import child_pid, cpu_seconds, worker_env
from workers.bench.results import BareCalls, McpResult, ToolLatency
from workers.bench.session import BenchError, Session
from workers.bench.stats import summarize
from workers.mcp.tools import TOOLS, Tool

WARM_UP: Final = 5
SETTLE_LIMIT_S: Final = 10.0  # before each call, the previous call's aftermath (access feedback, say)
DRAIN_LIMIT_S: Final = 60.0  # before each tool, the pipeline's aftermath of the previous one (a remember embedded)
NODE_HOST: Final = Path(__file__).parent / "node"  # the TypeScript host: its script and locked package
NPM_LIMIT_S: Final = 300.0
NODE_CALL_LIMIT_S: Final = 60.0
NODE_LINE_LIMIT: Final = 64 * 1024 * 1024  # one answer a line: a recall's structured content, say
REMEMBERED: Final = "The bench's office plant is called Gerald."
# (tool, arguments), in the order measured: the remember comes before the recall that finds it.
CALLS: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    ("cortex_threads", {"status": "open"}),
    ("cortex_decisions", {}),
    ("cortex_commitments", {"status": "open"}),
    ("cortex_search", {"query": "auth migration token rotation"}),
    ("cortex_stats", {}),
    ("cortex_boot", {}),
    ("cortex_remember", {"content": REMEMBERED}),
    ("cortex_recall", {"query": "What is the office plant called?"}),
    ("cortex_forget", {"id": "00000000-0000-0000-0000-000000000000"}),
)
_BY_NAME: Final = {tool.name: tool for tool in TOOLS}

Direct = Callable[[], Awaitable[None]]


def direct_call(session: Session, tool: Tool, arguments: dict[str, Any]) -> Direct:
    """The tool's own NATS round trip, without MCP: its API request, or its feedback publish."""
    if tool.service is not None:
        subject = api_subject(session.prefix, tool.service, AGENT)
        body = msgspec.json.encode(msgspec.convert(arguments, tool.args))

        async def request() -> None:
            await session.nc.request(subject, body, timeout=10.0)

        return request
    kind = tool.feedback
    if kind is None:
        raise BenchError(f"{tool.name} has neither an API nor a feedback kind to compare with")

    status = api_subject(session.prefix, "status", AGENT)
    known: list[datetime] = []  # the agent's time, asked once: the tool asks it off its calls' path

    async def publish() -> None:  # as the tool does: stamped with the agent's latest event time applied
        value = {"content": arguments["content"]} if kind == "remember" else None
        if not known:
            known.append(status_time(msgspec.json.decode(
                (await session.nc.request(status, b"{}", timeout=10.0)).data, type=StatusReply)))
        event = FeedbackEvent(id=f"bench-{uuid.uuid4().hex}", agent=AGENT, ts=known[0], kind=kind,  # type: ignore[arg-type]
                              target=arguments.get("id"), value=value, actor="bench")
        await publish_feedback(session.js, session.prefix, event)

    return publish


class Answer(msgspec.Struct, kw_only=True):
    """One ``tools/call`` as a host saw it: its time in the host, and its result."""

    seconds: float
    is_error: bool
    text: str = ""  # a tool error's sentence
    structured: dict[str, Any] | None = None  # when asked for


class Host(Protocol):
    """An MCP host's client driving ``cortex mcp`` over stdio."""

    server_pid: int | None

    async def call(self, name: str, arguments: dict[str, Any], *, structured: bool = False) -> Answer: ...

    def client_cpu_s(self) -> float:
        """CPU seconds the client has spent on its calls so far."""
        ...


class PythonHost:
    """The MCP SDK's own Python client (``mcp.Client`` on stdio), in this process."""

    def __init__(self, client: Any, server_pid: int | None) -> None:
        self.client = client
        self.server_pid = server_pid
        self._cpu_s = 0.0

    async def call(self, name: str, arguments: dict[str, Any], *, structured: bool = False) -> Answer:
        started, spent = time.perf_counter(), time.process_time()
        result = await self.client.call_tool(name, arguments)
        took = time.perf_counter() - started
        self._cpu_s += time.process_time() - spent
        text = str(getattr(result.content[0], "text", ""))[:300] if result.is_error and result.content else ""
        return Answer(seconds=took, is_error=bool(result.is_error), text=text,
                      structured=result.structured_content if structured else None)

    def client_cpu_s(self) -> float:
        return self._cpu_s


class NodeHost:
    """The official TypeScript SDK's client (``workers/bench/node/mcp_host.mjs``) in a Node
    process, as a Node agent host (OpenClaw's) runs it; the time of each call is taken inside
    that process, around the SDK's ``callTool``."""

    def __init__(self, proc: asyncio.subprocess.Process, server_pid: int | None) -> None:
        self.proc = proc
        self.server_pid = server_pid

    async def call(self, name: str, arguments: dict[str, Any], *, structured: bool = False) -> Answer:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(msgspec.json.encode({"name": name, "arguments": arguments, "structured": structured})
                              + b"\n")
        await self.proc.stdin.drain()
        line = await asyncio.wait_for(self.proc.stdout.readline(), NODE_CALL_LIMIT_S)
        if not line:
            raise BenchError(f"the TypeScript MCP host ended (exit {await self.proc.wait()}) during {name}")
        return _node_decode(line, Answer)

    def client_cpu_s(self) -> float:
        return cpu_seconds(self.proc.pid) or 0.0


class _NodeReady(msgspec.Struct, kw_only=True):
    ready: bool
    sdk: str
    node: str
    server_pid: int | None = None


NodeLine = TypeVar("NodeLine", _NodeReady, Answer)


def _node_decode(line: bytes, kind: type[NodeLine]) -> NodeLine:
    try:
        return msgspec.json.decode(line, type=kind)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BenchError(f"the TypeScript MCP host wrote {line[:200]!r}: {exc}") from exc


async def _recallable(host: Host, limit_s: float = 30.0) -> bool:
    """Until the remembered memory is found (the recall worker applied the remember)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        answer = await host.call("cortex_recall", {"query": "What is the office plant called?"}, structured=True)
        memories = (answer.structured or {}).get("memories", [])
        if not answer.is_error and any(REMEMBERED in m["content"] for m in memories):
            return True
        await asyncio.sleep(0.2)
    return False


def _server_cpu(pid: int | None) -> float | None:
    return cpu_seconds(pid) if pid is not None else None


async def _settle(session: Session, limit_s: float = SETTLE_LIMIT_S) -> dict[str, int]:
    """Wait until the pipeline is at rest (every consumer caught up), at most ``limit_s``; what
    is still pending then (empty: at rest). Every measured call starts so: a call's own
    aftermath (the recall API's access feedback, a remember embedded, a forget applied) is
    applied before the next call, so neither kind of call pays for the other's."""
    _, pending = await session.drain_bounded(session.pipeline_consumers, limit_s, session.pipeline)
    return pending


async def _measure(session: Session, host: Host, name: str, arguments: dict[str, Any],
                   result: McpResult) -> ToolLatency:
    tool = _BY_NAME[name]
    direct = direct_call(session, tool, arguments)
    nats_cpu_s = 0.0  # this process's CPU seconds on the direct calls

    async def via_nats() -> float:
        nonlocal nats_cpu_s
        started, spent = time.perf_counter(), time.process_time()
        await direct()
        nats_cpu_s += time.process_time() - spent
        return time.perf_counter() - started

    async def via_mcp() -> float | None:
        answer = await host.call(name, arguments)
        if answer.is_error:
            result.errors[name] = answer.text
            return None
        return answer.seconds

    unsettled = 0  # calls that started before the pipeline was at rest (after SETTLE_LIMIT_S)

    async def at_rest() -> None:
        nonlocal unsettled
        if await _settle(session):
            unsettled += 1

    mcp_s: list[float] = []
    nats_s: list[float] = []
    failures = 0
    server_before, client_before = _server_cpu(host.server_pid), host.client_cpu_s()
    warm_up = 1 if session.config.quick else WARM_UP
    for i in range(warm_up + session.config.mcp_calls):
        # each order half the time: the call made while the other one's aftermath still runs
        # (the recall worker embedding a remember, say) is not always the MCP one
        if i % 2:
            await at_rest()
            mcp_took = await via_mcp()
            await at_rest()
            nats_took = await via_nats()
        else:
            await at_rest()
            nats_took = await via_nats()
            await at_rest()
            mcp_took = await via_mcp()
        if mcp_took is None:
            failures += 1
        elif i >= warm_up:
            mcp_s.append(mcp_took)
            nats_s.append(nats_took)
    server_after, client_after = _server_cpu(host.server_pid), host.client_cpu_s()
    if unsettled:
        session.progress(f"[mcp] {name}: the pipeline was still busy after {SETTLE_LIMIT_S:g}s before "
                         f"{unsettled} calls")
    calls = warm_up + session.config.mcp_calls
    mcp, nats = summarize(mcp_s, lost=failures), summarize(nats_s)
    return ToolLatency(
        mcp=mcp, direct=nats, added_p50_ms=_minus(mcp.p50_ms, nats.p50_ms),
        added_p99_ms=_minus(mcp.p99_ms, nats.p99_ms),
        server_cpu_ms=None if server_before is None or server_after is None
        else round((server_after - server_before) / calls * 1000, 3),
        client_cpu_ms=round((client_after - client_before - nats_cpu_s) / calls * 1000, 3))


# no id: Cortex's argument check answers, nothing else runs
FLOOR_CALL: Final[tuple[str, dict[str, Any]]] = ("cortex_forget", {})
# the SDK's own server, its tool's one argument left out: the SDK's argument check answers
REFERENCE_COMMAND: Final = (sys.executable, "-m", "workers.bench.mcpreference")
REFERENCE_CALL: Final[tuple[str, dict[str, Any]]] = (TOOL, {})


async def _bare(session: Session, host: Host, call: tuple[str, dict[str, Any]], what: str) -> BareCalls:
    """``tools/call``s that the server refuses at its argument check — no NATS, a one-line result
    (an error, so the client skips its output-schema check too): for ``cortex mcp``, the floor
    under every tool's added time (a tool adds its result's size on both ends and Cortex's work
    on the reply); for the SDK's own server, the yardstick.

    Measured twice: back to back (both processes busy, the layer's own cost), and each call
    started as every tool call is, after the pipeline is found at rest — the server process
    idle meanwhile. The difference is the machine's cost of waking an idle process, which
    a tool call pays for the MCP server's hop and these calls show without Cortex code."""
    name, arguments = call
    warm_up = 1 if session.config.quick else WARM_UP
    for _ in range(warm_up):
        await host.call(name, arguments)
    took: list[float] = []
    server_before, client_before = _server_cpu(host.server_pid), host.client_cpu_s()
    for _ in range(session.config.mcp_calls):
        answer = await host.call(name, arguments)
        took.append(answer.seconds)
        if not answer.is_error:
            raise BenchError(f"{name} {arguments} was answered, not refused: {what} is not measured on a refusal")
    server_after, client_after = _server_cpu(host.server_pid), host.client_cpu_s()
    calls = session.config.mcp_calls
    bare = BareCalls(back_to_back=summarize(took),
                     client_cpu_ms=round((client_after - client_before) / calls * 1000, 3))
    if server_before is not None and server_after is not None:
        bare.server_cpu_ms = round((server_after - server_before) / calls * 1000, 3)
    # the same call, each started as the tools' calls start: after the pipeline is found at rest
    # (the server process idle meanwhile, as between an agent's tool calls)
    rested: list[float] = []
    for _ in range(session.config.mcp_calls):
        await _settle(session)
        rested.append((await host.call(name, arguments)).seconds)
    bare.at_rest = summarize(rested)
    return bare


def _bare_progress(session: Session, what: str, bare: BareCalls) -> None:
    session.progress(f"[mcp] {what}: p50 {bare.back_to_back.p50_ms} ms, p99 {bare.back_to_back.p99_ms} ms back to "
                     f"back, p50 {bare.at_rest.p50_ms} ms, p99 {bare.at_rest.p99_ms} ms each after the pipeline is "
                     f"found at rest; CPU per call: server {bare.server_cpu_ms} ms, client {bare.client_cpu_ms} ms")


async def _reference(session: Session, host: Host, result: McpResult) -> None:
    """The same refused calls, from the same client, to the SDK's own server (no Cortex code)."""
    from importlib.metadata import version

    result.reference_server = f"the MCP SDK's MCPServer (mcp {version('mcp')}), one tool, its stdio transport"
    result.reference = await _bare(session, host, REFERENCE_CALL, "the reference")
    _bare_progress(session, f"{result.client}, {result.reference_server}, a call refused at the SDK's argument check",
                   result.reference)


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a - b, 3)


async def _measure_all(session: Session, host: Host, result: McpResult) -> McpResult:
    session.progress(f"[mcp] cortex mcp --agent {AGENT} (stdio) from the {result.client}: {len(CALLS)} tools × "
                     f"{session.config.mcp_calls} calls, each beside its direct NATS round trip")
    result.floor = await _bare(session, host, FLOOR_CALL, "the floor")
    _bare_progress(session, f"{result.client}: floor (a tools/call answered without NATS)", result.floor)
    for name, arguments in CALLS:
        # each tool measured on a pipeline at rest: the previous tool's remembers and forgets
        # (the recall worker embedding them, the documents they change) are not on its clock
        if pending := await _settle(session, DRAIN_LIMIT_S):
            session.progress("[mcp] still pending after "
                             f"{DRAIN_LIMIT_S:g}s: " + ", ".join(f"{c} {n}" for c, n in sorted(pending.items())))
        # the quick smoke run does not wait for the recall worker: its recall may find nothing
        if name == "cortex_recall" and not session.config.quick and not await _recallable(host):
            result.errors[name] = "the remembered memory was not recalled within 30 s"
        latency = await _measure(session, host, name, arguments, result)
        result.tools[name] = latency
        session.progress(f"[mcp] {name}: p50 {latency.mcp.p50_ms} ms (+{latency.added_p50_ms} ms over NATS), "
                         f"p99 {latency.mcp.p99_ms} ms (+{latency.added_p99_ms} ms); CPU per call: server "
                         f"{latency.server_cpu_ms} ms, client +{latency.client_cpu_ms} ms")
    return result


def _server_command() -> list[str]:
    return [sys.executable, "-m", "workers", "mcp", "--agent", AGENT]


async def run(session: Session, state_written: bool) -> McpResult:
    """The tools from the MCP SDK's own Python client, as a Python agent host runs it."""
    from importlib.metadata import version

    from mcp import Client, StdioServerParameters

    if not state_written:
        await write_full_state(session.js, AGENT)
    command = _server_command()
    env = worker_env(os.environ, session.url, str(session.workdir / "mcp-data"))
    server = StdioServerParameters(command=command[0], args=command[1:], env=env)
    reference = StdioServerParameters(command=REFERENCE_COMMAND[0], args=list(REFERENCE_COMMAND[1:]), env=env)
    result = McpResult(agent=AGENT, transport="stdio", client=f"Python SDK's client (mcp {version('mcp')})")
    async with Client(reference, read_timeout_seconds=30) as client:
        await _reference(session, PythonHost(client, child_pid(REFERENCE_COMMAND[-1])), result)
    async with Client(server, read_timeout_seconds=30) as client:
        return await _measure_all(session, PythonHost(client, child_pid(f"mcp --agent {AGENT}")), result)


async def _npm_ci(npm: str, home: Path) -> str | None:
    """Install the host's locked dependencies; None, or why it could not."""
    proc = await asyncio.create_subprocess_exec(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", cwd=home,
                                                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        _, err = await asyncio.wait_for(proc.communicate(), NPM_LIMIT_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return f"`npm ci` did not finish within {NPM_LIMIT_S:g} s"
    if proc.returncode:
        last = next((line for line in reversed(err.decode(errors="replace").splitlines()) if line.strip()), "")
        return f"`npm ci` failed (exit {proc.returncode}): {last[:200]}"
    return None


async def run_node(session: Session, state_written: bool) -> McpResult:
    """The tools from the official TypeScript SDK's client in Node, as a Node agent host
    (OpenClaw's) runs it; skipped, with the reason, without node and npm or the package."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return McpResult(skipped="the TypeScript SDK's client needs node and npm, and they are not on PATH")
    if not state_written:
        await write_full_state(session.js, AGENT)
    home = session.workdir / "mcp-node-host"
    shutil.copytree(NODE_HOST, home, dirs_exist_ok=True, ignore=shutil.ignore_patterns("node_modules"))
    session.progress("[mcp] installing the TypeScript SDK's client (npm ci)")
    if (why := await _npm_ci(npm, home)) is not None:
        return McpResult(skipped=f"the TypeScript SDK's client is not installed: {why}")
    result = McpResult(agent=AGENT, transport="stdio")
    async with _node_host(session, node, home, list(REFERENCE_COMMAND), "mcp-node-reference") as (host, ready):
        result.client = f"TypeScript SDK's client (@modelcontextprotocol/sdk {ready.sdk}, Node {ready.node})"
        await _reference(session, host, result)
    async with _node_host(session, node, home, _server_command(), "mcp-node-host") as (host, _):
        return await _measure_all(session, host, result)


@asynccontextmanager
async def _node_host(session: Session, node: str, home: Path, command: list[str],
                     name: str) -> AsyncIterator[tuple[NodeHost, _NodeReady]]:
    """The Node host driving ``command``, ready (its client connected, the tools listed); its
    stderr in ``<work dir>/<name>.log``."""
    env = worker_env(os.environ, session.url, str(session.workdir / "mcp-data"))
    log_path = session.workdir / f"{name}.log"
    with log_path.open("wb") as log:
        proc = await asyncio.create_subprocess_exec(node, str(home / "mcp_host.mjs"), *command, env=env,
                                                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                    stderr=log, limit=NODE_LINE_LIMIT)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        line = await asyncio.wait_for(proc.stdout.readline(), NODE_CALL_LIMIT_S)
        if not line:
            raise BenchError(f"the TypeScript MCP host ended (exit {await proc.wait()}) before it was ready; "
                             f"see {log_path}")
        ready = _node_decode(line, _NodeReady)
        yield NodeHost(proc, ready.server_pid), ready
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), NODE_CALL_LIMIT_S)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
