"""Recall's knowledge facts do not depend on how far behind the knowledge worker was.

A session start mirrors the agent's knowledge facts into recall (``workers.recall.facts``),
read as of the start. With the knowledge worker behind past the composed wait's bound
(``CORTEX_BOOT_WAIT_MS``), the start mirrored what knowledge had written by then. Under load
(the suite at load ~22) a replay's recall store held 40 memories where the live one held 41:
the live recall worker, paused then resumed onto its backlog, read the complete knowledge
document; the replay's, beside a knowledge worker replaying too, missed Maria's fact. The
read waits as a replay does (``Inputs.patiently``), so the store depends on the events alone.
A real nats-server; the recall worker in-process, the knowledge worker started once recall
is at the session start.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import nats
import pytest

import shared.inputs
from shared.config import load_settings
from shared.inputs import COMPOSED_LAGGING
from shared.names import EVENTS_STREAM
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.recall import worker as recall_worker
from workers.recall.store import MemoryFilter
from workers.registry import all_specs, consumer_specs


class _Said(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


async def test_a_session_start_mirrors_the_facts_before_it_though_knowledge_was_behind_past_the_bound(
    nats_url: str, tmp_path: Path, wait_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # however long the knowledge worker takes to start (the suite runs at load ~20), recall does
    # not give up on it meanwhile: nobody at its consumer, its ack floor not moving
    monkeypatch.setattr(recall_worker, "KNOWLEDGE_UNCONSUMED_S", 3600.0)
    monkeypatch.setattr(shared.inputs, "STUCK_S", 3600.0)
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_BOOT_WAIT_MS": "100",
                              "CORTEX_EMBEDDER": "hashing"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    specs = all_specs()
    await provision(js, settings, consumer_specs())
    said = _Said()
    inputs_log = logging.getLogger("shared.inputs")
    level = inputs_log.level
    inputs_log.setLevel(logging.INFO)
    inputs_log.addHandler(said)
    lagged = COMPOSED_LAGGING.labels("recall", "knowledge")._value.get()
    recall = WorkerHost(settings, [specs["recall"]], __version__)
    knowledge = WorkerHost(settings, [specs["knowledge"]], __version__)
    tasks = [asyncio.create_task(recall.run())]

    async def at_the_start() -> bool:
        """The recall worker read the start's facts with knowledge behind past the bound, or it
        waits for knowledge (whose worker is not running yet)."""
        return (COMPOSED_LAGGING.labels("recall", "knowledge")._value.get() > lagged
                or "waiting_for_source" in said.messages)

    async def drained() -> bool:
        for name in ("knowledge", "recall"):
            info = await js.consumer_info(EVENTS_STREAM, name)
            if info.num_pending or info.num_ack_pending:
                return False
        return True

    try:
        message = {"id": "m1", "agent": "mia", "session": "s1", "ts": "2026-03-01T10:00:00Z", "role": "user",
                   "sender": "al", "content": "Maria works at Acme Corp."}
        await js.publish("cortex.msg.mia.received", json.dumps(message).encode())
        start = {"id": "s2", "agent": "mia", "session": "s2", "ts": "2026-03-02T10:00:00Z"}
        await js.publish("cortex.session.mia.start", json.dumps(start).encode())
        await wait_for(at_the_start, within=60)
        tasks.append(asyncio.create_task(knowledge.run()))  # knowledge catches up only now
        await wait_for(drained, within=60)
        store = recall_worker.HOLDER.store
        assert store is not None
        facts = [m.content for m in store.scroll("mia", flt=MemoryFilter(types=("fact",)))]
        assert facts == ["Maria works at Acme Corp."]  # as in a replay, where knowledge is not behind
    finally:
        inputs_log.removeHandler(said)
        inputs_log.setLevel(level)
        recall.stop.set()
        knowledge.stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
        await nc.close()
