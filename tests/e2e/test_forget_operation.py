"""`cortex forget AGENT` is one operation: it completes (maybe later, with a status to poll) or
removes nothing, reads every dead letter, and leaves documents that agree with the stream
while the agent's events keep arriving (issue 15, items 6–8)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

import msgspec
import nats
from cortex_testkit import agent_events, cortex, demo_applied, demo_file, docs_of, drained, subject_count

from schemas.api import RecallReply
from schemas.docs import RecallDoc, ThreadsDoc
from shared.embedded import free_port
from shared.forget import header_text
from shared.kv import kv_read
from shared.lease import Lease
from shared.names import DLQ_STREAM, EVENTS_STREAM

FAST = {"CORTEX_RUNTIME_LEASE_TTL_S": "2", "CORTEX_EMBEDDER": "hashing"}


async def dead_letter_subjects(js: Any) -> list[str]:
    info = await js.stream_info(DLQ_STREAM)
    out = []
    for seq in range(int(info.state.first_seq or 1), int(info.state.last_seq or 0) + 1):
        with contextlib.suppress(nats.js.errors.NotFoundError):
            out.append(header_text((await js.get_msg(DLQ_STREAM, seq)).headers["Cortex-Original-Subject"]))
    return out


async def recall_memories(nc: Any, agent: str, query: str = "auth migration", limit: int = 200) -> list[Any]:
    try:
        reply = await nc.request(f"cortex.api.recall.{agent}", msgspec.json.encode({"query": query, "limit": limit}),
                                 timeout=5)
        return msgspec.json.decode(reply.data, type=RecallReply).memories
    except Exception:
        return []


async def test_forget_reads_dead_letters_whose_headers_are_not_ascii(
    nats_url: str, workers_procs: Any, wait_for: Any, tmp_path: Path
) -> None:
    """A dead letter of ``cortex.msg.bøb.received`` (a bad agent id) made nats-py hand back an
    e-mail ``Header`` for ``Cortex-Original-Subject``; the forget crashed on it after it had
    purged the events and documents, and printed no report."""
    assert cortex("init", url=nats_url).returncode == 0
    workers_procs.start("threads", nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        assert cortex("publish", str(demo_file(tmp_path, "alice")), url=nats_url).returncode == 0
        bad_role = {"id": "alice-bad", "agent": "alice", "session": "s", "ts": "2026-02-17T10:00:00Z",
                    "role": "usér", "content": "x"}  # its reason quotes 'usér'
        await js.publish("cortex.msg.alice.received", msgspec.json.encode(bad_role))
        bad_agent = {**bad_role, "id": "b-1", "agent": "bøb", "role": "user"}
        await js.publish("cortex.msg.bøb.received", msgspec.json.encode(bad_agent))
        await wait_for(lambda: drained(js, ["threads"]), within=30)
        assert sorted(await dead_letter_subjects(js)) == ["cortex.msg.alice.received", "cortex.msg.bøb.received"]

        result = cortex("forget", "alice", "--yes", url=nats_url)
        assert result.returncode == 0, result.stderr
        assert "1 dead letters" in result.stdout, result.stdout
        assert await dead_letter_subjects(js) == ["cortex.msg.bøb.received"]
        assert await agent_events(js, "alice") == 0
        assert await docs_of(js, "alice") == {}
    finally:
        await nc.close()


async def test_a_forget_that_cannot_reach_the_memories_removes_nothing(
    nats_url: str, workers_procs: Any, wait_for: Any, tmp_path: Path
) -> None:
    """No recall worker runs and the store cannot be opened: the forget stops before it
    removes anything, says so, and ``--status`` records it as aborted."""
    assert cortex("init", url=nats_url).returncode == 0
    workers_procs.start("threads", nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        events, docs = await demo_applied(js, nats_url, tmp_path)

        result = cortex("forget", "alice", "--yes", url=nats_url, CORTEX_QDRANT_URL=f"http://127.0.0.1:{free_port()}",
                        CORTEX_QDRANT_GRPC_PORT=str(free_port()))
        assert result.returncode == 1
        assert "nothing of alice was removed" in result.stderr, result.stderr
        assert result.stderr.count("\n") <= 6 and "Traceback" not in result.stderr  # steps, then one line
        assert await agent_events(js, "alice") == events
        assert await docs_of(js, "alice") == docs

        status = cortex("forget", "alice", "--status", url=nats_url)
        assert status.returncode == 1 and "aborted" in status.stdout and "nothing was removed" in status.stdout
    finally:
        await nc.close()


async def test_a_forget_pending_on_the_recall_worker_completes_when_it_applies_it(
    nats_url: str, workers_procs: Any, wait_for: Any, tmp_path: Path
) -> None:
    """The recall worker holds its lease but applies nothing (as when its store is down):
    the forget removes events, documents and dead letters at once and reports the memories
    as pending (exit 3), with a status to poll. When a recall worker runs again it applies
    the forget, and the status completes it: no memory, no event of alice is left.

    Before, this forget gave up after 60 s ("run `cortex forget` again") having removed
    nothing, and the recall worker deleted the memories later anyway: events and documents
    stayed, the memories went."""
    assert cortex("init", url=nats_url).returncode == 0
    env = {**FAST, "CORTEX_DATA_DIR": str(tmp_path / "data")}
    recall = workers_procs.start("recall", nats_url, **env)
    workers_procs.start("threads", nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        for agent in ("alice", "kept"):
            assert cortex("publish", str(demo_file(tmp_path, agent)), url=nats_url).returncode == 0
        await wait_for(lambda: drained(js, ["threads", "recall"]), within=60)
        await wait_for(lambda: recall_memories(nc, "alice"), within=30)
        recall.terminate()  # a graceful stop releases the lease
        assert recall.wait(30) == 0
        stuck = Lease(js, "recall", "stuck-recall", 5)  # holds on, applies nothing; 5 s TTL: room under load
        await stuck.take_over()
        keeper = asyncio.create_task(stuck.keep_alive(lambda: None))
        try:
            # in a thread: the event loop keeps renewing the stuck holder's lease meanwhile
            result = await asyncio.to_thread(cortex, "forget", "alice", "--yes", "--wait", "1", url=nats_url, **env)
        finally:
            keeper.cancel()
        assert result.returncode == 3, result.stderr
        assert "memories pending" in result.stdout and "--status" in result.stdout, result.stdout
        assert await subject_count(js, "cortex.feedback.*.alice.memory_forget") == 1  # the marker, nothing else
        assert await agent_events(js, "alice") == 1
        assert await docs_of(js, "alice") == {}
        assert cortex("forget", "alice", "--status", url=nats_url).returncode == 3

        workers_procs.start("recall", nats_url, **env)

        async def complete() -> bool:
            status = await asyncio.to_thread(cortex, "forget", "alice", "--status", url=nats_url)
            return status.returncode == 0 and "memories deleted by the recall worker" in status.stdout

        await wait_for(complete, within=60, interval=0.5)
        assert await agent_events(js, "alice") == 0  # the marker is gone too
        assert await docs_of(js, "alice") == {}
        await wait_for(lambda: recall_memories(nc, "kept"), within=30)
        assert await recall_memories(nc, "alice") == []
    finally:
        await nc.close()


async def _publish_live(js: Any, agent: str, stop: asyncio.Event) -> int:
    """The agent's traffic: a message every few milliseconds until ``stop``."""
    sent = 0
    while not stop.is_set():
        ts = f"2026-03-01T10:{sent // 60 % 60:02d}:{sent % 60:02d}Z"
        body = {"id": f"live-{agent}-{sent}", "agent": agent, "session": "live", "ts": ts, "role": "user",
                "content": f"We keep talking about the auth migration, part {sent}."}
        await js.publish(f"cortex.msg.{agent}.received", msgspec.json.encode(body), headers={"Nats-Msg-Id": body["id"]})
        sent += 1
        with contextlib.suppress(TimeoutError):  # the publisher's pace: a message per 10 ms until stop
            await asyncio.wait_for(stop.wait(), timeout=0.01)
    return sent


async def test_a_forget_under_live_traffic_leaves_documents_that_agree_with_the_stream(
    nats_url: str, workers_procs: Any, wait_for: Any, tmp_path: Path
) -> None:
    """Alice keeps talking while she is forgotten. Afterwards every document of hers counts
    exactly her events left in the stream (the ones published after the cut), and every
    memory of hers comes from one of those events: nothing applied was purged, nothing
    purged is still remembered. (Before: ``events=101`` in a document, 102 in the stream.)"""
    assert cortex("init", url=nats_url).returncode == 0
    env = {**FAST, "CORTEX_DATA_DIR": str(tmp_path / "data")}
    workers_procs.start("threads", nats_url)
    workers_procs.start("recall", nats_url, **env)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    stop = asyncio.Event()
    try:
        assert cortex("publish", str(demo_file(tmp_path, "alice")), url=nats_url).returncode == 0
        await wait_for(lambda: drained(js, ["threads", "recall"]), within=60)
        publisher = asyncio.create_task(_publish_live(js, "alice", stop))
        await wait_for(lambda: recall_memories(nc, "alice", "part"), within=30)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "workers", "forget", "alice", "--yes",
            env={**os.environ, "CORTEX_NATS_URL": nats_url, **env},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
        assert proc.returncode == 0, err.decode()
        assert b"memories deleted by the recall worker" in out, out
        await wait_for(lambda: _at_least(js, "alice", 20), within=30)  # traffic after the cut
        stop.set()
        sent = await publisher
        await wait_for(lambda: drained(js, ["threads", "recall"]), within=60)

        left = await subject_count(js, "cortex.msg.*.alice.>")
        assert 20 <= left < sent
        threads = msgspec.json.decode((await kv_read(await js.key_value("cortex_threads"), "alice"))[0],
                                      type=ThreadsDoc)
        recall_doc = msgspec.json.decode((await kv_read(await js.key_value("cortex_recall"), "alice"))[0],
                                         type=RecallDoc)
        assert (threads.integrity.events, recall_doc.integrity.events) == (left, left)
        ids = await _event_ids(js, "alice")
        memories = await recall_memories(nc, "alice", "auth migration part")
        assert memories and {m.source_event for m in memories} <= ids
    finally:
        stop.set()
        await nc.close()


async def _at_least(js: Any, agent: str, n: int) -> bool:
    return await subject_count(js, f"cortex.msg.*.{agent}.>") >= n


async def _event_ids(js: Any, agent: str) -> set[str]:
    info = await js.stream_info(EVENTS_STREAM)
    ids = set()
    for seq in range(int(info.state.first_seq), int(info.state.last_seq) + 1):
        with contextlib.suppress(nats.js.errors.NotFoundError):
            msg = await js.get_msg(EVENTS_STREAM, seq)
            if msg.subject.split(".")[1::2] == ["msg", agent]:  # cortex.msg.<slot>.<agent>.<kind>
                ids.add(msgspec.json.decode(msg.data)["id"])
    return ids
