"""The recall worker cuts at triggers like the event-derived workers: the agent's memory
summary just before a session start is a revision of its own, whatever the batch, so the
boot document made as of that session start reads the same summary after any replay."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import nats
from cortex_testkit import caught_up

from schemas.docs import RecallDoc
from shared.asof import DocReader
from shared.config import load_settings
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LINES = [
    "We must never deploy the shop on Fridays, the last outage cost us a weekend.",
    "I finally moved to Berlin last month, the flat is near the river.",
    "The quarterly report is due on the 15th of March.",
    "Remember that the staging database password rotates every Monday.",
]


def conversation(agent: str) -> list[tuple[str, bytes]]:
    def ts(minutes: int) -> str:
        return (T0 + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def session(n: int, kind: str, minutes: int) -> tuple[str, bytes]:
        body = {"id": f"{agent}-{kind}-{n}", "agent": agent, "session": f"s{n}", "ts": ts(minutes)}
        return f"cortex.session.{agent}.{kind}", msgspec.json.encode(body)

    def message(i: int, session_no: int) -> tuple[str, bytes]:
        body = {"id": f"{agent}-m{i}", "agent": agent, "session": f"s{session_no}", "ts": ts(i + 1),
                "role": "user", "sender": "caroline", "content": LINES[i]}
        return f"cortex.msg.{agent}.received", msgspec.json.encode(body)

    return [session(1, "start", 0), message(0, 1), message(1, 1), session(2, "start", 3), message(2, 2),
            message(3, 2)]


async def test_the_summary_before_a_session_start_does_not_depend_on_batching(
    nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_EMBEDDER": "hashing", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    seqs: dict[str, list[int]] = {"ada": [], "bob": []}
    for subject, data in conversation("ada"):  # a backlog: the worker takes it in one batch
        seqs["ada"].append((await js.publish(subject, data)).seq)

    async def drained() -> bool:
        return await caught_up(js, "recall")

    host = WorkerHost(settings, [all_specs()["recall"]], __version__)
    task = asyncio.create_task(host.run())
    try:
        await wait_for(drained, within=60)
        for subject, data in conversation("bob"):  # one event per batch
            seqs["bob"].append((await js.publish(subject, data)).seq)
            await wait_for(drained, within=60)
        reader = DocReader(js)
        before_start = {a: (await reader.as_of("cortex_recall", a, RecallDoc, seqs[a][3]))[0] for a in seqs}
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=60)
        await nc.close()
    ada, bob = before_start["ada"], before_start["bob"]
    assert ada is not None and bob is not None, "no summary as of the session start"
    assert (ada.integrity.last_seq, bob.integrity.last_seq) == (seqs["ada"][2], seqs["bob"][2])
    assert ada.key_memories == bob.key_memories and ada.memories == bob.memories and ada.memories >= 1
    assert not any("quarterly report" in m.lower() for m in ada.key_memories)  # after the session start
