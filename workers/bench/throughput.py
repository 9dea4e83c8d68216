"""Each regex worker's sustained throughput: one ``cortex worker NAME`` process, alone,
draining the whole backlog; its ratio to the limit and its peak RSS."""

from __future__ import annotations

import asyncio
import importlib.util
import time
from pathlib import Path
from typing import Final, NamedTuple

import nats.errors
import nats.js.errors

from shared.names import EVENTS_STREAM
from workers.bench.procs import WorkerProc, cpu_seconds
from workers.bench.results import WorkerResult
from workers.bench.session import BenchError, Session
from workers.registry import all_specs


def unavailable(worker: str) -> str | None:
    """Why ``cortex worker NAME`` cannot run this worker yet, or None when it can."""
    if worker in all_specs():
        return None
    module = f"workers.{worker}.worker"
    try:
        exists = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        exists = False
    if exists:
        return f"not yet available: {module} exists but is not in workers.registry"
    return f"not yet available: {module} does not exist"


class Drained(NamedTuple):
    result: WorkerResult
    proc: WorkerProc  # still running


STARTUP_LIMIT_S: Final = 120.0  # beyond the drain's own limit, for the process to take its first event


async def drain_worker(session: Session, worker: str, events: int, last_seq: int,
                       limit_rate: float | None, limit_s: float | None = None, partial: bool = False,
                       env: dict[str, str] | None = None) -> Drained:
    """Start the worker on the backlog and time it from its first delivery until drained;
    the process is left running (stopped on failure).

    With ``partial``, a worker still busy at ``limit_s`` is measured on what it acked so far
    (the backlog starts at stream sequence 1, so the ack floor counts the events done).
    ``env`` adds settings to the worker's.
    """
    profile_dir = Path(session.config.profile_dir) if session.config.profile_dir else None
    buckets = list(all_specs()[worker].buckets) if worker in all_specs() else []
    seqs_before = {b: await _stream_state(session, b) for b in buckets}
    proc = session.procs.start(worker, profile_dir, env=env)
    limit_s = limit_s if limit_s is not None else max(120.0, events / 50)
    first: float | None = None
    cpu_first: float | None = None
    server_first: float | None = None
    floor = 0
    try:
        while True:
            session.check_alive([proc])
            info = await session.js.consumer_info(EVENTS_STREAM, worker)
            now = time.perf_counter()
            delivered = info.delivered.stream_seq if info.delivered else 0
            floor = info.ack_floor.stream_seq if info.ack_floor else 0
            if first is None and (delivered > 0 or floor > 0):
                first, cpu_first, server_first = now, proc.cpu_seconds(), _server_cpu(session)
            if first is not None and floor >= last_seq and not info.num_pending and not info.num_ack_pending:
                break
            # the limit bounds the measurement, from the first delivery; a process's start
            # (a model loaded on a busy machine) has its own, longer bound
            if (now - first if first is not None else now - proc.started - STARTUP_LIMIT_S) > limit_s:
                if partial and first is not None and floor > 0:
                    session.progress(f"[{worker}] stopped measuring after {limit_s:.0f}s: {floor} of {events} "
                                     "events done")
                    events = floor
                    break
                if first is None:
                    raise BenchError(f"{worker} took no event within {limit_s + STARTUP_LIMIT_S:.0f}s of its start")
                raise BenchError(f"{worker} did not drain {events} events within {limit_s:.0f}s")
            await asyncio.sleep(0.02)
    except BaseException:
        proc.stop()
        raise
    seconds = max(now - first, 1e-6)
    rate = events / seconds
    cpu_last, server_last = proc.cpu_seconds(), _server_cpu(session)
    cpu_s = round(cpu_last - cpu_first, 3) if cpu_first is not None and cpu_last is not None else None
    server_s = round(server_last - server_first, 3) if server_first is not None and server_last is not None else None
    writes: dict[str, int] = {}
    value_bytes: dict[str, float] = {}
    for bucket, (seq_before, _, _) in seqs_before.items():
        seq, messages, stored = await _stream_state(session, bucket)
        writes[bucket] = seq - seq_before
        if messages:
            value_bytes[bucket] = round(stored / messages, 1)
    result = WorkerResult(
        worker=worker, events=events, seconds=round(seconds, 3), msgs_per_s=round(rate, 1),
        ratio=round(rate / limit_rate, 3) if limit_rate else None, startup_s=round(first - proc.started, 3),
        peak_rss_mb=proc.peak_rss_mb(), profile=str(proc.profile) if proc.profile else None, cpu_s=cpu_s,
        server_cpu_s=server_s, doc_writes=writes, doc_value_bytes=value_bytes,
    )
    return Drained(result, proc)


def _server_cpu(session: Session) -> float | None:
    return cpu_seconds(session.server_pid) if session.server_pid is not None else None


async def _stream_state(session: Session, bucket: str) -> tuple[int, int, int]:
    """A document bucket's stream: its last sequence (every value ever stored), the values
    it keeps and their bytes (as the server counts them: subject, headers and value)."""
    try:
        state = (await session.js.stream_info(f"KV_{bucket}")).state
    except nats.js.errors.NotFoundError:
        return 0, 0, 0
    return state.last_seq, state.messages, state.bytes


async def run_worker(session: Session, worker: str, events: int, last_seq: int,
                     limit_rate: float | None) -> WorkerResult:
    drained = await drain_worker(session, worker, events, last_seq, limit_rate)
    drained.proc.stop()
    return drained.result


async def run(session: Session, events: int, last_seq: int, limit_rate: float | None) -> dict[str, WorkerResult]:
    results: dict[str, WorkerResult] = {}
    for worker in session.config.workers:
        reason = unavailable(worker)
        if reason is not None:
            session.progress(f"[workers] {worker}: {reason}")
            results[worker] = WorkerResult(worker=worker, skipped=reason)
            continue
        session.progress(f"[workers] {worker}: draining {events} events in its own process …")
        try:
            result = await run_worker(session, worker, events, last_seq, limit_rate)
        except (BenchError, nats.errors.Error, TimeoutError, OSError) as exc:
            reason = f"failed: {exc}".splitlines()[0][:300]
            session.progress(f"[workers] {worker}: {reason}")
            results[worker] = WorkerResult(worker=worker, skipped=reason)
            continue
        ratio = f" ({result.ratio:.0%} of the limit)" if result.ratio is not None else ""
        cpu = "".join(f", {name} CPU {s / result.events * 1e6:.0f} µs an event"
                      for name, s in (("worker", result.cpu_s), ("server", result.server_cpu_s))
                      if s is not None and result.events)
        writes = "".join(f", {b} {n} writes of ~{result.doc_value_bytes.get(b, 0):.0f} B"
                         for b, n in result.doc_writes.items())
        session.progress(f"[workers] {worker}: {result.msgs_per_s:,.0f} msgs/s{ratio}, "
                         f"peak RSS {result.peak_rss_mb} MB{cpu}{writes}")
        results[worker] = result
    return results
