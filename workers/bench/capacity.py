"""Capacity: the highest publish rate at which the whole pipeline keeps its freshness.

A rate *holds* when, publishing at it for ``capacity_duration_s`` with every worker
running (the freshness phase's pipeline, its watches and its events), the threads and
decisions documents follow each message within ``FRESH_P99_MS`` at p99, a session start
gets its BootDoc within ``BOOT_P99_MS`` at p99, no document is missing after the drain
and every consumer drained within the drain limit. The search doubles the rate from
``capacity_start`` while it holds (up to ``capacity_max``), then bisects between the last
rate that held and the first that did not, ``capacity_bisections`` times.

The answer is also given as agents: a gateway's agent publishes 50–100 events a minute
(issue 39), so the rate over ``AGENT_EVENTS_PER_MIN / 60`` is how many such agents the
machine serves.
"""

from __future__ import annotations

import random

from shared.names import consumer_name
from workers.bench.budget import AGENT_EVENTS_PER_MIN
from workers.bench.budget import CAPACITY_BOOT_P99_MS as BOOT_P99_MS
from workers.bench.budget import CAPACITY_FRESH_P99_MS as FRESH_P99_MS
from workers.bench.events import EventSource
from workers.bench.freshness import publishing, run_rate, watching
from workers.bench.results import CapacityProbe, CapacityResult, RateResult
from workers.bench.session import Session


def holds(result: RateResult) -> bool:
    """Whether the pipeline kept its freshness budget at this rate (see the module docstring)."""
    latencies = (result.threads, result.decisions, result.boot)
    if result.undrained or any(lat.lost for lat in latencies):
        return False
    limits = (FRESH_P99_MS, FRESH_P99_MS, BOOT_P99_MS)
    return all(lat.p99_ms is not None and lat.p99_ms < limit for lat, limit in zip(latencies, limits, strict=True))


def probe_of(result: RateResult) -> CapacityProbe:
    return CapacityProbe(rate=result.rate, holds=holds(result), threads_p99_ms=result.threads.p99_ms,
                         decisions_p99_ms=result.decisions.p99_ms, boot_p99_ms=result.boot.p99_ms,
                         lost=result.threads.lost + result.decisions.lost + result.boot.lost,
                         undrained=dict(result.undrained), cpu_ms_per_event=dict(result.cpu_ms_per_event))


def next_rate(held: int | None, failed: int | None, start: int, maximum: int) -> int | None:
    """The next rate to probe: double while everything held, then halfway between the last
    rate that held and the first that did not; None when there is nothing left to try."""
    if failed is None:
        rate = start if held is None else held * 2
        return rate if rate <= maximum else None
    low = held if held is not None else 0
    middle = (low + failed) // 2
    return middle if middle > low and failed - middle >= max(1, low // 20) else None


def agents_at(rate: int) -> int:
    return rate * 60 // AGENT_EVENTS_PER_MIN


async def run(session: Session, source: EventSource) -> CapacityResult:
    cfg = session.config
    consumers = [consumer_name(w) for w in session.pipeline_consumers]
    rng = random.Random(cfg.seed + 3)
    probes: list[CapacityProbe] = []
    held: int | None = None
    failed: int | None = None
    bisections = 0
    async with watching(session, "cortex-bench-capacity") as watches, publishing(session):
        while (rate := next_rate(held, failed, cfg.capacity_start, cfg.capacity_max)) is not None:
            if failed is not None:
                if bisections >= cfg.capacity_bisections:
                    break
                bisections += 1
            result = await run_rate(session, watches, source, rng, rate, consumers, duration_s=cfg.capacity_duration_s,
                                    phase="capacity")
            probe = probe_of(result)
            probes.append(probe)
            session.progress(f"[capacity] {rate} msg/s {'holds' if probe.holds else 'does not hold'}")
            if probe.holds:
                held = rate
            else:
                failed = rate
    return CapacityResult(msgs_per_s=held, agents=agents_at(held) if held is not None else None,
                          duration_s=cfg.capacity_duration_s, probes=probes)
