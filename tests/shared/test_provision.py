"""Provisioning is idempotent and safe to run from several pods at once."""

from __future__ import annotations

import asyncio
from typing import Any

import nats
from nats.js import api

from shared.config import load_settings
from shared.names import DLQ_STREAM, EVENTS_STREAM, NOTES_STREAM, slot_of
from shared.provision import provision
from workers.registry import all_buckets, consumer_specs


async def test_concurrent_provisioning_from_several_clients_all_succeed(nats_url: str) -> None:
    settings = load_settings({})
    clients = [await nats.connect(nats_url) for _ in range(4)]
    try:
        reports = await asyncio.gather(*(provision(c.jetstream(), settings, consumer_specs()) for c in clients))
        created = sum(1 for r in reports for outcome in r.values() if outcome == "created")
        assert created >= len(all_buckets()) + 2  # each thing created once by whichever client won
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


OPENCLAW = {"CORTEX_OPENCLAW_STREAM": "openclaw-events"}


async def test_init_wires_the_openclaw_store_and_the_server_copies_it_from_its_first_message(
        nats_url: str, wait_for: Any) -> None:
    """Backfill: events the store held before Cortex was switched on arrive, payload unchanged,
    on cortex.openclaw.<agent>.<type>; a second init changes nothing."""
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await js.add_stream(api.StreamConfig(name="openclaw-events", subjects=["openclaw.events.>"]))
        where = [("main", "msg_in"), ("viola", "msg_out"), ("system", "gateway_start")]
        old = [(f"openclaw.events.{agent}.{token}", f'{{"n":{i}}}'.encode()) for i, (agent, token) in enumerate(where)]
        for subject, data in old:
            await js.publish(subject, data)
        report = await provision(js, load_settings(OPENCLAW), consumer_specs())
        line = next(what for what in report if what.startswith("source openclaw-events"))
        assert "3 messages (sequences 1..3)" in line and report[line] == "wired"

        async def copied() -> bool:
            return (await js.stream_info(EVENTS_STREAM)).state.messages == 3

        await wait_for(copied, within=20)
        stored = [await js.get_msg(EVENTS_STREAM, seq) for seq in (1, 2, 3)]
        # the store's events pass the stream's slot transform too (stored_subject)
        assert [m.subject for m in stored] == ["cortex.openclaw.8.main.msg_in", "cortex.openclaw.38.viola.msg_out",
                                               f"cortex.openclaw.{slot_of('system')}.system.gateway_start"]
        assert [m.data for m in stored] == [data for _, data in old]
        again = await provision(js, load_settings(OPENCLAW), consumer_specs())
        assert again[f"stream {EVENTS_STREAM}"] == "unchanged"
    finally:
        await nc.close()


async def test_an_operators_own_source_is_kept_and_a_process_without_the_setting_keeps_ours(nats_url: str) -> None:
    """`cortex up` or a worker started without CORTEX_OPENCLAW_STREAM must not unwire the store;
    a changed prefix replaces our source and nothing else."""
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await provision(js, load_settings(OPENCLAW), consumer_specs())
        config = (await js.stream_info(EVENTS_STREAM)).config
        theirs = api.StreamSource(name="mirror-of-elsewhere", filter_subject="cortex.msg.>")
        config.sources = [*(config.sources or []), theirs]
        await js.update_stream(config)
        unchanged = await provision(js, load_settings(OPENCLAW), consumer_specs())
        assert unchanged[f"stream {EVENTS_STREAM}"] == "unchanged"
        report = await provision(js, load_settings({}), consumer_specs())
        assert report[f"stream {EVENTS_STREAM}"] == "unchanged"
        assert {s.name for s in (await js.stream_info(EVENTS_STREAM)).config.sources or []} == {
            "mirror-of-elsewhere", "openclaw-events", NOTES_STREAM}
        report = await provision(js, load_settings({**OPENCLAW, "CORTEX_OPENCLAW_PREFIX": "oc.ev"}), consumer_specs())
        assert report[f"stream {EVENTS_STREAM}"] == "updated"
        sources = {s.name: s for s in (await js.stream_info(EVENTS_STREAM)).config.sources or []}
        assert set(sources) == {"mirror-of-elsewhere", "openclaw-events", NOTES_STREAM}
        transform = (sources["openclaw-events"].subject_transforms or [])[0]
        assert (transform.src, transform.dest) == ("oc.ev.*.*", "cortex.openclaw.{{wildcard(1)}}.{{wildcard(2)}}")
    finally:
        await nc.close()


async def test_removing_and_wiring_the_store_again_copies_nothing_twice(nats_url: str, wait_for: Any) -> None:
    """The server finds where it stopped from what it copied: a store unwired by hand and wired
    again by `cortex init` (an operator's mistake, a rollback) duplicates nothing."""
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await js.add_stream(api.StreamConfig(name="openclaw-events", subjects=["openclaw.events.>"]))
        await provision(js, load_settings(OPENCLAW), consumer_specs())
        await js.publish("openclaw.events.main.msg_in", b'{"n":1}')

        async def holds(n: int) -> bool:
            return (await js.stream_info(EVENTS_STREAM)).state.messages == n

        await wait_for(lambda: holds(1), within=20)
        config = (await js.stream_info(EVENTS_STREAM)).config
        config.sources = None  # an operator unwires the store (docs/integration.md)
        await js.update_stream(config)
        await js.publish("openclaw.events.main.msg_in", b'{"n":2}')
        await provision(js, load_settings(OPENCLAW), consumer_specs())
        await wait_for(lambda: holds(2), within=20)
        await js.publish("openclaw.events.main.msg_in", b'{"n":3}')
        await wait_for(lambda: holds(3), within=20)
        assert [(await js.get_msg(EVENTS_STREAM, s)).data for s in (1, 2, 3)] == [b'{"n":1}', b'{"n":2}', b'{"n":3}']
    finally:
        await nc.close()


async def test_the_dead_letters_deduplicate_for_as_long_as_they_are_kept(nats_url: str) -> None:
    """Issue 44 item 9: each replay re-added a copy of every old dead letter (1 337 for 527
    failures): their ``dlq:<worker>:<seq>`` ids deduplicated for two minutes only."""
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await provision(js, load_settings({"CORTEX_DLQ_RETENTION": "7d"}), consumer_specs())
        config = (await js.stream_info(DLQ_STREAM)).config
        assert config.duplicate_window == config.max_age == 7 * 86400
        first = await js.publish("cortex.dlq.threads", b"x", headers={"Nats-Msg-Id": "dlq:threads:42"})
        again = await js.publish("cortex.dlq.threads", b"x", headers={"Nats-Msg-Id": "dlq:threads:42"})
        assert not first.duplicate and again.duplicate
    finally:
        await nc.close()
