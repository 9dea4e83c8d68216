"""API latency against a full-size state: ``cortex.api.boot.<agent>`` (a fresh assembly)
and the query APIs, measured as request → reply round trips from a client."""

from __future__ import annotations

import time
from typing import Final

import msgspec

from schemas.docs import BootDoc
from shared.names import api_subject
from workers.bench.fullstate import COMMITMENTS, DECISIONS, THREADS, write_full_state
from workers.bench.results import ApiResult
from workers.bench.session import Session
from workers.bench.stats import summarize

AGENT: Final = "bench-full"
WARM_UP: Final = 5
ENDPOINTS: Final[tuple[tuple[str, bytes], ...]] = (
    ("boot", b"{}"),
    ("threads", b'{"status": "open", "limit": 10}'),
    ("decisions", b'{"query": "redis cache", "limit": 20}'),
    ("commitments", b'{"status": "open"}'),
    ("search", b'{"query": "auth migration token rotation"}'),
    ("status", b"{}"),
)
ERROR_HEADER: Final = "Nats-Service-Error-Code"


async def run(session: Session) -> ApiResult:
    sizes = await write_full_state(session.js, AGENT)
    result = ApiResult(agent=AGENT, state={"threads": THREADS, "decisions": DECISIONS, "commitments": COMMITMENTS,
                                           **{f"{bucket}_bytes": size for bucket, size in sizes.items()}})
    n = session.config.api_requests
    for service, body in ENDPOINTS:
        subject = api_subject(session.prefix, service, AGENT)
        samples: list[float] = []
        failures = 0
        for i in range(WARM_UP + n):
            started = time.perf_counter()
            reply = await session.nc.request(subject, body, timeout=5.0)
            elapsed = time.perf_counter() - started
            if reply.headers and ERROR_HEADER in reply.headers:
                failures += 1
                result.errors[service] = reply.data.decode(errors="replace")[:300]
                continue
            if i >= WARM_UP:
                samples.append(elapsed)
            if service == "boot" and result.boot_chars is None:
                result.boot_chars = msgspec.json.decode(reply.data, type=BootDoc).chars
        result.endpoints[service] = summarize(samples, lost=failures)
        latency = result.endpoints[service]
        session.progress(f"[api] {service}: p50 {latency.p50_ms} ms, p99 {latency.p99_ms} ms ({n} requests)")
    return result
