"""Requests stamp the feedback they publish with the agent's latest event time applied, never
the wall clock (contract: Time and replay), and a boot request without a session names the
agent's latest one (contract: ``cortex.api.boot.<agent>``).

Before, a recall published its ``recall_access`` at the wall clock: on an agent whose events
are from 2026-02-17 the RecallDoc's time jumped to "now", the boot API took that as its
"now", and the briefing said "STALE DATA: Thread data is 6797h old" and dropped its snapshot
and narrative sections. The MCP server's remember/forget and the CLI's feedback did the same.

One pipeline for the module: every worker in this process on a real nats-server, the demo
conversation (2026-02-17) for alice; alice's ``cortex mcp`` over stdio; ``cortex`` commands
as subprocesses."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import nats
import nats.errors
import pytest
import pytest_asyncio
from cortex_testkit import CONSUMING, apis_answer, cortex, demo_file, drained, subject_count, wait_for
from mcp_testkit import McpSession, mcp_env, stdio_server
from nats.aio.client import Client
from nats.js.api import DeliverPolicy

from schemas.api import RecallReply, StatusReply, ThreadsReply
from schemas.docs import BootDoc, RecallDoc
from schemas.events import FeedbackEvent
from shared.asof import DocReader
from shared.config import load_settings
from shared.embedded import EmbeddedNats
from shared.feedback import status_time
from shared.names import EVENTS_STREAM, stored_subject
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.boot.state import NOTHING_YET
from workers.registry import all_specs, consumer_specs

pytestmark = pytest.mark.asyncio(loop_scope="module")

LAST_EVENT = datetime(2026, 2, 17, 10, 5, tzinfo=UTC)  # the demo's last event: the second session's start
FIRST_EVENT = datetime(2026, 2, 17, 9, 0, tzinfo=UTC)
COMPACTION = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)
SNAPSHOT, NARRATIVE = "## 🔥 Last Session Snapshot", "## 📖 Narrative"

# the api, recall and boot workers serve alice once these answer
SERVING = (("status", b"{}"), ("recall", b'{"query": "auth"}'), ("boot", b"{}"))


class Pipeline:
    def __init__(self, url: str, nc: Client, tmp: Path) -> None:
        self.url = url
        self.nc = nc
        self.js = nc.jetstream()
        self.tmp = tmp

    async def request(self, service: str, body: dict[str, Any], agent: str = "alice") -> bytes:
        reply = await self.nc.request(f"cortex.api.{service}.{agent}", msgspec.json.encode(body), timeout=30)
        assert not (reply.headers and reply.headers.get("Nats-Service-Error")), reply.data
        return bytes(reply.data)

    async def boot(self, **body: Any) -> BootDoc:
        return await self.boot_of("alice", **body)

    async def boot_of(self, agent: str, **body: Any) -> BootDoc:
        return msgspec.json.decode(await self.request("boot", body, agent), type=BootDoc)

    async def settled(self) -> None:
        await wait_for(lambda: drained(self.js, CONSUMING), within=120)

    async def feedback(self) -> list[FeedbackEvent]:
        """Every FeedbackEvent of alice's in the stream, in stream order."""
        stored = stored_subject("cortex", "feedback", "alice", ">")  # as the stream stores them
        count = await subject_count(self.js, stored)
        sub = await self.js.subscribe(stored, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL,
                                      stream=EVENTS_STREAM)
        events = []
        try:
            for _ in range(count):
                msg = await sub.next_msg(timeout=10)
                events.append(msgspec.json.decode(msg.data, type=FeedbackEvent))
        finally:
            await sub.unsubscribe()
        return events


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def pipeline(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Pipeline]:
    tmp = tmp_path_factory.mktemp("request-time")
    server = EmbeddedNats(str(tmp / "nats"))
    server.start()
    settings = load_settings({"CORTEX_NATS_URL": server.url, "CORTEX_DATA_DIR": str(tmp / "workers-data"),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_EMBEDDER": "hashing"})
    nc = await nats.connect(server.url)
    host = WorkerHost(settings, list(all_specs().values()), __version__)
    task = None
    try:
        await provision(nc.jetstream(), settings, consumer_specs())
        task = asyncio.create_task(host.run())
        published = await asyncio.to_thread(cortex, "publish", str(demo_file(tmp, "alice")), url=server.url)
        assert published.returncode == 0, published.stderr
        pipeline = Pipeline(server.url, nc, tmp)
        await pipeline.settled()
        await wait_for(lambda: apis_answer(nc, "alice", SERVING), within=60)
        yield pipeline
    finally:
        host.stop.set()
        if task is not None:
            await asyncio.wait_for(task, timeout=60)
        await nc.close()
        server.stop()


def assert_event_time(events: list[FeedbackEvent]) -> None:
    stamps = {(e.kind, e.actor): e.ts for e in events}
    assert all(FIRST_EVENT <= ts <= LAST_EVENT for ts in stamps.values()), stamps


def assert_briefing_in_event_time(doc: BootDoc) -> None:
    assert FIRST_EVENT <= doc.generated_at <= LAST_EVENT, doc.generated_at
    assert "STALE DATA" not in doc.markdown and "Thread data is" not in doc.markdown, doc.markdown[:800]
    assert SNAPSHOT in doc.markdown and NARRATIVE in doc.markdown, doc.markdown


async def test_a_boot_request_without_a_session_names_the_agents_latest(pipeline: Pipeline) -> None:
    assert (await pipeline.boot()).session == "s-demo-2"  # the stored briefing's: the last session start
    assert (await pipeline.boot(session="s-asked")).session == "s-asked"
    assert (await pipeline.boot(session="")).session == ""  # an empty session is one, not a missing one
    assert (await pipeline.boot_of("nobody")).session is None  # an agent without any session


async def test_a_briefing_at_a_sessions_start_says_how_long_the_agent_was_away(pipeline: Pipeline) -> None:
    """The demo's last event is the second session's start: a boot request (cortex_boot, the
    demo's own briefing) said "Last activity: just now" of that start, and so did the stored
    briefing made again for the fact_access feedback the request published (stamped with
    the same time). Both now say when the agent was last active before it."""
    def before_the_start(markdown: str) -> datetime:
        line = next(x for x in markdown.splitlines() if x.startswith("Last activity: "))
        assert "just now" not in line, line
        return datetime.fromisoformat(line.rsplit("(", 1)[1].rstrip(")"))

    asked = before_the_start((await pipeline.boot()).markdown)
    assert COMPACTION <= asked < LAST_EVENT
    await pipeline.settled()  # the request's fact_access applied: the stored briefing made again
    stored = await DocReader(pipeline.js).latest("cortex_boot", "alice", BootDoc)
    assert stored is not None and stored.generated_at == LAST_EVENT
    assert before_the_start(stored.markdown) == asked


async def test_a_recall_stamps_its_access_with_the_agents_latest_event_time(pipeline: Pipeline) -> None:
    assert_briefing_in_event_time(await pipeline.boot())  # before any request
    reply = msgspec.json.decode(await pipeline.request("recall", {"query": "auth migration Redis"}),
                                type=RecallReply)
    assert reply.memories
    await pipeline.settled()
    access = [e for e in await pipeline.feedback() if e.kind == "recall_access"]
    assert access and all(e.ts == LAST_EVENT for e in access), [e.ts for e in access]
    recall = await DocReader(pipeline.js).latest("cortex_recall", "alice", RecallDoc)
    assert recall is not None and recall.updated <= LAST_EVENT and recall.integrity.last_event_ts == LAST_EVENT
    assert_briefing_in_event_time(await pipeline.boot())
    consolidate = json.loads(await pipeline.request("consolidate", {}))
    assert datetime.fromisoformat(consolidate["now"]) == LAST_EVENT


async def test_mcp_and_cli_feedback_carry_the_agents_latest_event_time(pipeline: Pipeline) -> None:
    session = McpSession(stdio_server("alice", mcp_env(pipeline.url, pipeline.tmp)))
    client = await session.start()
    try:
        remembered = await client.call_tool("cortex_remember", {"content": "The office plant is called Gerald."})
        assert not remembered.is_error, remembered.content
        memory_id = remembered.structured_content["memory_id"]
        recalled = await client.call_tool("cortex_recall", {"query": "What is the office plant called?"})
        assert not recalled.is_error, recalled.content
        await pipeline.settled()
        threads = msgspec.json.decode(await pipeline.request("threads", {}), type=ThreadsReply).threads
        for args in (("memory", "pin", "alice", memory_id), ("thread", "priority", "alice", threads[0].id, "high")):
            done = await asyncio.to_thread(cortex, *args, url=pipeline.url)  # the workers run in this loop
            assert done.returncode == 0, done.stderr
        forgotten = await client.call_tool("cortex_forget", {"id": memory_id})
        assert not forgotten.is_error, forgotten.content
        await pipeline.settled()
        booted = await client.call_tool("cortex_boot", {})
        assert not booted.is_error and "STALE DATA" not in booted.content[0].text
        assert SNAPSHOT in booted.content[0].text and NARRATIVE in booted.content[0].text
    finally:
        await session.stop()
    events = await pipeline.feedback()
    kinds = {(e.kind, e.actor) for e in events}
    assert {("remember", "mcp"), ("memory_forget", "mcp"), ("recall_access", "recall-api"), ("memory_pin", "cli"),
            ("thread_priority", "cli")} <= kinds, kinds
    assert_event_time(events)
    # each the newest watermark of the documents its publisher reads (the MCP server through the
    # status API, the CLI the briefing's documents): a time of the demo's, from its compaction on
    demo = {datetime.fromisoformat(json.loads(line)["ts"]) for line in demo_file(pipeline.tmp, "alice").open()}
    stamps = {(e.kind, e.actor, e.ts.isoformat()) for e in events}
    assert all(e.ts in demo and e.ts >= COMPACTION for e in events if e.actor in ("mcp", "cli")), stamps
    applied = status_time(msgspec.json.decode(await pipeline.request("status", {}), type=StatusReply))
    assert COMPACTION <= applied <= LAST_EVENT
    recall = await DocReader(pipeline.js).latest("cortex_recall", "alice", RecallDoc)
    assert recall is not None and recall.updated <= LAST_EVENT and recall.integrity.last_event_ts <= LAST_EVENT
    assert_briefing_in_event_time(await pipeline.boot())


async def test_a_session_of_empty_name_is_the_latest_session(pipeline: Pipeline) -> None:
    """A session named "" is a session: the briefing made at its start names it, not the
    agent's previous one, and so does a request without ``session``."""
    for n, session in enumerate(("s1", "")):
        start = {"id": f"bea-{n}", "agent": "bea", "session": session, "ts": f"2026-02-17T09:{n}0:00Z"}
        await pipeline.js.publish("cortex.session.bea.start", msgspec.json.encode(start))
    await pipeline.settled()
    stored = await DocReader(pipeline.js).latest("cortex_boot", "bea", BootDoc)
    assert stored is not None and stored.trigger == "session_start" and stored.session == ""
    assert (await pipeline.boot_of("bea")).session == ""



async def test_a_new_agents_first_briefing_is_no_fault(pipeline: Pipeline) -> None:
    """An agent's first event, a session start: its briefing warned "⚠️ No data at all for this
    agent yet — no worker has produced a document (no data from: channels, decisions, …)", as
    if Cortex were broken, beside "Last activity: none recorded". Every worker is caught up:
    it says that nothing has reached Cortex yet, and warns of nothing. So does a briefing asked
    for an agent id Cortex has never seen (a typo in a host's config, say)."""
    start = {"id": "cleo-0", "agent": "cleo", "session": "s-first", "ts": "2026-02-17T09:00:00Z"}
    await pipeline.js.publish("cortex.session.cleo.start", msgspec.json.encode(start))
    await pipeline.settled()
    reader = DocReader(pipeline.js)

    async def completed() -> bool:
        # drained is not completed: a source whose checkpoint comes after its acks (recall syncs
        # its store after acking) is caught up a moment later, and the boot worker then completes
        # the document it wrote with that source's staleness line
        doc = await reader.latest("cortex_boot", "cleo", BootDoc)
        return doc is not None and "⚠️" not in doc.markdown

    await wait_for(completed, within=60)
    stored = await reader.latest("cortex_boot", "cleo", BootDoc)
    assert stored is not None and stored.trigger == "session_start" and stored.session == "s-first"
    for doc in (stored, await pipeline.boot_of("cleo"), await pipeline.boot_of("alcie")):
        assert f"{NOTHING_YET}\n" in doc.markdown, doc.markdown
        assert "⚠️" not in doc.markdown and "none recorded" not in doc.markdown, doc.markdown
