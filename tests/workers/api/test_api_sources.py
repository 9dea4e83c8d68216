"""The api worker exports what the OpenClaw store's copy holds: the ignored kinds are counted."""

from __future__ import annotations

import asyncio
from typing import Any

import nats
from nats.js import api
from prometheus_client import REGISTRY

from shared.config import load_settings
from shared.health import Health
from shared.names import EVENTS_STREAM
from shared.provision import provision
from shared.runtime import WorkerContext
from workers.api.worker import watch_sources
from workers.registry import consumer_specs


def gauge(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


async def test_store_events_are_counted_by_kind_and_the_ignored_ones_too(nats_url: str, wait_for: Any) -> None:
    settings = load_settings({"CORTEX_OPENCLAW_STREAM": "openclaw-events"})
    nc = await nats.connect(nats_url)
    stop = asyncio.Event()
    try:
        js = nc.jetstream()
        await js.add_stream(api.StreamConfig(name="openclaw-events", subjects=["openclaw.events.>"]))
        for subject in ("openclaw.events.main.msg_in", "openclaw.events.main.llm_input",
                        "openclaw.events.main.llm_output", "openclaw.events.system.gateway_start",
                        "openclaw.events.main.tool_call", "openclaw.events.main.cron_run"):
            await js.publish(subject, b"{}")
        await provision(js, settings, consumer_specs())

        async def copied() -> bool:
            return (await js.stream_info(EVENTS_STREAM)).state.messages == 6

        await wait_for(copied, within=20)
        ctx = WorkerContext(nc=nc, js=js, settings=settings, worker="api", consumer="", producer="api@test",
                            health=Health("api-api"))
        watcher = asyncio.create_task(watch_sources(ctx, stop, every_s=0.05))

        async def exported() -> bool:
            return gauge("cortex_source_events", source="openclaw-events", kind="not_conversation") == 3

        await wait_for(exported, within=10)
        assert gauge("cortex_source_events", source="openclaw-events", kind="conversation") == 1
        assert gauge("cortex_source_events", source="openclaw-events", kind="tool") == 1
        assert gauge("cortex_source_events", source="openclaw-events", kind="unknown") == 1
        assert gauge("cortex_source_lag", source="openclaw-events") == 0
        stop.set()
        await asyncio.wait_for(watcher, timeout=5)
    finally:
        stop.set()
        await nc.close()
