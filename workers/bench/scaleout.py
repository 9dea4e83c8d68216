"""Scale-out: throughput with one partition, and why there is no two-partition figure yet.

The contract's partitions (consumers ``<worker>-<k>``, agent → FNV-1a mod N) are not
implemented by the worker host, so a second worker process for a consumer is a standby,
not a second partition. What the machine itself allows is still measurable: the bare
consume of the backlog by two processes, agents split with the contract's own partition
function (one consumer per process, filtered to its agents' subjects).
"""

from __future__ import annotations

import asyncio
import os
from typing import Final

import msgspec

from shared.names import partition_of
from workers.bench.events import BenchEvent
from workers.bench.results import LimitResult, ScaleoutResult, WorkerResult
from workers.bench.session import BenchError, Session

NOT_IMPLEMENTED: Final = (
    "not implemented: the worker host runs one consumer per worker (shared.runtime.WorkerHost.run_consumer "
    "uses consumer_name(worker, None)); CORTEX_PARTITIONS is read but unused"
)


class _HelperResult(msgspec.Struct):
    events: int
    start: float
    end: float


async def two_process_limit(session: Session, events: list[BenchEvent]) -> float:
    """Bare consume by two helper processes, agents split FNV-1a mod 2; aggregate msgs/s."""
    parts: list[list[str]] = [[], []]
    for agent in sorted({e.agent for e in events}):
        parts[partition_of(agent, 2)].append(agent)
    counts = [sum(1 for e in events if partition_of(e.agent, 2) == k) for k in (0, 1)]
    helpers = []
    for k, agents in enumerate(parts):
        filters = [arg for agent in agents for arg in ("--filter", f"{session.prefix}.*.{agent}.>")]
        helpers.append(session.procs.start_module(f"bench-limit-{k}", "workers.bench.limit",
                                                  "--consumer", f"bench-limit-p{k}", "--expect", str(counts[k]),
                                                  *filters))
    # Both helpers connect and create their consumers first; then both are told to go at once.
    for helper in helpers:
        assert helper.proc.stdout is not None
        line = await asyncio.to_thread(helper.proc.stdout.readline)
        if line.strip() != b"ready":
            helper.stop()
            raise BenchError(f"{helper.name} did not start (exit {helper.proc.poll()}):\n{helper.log_tail()}")
    outputs = await asyncio.gather(*(asyncio.to_thread(h.proc.communicate, b"go\n", 300) for h in helpers))
    results = []
    for helper, (stdout, _) in zip(helpers, outputs, strict=True):
        if helper.proc.returncode != 0:
            raise BenchError(f"{helper.name} failed (exit {helper.proc.returncode}):\n{helper.log_tail()}")
        results.append(msgspec.json.decode(stdout, type=_HelperResult))
    total = sum(r.events for r in results)
    return total / (max(r.end for r in results) - min(r.start for r in results))


async def run(session: Session, events: list[BenchEvent], limit: LimitResult,
              workers: dict[str, WorkerResult]) -> ScaleoutResult:
    threads = workers.get("threads")
    result = ScaleoutResult(cores=os.cpu_count() or 0,
                            partitions_1_msgs_per_s=threads.msgs_per_s if threads else None,
                            partitions_2=NOT_IMPLEMENTED, limit_1_process_msgs_per_s=limit.msgs_per_s)
    session.progress("[scaleout] bare consume by two processes, agents split FNV-1a mod 2 …")
    rate = await two_process_limit(session, events)
    result.limit_2_processes_msgs_per_s = round(rate, 1)
    if limit.msgs_per_s:
        result.limit_2_ratio = round(rate / limit.msgs_per_s, 3)
    session.progress(f"[scaleout] two bare processes: {rate:,.0f} msgs/s"
                     + (f" ({result.limit_2_ratio:.2f}× one)" if result.limit_2_ratio else ""))
    return result
