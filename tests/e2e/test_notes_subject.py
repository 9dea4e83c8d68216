"""The contract's notes subject, ``cortex.notes.<agent>`` (three tokens), on a real nats-server:
CORTEX_NOTES captures it and the server copies each note into CORTEX_EVENTS as
``cortex.notes.<slot>.<agent>.section`` — where ``cortex index``'s four-token notes are stored —
so the workers apply it, the partition that owns the agent's slot is the only one delivered it,
a duplicate is dropped, and ``cortex forget`` leaves no copy behind."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nats
from cortex_testkit import subject_count
from nats.js import api

from schemas.docs import NarrativeDoc
from shared.asof import DocReader
from shared.config import load_settings
from shared.forget import purge_events
from shared.names import EVENTS_STREAM, NOTES_STREAM, slot_of, stored_form
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs


def note(i: int, agent: str, path: str, headings: list[str], ts: str = "2026-03-05T08:00:00Z") -> bytes:
    return json.dumps({"id": f"n{i}", "agent": agent, "ts": ts, "path": path, "headings": headings,
                       "content": "text"}).encode()


async def test_a_note_on_the_contract_subject_reaches_the_workers(nats_url: str, tmp_path: Path,
                                                                   wait_for: Any) -> None:
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_BOOT_WAIT_MS": "200"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    report = await provision(js, settings, [s for s in consumer_specs() if s.name == "narrative"])
    assert report[f"stream {NOTES_STREAM}"] == "created"
    host = WorkerHost(settings, [all_specs()["narrative"]], __version__)
    task = asyncio.create_task(host.run())
    try:
        daily = note(1, "nia", "memory/2026-03-05.md", ["2026-03-05", "Standup"])
        first = await js.publish("cortex.notes.nia", daily, headers={"Nats-Msg-Id": "n1"})
        again = await js.publish("cortex.notes.nia", daily, headers={"Nats-Msg-Id": "n1"})
        assert (first.stream, first.duplicate, again.duplicate) == (NOTES_STREAM, None, True)
        stored = f"cortex.notes.{slot_of('nia')}.nia.section"

        async def copied() -> bool:  # the server's copy lands moments later: the session end goes after it
            return await subject_count(js, stored) == 1

        await wait_for(copied, within=30)
        end = {"id": "e1", "agent": "nia", "session": "s1", "ts": "2026-03-05T10:00:00Z"}
        await js.publish("cortex.session.nia.end", json.dumps(end).encode())

        reader = DocReader(js)

        async def narrative() -> NarrativeDoc | None:
            doc = await reader.latest("cortex_narratives", "nia", NarrativeDoc)
            return doc if doc is not None and "Daily note: Standup" in doc.markdown else None

        await wait_for(narrative, within=30)
        assert stored_form("cortex", "cortex.notes.nia") == stored
        assert await subject_count(js, stored) == 1  # copied once, the duplicate dropped at the intake
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()


async def test_only_the_partition_that_owns_the_agent_is_delivered_its_note(nats_url: str, tmp_path: Path,
                                                                           wait_for: Any) -> None:
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path),
                              "CORTEX_PARTITIONS": "2"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs(partitions=2))
    try:
        await js.publish("cortex.notes.nia", note(1, "nia", "memory/a.md", ["A"]))

        async def copied() -> bool:
            return await subject_count(js, f"cortex.notes.{slot_of('nia')}.nia.section") == 1

        await wait_for(copied, within=30)
        owner = slot_of("nia") % 2

        async def counted() -> dict[int, int] | None:
            # a consumer's pending count can trail the stream's copy by a moment
            pending = {k: (await js.consumer_info(EVENTS_STREAM, f"narrative-{k}")).num_pending for k in (0, 1)}
            return pending if sum(pending.values()) >= 1 else None

        assert await wait_for(counted, within=30) == {owner: 1, 1 - owner: 0}
    finally:
        await nc.close()


async def test_init_reconfigures_an_empty_first_layout_stream_before_it_makes_the_intake(
        nats_url: str, tmp_path: Path) -> None:
    """An empty stream of the first layout captured ``cortex.notes.*`` itself: CORTEX_NOTES can
    only claim it once CORTEX_EVENTS is reconfigured. A second init changes nothing."""
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path)})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        await js.add_stream(api.StreamConfig(name=EVENTS_STREAM, subjects=["cortex.msg.*.*", "cortex.notes.*"]))
        first = await provision(js, settings, consumer_specs())
        assert (first[f"stream {EVENTS_STREAM}"], first[f"stream {NOTES_STREAM}"]) == ("updated", "created")
        second = await provision(js, settings, consumer_specs())
        assert (second[f"stream {EVENTS_STREAM}"], second[f"stream {NOTES_STREAM}"]) == ("unchanged", "unchanged")
        sources = (await js.stream_info(EVENTS_STREAM)).config.sources or []
        assert [(s.name, [(t.src, t.dest) for t in s.subject_transforms or []]) for s in sources] == [
            (NOTES_STREAM, [("cortex.notes.*", "cortex.notes.{{wildcard(1)}}.section")])]
    finally:
        await nc.close()


async def test_forget_leaves_no_copy_of_her_notes_in_the_intake(nats_url: str, tmp_path: Path,
                                                                wait_for: Any) -> None:
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path)})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        await provision(js, settings, consumer_specs())
        await js.publish("cortex.notes.alice", note(1, "alice", "memory/a.md", ["Private"]))
        await js.publish("cortex.notes.bob", note(2, "bob", "memory/b.md", ["Kept"]))

        async def copied() -> bool:
            return (await js.stream_info(EVENTS_STREAM)).state.messages == 2

        await wait_for(copied, within=30)
        assert await purge_events(js, "cortex", "alice") == 1  # the copy in CORTEX_EVENTS
        left = (await js.stream_info(NOTES_STREAM, subjects_filter="cortex.notes.*")).state.subjects or {}
        assert left == {"cortex.notes.bob": 1}
        assert await subject_count(js, f"cortex.notes.{slot_of('bob')}.bob.section") == 1
    finally:
        await nc.close()
