"""`cortex status`'s SOURCES section: what the OpenClaw store holds, what was copied, and how a
backfill progresses (the slowest worker's events left, its rate, the time to go)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import nats
import worker_forkserver
from nats.js import api

from shared.names import EVENTS_STREAM
from workers.cli.sources import Progress, workers_line

FIXTURE = Path(__file__).parent.parent / "fixtures" / "openclaw" / "v0.2.jsonl"


def test_the_slowest_worker_its_rate_and_time_to_go() -> None:
    first = Progress(at=10.0, left={"threads": 1000, "boot": 9000}, acked={"threads": 0, "boot": 100}, copied=0)
    second = Progress(at=12.0, left={"threads": 0, "boot": 8000}, acked={"threads": 1000, "boot": 1100}, copied=0)
    assert workers_line(first, second) == "workers: slowest boot, 8000 events left, 500 events/s, about 16 s to go"
    assert workers_line(first, None) == "workers: slowest boot, 9000 events left"
    done = Progress(at=1.0, left={"threads": 0}, acked={"threads": 5}, copied=0)
    assert workers_line(done, None) == "workers: every consumer has applied everything (caught up)"


def cortex(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return worker_forkserver.run_cortex(args, env={**os.environ, **env}, timeout=60)


async def test_status_shows_the_store_what_was_copied_and_its_kinds(nats_url: str, wait_for: Any) -> None:
    env = {"CORTEX_NATS_URL": nats_url, "CORTEX_OPENCLAW_STREAM": "openclaw-events"}
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await js.add_stream(api.StreamConfig(name="openclaw-events", subjects=["openclaw.events.>"]))
        for line in FIXTURE.read_text().splitlines():  # what the real plugin published (18 events)
            item = json.loads(line)
            await js.publish(item["subject"], item["data"].encode())
        await js.publish("openclaw.events.main.cron_run", b"{}")  # a type Cortex does not know
        assert (await asyncio.to_thread(cortex, "init", **env)).returncode == 0

        async def copied() -> bool:
            return (await js.stream_info(EVENTS_STREAM)).state.messages == 19

        await wait_for(copied, within=20)
    finally:
        await nc.close()
    status = await asyncio.to_thread(cortex, "status", **env)
    assert status.returncode == 0, status.stderr
    out = status.stdout
    assert "openclaw-events → CORTEX_EVENTS: store 19 messages, copied 19 (lag 0" in out
    assert ("conversation 8 · tool 2 · run 3 · ignored (llm.*, gateway.*, msg.sending) 5 · unknown 1 (cron_run)"
            in out)
    assert "workers: slowest " in out and "events left" in out and "events/s" in out  # nobody consumes yet


def test_status_says_how_to_wire_a_store_when_none_is(nats_url: str) -> None:
    assert cortex("init", CORTEX_NATS_URL=nats_url).returncode == 0
    out = cortex("status", CORTEX_NATS_URL=nats_url).stdout
    assert "SOURCES\n  (none: set CORTEX_OPENCLAW_STREAM and run `cortex init`" in out
