"""Liveness, readiness and metrics over HTTP on ``CORTEX_METRICS_PORT``.

``/healthz``: the event loop is alive (a beat within the last 30 s).
``/readyz``: every worker in the process is connected and consuming (or a standby);
the body names the reason when not.
``/metrics``: Prometheus text format.
"""

from __future__ import annotations

import asyncio
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from shared import metrics


class Health:
    """Readiness of one worker (one consume loop)."""

    def __init__(self, worker: str) -> None:
        self.worker = worker
        self.ready = False
        self.reason = "starting"

    def set_ready(self, ready: bool, reason: str) -> None:
        if ready != self.ready or reason != self.reason:
            self.ready, self.reason = ready, reason
            metrics.READY.labels(self.worker).set(1 if ready else 0)


class HealthRegistry:
    def __init__(self) -> None:
        self._workers: dict[str, Health] = {}
        self.last_beat = time.monotonic()
        self.connected = False

    def worker(self, name: str) -> Health:
        return self._workers.setdefault(name, Health(name))

    def readiness(self) -> tuple[bool, str]:
        if not self.connected:
            return False, "not connected to NATS"
        lines = [f"{h.worker}: {'ready' if h.ready else 'not ready'} ({h.reason})" for h in self._workers.values()]
        ok = bool(self._workers) and all(h.ready for h in self._workers.values())
        return ok, "\n".join(lines) or "no workers"

    def liveness(self) -> tuple[bool, str]:
        age = time.monotonic() - self.last_beat
        return age < 30.0, f"event loop beat {age:.1f}s ago"

    async def beat(self) -> None:
        while True:
            self.last_beat = time.monotonic()
            await asyncio.sleep(1.0)


def serve(registry: HealthRegistry, port: int, host: str = "0.0.0.0") -> ThreadingHTTPServer:
    """Start the HTTP endpoints in a daemon thread; ``server.server_port`` is the bound port."""

    class _Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, generate_latest(), CONTENT_TYPE_LATEST)
                return
            if path in ("/healthz", "/readyz"):
                ok, text = registry.liveness() if path == "/healthz" else registry.readiness()
                self._send(200 if ok else 503, (text + "\n").encode(), "text/plain; charset=utf-8")
                return
            self._send(404, b"not found\n", "text/plain")

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer((host, port), _Handler)
    threading.Thread(target=server.serve_forever, name="cortex-http", daemon=True).start()
    return server
