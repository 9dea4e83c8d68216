"""Freshness at fixed publish rates, with every worker running as its own process.

* publish → the agent's threads and decisions documents updated: a KV watch on each
  bucket records when a revision whose ``integrity.last_seq`` covers the published
  sequence arrives;
* session start → BootDoc: the boot document whose ``integrity.last_seq`` is the session
  start's sequence (or a later one) — the first, which may name a source still behind
  (``lagging``) — and → the complete BootDoc: the first such revision naming none (the
  lagging one completed, or a later document).

Publishing is paced on absolute times (message i at start + i / rate), pipelined, from a
helper process (``workers.bench.publisher``); every acknowledgement gives the stream sequence
of its event. Matching happens after the phase, on the recorded (time, agent, sequence)
triples, so a watch update that arrives before its publish acknowledgement is still matched
correctly. Each rate reports what it asked and what the publisher delivered, and whether that
is the rate asked (within 5 %).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
from nats.aio.client import Client

from shared.names import BUCKET_BOOT, BUCKET_DECISIONS, BUCKET_THREADS, consumer_name
from shared.tasks import cancel_and_wait
from workers.bench.events import BenchEvent, EventSource
from workers.bench.publisher import Delivered, Publisher, PublisherError, reached
from workers.bench.results import FreshnessResult, Latency, RateResult
from workers.bench.session import BenchError, Session
from workers.bench.stats import summarize


class _Integrity(msgspec.Struct):
    last_seq: int = 0


class _Head(msgspec.Struct):
    """Only what freshness needs from a document; msgspec skips every other field."""

    integrity: _Integrity = msgspec.field(default_factory=_Integrity)
    lagging: list[str] = msgspec.field(default_factory=list)  # a BootDoc's sources still behind


HEAD = msgspec.json.Decoder(_Head)

WATCHED = (BUCKET_THREADS, BUCKET_DECISIONS, BUCKET_BOOT)


class Published(NamedTuple):
    agent: str
    seq: int
    t0: float
    kind: str


class Watches:
    """KV watches on the watched buckets: (arrival time, last_seq) per agent and bucket."""

    def __init__(self, nc: Client) -> None:
        self._nc = nc
        self.seen: dict[str, dict[str, list[tuple[float, int]]]] = {b: defaultdict(list) for b in WATCHED}
        self.complete: dict[str, list[tuple[float, int]]] = defaultdict(list)  # BootDoc revisions naming no lag
        self._tasks: list[asyncio.Task[None]] = []
        self._watchers: list[Any] = []

    async def start(self) -> None:
        js = self._nc.jetstream()
        for bucket in WATCHED:
            kv = await js.key_value(bucket)
            watcher = await kv.watchall()
            self._watchers.append(watcher)
            self._tasks.append(asyncio.create_task(self._follow(bucket, watcher), name=f"watch-{bucket}"))

    async def _follow(self, bucket: str, watcher: Any) -> None:
        seen = self.seen[bucket]
        async for entry in watcher:
            if entry is None or not entry.value or entry.key is None:
                continue
            arrived = time.perf_counter()
            head = HEAD.decode(entry.value)
            seen[entry.key].append((arrived, head.integrity.last_seq))
            if bucket == BUCKET_BOOT and not head.lagging:
                self.complete[entry.key].append((arrived, head.integrity.last_seq))

    async def stop(self) -> None:
        for task in self._tasks:
            with contextlib.suppress(Exception):
                await cancel_and_wait(task)
        for watcher in self._watchers:
            with contextlib.suppress(Exception):
                await watcher.stop()


def match(published: list[Published], seen: dict[str, list[tuple[float, int]]]) -> tuple[list[float], int]:
    """Latency of each published event to the first observed revision that covers it
    (``covered_at``), and how many no revision covered."""
    covered = covered_at(published, seen)
    latencies = [max(0.0, covered[p.seq] - p.t0) for p in published if p.seq in covered]
    return latencies, len(published) - len(latencies)


def covered_at(published: list[Published], seen: dict[str, list[tuple[float, int]]]) -> dict[int, float]:
    """Each published sequence → when the first revision covering it arrived. Per agent, revisions
    arrive in write order and their ``last_seq`` only grows, so a single pass over both lists pairs
    them."""
    by_agent: dict[str, list[Published]] = defaultdict(list)
    for p in published:
        by_agent[p.agent].append(p)
    out: dict[int, float] = {}
    for agent, pubs in by_agent.items():
        observed = seen.get(agent, [])
        j = 0
        for p in sorted(pubs, key=lambda p: p.seq):
            while j < len(observed) and observed[j][1] < p.seq:
                j += 1
            if j < len(observed):
                out[p.seq] = observed[j][0]
    return out


def write_starts(path: Path, starts: list[Published], watches: Watches) -> None:
    """The session starts of a rate for ``workers.bench.bootstages``: each one's sequence, agent,
    and wall-clock times of its publish, its first BootDoc and its complete one (None: none)."""
    wall = time.time() - time.perf_counter()  # perf_counter → wall clock
    first = covered_at(starts, watches.seen[BUCKET_BOOT])
    complete = covered_at(starts, watches.complete)
    rows = [{"seq": p.seq, "agent": p.agent, "published": p.t0 + wall,
             "boot": first[p.seq] + wall if p.seq in first else None,
             "complete": complete[p.seq] + wall if p.seq in complete else None} for p in starts]
    path.write_bytes(msgspec.json.encode(rows))


def plan(source: EventSource, rng: random.Random, count: int, boot_every: int) -> list[BenchEvent]:
    """``count`` events: messages of random agents, every ``boot_every``-th a session start."""
    agents = source.agents
    return [
        source.session_event(rng.choice(agents), "start") if boot_every and i % boot_every == boot_every - 1
        else source.message(rng.choice(agents))
        for i in range(count)
    ]


async def publish_paced(session: Session, events: list[BenchEvent], rate: int) -> tuple[list[Published], Delivered]:
    """Publish at ``rate`` msg/s from the phase's publisher (``publishing``): each event's
    sequence and send time, and what the publisher says of the run (its ``elapsed``: from the
    first send to the last acknowledgement)."""
    if session.publisher is None:
        raise BenchError("no publisher: a paced phase runs inside publishing(session)")
    try:
        delivered = await session.publisher.publish(events, rate)
    except PublisherError as exc:  # the phase fails with the helper's reason (and its log's tail)
        raise BenchError(str(exc)) from None
    published = [Published(e.agent, seq, t0, e.kind) for e, seq, t0 in zip(events, delivered.seqs, delivered.t0,
                                                                          strict=True)]
    return published, delivered


@contextlib.asynccontextmanager
async def publishing(session: Session) -> AsyncIterator[Publisher]:
    """The paced publisher's helper process for a phase, as ``session.publisher``; stopped after."""
    try:
        publisher = await Publisher.start(session.procs, session.workdir)
    except PublisherError as exc:
        raise BenchError(str(exc)) from None
    session.publisher = publisher
    try:
        yield publisher
    finally:
        session.publisher = None
        publisher.stop()


def cpu_per_event(before: dict[str, float], after: dict[str, float], events: int) -> dict[str, float]:
    """Each process's CPU milliseconds per event between the two readings, busiest first;
    a process missing from either reading (exited, unreadable) is left out."""
    used = {name: after[name] - before[name] for name in after if name in before}
    return {name: round(1000 * cpu / max(1, events), 3) for name, cpu in sorted(used.items(), key=lambda kv: -kv[1])}


def _latency(published: list[Published], seen: dict[str, list[tuple[float, int]]]) -> Latency:
    latencies, lost = match(published, seen)
    return summarize(latencies, lost)


async def until_complete(session: Session, watches: Watches, starts: list[Published], limit_s: float) -> float | None:
    """Seconds until every session start in ``starts`` has a complete BootDoc seen (None: not all
    within ``limit_s``)."""
    began = time.perf_counter()
    while len(covered_at(starts, watches.complete)) < len(starts):
        session.check_alive(session.pipeline)
        if time.perf_counter() - began > limit_s:
            return None
        await asyncio.sleep(0.1)
    return time.perf_counter() - began


async def run_rate(session: Session, watches: Watches, source: EventSource, rng: random.Random,
                   rate: int, consumers: list[str], duration_s: float | None = None,
                   phase: str = "freshness", complete_limit_s: float = 0.0) -> RateResult:
    """Publish at ``rate`` for ``duration_s`` (the freshness duration unless given), drain,
    wait (at most ``complete_limit_s``) for every session start's complete BootDoc, and match
    what the watches saw."""
    cfg = session.config
    seconds = cfg.duration_s if duration_s is None else duration_s
    source.spacing = timedelta(seconds=1 / rate)  # event time advances like the publish schedule
    try:
        events = plan(source, rng, max(1, int(rate * seconds)), cfg.boot_every)
    finally:
        source.spacing = timedelta(seconds=2)
    session.progress(f"[{phase}] {rate} msg/s for {seconds:g}s ({len(events)} events) …")
    cpu_before = session.cpu_seconds()
    published, delivered = await publish_paced(session, events, rate)
    achieved = delivered.rate
    if not reached(rate, achieved):
        session.progress(f"[{phase}] the publisher delivered {achieved:.1f} of the {rate} msg/s asked (sent in "
                         f"{delivered.sent_s:.2f} s of {delivered.elapsed:.2f} s to the last acknowledgement, "
                         f"at most {delivered.max_lag_ms:g} ms behind schedule): this rate was not reached")
    drain_s, undrained = await session.drain_bounded(consumers, cfg.drain_limit_s, session.pipeline)
    cpu = cpu_per_event(cpu_before, session.cpu_seconds(), len(published))
    if undrained:
        session.progress(f"[{phase}] still pending after {cfg.drain_limit_s:g}s: "
                         + ", ".join(f"{c} {n}" for c, n in sorted(undrained.items())))
    await asyncio.sleep(0.3)  # the last watch updates are on their way
    messages = [p for p in published if p.kind == "msg"]
    starts = [p for p in published if p.kind == "session.start"]
    completed_s = None
    if complete_limit_s > 0:
        completed_s = await until_complete(session, watches, starts, complete_limit_s)
        if completed_s is None:
            session.progress(f"[{phase}] session starts without a complete BootDoc {complete_limit_s:g}s after the "
                             f"drain: {len(starts) - len(covered_at(starts, watches.complete))}")
    result = RateResult(
        rate=rate, duration_s=seconds, published=len(published),
        achieved_rate=round(achieved, 1), rate_reached=reached(rate, achieved),
        publish_sent_s=round(delivered.sent_s, 3), publish_max_lag_ms=delivered.max_lag_ms,
        drain_s=round(drain_s, 3) if drain_s is not None else None, undrained=undrained,
        completed_s=round(completed_s, 3) if completed_s is not None else None,
        threads=_latency(messages, watches.seen[BUCKET_THREADS]),
        decisions=_latency(messages, watches.seen[BUCKET_DECISIONS]),
        boot=_latency(starts, watches.seen[BUCKET_BOOT]), boot_complete=_latency(starts, watches.complete),
        cpu_ms_per_event=cpu,
    )
    if cfg.boot_trace:
        write_starts(session.workdir / f"boot-starts-{phase}-{rate}.json", starts, watches)
    busiest = ", ".join(f"{name} {ms:g}" for name, ms in list(cpu.items())[:3])
    session.progress(f"[{phase}] {rate} msg/s asked, {result.achieved_rate:g} delivered: "
                     f"threads p99 {result.threads.p99_ms} ms, decisions p99 {result.decisions.p99_ms} ms, "
                     f"boot p99 {result.boot.p99_ms} ms "
                     f"(complete {result.boot_complete.p99_ms} ms, {result.boot_complete.lost} not); "
                     f"CPU ms per event {sum(cpu.values()):.2f} ({busiest} …)")
    return result


async def warm_up(session: Session, source: EventSource) -> None:
    """One session start and one message per agent, so no measured event pays a first load."""
    events = [e for agent in source.agents for e in (source.session_event(agent, "start"), source.message(agent))]
    await session.publish_all(events)
    consumers = [consumer_name(w) for w in session.pipeline_consumers]
    limit_s = max(3.0, session.config.drain_limit_s)
    _, pending = await session.drain_bounded(consumers, limit_s, session.pipeline)
    if pending:
        session.progress(f"[pipeline] warm-up still pending after {limit_s:g}s: "
                         + ", ".join(f"{c} {n}" for c, n in sorted(pending.items())))


@contextlib.asynccontextmanager
async def watching(session: Session, name: str) -> AsyncIterator[Watches]:
    """``Watches`` on a connection of their own (``name``), started; stopped and closed after."""
    nc = await session.connect(name)
    watches = Watches(nc)
    try:
        await watches.start()
        yield watches
    finally:
        await watches.stop()
        await nc.close()


async def run(session: Session, source: EventSource) -> FreshnessResult:
    cfg = session.config
    consumers = [consumer_name(w) for w in session.pipeline_consumers]
    rng = random.Random(cfg.seed + 2)
    async with watching(session, "cortex-bench-watch") as watches, publishing(session):
        rates = [await run_rate(session, watches, source, rng, rate, consumers, complete_limit_s=cfg.complete_limit_s)
                 for rate in cfg.rates]
    return FreshnessResult(workers=[p.name for p in session.pipeline], rates=rates)
