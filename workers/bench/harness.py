"""One benchmark run: one nats-server (embedded, or given by URL), every phase in turn.

1. hostile input (pure cores, no server);
2. the backlog: Cortex's streams reset, the realistic backlog published once, then
   the limit (bare consume), each regex worker alone, and the two-process bare consume;
3. fairness: reset before each of its runs, one channels process, a quiet agent's
   latency alone, beside a noisy agent's burst, and the same in stream order;
4. the pipeline: reset, every worker as a process; API latency on a full-size state
   while the pipeline is idle, then freshness at each publish rate, then the capacity
   search (the highest rate the pipeline holds within its freshness budget);
5. recall: reset, one recall process indexing a backlog, then queries; then the query of
   one agent holding ``recall_scale`` memories.

Against a server given by URL the harness refuses to touch existing Cortex data unless
``--reset`` says it may.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import nats.errors
import nats.js.errors

from shared.config import Settings
from shared.connection import connect, redact_url
from shared.embedded import EmbeddedNats
from workers.bench import (
    apilatency,
    budget,
    capacity,
    fairness,
    freshness,
    hostile,
    ingest,
    limit,
    mcplatency,
    pipeline,
    pluginlatency,
    recall,
    report,
    scaleout,
    throughput,
)
from workers.bench.config import PHASES, BenchConfig
from workers.bench.events import EventSource, backlog
from workers.bench.procs import Processes, inherited_settings
from workers.bench.results import (
    ApiResult,
    CapacityResult,
    FairnessResult,
    FreshnessResult,
    IngestResult,
    LimitResult,
    McpResult,
    PluginResult,
    RecallResult,
    Report,
    ScaleoutResult,
)
from workers.bench.session import BenchError, Progress, Session

__all__ = ["BenchError", "run_bench"]

NOT_SELECTED = "not selected (--only)"
FAILED = "failed: "
# A phase that fails this way is reported as failed and the run goes on with the next one.
PHASE_ERRORS = (BenchError, nats.errors.Error, nats.js.errors.Error, TimeoutError, OSError)


def failed(session: Session, phase: str, exc: BaseException) -> str:
    reason = f"{FAILED}{str(exc) or type(exc).__name__}".splitlines()[0][:300]
    session.progress(f"[{phase}] {reason}")
    return reason


R = TypeVar("R")  # a phase's result


@contextlib.contextmanager
def _timed(rep: Report, phase: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        rep.phase_s[phase] = round(time.perf_counter() - started, 1)


@contextlib.contextmanager
def _workdir(config: BenchConfig) -> Iterator[Path]:
    if config.workdir:
        path = Path(config.workdir).expanduser().resolve()
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="cortex-bench-") as tmp:
        yield Path(tmp)


@contextlib.asynccontextmanager
async def _server(config: BenchConfig, workdir: Path) -> AsyncIterator[tuple[str, str, int | None]]:
    """(url, how to name it in the report, the server's pid when it is the embedded one)."""
    if config.nats_url:
        yield config.nats_url, redact_url(config.nats_url), None
        return
    with EmbeddedNats(str(workdir / "nats")) as server:
        yield server.url, "embedded", server.pid


def _server_version(text: str) -> str:
    """``2.15.1`` from nats-py's ``<nats server v2.15.1>``."""
    found = re.search(r"v?(\d+\.\d+\.\d+\S*?)>?$", text)
    return found.group(1) if found else report.local_server_version()


def _selected(config: BenchConfig, phase: str) -> bool:
    return phase in config.phases


async def _phase(session: Session, rep: Report, name: str, run: Callable[[], Awaitable[R]],
                 result: Callable[..., R], current: R) -> R:
    """Phase ``name``, timed, when it is selected (else ``current``): what it measured, or a
    ``result`` skipped with the reason it failed — the bench goes on with the next phase."""
    if not _selected(session.config, name):
        return current
    with _timed(rep, name):
        try:
            return await run()
        except PHASE_ERRORS as exc:
            return result(skipped=failed(session, name, exc))


async def _backlog_phases(session: Session, rep: Report) -> None:
    cfg = session.config
    if not any(_selected(cfg, p) for p in ("limit", "workers", "scaleout", "ingest")):
        return
    session.progress(f"[backlog] resetting Cortex's streams; publishing {cfg.events} events "
                     f"across {cfg.agents} agents …")
    await session.reset()
    events = backlog(cfg.events, cfg.agents, cfg.seed, session.prefix)
    with _timed(rep, "publish backlog"):
        last_seq = await session.publish_all(events)
    session.progress(f"[backlog] published in {rep.phase_s['publish backlog']:.1f}s (last seq {last_seq})")
    rep.limit = await _phase(session, rep, "limit", lambda: _limit(session, len(events)), LimitResult, rep.limit)
    if _selected(cfg, "workers"):
        with _timed(rep, "workers"):
            rep.workers = await throughput.run(session, len(events), last_seq, rep.limit.msgs_per_s)
        rep.memory.backlog = {n: w.peak_rss_mb for n, w in rep.workers.items() if w.peak_rss_mb is not None}
    rep.scaleout = await _phase(session, rep, "scaleout", lambda: scaleout.run(session, events, rep.limit),
                                ScaleoutResult, rep.scaleout)
    rep.ingest = await _phase(session, rep, "ingest", lambda: ingest.run(session, events), IngestResult, rep.ingest)


async def _fairness_phase(session: Session, rep: Report) -> None:
    rep.fairness = await _phase(session, rep, "fairness", lambda: fairness.run(session), FairnessResult, rep.fairness)


async def _limit(session: Session, events: int) -> LimitResult:
    runs, server_us = [], []
    for i in range(session.config.limit_runs):
        before = session.cpu_seconds().get("nats-server")
        rate = await limit.measure_once(session.nc, f"bench-limit-{i}", session.filters("threads"), events)
        after = session.cpu_seconds().get("nats-server")
        server = f", server CPU {(after - before) / events * 1e6:.0f} µs an event" if before and after else ""
        session.progress(f"[limit] run {i + 1}/{session.config.limit_runs}: {rate:,.0f} msgs/s{server}")
        runs.append(round(rate, 1))
        if before is not None and after is not None:
            server_us.append(round((after - before) / events * 1e6, 1))
    ordered = sorted(runs)
    return LimitResult(events=events, batch=limit.BATCH, runs_msgs_per_s=runs, msgs_per_s=ordered[len(ordered) // 2],
                       runs_server_cpu_us=server_us)


async def _agent_host_phases(session: Session, rep: Report) -> None:
    """What an agent host adds over the APIs: the MCP tools (both SDKs' clients), the OpenClaw plugin."""
    cfg = session.config
    if _selected(cfg, "mcp"):
        with _timed(rep, "mcp"):
            try:
                rep.mcp = await mcplatency.run(session, state_written=bool(rep.api.agent))
            except PHASE_ERRORS as exc:
                rep.mcp = McpResult(skipped=failed(session, "mcp", exc))
            try:
                written = bool(rep.api.agent or rep.mcp.agent)
                rep.mcp_node = await mcplatency.run_node(session, state_written=written)
            except PHASE_ERRORS as exc:
                rep.mcp_node = McpResult(skipped=failed(session, "mcp (TypeScript client)", exc))
    written = bool(rep.api.agent or rep.mcp.agent)
    rep.plugin = await _phase(session, rep, "plugin", lambda: pluginlatency.run(session, state_written=written),
                              PluginResult, rep.plugin)


async def _pipeline_phases(session: Session, rep: Report) -> None:
    cfg = session.config
    if not any(_selected(cfg, p) for p in ("freshness", "capacity", "api", "mcp", "plugin")):
        return
    with _timed(rep, "reset"):
        await session.reset()
    try:
        with _timed(rep, "pipeline start"):
            try:
                await pipeline.start(session)
                source = EventSource(cfg.agents, cfg.seed + 1, session.prefix, id_prefix="fresh")
                await freshness.warm_up(session, source)
            except PHASE_ERRORS as exc:
                reason = failed(session, "pipeline", exc)
                rep.api, rep.freshness = ApiResult(skipped=reason), FreshnessResult(skipped=reason)
                rep.capacity = CapacityResult(skipped=reason)
                rep.mcp = McpResult(skipped=reason)
                rep.plugin = PluginResult(skipped=reason)
                return
        rep.api = await _phase(session, rep, "api", lambda: apilatency.run(session), ApiResult, rep.api)
        await _agent_host_phases(session, rep)
        rep.freshness = await _phase(session, rep, "freshness", lambda: freshness.run(session, source),
                                     FreshnessResult, rep.freshness)
        rep.capacity = await _phase(session, rep, "capacity", lambda: capacity.run(session, source),
                                    CapacityResult, rep.capacity)
        rep.memory.pipeline = pipeline.peak_rss(session)
    finally:
        with _timed(rep, "pipeline stop"):
            pipeline.stop(session)


def _not_selected(config: BenchConfig) -> dict[str, Any]:
    """The result of each phase not selected, skipped as such, by the report's field of it
    (the phase's name; the MCP phase has one per client). The workers phase's result is one
    per worker: nothing to mark."""
    phases = [p for p in PHASES if p != "workers" and not _selected(config, p)]
    fields = [*phases, *(["mcp_node"] if "mcp" in phases else [])]
    result_types = {f.name: f.type for f in msgspec.structs.fields(Report)}
    return {name: result_types[name](skipped=NOT_SELECTED) for name in fields}


async def run_bench(config: BenchConfig, settings: Settings, progress: Progress) -> Report:
    started = time.perf_counter()
    load_start = report.load_avg()
    settings = msgspec.structs.replace(settings, mode="live", partitions=1)
    rep = Report(started=datetime.now(UTC).isoformat(timespec="seconds"),
                 config={**msgspec.structs.asdict(config), "inherited_settings": inherited_settings(os.environ)},
                 **_not_selected(config))
    if _selected(config, "hostile"):
        with _timed(rep, "hostile"):
            rep.hostile = hostile.run(config.hostile_reps, config.seed, progress)
    with _workdir(config) as workdir:
        progress(f"[bench] work dir {workdir}")
        async with _server(config, workdir) as (url, server_name, server_pid):
            nc = await connect(msgspec.structs.replace(settings, nats_url=url), "cortex-bench")
            procs = Processes(workdir, url)
            session = Session(config, settings, url, nc, procs, workdir, progress)
            session.server_pid = server_pid
            try:
                rep.machine = report.machine(server_name, _server_version(str(nc.connected_server_version)),
                                             load_start)
                existing = await session.holds_cortex_data()
                if existing and config.nats_url and not config.reset:
                    raise BenchError(f"the server at {server_name} holds Cortex data ({existing}); the benchmark "
                                     "deletes and recreates Cortex's streams and buckets: rerun with --reset to "
                                     "allow that, or leave out --nats-url to use an embedded server")
                await _backlog_phases(session, rep)
                await _fairness_phase(session, rep)
                await _pipeline_phases(session, rep)
                if _selected(config, "recall"):
                    with _timed(rep, "recall"):
                        try:
                            rep.recall = await recall.run(session)
                        except PHASE_ERRORS as exc:
                            rep.recall = RecallResult(skipped=failed(session, "recall", exc))
            finally:
                procs.stop_all()
                with contextlib.suppress(Exception):
                    await nc.close()
    rep.duration_s = round(time.perf_counter() - started, 1)
    if rep.machine is not None:
        rep.machine.load_avg_end = report.load_avg()
    rep.rows = budget.rows(rep)
    return rep
