"""Provisioning is idempotent and safe to run from several pods at once."""

from __future__ import annotations

import asyncio

import nats

from shared.config import load_settings
from shared.names import ALL_BUCKETS, DLQ_STREAM, EVENTS_STREAM
from shared.provision import provision
from workers.registry import consumer_specs


async def test_concurrent_provisioning_from_several_clients_all_succeed(nats_url: str) -> None:
    settings = load_settings({})
    clients = [await nats.connect(nats_url) for _ in range(4)]
    try:
        reports = await asyncio.gather(*(provision(c.jetstream(), settings, consumer_specs()) for c in clients))
        created = sum(1 for r in reports for outcome in r.values() if outcome == "created")
        assert created >= len(ALL_BUCKETS) + 2  # each thing created once by whichever client won
        js = clients[0].jetstream()
        assert (await js.stream_info(EVENTS_STREAM)).config.duplicate_window >= 120
        assert (await js.stream_info(DLQ_STREAM)).config.subjects == ["cortex.dlq.>"]
        again = await provision(js, settings, consumer_specs())
        assert set(again.values()) == {"unchanged"}
    finally:
        for c in clients:
            await c.close()


async def test_a_changed_setting_updates_the_stream_and_consumers(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await provision(js, load_settings({}), consumer_specs())
        report = await provision(js, load_settings({"CORTEX_RETENTION": "90d", "CORTEX_RUNTIME_ACK_WAIT_S": "60"}),
                                 consumer_specs())
        assert report[f"stream {EVENTS_STREAM}"] == "updated"
        assert report["consumer threads"] == "updated"
        assert (await js.stream_info(EVENTS_STREAM)).config.max_age == 90 * 86400
    finally:
        await nc.close()
