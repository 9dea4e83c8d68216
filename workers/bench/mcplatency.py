"""MCP tool latency: each tool called through ``cortex mcp`` (a subprocess on stdio, driven by
the MCP SDK's own client, as an agent host would) against the api phase's full-size state,
each call beside the very request the tool makes, sent directly on NATS. The difference is
what the MCP layer adds: the client's request and its check of the result against the
tool's output schema, the pipe both ways, the server's argument check, rendering and
serialisation.

Every call starts on a pipeline at rest (each consumer caught up): a recall publishes its
access feedback, a remember or forget is applied by the recall worker, and that work would
otherwise land on whichever call comes next (on two cores the MCP call's two extra process
hops wait behind it), so it would be charged to the MCP layer half the time and inflate it.

``cortex_remember`` and ``cortex_forget`` are compared with a direct JetStream publish of
the same FeedbackEvent; ``cortex_recall`` runs after the remembered memory is findable.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Final

import msgspec

from schemas.events import FeedbackEvent
from shared.feedback import publish_feedback
from shared.names import api_subject
from workers.bench.apilatency import AGENT
from workers.bench.fullstate import write_full_state
from workers.bench.procs import child_pid, cpu_seconds, worker_env
from workers.bench.results import McpResult, ToolLatency
from workers.bench.session import BenchError, Session
from workers.bench.stats import summarize
from workers.mcp.tools import TOOLS, Tool

WARM_UP: Final = 5
SETTLE_LIMIT_S: Final = 10.0  # before each call, the previous call's aftermath (access feedback, say)
DRAIN_LIMIT_S: Final = 60.0  # before each tool, the pipeline's aftermath of the previous one (a remember embedded)
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

    async def publish() -> None:
        value = {"content": arguments["content"]} if kind == "remember" else None
        event = FeedbackEvent(id=f"bench-{uuid.uuid4().hex}", agent=AGENT, ts=datetime.now(UTC), kind=kind,  # type: ignore[arg-type]
                              target=arguments.get("id"), value=value, actor="bench")
        await publish_feedback(session.js, session.prefix, event)

    return publish


async def _recallable(client: Any, limit_s: float = 30.0) -> bool:
    """Until the remembered memory is found (the recall worker applied the remember)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        result = await client.call_tool("cortex_recall", {"query": "What is the office plant called?"})
        if not result.is_error and any(REMEMBERED in m["content"] for m in result.structured_content["memories"]):
            return True
        await asyncio.sleep(0.2)
    return False


def _server_cpu(pid: int | None) -> float | None:
    return cpu_seconds(pid) if pid is not None else None


async def _at_rest(session: Session) -> bool:
    """Wait until the pipeline is at rest (every consumer caught up; False if it is not after
    ``SETTLE_LIMIT_S``). Every measured call starts so: a call's own aftermath (the recall
    API's access feedback, a remember embedded, a forget applied) is applied before the next
    call, so neither kind of call pays for the other's."""
    _, pending = await session.drain_bounded(session.pipeline_consumers, SETTLE_LIMIT_S, session.pipeline)
    return not pending


async def _measure(session: Session, client: Any, name: str, arguments: dict[str, Any],
                   result: McpResult, server_pid: int | None) -> ToolLatency:
    tool = _BY_NAME[name]
    direct = direct_call(session, tool, arguments)
    client_cpu = {"mcp": 0.0, "nats": 0.0}  # this process's CPU seconds on each kind of call

    async def via_nats() -> float:
        started, spent = time.perf_counter(), time.process_time()
        await direct()
        client_cpu["nats"] += time.process_time() - spent
        return time.perf_counter() - started

    async def via_mcp() -> float | None:
        started, spent = time.perf_counter(), time.process_time()
        answer = await client.call_tool(name, arguments)
        took = time.perf_counter() - started
        client_cpu["mcp"] += time.process_time() - spent
        if answer.is_error:
            result.errors[name] = str(answer.content[0].text)[:300]
            return None
        return took

    unsettled = 0  # calls that started before the pipeline was at rest (after SETTLE_LIMIT_S)

    async def at_rest() -> None:
        nonlocal unsettled
        if not await _at_rest(session):
            unsettled += 1

    mcp_s: list[float] = []
    nats_s: list[float] = []
    failures = 0
    server_before = _server_cpu(server_pid)
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
    server_after = _server_cpu(server_pid)
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
        client_cpu_ms=round((client_cpu["mcp"] - client_cpu["nats"]) / calls * 1000, 3))


# no id: Cortex's argument check answers, nothing else runs
FLOOR_CALL: Final[tuple[str, dict[str, Any]]] = ("cortex_forget", {})


async def _floor(session: Session, client: Any, result: McpResult, server_pid: int | None) -> None:
    """The floor under every tool's added time: a ``tools/call`` through the SDK's client, both
    pipes and the SDK's server that Cortex answers at its argument check — no NATS, a
    one-line result (an error, so the client skips its output-schema check too). What a tool
    adds beyond it is its result's size on both ends and Cortex's work on the reply.

    Measured twice: back to back (both processes busy, the layer's own cost), and each call
    started as every tool call is, after the pipeline is found at rest — the server process
    idle meanwhile. The difference is the machine's cost of waking an idle process, which
    a tool call pays for the MCP server's hop and the floor shows without Cortex code."""
    name, arguments = FLOOR_CALL
    warm_up = 1 if session.config.quick else WARM_UP
    for _ in range(warm_up):
        await client.call_tool(name, arguments)
    took: list[float] = []
    server_before, spent = _server_cpu(server_pid), time.process_time()
    for _ in range(session.config.mcp_calls):
        started = time.perf_counter()
        answer = await client.call_tool(name, arguments)
        took.append(time.perf_counter() - started)
        if not answer.is_error:
            raise BenchError(f"{name} without an id was answered, not refused: the floor is not a floor")
    client_s, server_after = time.process_time() - spent, _server_cpu(server_pid)
    calls = session.config.mcp_calls
    result.floor = summarize(took)
    result.floor_client_cpu_ms = round(client_s / calls * 1000, 3)
    if server_before is not None and server_after is not None:
        result.floor_server_cpu_ms = round((server_after - server_before) / calls * 1000, 3)
    # the same call, each started as the tools' calls start: after the pipeline is found at rest
    # (the server process idle meanwhile, as between an agent's tool calls)
    rested: list[float] = []
    for _ in range(session.config.mcp_calls):
        await _at_rest(session)
        started = time.perf_counter()
        await client.call_tool(name, arguments)
        rested.append(time.perf_counter() - started)
    result.floor_at_rest = summarize(rested)
    session.progress(f"[mcp] floor (a tools/call answered without NATS): p50 {result.floor.p50_ms} ms, p99 "
                     f"{result.floor.p99_ms} ms back to back, p50 {result.floor_at_rest.p50_ms} ms, p99 "
                     f"{result.floor_at_rest.p99_ms} ms each after the pipeline is found at rest; CPU per call: "
                     f"server {result.floor_server_cpu_ms} ms, client {result.floor_client_cpu_ms} ms")


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a - b, 3)


async def run(session: Session, state_written: bool) -> McpResult:
    from mcp import Client, StdioServerParameters

    if not state_written:
        await write_full_state(session.js, AGENT)
    env = worker_env(os.environ, session.url, str(session.workdir / "mcp-data"))
    server = StdioServerParameters(command=sys.executable, args=["-m", "workers", "mcp", "--agent", AGENT],
                                   env=env)
    result = McpResult(agent=AGENT, transport="stdio")
    async with Client(server, read_timeout_seconds=30) as client:
        server_pid = child_pid(f"mcp --agent {AGENT}")
        session.progress(f"[mcp] cortex mcp --agent {AGENT} (stdio): {len(CALLS)} tools × "
                         f"{session.config.mcp_calls} calls, each beside its direct NATS round trip")
        await _floor(session, client, result, server_pid)
        for name, arguments in CALLS:
            # each tool measured on a pipeline at rest: the previous tool's remembers and forgets
            # (the recall worker embedding them, the documents they change) are not on its clock
            _, pending = await session.drain_bounded(session.pipeline_consumers, DRAIN_LIMIT_S, session.pipeline)
            if pending:
                session.progress("[mcp] still pending after "
                                 f"{DRAIN_LIMIT_S:g}s: " + ", ".join(f"{c} {n}" for c, n in sorted(pending.items())))
            # the quick smoke run does not wait for the recall worker: its recall may find nothing
            if name == "cortex_recall" and not session.config.quick and not await _recallable(client):
                result.errors[name] = "the remembered memory was not recalled within 30 s"
            latency = await _measure(session, client, name, arguments, result, server_pid)
            result.tools[name] = latency
            session.progress(f"[mcp] {name}: p50 {latency.mcp.p50_ms} ms (+{latency.added_p50_ms} ms over NATS), "
                             f"p99 {latency.mcp.p99_ms} ms (+{latency.added_p99_ms} ms); CPU per call: server "
                             f"{latency.server_cpu_ms} ms, client +{latency.client_cpu_ms} ms")
    return result
