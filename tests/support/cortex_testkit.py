"""Helpers shared by the end-to-end tests (importable as ``cortex_testkit``: pytest puts
tests/support on the path; nothing here shadows the project's own packages)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

from nats.js.client import JetStreamContext

from shared.kv import kv_read
from shared.names import EVENTS_STREAM
from workers.registry import all_specs

CONSUMING = [name for name, spec in all_specs().items() if spec.build is not None]
OWNED_BUCKETS = [b for spec in all_specs().values() for b in spec.buckets]
ALL = list(all_specs())


def cortex(*args: str, url: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workers", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "CORTEX_NATS_URL": url, **env})


def demo_file(tmp: Path, agent: str = "main") -> Path:
    text = resources.files("workers.demo").joinpath("conversation.jsonl").read_text()
    lines = []
    for line in text.splitlines():
        event = json.loads(line)
        event["agent"] = agent
        event["id"] = f"{agent}-{event['id']}"
        lines.append(json.dumps(event))
    path = tmp / f"{agent}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


async def drained(js: JetStreamContext) -> bool:
    for name in CONSUMING:
        info = await js.consumer_info(EVENTS_STREAM, name)
        if info.num_pending or info.num_ack_pending:
            return False
    return True


async def snapshot_docs(js: JetStreamContext, agents: list[str]) -> dict[str, bytes | None]:
    out = {}
    for bucket in OWNED_BUCKETS:
        kv = await js.key_value(bucket)
        for agent in agents:
            raw, _ = await kv_read(kv, agent)
            out[f"{bucket}/{agent}"] = raw
    return out
