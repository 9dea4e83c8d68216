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
        assert b"Maria works at Acme" in boot.data  # the predicate read as words
        await wait_for(lambda: relevance(promote(promote(aged))), within=30)
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()


async def test_a_fact_is_recalled_by_meaning_and_its_recall_promotes_it(
    nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    """The session start mirrors the knowledge facts into recall; a question finds the
    fact's memory (linked to its fact id) and its `fact_access` reaches the knowledge worker."""
    from schemas.api import RecallReply

    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    specs = all_specs()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, [specs["knowledge"], specs["recall"]], __version__)
    task = asyncio.create_task(host.run())
    reader = DocReader(js)

    async def relevance(wanted: float) -> bool:
        doc = await reader.latest("cortex_knowledge", "mia", KnowledgeDoc)
        return doc is not None and [f.relevance for f in doc.facts if f.predicate == "works-at"] == [wanted]

    async def recalled() -> RecallReply | None:
        try:  # not serving yet, or an error reply while the worker starts: ask again
            # a generous timeout: a reply given up on while the worker still answers would publish
            # a second fact_access (a second promotion) once the question is asked again
            raw = await nc.request("cortex.api.recall.mia", b'{"query": "Which company does Maria work for?"}',
                                   timeout=30)
            reply = msgspec.json.decode(raw.data, type=RecallReply)
        except Exception:
            return None
        return reply if any(m.fact_id for m in reply.memories) else None

    try:
        await js.publish("cortex.msg.mia.received", message(1, 1, "Maria works at Acme Corp."))
        await js.publish("cortex.msg.mia.received", message(2, 11, "Lunch was great."))  # 10 days later: decay
        start = {"id": "s2", "agent": "mia", "session": "s2", "ts": "2026-03-11T10:00:00Z"}
        await js.publish("cortex.session.mia.start", json.dumps(start).encode())
        reply = await wait_for(recalled, within=60)
        (fact,) = [m for m in reply.memories if m.fact_id]
        assert (fact.type, fact.content) == ("fact", "Maria works at Acme Corp.")  # the organisation as written
        # accessed at the agent's latest event time (day 11, however far recall's summary is): promoted
        await wait_for(lambda: relevance(promote(decayed(1.0, 0.02, 10))), within=30)
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()
