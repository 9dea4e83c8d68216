"""The recall worker with its vector store unreachable: retried with backoff, never dead-lettered,
not ready with the reason, and the process keeps running."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

import nats
import pytest

from shared.embedded import free_port

pytestmark = pytest.mark.faults


def readyz(port: int) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""


async def test_an_unreachable_qdrant_server_keeps_recall_not_ready_and_loses_nothing(
    nats_url: str, workers_procs: Any, wait_for: Any, make_chat_events: Any
) -> None:
    subprocess.run([sys.executable, "-m", "workers", "init"], check=True, capture_output=True,
                   env={**os.environ, "CORTEX_NATS_URL": nats_url}, timeout=60)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        for subject, data, event_id in make_chat_events(20, 2):
            await js.publish(subject, data, headers={"Nats-Msg-Id": event_id})
        port = free_port()
        proc = workers_procs.start("recall", nats_url, CORTEX_QDRANT_URL=f"http://127.0.0.1:{free_port()}",
                                   CORTEX_METRICS_PORT=str(port))

        async def not_ready_with_reason() -> str | None:
            status, body = readyz(port)
            return body if status == 503 and "memory store unavailable" in body else None

        body = await wait_for(not_ready_with_reason, within=60)
        assert "recall" in body
        assert proc.poll() is None, "the worker must keep running and retrying"
        info = await js.consumer_info("CORTEX_EVENTS", "recall")
        assert info.num_pending == 20 and info.ack_floor.stream_seq == 0  # nothing acked
        assert (await js.stream_info("CORTEX_DLQ")).state.messages == 0  # nothing dead-lettered
    finally:
        await nc.close()
