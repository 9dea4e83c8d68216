"""Recall end to end: a real nats-server, the recall worker in-process with the embedded store."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from cortex_testkit import caught_up, subject_count
from nats.aio.client import Client

from schemas.api import RecallReply, RecallRequest
from schemas.docs import RecallDoc
from shared.config import load_settings
from shared.kv import kv_read
from shared.names import DLQ_STREAM
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.recall import worker as recall_worker
from workers.recall.capture import is_context_memory, is_turn_memory
from workers.recall.embedders import FloatMatrix, FloatVector, HashingEmbedder
from workers.registry import all_specs, consumer_specs

TS = "2026-03-0{day}T10:{minute:02d}:00Z"


def message(i: int, agent: str, content: str, sender: str = "albert", day: int = 1) -> tuple[str, bytes]:
    payload = {"id": f"{agent}-m{i}", "agent": agent, "session": "s1", "ts": TS.format(day=day, minute=i % 60),
               "role": "user", "sender": sender, "content": content}
    return f"cortex.msg.{agent}.received", json.dumps(payload).encode()


FACTS = [
    "Caroline moved to Lisbon last spring and loves the tram lines there.",
    "Our rule: never deploy to production on Fridays.",
    "The dog is called Biscuit and he is afraid of thunderstorms.",
    "To rotate the API keys, run the rotate script and then restart the gateway.",
    "I prefer dark mode in every editor.",
    "The quarterly budget review happens in the first week of April.",
]


@pytest.fixture
async def recall_env(nats_url: str, tmp_path: Path, request: pytest.FixtureRequest
                     ) -> AsyncIterator[tuple[Client, Any]]:
    """The recall worker with the default embedder, or the one a test names (indirect param)."""
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100",
                              "CORTEX_EMBEDDER": getattr(request, "param", "default")})
    nc = await nats.connect(nats_url)
    await provision(nc.jetstream(), settings, consumer_specs())
    host = WorkerHost(settings, [all_specs()["recall"]], __version__)
    task = asyncio.create_task(host.run())
    try:
        yield nc, host
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()


async def ask(nc: Client, agent: str, query: str, **kw: Any) -> RecallReply:
    raw = await nc.request(f"cortex.api.recall.{agent}", msgspec.json.encode(RecallRequest(query=query, **kw)),
                           timeout=10)
    assert not (raw.headers and raw.headers.get("Nats-Service-Error")), raw.data
    return msgspec.json.decode(raw.data, type=RecallReply)


async def drained(nc: Client) -> bool:
    return await caught_up(nc.jetstream(), "recall")


async def _facts_for_alice_and_notes_for_bob(nc: Client, wait_for: Any) -> None:
    js = nc.jetstream()
    for i, text in enumerate(FACTS):
        for subject, data in (message(i, "alice", text), message(i, "bob", f"Bob's unrelated note number {i}")):
            await js.publish(subject, data)
    await wait_for(lambda: drained(nc), within=60)
    await wait_for(lambda: _serving(nc), within=30)


async def test_questions_find_the_right_memory_first_and_agents_stay_apart(
    recall_env: tuple[Client, Any], wait_for: Any
) -> None:
    """The static default: questions that share a word with their memory."""
    nc, _ = recall_env
    await _facts_for_alice_and_notes_for_bob(nc, wait_for)
    assert "Lisbon" in (await ask(nc, "alice", "Which city did Caroline move to?")).memories[0].content
    assert "Biscuit" in (await ask(nc, "alice", "What is the name of the dog?")).memories[0].content
    assert "Fridays" in (await ask(nc, "alice", "Which day may we never deploy?")).memories[0].content
    for memory in (await ask(nc, "bob", "Where does Caroline live now?")).memories:
        assert "Caroline" not in memory.content and memory.source_event.startswith("bob-")
    for memory in (await ask(nc, "alice", "unrelated note number")).memories:
        assert memory.source_event.startswith("alice-")


@pytest.mark.slow  # the e5 model on every text: ~15 s; the fast suite keeps the default's test above
@pytest.mark.parametrize("recall_env", ["e5"], indirect=True)
async def test_with_e5_paraphrases_and_other_languages_find_the_right_memory_first(
    recall_env: tuple[Client, Any], wait_for: Any
) -> None:
    nc, _ = recall_env
    await _facts_for_alice_and_notes_for_bob(nc, wait_for)

    reply = await ask(nc, "alice", "Where does Caroline live now?")
    assert "Lisbon" in reply.memories[0].content
    reply = await ask(nc, "alice", "What is the name of the dog?")
    assert "Biscuit" in reply.memories[0].content
    reply = await ask(nc, "alice", "Wann dürfen wir nicht deployen?")  # German question, English memory
    assert "Fridays" in reply.memories[0].content
    assert reply.tokens > 0 and reply.text

    for memory in (await ask(nc, "bob", "Where does Caroline live now?")).memories:
        assert "Caroline" not in memory.content and memory.source_event.startswith("bob-")
    for memory in (await ask(nc, "alice", "unrelated note number")).memories:
        assert memory.source_event.startswith("alice-")


async def test_a_repeated_fact_is_merged_not_duplicated(recall_env: tuple[Client, Any], wait_for: Any) -> None:
    nc, _ = recall_env
    js = nc.jetstream()
    rule = "We must always rotate the staging database password every 30 days."  # a cue: its sentence is a rule
    await js.publish(*message(1, "carol", rule))
    await js.publish(*message(2, "carol", rule))
    await wait_for(lambda: drained(nc), within=60)
    store = recall_worker.HOLDER.store
    assert store is not None
    memories = list(store.scroll("carol"))
    # turns and their windows are never merged (each turn stays under its own event)
    facts = [m.content for m in memories if not is_turn_memory(m) and not is_context_memory(m)]
    assert facts == [rule], [m.content for m in memories]


async def test_budget_trims_the_reply(recall_env: tuple[Client, Any], wait_for: Any) -> None:
    nc, _ = recall_env
    js = nc.jetstream()
    for i, text in enumerate(FACTS):
        await js.publish(*message(i, "dave", text))
    await wait_for(lambda: drained(nc), within=60)
    await wait_for(lambda: _serving(nc), within=30)
    small = await ask(nc, "dave", "tell me everything", budget_tokens=60)
    large = await ask(nc, "dave", "tell me everything", budget_tokens=2000)
    assert small.tokens <= 60 < large.tokens
    assert len(small.memories) < len(large.memories)


class GatedEmbedder:
    """The hashing embedder, except that once armed, the next batch's embedding blocks in
    its worker thread until released (queries are never held)."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(256)
        self.name, self.dim, self.similarity_floor = self.inner.name, self.inner.dim, self.inner.similarity_floor
        self.armed, self.entered, self.release = threading.Event(), threading.Event(), threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        if self.armed.is_set():
            self.armed.clear()
            self.entered.set()
            if not self.release.wait(timeout=60):
                raise RuntimeError("the gate was never released")
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> FloatVector:
        return self.inner.embed_query(text)

    def prefetch(self, texts: Sequence[str]) -> None:
        self.inner.prefetch(texts)


async def test_a_query_is_answered_while_a_batch_is_being_embedded(
    nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100"})
    nc = await nats.connect(nats_url)
    await provision(nc.jetstream(), settings, consumer_specs())
    gate = GatedEmbedder()
    host = WorkerHost(settings, [all_specs()["recall"]], __version__, extras={"embedder": gate})
    task = asyncio.create_task(host.run())
    try:
        js = nc.jetstream()
        await js.publish(*message(1, "hana", "The dog is called Biscuit and he is afraid of thunderstorms."))
        await wait_for(lambda: drained(nc), within=60)
        await wait_for(lambda: _serving(nc), within=30)

        gate.armed.set()
        await js.publish(*message(2, "hana", "Caroline moved to Lisbon last spring."))

        async def embedding() -> bool:
            return gate.entered.is_set()

        await wait_for(embedding, within=30)
        reply = await ask(nc, "hana", "What is the dog called?")  # times out if the batch holds the store
        assert "Biscuit" in reply.memories[0].content
        assert all("Lisbon" not in m.content for m in reply.memories)
        assert not gate.release.is_set()  # the answer came while the batch was still being embedded
        gate.release.set()

        await wait_for(lambda: drained(nc), within=60)
        assert "Lisbon" in (await ask(nc, "hana", "Where does Caroline live?")).memories[0].content
    finally:
        gate.release.set()
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()


async def _serving(nc: Client) -> bool:
    try:
        await nc.request("cortex.api.recall.probe", b'{"query":"x"}', timeout=1)
        return True
    except Exception:
        return False


async def test_replay_leaves_the_memory_collection_unchanged(nats_url: str, tmp_path: Path, wait_for: Any) -> None:
    from shared.replay import run_replay

    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_RUNTIME_LEASE_TTL_S": "1"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    spec = all_specs()["recall"]
    host = WorkerHost(settings, [spec], __version__)
    task = asyncio.create_task(host.run())
    try:
        for i, text in enumerate(FACTS):
            await js.publish(*message(i, "erin", text))
        await js.publish(*message(50, "erin", FACTS[0]))  # a duplicate: merged
        await wait_for(lambda: drained(nc), within=60)

        def collection() -> list[bytes]:
            store = recall_worker.HOLDER.store
            assert store is not None
            return sorted(msgspec.json.encode(m) for m in store.scroll("erin"))

        before = await wait_for(lambda: _some(collection), within=10)
        await run_replay(host, js, [spec], None, False, lambda progress: None)
        await wait_for(lambda: drained(nc), within=60)
        after = await wait_for(lambda: _some(collection), within=30)
        assert after == before
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()


async def _some(fn: Any) -> Any:
    try:
        return fn()
    except AssertionError:
        return None


def cli(*args: str, url: str, data: Path) -> Any:
    import os

    import worker_forkserver

    return worker_forkserver.run_cortex(args, timeout=120,
                                        env={**os.environ, "CORTEX_NATS_URL": url, "CORTEX_DATA_DIR": str(data)})


async def test_index_a_memory_directory_then_pin_and_forget(
    recall_env: tuple[Client, Any], nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    nc, _ = recall_env
    notes = tmp_path / "memory"
    (notes / "projects").mkdir(parents=True)
    (notes / "projects" / "cortex.md").write_text(
        "# Cortex\n## Deploys\nThe production deploy window is Tuesday morning.\n"
        "## Team\nMaria owns the dashboard.\n")
    (notes / "people.md").write_text("# People\nBiscuit is the office dog and loves carrots.\n")
    first = cli("index", str(notes), "--agent", "frank", url=nats_url, data=tmp_path / "cli")
    assert first.returncode == 0, first.stderr
    assert "indexed 3 sections" in first.stdout and "3 new" in first.stdout
    again = cli("index", str(notes), "--agent", "frank", url=nats_url, data=tmp_path / "cli")
    assert "0 new, 3 unchanged" in again.stdout

    async def copied() -> bool:  # the contract's notes subject: CORTEX_NOTES, copied into CORTEX_EVENTS
        return await subject_count(nc.jetstream(), "cortex.notes.*.frank.section") == 3

    await wait_for(copied, within=30)
    await wait_for(lambda: drained(nc), within=60)
    await wait_for(lambda: _serving(nc), within=30)

    hit = (await ask(nc, "frank", "When can we deploy to production?")).memories[0]
    assert "Tuesday" in hit.content and hit.source_event.startswith("note:")

    # the recall worker runs in this event loop: the CLI waits for its answer in a thread
    short = await asyncio.to_thread(cli, "recall", "frank", "When can we deploy to production?", url=nats_url,
                                    data=tmp_path / "cli")
    whole = await asyncio.to_thread(cli, "recall", "frank", "When can we deploy to production?", "--full-ids",
                                    url=nats_url, data=tmp_path / "cli")
    assert hit.id[:8] in short.stdout and hit.id not in short.stdout and hit.id in whole.stdout, whole.stdout
    cut = cli("memory", "forget", "frank", hit.id[:8], url=nats_url, data=tmp_path / "cli")
    assert cut.returncode == 1 and "--full-ids" in cut.stderr, cut.stderr  # a shortened id: refused, with the way
    assert cli("memory", "forget", "frank", hit.id, url=nats_url, data=tmp_path / "cli").returncode == 0
    await wait_for(lambda: drained(nc), within=60)

    async def forgotten() -> bool:
        reply = await ask(nc, "frank", "When can we deploy to production?")
        return all(m.id != hit.id for m in reply.memories)

    await wait_for(forgotten, within=30)
    dog = (await ask(nc, "frank", "What does the office dog like?")).memories[0]
    assert cli("memory", "pin", "frank", dog.id, url=nats_url, data=tmp_path / "cli").returncode == 0
    await wait_for(lambda: drained(nc), within=60)
    store = recall_worker.HOLDER.store
    assert store is not None
    assert [m.pinned for m in store.get("frank", [dog.id])] == [True]


async def test_an_idle_memory_moves_to_cold_stays_searchable_and_a_hit_brings_it_back(
    recall_env: tuple[Client, Any], wait_for: Any
) -> None:
    nc, _ = recall_env
    js = nc.jetstream()
    note = {"id": "n-vault", "agent": "gina", "ts": "2026-02-01T09:00:00Z", "path": "infra.md",
            "headings": ["Infra"], "content": "Deploy keys are stored in the vault under team/infra."}
    await js.publish("cortex.notes.gina.section", json.dumps(note).encode())
    await wait_for(lambda: drained(nc), within=60)
    store = recall_worker.HOLDER.store
    assert store is not None
    [memory] = [m for m in store.scroll("gina") if "vault" in m.content]

    async def feedback(i: int, ts: str) -> None:
        event = {"id": f"fb-{i}", "agent": "gina", "ts": ts, "kind": "recall_access", "value": [memory.id]}
        await js.publish("cortex.feedback.gina.recall_access", json.dumps(event).encode())

    async def key_memories() -> list[str]:
        raw, _ = await kv_read(await js.key_value("cortex_recall"), "gina")
        return msgspec.json.decode(raw, type=RecallDoc).key_memories if raw else []

    await feedback(1, "2026-02-01T10:00:00Z")  # one hit
    await wait_for(lambda: drained(nc), within=60)
    assert memory.content in await key_memories()

    start = {"id": "s-gina", "agent": "gina", "session": "s2", "ts": "2026-02-17T09:00:00Z"}  # 16 days idle
    await js.publish("cortex.session.gina.start", json.dumps(start).encode())
    await wait_for(lambda: drained(nc), within=60)
    assert [m.tier for m in store.get("gina", [memory.id])] == ["cold"]
    assert memory.content not in await key_memories()
    await wait_for(lambda: _serving(nc), within=30)
    found = await ask(nc, "gina", "Where are the deploy keys kept?")
    assert found.memories and found.memories[0].id == memory.id  # cold is still found by search

    await feedback(2, "2026-02-17T09:05:00Z")  # that hit, applied through the stream
    await wait_for(lambda: drained(nc), within=60)
    assert [m.tier for m in store.get("gina", [memory.id])] == ["hot"]
    assert memory.content in await key_memories()


async def test_a_remembered_memory_is_recalled_and_a_forget_of_its_id_removes_it(
    recall_env: tuple[Client, Any], wait_for: Any
) -> None:
    from workers.recall.capture import remembered_id

    nc, _ = recall_env
    js = nc.jetstream()
    remember = {"id": "rem-1", "agent": "ivan", "ts": "2026-02-17T09:00:00Z", "kind": "remember",
                "value": {"content": "The on-call phone number is kept in the red binder."}, "actor": "mcp"}
    await js.publish("cortex.feedback.ivan.remember", json.dumps(remember).encode())
    access = {"id": "fa-1", "agent": "ivan", "ts": "2026-02-17T09:01:00Z", "kind": "fact_access",
              "value": ["fact:1"]}
    await js.publish("cortex.feedback.ivan.fact_access", json.dumps(access).encode())  # not the recall worker's
    await wait_for(lambda: drained(nc), within=60)
    await wait_for(lambda: _serving(nc), within=30)
    assert (await js.stream_info("CORTEX_DLQ")).state.messages == 0

    found = (await ask(nc, "ivan", "Where is the on-call phone number?")).memories
    assert found and found[0].id == remembered_id("ivan", "rem-1") and found[0].source_event == "rem-1"
    assert not (await ask(nc, "judy", "Where is the on-call phone number?")).memories  # nobody else's

    forget = {"id": "fg-1", "agent": "ivan", "ts": "2026-02-17T09:02:00Z", "kind": "memory_forget",
              "target": found[0].id}
    await js.publish("cortex.feedback.ivan.memory_forget", json.dumps(forget).encode())
    await wait_for(lambda: drained(nc), within=60)
    assert all(m.id != found[0].id for m in (await ask(nc, "ivan", "Where is the on-call phone number?")).memories)


async def test_consolidate_dry_run_reports_what_the_next_session_start_then_merges(
    recall_env: tuple[Client, Any], nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    """Issue 23: `cortex memory consolidate AGENT --dry-run` asks the recall worker what the
    next session start would fold (nothing changes), the session start folds it, and the
    `consolidated` change is counted."""
    from schemas.api import ConsolidateReply, ConsolidateRequest
    from workers.recall.capture import is_turn_memory

    nc, _ = recall_env
    js = nc.jetstream()
    for i, text in enumerate(["Thanks!", "What is the deploy window?", "thanks"]):
        await js.publish(*message(i, "kate", text))
    await wait_for(lambda: drained(nc), within=60)
    await wait_for(lambda: _serving(nc), within=30)

    def thanks() -> list[str]:  # the store open now (a loop that lost its lease under load reopens it)
        with recall_worker.HOLDER.lock:
            memories = list(recall_worker.HOLDER.current()[0].scroll("kate"))
        return sorted(m.source_event for m in memories if is_turn_memory(m) and "hank" in m.content)

    raw = await nc.request("cortex.api.consolidate.kate", msgspec.json.encode(ConsolidateRequest()), timeout=10)
    reply = msgspec.json.decode(raw.data, type=ConsolidateReply)
    shown = await asyncio.to_thread(cli, "memory", "consolidate", "kate", "--dry-run", url=nats_url,
                                    data=tmp_path / "cli")  # in a thread: this loop runs the worker that answers
    assert shown.returncode == 0, shown.stderr
    assert "would fold 1 into 1" in shown.stdout and "albert: thanks" in shown.stdout
    assert [[f.source_event for f in m.removed] for m in reply.merges] == [["kate-m2"]]
    assert thanks() == ["kate-m0", "kate-m2"]  # a dry run

    counted = recall_worker.RECALL_MEMORIES.labels("consolidated")._value.get()
    start = {"id": "s-kate", "agent": "kate", "session": "s2", "ts": "2026-03-02T09:00:00Z"}
    await js.publish("cortex.session.kate.start", json.dumps(start).encode())
    await wait_for(lambda: drained(nc), within=60)
    assert thanks() == ["kate-m0"]
    assert recall_worker.RECALL_MEMORIES.labels("consolidated")._value.get() == counted + 1


async def test_a_contradicted_memory_drops_out_of_recall_unless_history_is_asked_for(
    recall_env: tuple[Client, Any], wait_for: Any
) -> None:
    """Issue 23: "…is now Thursday" supersedes "…is Tuesday" (no model needed); a query
    finds Thursday only, and with `history` both, the old one naming its successor."""
    nc, _ = recall_env
    js = nc.jetstream()
    await js.publish(*message(1, "lena", "The deploy day is Tuesday."))
    await js.publish(*message(2, "lena", "Our deploy day is now Thursday."))
    await wait_for(lambda: drained(nc), within=60)
    await wait_for(lambda: _serving(nc), within=30)

    now = await ask(nc, "lena", "Which day do we deploy?")
    assert [m.source_event for m in now.memories] == ["lena-m2"]  # its window quotes Tuesday, as context
    assert b"superseded_by" not in msgspec.json.encode(now)
    history = await ask(nc, "lena", "Which day do we deploy?", history=True)
    old = [m for m in history.memories if m.source_event == "lena-m1"]
    assert old and all(m.superseded_by for m in old)


async def _dead_letters(js: Any) -> list[tuple[str, dict[str, str], bytes]]:
    info = await js.stream_info(DLQ_STREAM)
    out = []
    for seq in range(info.state.first_seq, info.state.last_seq + 1 if info.state.messages else 0):
        m = await js.get_msg(DLQ_STREAM, seq)
        out.append((m.subject, dict(m.headers or {}), m.data or b""))
    return out


def _feedback(i: int, agent: str, kind: str, **fields: Any) -> tuple[str, bytes]:
    event = {"id": f"fb-{agent}-{i}", "agent": agent, "ts": f"2026-02-17T09:{i:02d}:00Z", "kind": kind, **fields}
    return f"cortex.feedback.{agent}.{kind}", json.dumps(event).encode()


def _remember(i: int, agent: str, content: str) -> tuple[str, bytes]:
    return _feedback(i, agent, "remember", value={"content": content}, actor="mcp")


async def test_memory_feedback_naming_no_memory_id_is_a_dead_letter_and_recall_goes_on(
    recall_env: tuple[Client, Any], wait_for: Any
) -> None:
    """A recall_access, memory_pin or memory_forget whose id is no UUID made the store raise at
    commit: the worker, then `cortex up`, died with a traceback — again on every restart.
    Now each is a dead letter with the reason, and what follows is applied."""
    from workers.recall.capture import remembered_id

    nc, host = recall_env
    js = nc.jetstream()
    bad = [_feedback(1, "kim", "recall_access", value=["not-a-uuid"]),
           _feedback(2, "kim", "memory_pin", target="42"),
           _feedback(3, "kim", "memory_forget", target="nonexistent")]
    for subject, data in [_remember(0, "kim", "The spare office key is under the blue flowerpot."), *bad,
                          _remember(4, "kim", "The team lunch is every second Thursday at noon.")]:
        await js.publish(subject, data)
    await wait_for(lambda: drained(nc), within=60)
    await wait_for(lambda: _serving(nc), within=30)

    letters = await _dead_letters(js)
    assert [(s, h["Cortex-Original-Subject"], h["Cortex-Error"], d) for s, h, d in letters] == [
        ("cortex.dlq.recall", subject, f"{kind}: {shown!r} is not a memory id (expected a UUID such as cortex_recall "
                                       "returns, e.g. 1b4e28ba-2fa1-11d2-883f-0016d3cca427)", data)
        for (subject, data), kind, shown in zip(bad, ("recall_access", "memory_pin", "memory_forget"),
                                                ("not-a-uuid", "42", "nonexistent"), strict=True)]
    assert not host.stop.is_set()  # the process goes on (a crashed worker task stops the host)
    for i, question in ((0, "Where is the spare office key?"), (4, "When is the team lunch?")):
        found = (await ask(nc, "kim", question)).memories
        assert found and found[0].id == remembered_id("kim", f"fb-kim-{i}")


async def test_memory_feedback_naming_an_unknown_memory_id_changes_nothing(
    recall_env: tuple[Client, Any], wait_for: Any
) -> None:
    """A well-formed UUID that names none of the agent's memories (another agent's, a forgotten
    one, a made-up one) is applied as a no-op: no dead letter, the worker goes on."""
    from workers.recall.capture import remembered_id

    nc, _ = recall_env
    js = nc.jetstream()
    leo = remembered_id("leo", "fb-leo-0")  # leo's memory: nothing of lea's
    unknown = ["0f8fad5b-d9cb-469f-a165-70867728950e", leo]
    for subject, data in [_remember(0, "leo", "The boiler is serviced every October."),
                          _remember(0, "lea", "The car is parked on level three."),
                          _feedback(1, "lea", "recall_access", value=unknown),
                          _feedback(2, "lea", "memory_pin", target=unknown[0]),
                          _feedback(3, "lea", "memory_forget", target=leo),
                          _remember(4, "lea", "Badminton is on Wednesdays.")]:
        await js.publish(subject, data)
    await wait_for(lambda: drained(nc), within=60)
    await wait_for(lambda: _serving(nc), within=30)
    assert await _dead_letters(js) == []
    store = recall_worker.HOLDER.store
    assert store is not None
    [kept] = store.get("leo", [leo])
    assert (kept.pinned, kept.access_count) == (False, 0)  # lea's feedback never reached leo's memory
    assert {m.content for m in store.scroll("lea")} >= {"The car is parked on level three.",
                                                         "Badminton is on Wednesdays."}
    assert not any(m.pinned or m.access_count for m in store.scroll("lea"))
