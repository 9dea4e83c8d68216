"""fact_access end to end (issue 23): the facts a search returns and a briefing shows are
published as `fact_access` feedback, and the knowledge worker promotes them halfway to 1.0
(the knowledge-engine design, §7). A real nats-server; knowledge, api and boot workers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec
import nats

from schemas.api import SearchReply
from schemas.docs import KnowledgeDoc
from shared.asof import DocReader
from shared.config import load_settings
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.knowledge.facts import decayed, promote
from workers.registry import all_specs, consumer_specs


def message(i: int, day: int, content: str) -> bytes:
    return json.dumps({"id": f"m{i}", "agent": "mia", "session": "s1", "ts": f"2026-03-{day:02d}T10:00:00Z",
                       "role": "user", "sender": "al", "content": content}).encode()


async def test_a_searched_and_a_briefed_fact_is_promoted(nats_url: str, tmp_path: Path, wait_for: Any) -> None:
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_BOOT_WAIT_MS": "100"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    specs = all_specs()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, [specs["knowledge"], specs["api"], specs["boot"]], __version__)
    task = asyncio.create_task(host.run())
    reader = DocReader(js)

    async def relevance(wanted: float) -> bool:
        doc = await reader.latest("cortex_knowledge", "mia", KnowledgeDoc)
        return doc is not None and [f.relevance for f in doc.facts if f.predicate == "works-at"] == [wanted]

    try:
        await js.publish("cortex.msg.mia.received", message(1, 1, "Maria works at Acme Corp."))
        await js.publish("cortex.msg.mia.received", message(2, 11, "Lunch was great today."))  # 10 days: decay
        aged = decayed(1.0, 0.02, 10)
        await wait_for(lambda: relevance(aged), within=30)

        raw = await nc.request("cortex.api.search.mia", b'{"query": "Maria Acme"}', timeout=10)
        assert [h.kind for h in msgspec.json.decode(raw.data, type=SearchReply).hits][:1] == ["fact"]
        await wait_for(lambda: relevance(promote(aged)), within=30)

        boot = await nc.request("cortex.api.boot.mia", b"{}", timeout=10)
        assert b"works-at" in boot.data
        await wait_for(lambda: relevance(promote(promote(aged))), within=30)
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()
