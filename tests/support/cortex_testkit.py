"""Helpers shared by the end-to-end tests (importable as ``cortex_testkit``: pytest puts
tests/support on the path; nothing here shadows the project's own packages)."""

from __future__ import annotations

import asyncio
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


async def held_back(js: JetStreamContext, consumer: str, within: float = 5.0) -> int:
    """How many of ``consumer``'s unacknowledged messages a stopped worker kept instead of
    giving them back. A nak'd message stays in ``num_ack_pending`` until it is acked, but
    the next pull request gets it at once; one never nak'd comes back only after ``ack_wait``.
    A probe pulls for ``within`` seconds (well inside ``ack_wait``) and counts what did not
    come back; it gives everything back itself before returning."""
    from shared.pull import fetcher_for

    info = await js.consumer_info(EVENTS_STREAM, consumer)
    unacked = info.num_ack_pending or 0
    if not unacked:
        return 0
    assert info.config.ack_wait is not None and within < info.config.ack_wait / 2, "probe must end well inside ack_wait"
    probe = fetcher_for(js, EVENTS_STREAM, consumer)
    await probe.start()
    floor = info.ack_floor.stream_seq if info.ack_floor else 0
    last = info.delivered.stream_seq if info.delivered else 0
    back: set[int] = set()
    taken = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    try:
        while len(back) < unacked and (remaining := deadline - loop.time()) > 0:
            for msg in await probe.fetch(unacked + (info.num_pending or 0), wait_s=min(1.0, remaining)):
                taken.append(msg)
                if floor < msg.metadata.sequence.stream <= last:
                    back.add(msg.metadata.sequence.stream)
    finally:
        for msg in taken:
            await msg.nak()
        await probe.stop()
    return unacked - len(back)
