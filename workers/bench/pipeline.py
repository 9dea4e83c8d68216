"""The whole pipeline as processes: every registered worker, one ``cortex worker NAME`` each."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import nats.errors

from shared.names import api_subject
from workers.bench.procs import stop_together
from workers.bench.session import BenchError, Session
from workers.registry import all_specs

# A request that tells whether a serving worker answers: (service subject token, body).
PROBES: dict[str, tuple[str, bytes]] = {
    "boot": ("boot", b"{}"),
    "api": ("status", b"{}"),
    "recall": ("recall", b'{"query": "probe"}'),
}


async def _wait_service(session: Session, service: str, body: bytes, limit_s: float = 60.0) -> None:
    subject = api_subject(session.prefix, service, "bench-probe")
    deadline = time.monotonic() + limit_s
    while True:
        session.check_alive(session.pipeline)
        try:
            await session.nc.request(subject, body, timeout=2.0)
            return
        except (nats.errors.NoRespondersError, nats.errors.TimeoutError, TimeoutError):
            if time.monotonic() > deadline:
                raise BenchError(f"service {subject} did not answer within {limit_s:.0f}s") from None
            await asyncio.sleep(0.1)


async def start(session: Session) -> None:
    registered = all_specs()
    wanted = session.config.pipeline or tuple(registered)
    unknown = [w for w in wanted if w not in registered]
    if unknown:
        raise BenchError(f"unknown pipeline worker(s) {', '.join(unknown)} (known: {', '.join(registered)})")
    specs = {name: registered[name] for name in wanted}
    session.progress(f"[pipeline] starting {len(specs)} worker processes: {', '.join(specs)} …")
    trace = {"CORTEX_LOG_LEVEL": "DEBUG", "CORTEX_LOG_FORMAT": "json"} if session.config.boot_trace else {}
    profile = session.config.profile_dir
    profile_dir = Path(profile) / "pipeline" if profile else None  # beside the throughput workers' profiles
    session.pipeline = [session.procs.start(name, profile_dir=profile_dir, env=trace if name == "boot" else None,
                                            pipeline=True)
                        for name in specs]
    session.pipeline_consumers = [name for name, spec in specs.items() if spec.build is not None]
    await session.wait_leases(session.pipeline_consumers, session.pipeline)
    for name, spec in specs.items():
        if spec.serve is not None and name in PROBES:
            await _wait_service(session, *PROBES[name])


def peak_rss(session: Session) -> dict[str, float]:
    return {p.name: rss for p in session.pipeline if (rss := p.peak_rss_mb()) is not None}


def stop(session: Session) -> None:
    stop_together(session.pipeline)
    session.pipeline = []
