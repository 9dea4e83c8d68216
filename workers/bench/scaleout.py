"""Scale-out: the threads worker with one partition, then with two (one process each).

Both runs drain the same backlog back to back, each from a clean state (no threads
documents, no checkpoints, fresh consumers), so their ratio is measured under the same
load. With partitions every partition's consumer reads the whole backlog and applies its
own agents' events (contract: agent → FNV-1a mod N; see docs/operations.md, Scaling):
the per-event fetch and ack are paid N times, the apply once.

As a hint of what the machine itself allows, the bare consume of the backlog by two
processes (agents split with the same function, one filtered consumer per process) is
measured too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time

import msgspec
import nats.js.errors

from shared.codec import Envelope
from shared.consume import ConsumeLoop
from shared.health import Health
from shared.names import (
    BUCKET_CHECKPOINTS,
    BUCKET_LEASES,
    BUCKET_THREADS,
    EVENTS_STREAM,
    PartitionFilter,
    consumers_of,
    partition_of,
)
from shared.provision import ConsumerSpec, ensure_consumer
from shared.runtime import loop_config
from workers.bench.events import BenchEvent
from workers.bench.procs import WorkerProc, stop_together
from workers.bench.results import LimitResult, PartitionRun, ScaleoutResult
from workers.bench.session import BenchError, Session
from workers.registry import all_specs

WORKER = "threads"
PARTITIONS = (1, 2)


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


async def clean_state(session: Session) -> None:
    """No threads documents, checkpoints or leases, and none of the threads consumers: the
    next run starts from sequence 1 with real work to do (documents' watermarks would
    otherwise skip every event)."""
    js = session.js
    for name in {c for n in PARTITIONS for c in consumers_of(WORKER, n)}:
        with contextlib.suppress(nats.js.errors.NotFoundError):
            await js.delete_consumer(EVENTS_STREAM, name)
    for bucket in (BUCKET_THREADS, BUCKET_CHECKPOINTS, BUCKET_LEASES):
        await js.purge_stream(f"KV_{bucket}")


def applied_per_partition(events: list[BenchEvent], partitions: int) -> list[int]:
    """The events each partition applies: its agents' events within the worker's filter."""
    families = set(all_specs()[WORKER].families)
    counts = [0] * partitions
    for event in events:
        if event.subject.split(".")[1] in families:
            counts[partition_of(event.agent, partitions)] += 1
    return counts


async def _drained_at(session: Session, consumer: str, last_seq: int) -> tuple[bool, bool]:
    """(delivered anything, drained to ``last_seq``) for one consumer; a consumer the worker has
    not created yet has done neither."""
    try:
        info = await session.js.consumer_info(EVENTS_STREAM, consumer)
    except nats.js.errors.NotFoundError:
        return False, False
    delivered = info.delivered.stream_seq if info.delivered else 0
    floor = info.ack_floor.stream_seq if info.ack_floor else 0
    return delivered > 0 or floor > 0, floor >= last_seq and not info.num_pending and not info.num_ack_pending


async def run_partitions(session: Session, partitions: int, events: list[BenchEvent], last_seq: int) -> PartitionRun:
    """Start one ``cortex worker threads`` process per partition (``--partition k``) on a clean
    state; time from the first delivery on any partition until every partition drained."""
    await clean_state(session)
    consumers = consumers_of(WORKER, partitions)
    env = {"CORTEX_PARTITIONS": str(partitions)}
    procs: list[WorkerProc] = [
        session.procs.start(WORKER, args=("--partition", str(k)) if partitions > 1 else (), env=env)
        for k in range(partitions)
    ]
    limit_s = max(120.0, len(events) / 50)
    first: dict[str, float] = {}
    done: dict[str, float] = {}
    started = time.perf_counter()
    try:
        while len(done) < len(consumers):
            session.check_alive(procs)
            for name in consumers:
                if name in done:
                    continue
                delivered, drained = await _drained_at(session, name, last_seq)
                now = time.perf_counter()
                if delivered:
                    first.setdefault(name, now)
                if drained:
                    done[name] = now
            if time.perf_counter() - started > limit_s:
                raise BenchError(f"{', '.join(consumers)} did not drain {len(events)} events within {limit_s:.0f}s")
            await asyncio.sleep(0.02)
        rss = [p.peak_rss_mb() for p in procs]
    finally:
        stop_together(procs)
    seconds = max(max(done.values()) - min(first.values()), 1e-6)
    return PartitionRun(partitions=partitions, events=len(events), applied=applied_per_partition(events, partitions),
                        seconds=round(seconds, 3), msgs_per_s=round(len(events) / seconds, 1),
                        startup_s=[round(first[c] - p.started, 3) for c, p in zip(consumers, procs, strict=True)],
                        peak_rss_mb=rss)


def model_ratio(partitions: int, one_msgs_per_s: float, skip_msgs_per_s: float) -> float:
    """Throughput of N partitions over one, each on a free core: a process spends the one-partition
    cost on its 1/N of the events and the skip cost on the rest."""
    apply_s, skip_s = 1 / one_msgs_per_s, 1 / skip_msgs_per_s
    return apply_s / (apply_s / partitions + skip_s * (partitions - 1) / partitions)


class _NoHandler:
    """A handler that is never asked to apply anything (its loop owns no agent)."""

    async def apply(self, env: Envelope) -> bool:
        raise AssertionError(f"event {env.seq} of {env.agent} is not this partition's")

    async def commit(self) -> None:
        return None

    def reset(self) -> None:
        return None


async def skip_rate(session: Session, events: list[BenchEvent], last_seq: int) -> float:
    """What reading another partition's events costs: the worker's own consume loop (fetch,
    partition check, checkpoint, ack) over the backlog with a partition that owns none of its
    agents (k of 64 with no backlog agent), in this process; msgs/s."""
    agents = {e.agent for e in events}
    n = 64
    k = next((k for k in range(n) if all(partition_of(a, n) != k for a in agents)), None)
    if k is None:
        raise BenchError(f"every partition of {n} holds a backlog agent: no empty partition to measure with")
    spec = all_specs()[WORKER]
    name = "bench-skip"
    await ensure_consumer(session.js, ConsumerSpec(name=name, families=spec.families), session.settings)
    loop = ConsumeLoop(session.js, worker=name, consumer=name, handler=_NoHandler(),
                       config=loop_config(session.settings, spec), health=Health(name),
                       owns=PartitionFilter(k, n), label=name)
    started = time.perf_counter()
    first: tuple[float, int] | None = None  # timed from the first committed batch: start-up excluded
    task = asyncio.create_task(loop.run())
    try:
        while loop.checkpoint < last_seq:
            if task.done():
                task.result()
                raise BenchError("the skipping loop stopped before the end of the backlog")
            if time.perf_counter() - started > max(120.0, len(events) / 50):
                raise BenchError(f"the skipping loop did not reach sequence {last_seq}")
            if first is None and loop.checkpoint:
                first = (time.perf_counter(), loop.checkpoint)
            await asyncio.sleep(0.005)
        ended = time.perf_counter()
    finally:
        loop.stop()
        await task
        with contextlib.suppress(nats.js.errors.NotFoundError):
            await session.js.delete_consumer(EVENTS_STREAM, name)
    if first is None or first[1] >= last_seq:
        raise BenchError("the backlog fits in one batch: too small to time the skipping loop")
    # the backlog's events are all in the worker's filter: sequences count events
    return (last_seq - first[1]) / max(ended - first[0], 1e-6)


async def run(session: Session, events: list[BenchEvent], limit: LimitResult) -> ScaleoutResult:
    result = ScaleoutResult(cores=os.cpu_count() or 0, limit_1_process_msgs_per_s=limit.msgs_per_s)
    last_seq = int((await session.js.stream_info(EVENTS_STREAM)).state.last_seq)
    for n in PARTITIONS:
        session.progress(f"[scaleout] {WORKER}, {n} partition(s), one process each: draining {len(events)} events …")
        run_n = await run_partitions(session, n, events, last_seq)
        result.runs.append(run_n)
        session.progress(f"[scaleout] {WORKER}, {n} partition(s): {run_n.msgs_per_s:,.0f} msgs/s "
                         f"(applied per partition: {run_n.applied})")
    one, two = result.runs[0].msgs_per_s, result.runs[1].msgs_per_s
    result.partitions_1_msgs_per_s, result.partitions_2_msgs_per_s = one, two
    if one and two:
        result.partitions_2_ratio = round(two / one, 3)
        session.progress(f"[scaleout] 2 partitions = {result.partitions_2_ratio:.2f}× one "
                         f"on {result.cores} cores shared with the server")
    session.progress("[scaleout] a partition loop reading the backlog without applying any of it …")
    await clean_state(session)
    result.skip_msgs_per_s = round(await skip_rate(session, events, last_seq), 1)
    session.progress(f"[scaleout] another partition's events cost {1e6 / result.skip_msgs_per_s:.0f} µs each "
                     f"({result.skip_msgs_per_s:,.0f} msgs/s read, checked and acked unapplied)")
    if one:
        result.partitions_2_model_ratio = round(model_ratio(2, one, result.skip_msgs_per_s), 3)
    session.progress("[scaleout] bare consume by two processes, agents split FNV-1a mod 2 …")
    rate = await two_process_limit(session, events)
    result.limit_2_processes_msgs_per_s = round(rate, 1)
    if limit.msgs_per_s:
        result.limit_2_ratio = round(rate / limit.msgs_per_s, 3)
    session.progress(f"[scaleout] two bare processes: {rate:,.0f} msgs/s"
                     + (f" ({result.limit_2_ratio:.2f}× one)" if result.limit_2_ratio else ""))
    return result
