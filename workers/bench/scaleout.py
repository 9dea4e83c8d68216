"""Scale-out: the threads worker with one partition, then with two (one process each).

Both runs drain the same backlog back to back, each from a clean state (no threads
documents, no checkpoints, fresh consumers), so their ratio is measured under the same
load. A partition consumer filters on its slots' stored subjects (contract: Partitions in
the server): before the processes start, each consumer's pending count is read — it is
exactly its agents' events, summed over the partitions the backlog once, not N times.
Nothing is read twice, so the model for free cores is the total over the busiest
partition's share.

As a hint of what the machine itself allows, the bare consume of the backlog by two
processes (one consumer per process on the same slot filters) is measured too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time

import msgspec
import nats.js.errors

from shared.names import (
    BUCKET_CHECKPOINTS,
    BUCKET_LEASES,
    BUCKET_THREADS,
    EVENTS_STREAM,
    consumer_filter_subjects,
    consumer_name,
    consumers_of,
    partition_ids,
    partition_of,
)
from shared.provision import ensure_consumer
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
    """Bare consume by two helper processes, each on the slot filters of one of two
    partitions (every family); aggregate msgs/s."""
    families = sorted({e.subject.split(".")[1] for e in events})
    counts = [sum(1 for e in events if partition_of(e.agent, 2) == k) for k in (0, 1)]
    helpers = []
    for k in (0, 1):
        filters = [arg for subject in consumer_filter_subjects(session.prefix, families, k, 2)
                   for arg in ("--filter", subject)]
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
    """(delivered anything, drained) for one consumer: its ack floor at its own last event
    (a partition's, at most ``last_seq``) with nothing pending; a consumer the worker has not
    created yet has done neither."""
    try:
        info = await session.js.consumer_info(EVENTS_STREAM, consumer)
    except nats.js.errors.NotFoundError:
        return False, False
    delivered = info.delivered.stream_seq if info.delivered else 0
    floor = info.ack_floor.stream_seq if info.ack_floor else 0
    drained = 0 < floor <= last_seq and floor == delivered and not info.num_pending and not info.num_ack_pending
    return delivered > 0 or floor > 0, drained


async def pending_per_partition(session: Session, partitions: int) -> list[int]:
    """Create the partitions' consumers as ``cortex init`` does and read what each has pending:
    what the server will deliver to it."""
    spec = all_specs()[WORKER]
    pending = []
    for k in partition_ids(partitions):
        name = consumer_name(WORKER, k)
        await ensure_consumer(session.js, spec.consumer(name, k, partitions), session.settings)
        pending.append(int((await session.js.consumer_info(EVENTS_STREAM, name)).num_pending or 0))
    return pending


async def run_partitions(session: Session, partitions: int, events: list[BenchEvent], last_seq: int) -> PartitionRun:
    """Start one ``cortex worker threads`` process per partition (``--partition k``) on a clean
    state; time from the first delivery on any partition until every partition drained."""
    await clean_state(session)
    consumers = consumers_of(WORKER, partitions)
    pending = await pending_per_partition(session, partitions)
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
                        pending=pending,
                        seconds=round(seconds, 3), msgs_per_s=round(len(events) / seconds, 1),
                        startup_s=[round(first[c] - p.started, 3) for c, p in zip(consumers, procs, strict=True)],
                        peak_rss_mb=rss)


def model_ratio(applied: list[int]) -> float:
    """Throughput of N partitions over one, each on a free core: the server delivers each
    partition only its own agents' events, so the busiest partition sets the pace — the total
    over its share (N when the agents spread evenly)."""
    busiest = max(applied, default=0)
    return sum(applied) / busiest if busiest else 0.0


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
    two_run = result.runs[1]
    session.progress(f"[scaleout] pending per partition at the start: {two_run.pending} (their agents' events: "
                     f"{two_run.applied}; one partition: {result.runs[0].pending})")
    result.partitions_2_model_ratio = round(model_ratio(two_run.applied), 3)
    session.progress("[scaleout] bare consume by two processes, one on each partition's slot filters …")
    rate = await two_process_limit(session, events)
    result.limit_2_processes_msgs_per_s = round(rate, 1)
    if limit.msgs_per_s:
        result.limit_2_ratio = round(rate / limit.msgs_per_s, 3)
    session.progress(f"[scaleout] two bare processes: {rate:,.0f} msgs/s"
                     + (f" ({result.limit_2_ratio:.2f}× one)" if result.limit_2_ratio else ""))
    return result
