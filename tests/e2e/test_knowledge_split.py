"""A knowledge document over the value limit, split into agent.<part> keys, end to end:
the knowledge, boot and api workers in-process on a real nats-server, with the split
threshold lowered so a few dozen messages make several parts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from cortex_testkit import bucket_keys, cortex
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.api import SearchReply
from schemas.docs import BootDoc, Fact, Integrity, KnowledgeDoc
from schemas.events import MessageEvent
from shared.asof import DocReader
from shared.config import Settings, load_settings
from shared.forget import purge_documents
from shared.kv import kv_read
from shared.names import BUCKET_KNOWLEDGE, EVENTS_STREAM
from shared.parts import integrity_of, is_part_key, part_key
from shared.provision import provision
from shared.replay import run_replay
from shared.runtime import WorkerHost
from workers import __version__
from workers.knowledge.core import apply_message
from workers.knowledge.worker import fit
from workers.registry import all_specs, consumer_specs, doc_buckets
from workers.render import entity_names

LIMIT = 2048
WORKERS = ("knowledge", "boot", "api")
SYLLABLES = ["Ka", "Lo", "Mi", "Nu", "Po", "Ru", "Sa", "Te", "Vi", "Zo"]


def person(i: int, tag: str) -> str:
    return f"{tag} {SYLLABLES[i // 10]}{SYLLABLES[i % 10].lower()}n"


def employer(i: int, long: bool) -> str:
    name = f"{SYLLABLES[i % 10]}{SYLLABLES[i // 10].lower()}ra"
    return f"{name} Industrial Harbor Logistics Holding GmbH" if long else f"{name} GmbH"


def message(agent: str, i: int, content: str, day: int = 1) -> tuple[str, bytes, MessageEvent]:
    event = msgspec.convert({"id": f"{agent}-{day}-{i}", "agent": agent, "session": "s1", "role": "user",
                             "ts": f"2026-03-0{day}T10:{i:02d}:00Z", "sender": "albert", "content": content},
                            MessageEvent)
    return f"cortex.msg.{agent}.received", msgspec.json.encode(event), event


class Feed:
    """Publishes messages and keeps, per agent, the document the pure core derives from them."""

    def __init__(self, js: JetStreamContext, settings: Settings) -> None:
        self.js, self.settings = js, settings
        self.docs: dict[str, KnowledgeDoc | None] = {}
        self.last_seq: dict[str, int] = {}

    async def say(self, agent: str, i: int, content: str, day: int = 1) -> None:
        subject, payload, event = message(agent, i, content, day)
        ack = await self.js.publish(subject, payload, headers={"Nats-Msg-Id": event.id})
        self.last_seq[agent] = ack.seq
        self.docs[agent] = fit(apply_message(self.docs.get(agent), event, self.settings.knowledge))

    async def works_at(self, agent: str, count: int, tag: str, long: bool = True, day: int = 1) -> None:
        for i in range(count):
            await self.say(agent, i, f"{person(i, tag)} works at {employer(i, long)}.", day)


@pytest.fixture
async def pipeline(nats_url: str, tmp_path: Path) -> AsyncIterator[tuple[Client, WorkerHost, Settings]]:
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_RUNTIME_LEASE_TTL_S": "1",
                              "CORTEX_BOOT_WAIT_MS": "300", "CORTEX_KNOWLEDGE_MAX_ENTITIES": "10",
                              "CORTEX_KNOWLEDGE_MAX_FACTS": "10"})
    nc = await nats.connect(nats_url)
    await provision(nc.jetstream(), settings, consumer_specs())
    host = WorkerHost(settings, [all_specs()[n] for n in WORKERS], __version__,
                      extras={"knowledge_max_value_bytes": LIMIT})
    task = asyncio.create_task(host.run())
    try:
        yield nc, host, settings
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()


async def drained(js: JetStreamContext, *consumers: str) -> bool:
    for name in consumers:
        info = await js.consumer_info(EVENTS_STREAM, name)
        if info.num_pending or info.num_ack_pending:
            return False
    return True


async def stored(js: JetStreamContext) -> dict[str, bytes]:
    kv = await js.key_value(BUCKET_KNOWLEDGE)
    out = {}
    for key in await bucket_keys(kv):
        raw, _ = await kv_read(kv, key)
        if raw is not None:
            out[key] = raw
    return out


def keys_of(values: dict[str, bytes], agent: str) -> list[str]:
    return [k for k in values if k == agent or k.startswith(f"{agent}.")]


def without_integrity(doc: KnowledgeDoc | None) -> KnowledgeDoc:
    assert doc is not None
    return msgspec.structs.replace(doc, integrity=Integrity())


def fact_line(fact: Fact, doc: KnowledgeDoc) -> str:
    names = entity_names(doc.entities)  # an organisation as written, with its legal suffix
    predicate = fact.predicate.replace("-", " ")  # the briefing reads slugs as words
    return f"- {names.get(fact.subject, fact.subject)} {predicate} {names.get(fact.object, fact.object)}"


async def boot_doc(js: JetStreamContext, agent: str) -> BootDoc | None:
    raw, _ = await kv_read(await js.key_value("cortex_boot"), agent)
    doc = msgspec.json.decode(raw, type=BootDoc) if raw else None
    return doc if doc is not None and doc.trigger == "session_start" else None


async def test_a_split_knowledge_document_is_written_read_replayed_shrunk_and_forgotten(
    pipeline: tuple[Client, WorkerHost, Settings], nats_url: str, wait_for: Any
) -> None:
    nc, host, settings = pipeline
    js = nc.jetstream()
    feed = Feed(js, settings)
    await feed.works_at("alice", 12, "Alice")
    await feed.works_at("bob", 6, "Bobby")
    await wait_for(lambda: drained(js, "knowledge"), within=60)
    start = {"id": "alice-start", "agent": "alice", "session": "s2", "ts": "2026-03-01T11:00:00Z"}
    await js.publish("cortex.session.alice.start", json.dumps(start).encode(), headers={"Nats-Msg-Id": "alice-start"})
    await wait_for(lambda: drained(js, "knowledge", "boot"), within=60)

    # written: head and ≥ 3 parts, each within the limit and of the same version
    values = await stored(js)
    alice_keys = keys_of(values, "alice")
    assert alice_keys == [part_key("alice", i) for i in range(len(alice_keys))] and len(alice_keys) >= 4
    assert all(len(values[k]) <= LIMIT for k in alice_keys)
    head = integrity_of(values["alice"])
    assert head.last_seq == feed.last_seq["alice"] and head.events == 12
    assert all(integrity_of(values[k]) == head for k in alice_keys)
    assert len(keys_of(values, "bob")) >= 2

    # read: the joined document is the one the pure core derives, unsplit
    joined = await DocReader(js).latest(BUCKET_KNOWLEDGE, "alice", KnowledgeDoc)
    assert without_integrity(joined) == without_integrity(feed.docs["alice"])
    assert len(msgspec.json.encode(joined)) > 2 * LIMIT
    assert joined is not None
    newest = joined.facts[-1]  # the most recently learnt fact: in the last part
    last_part = msgspec.json.decode(values[alice_keys[-1]], type=KnowledgeDoc)
    assert newest in last_part.facts and newest not in msgspec.json.decode(values["alice"], type=KnowledgeDoc).facts
    line = fact_line(newest, joined)

    boot = await wait_for(lambda: boot_doc(js, "alice"), within=30)  # composed as of the trigger
    assert line in boot.markdown.split("## 🧠 Known Facts", 1)[1]
    reply = await nc.request("cortex.api.boot.alice", b"{}", timeout=10)  # composed from the latest
    assert line in msgspec.json.decode(reply.data, type=BootDoc).markdown
    company = employer(11, True).split()[0]
    reply = await nc.request("cortex.api.search.alice", msgspec.json.encode({"query": company}), timeout=10)
    hits = msgspec.json.decode(reply.data, type=SearchReply).hits
    assert any(h.kind == "fact" and h.id == newest.id for h in hits), hits
    listed = await asyncio.to_thread(cortex, "facts", "alice", url=nats_url)
    assert listed.returncode == 0, listed.stderr
    employer_name = {e.id: e.value for e in joined.entities}.get(newest.object, newest.object)
    assert employer_name.startswith(company) and employer_name in listed.stdout
    assert "10 entities, 10 facts" in listed.stdout

    # the boot and search answers published fact_access for the facts they showed (issue 23):
    # once applied, that is what the stream says and what a replay must make again
    await wait_for(lambda: drained(js, "knowledge"), within=60)
    values = await stored(js)
    assert integrity_of(values[part_key("alice", 0)]).events > 12  # the feedback was applied

    # replay: every key again, byte for byte
    await run_replay(host, js, [all_specs()["knowledge"]], None, False, lambda progress: None)
    await wait_for(lambda: drained(js, "knowledge"), within=60)
    assert await stored(js) == values

    # shrink: short facts push the long ones out; the stale parts are deleted
    await feed.works_at("alice", 10, "Al", long=False, day=2)
    await wait_for(lambda: drained(js, "knowledge"), within=60)
    after = await stored(js)
    shrunk = keys_of(after, "alice")
    assert 1 <= len(shrunk) < len(alice_keys)
    assert shrunk == [part_key("alice", i) for i in range(len(shrunk))]
    joined = await DocReader(js).latest(BUCKET_KNOWLEDGE, "alice", KnowledgeDoc)
    assert without_integrity(joined) == without_integrity(feed.docs["alice"])
    assert {k: v for k, v in after.items() if k.startswith("bob")} == {k: v for k, v in values.items()
                                                                     if k.startswith("bob")}

    # forget: every key of the agent, none of another's
    assert await purge_documents(js, "alice", doc_buckets()) >= len(shrunk)
    remaining = await stored(js)
    assert not keys_of(remaining, "alice")
    assert remaining == {k: v for k, v in values.items() if k.startswith("bob")}
    assert all(is_part_key(k) or k == "bob" for k in remaining)
