"""A worker process serves /healthz, /readyz and /metrics on CORTEX_METRICS_PORT."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

import nats

from shared.embedded import free_port


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""


async def test_worker_reports_liveness_readiness_and_metrics(nats_url: str, workers_procs: Any,
                                                             wait_for: Any) -> None:
    subprocess.run([sys.executable, "-m", "workers", "init"], check=True, capture_output=True,
                   env={**os.environ, "CORTEX_NATS_URL": nats_url}, timeout=60)
    port = free_port()
    workers_procs.start("channels", nats_url, CORTEX_METRICS_PORT=str(port))
    base = f"http://127.0.0.1:{port}"
    await wait_for(lambda: _status(f"{base}/healthz", 200), within=30)
    await wait_for(lambda: _status(f"{base}/readyz", 200), within=30)
    nc = await nats.connect(nats_url)
    payload = (b'{"id":"h1","agent":"main","session":"s","ts":"2026-02-17T10:00:00Z","role":"user",'
               b'"content":"hello","channel":"webchat"}')
    await nc.jetstream().publish("cortex.msg.main.received", payload)
    await nc.jetstream().publish("cortex.msg.main.received", b"{broken")
    await nc.close()
    needle = 'cortex_dead_letters_total{reason="invalid",worker="channels"} 1.0'
    text = await wait_for(lambda: _metrics_with(base, needle))
    assert 'cortex_events_total{outcome="applied",worker="channels"} 1.0' in text
    assert "cortex_handler_seconds_bucket" in text
    assert 'cortex_worker_ready{worker="channels"} 1.0' in text
    status, body = get(f"{base}/readyz")
    assert status == 200 and "channels: ready" in body


async def _status(url: str, code: int) -> bool:
    return get(url)[0] == code


async def _metrics_with(base: str, needle: str) -> str | None:
    _, text = get(f"{base}/metrics")
    return text if needle in text else None
