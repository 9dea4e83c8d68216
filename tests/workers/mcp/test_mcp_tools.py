"""``cortex mcp`` against the whole pipeline, through the MCP SDK's own client: every worker
runs (``cortex up``) on a nats-server whose MCP users hold exactly the permissions
``nats_permissions`` documents; alice's and bob's demo conversations are processed once for
the module, then alice's server — each test over stdio and over streamable HTTP — and bob's
answer."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Any

import nats
import nats.errors
import pytest
import pytest_asyncio
from cortex_testkit import ConfiguredNats, apis_answer, cortex, drained, wait_for
from mcp import MCPError
from mcp_testkit import (
    HttpServers,
    McpSession,
    initialize_status,
    mcp_env,
    spawn_cortex,
    stdio_server,
    stop,
    with_token,
)

from workers.mcp.auth import MISSING, REFUSED
from workers.mcp.tools import TOOLS, nats_permissions
from workers.recall.capture import remembered_id

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOB_ONLY = {"auth migration": "billing export", "kubernetes": "terraform", "Redis": "Memcached"}
ALICE_MARKERS = ("auth migration", "kubernetes", "Redis")

# the api, recall and boot workers serve alice once these answer
SERVING = (("threads", b"{}"), ("recall", b'{"query": "auth"}'), ("boot", b"{}"))


TOKENS = {"alice": "alice-0123456789abcdef", "bob": "bob-0123456789abcdef"}


def user(name: str, password: str, agents: tuple[str, ...]) -> str:
    """A NATS user holding what ``nats_permissions`` grants the servers of ``agents``, together."""
    publish = [s for agent in agents for s in nats_permissions(agent)["publish"]]
    subscribe = [s for agent in agents for s in nats_permissions(agent)["subscribe"]]
    return (f"{{ user: {name}, password: {password}, permissions: {{ publish: {{ allow: {json.dumps(publish)} }}, "
            f"subscribe: {{ allow: {json.dumps(subscribe)} }} }} }}")


def auth_block() -> str:
    users = ["{ user: svc, password: svc }", user("mcp_alice", "alice-pw", ("alice",)),
             user("mcp_bob", "bob-pw", ("bob",)), user("mcp_shared", "shared-pw", ("alice", "bob"))]
    return "authorization {\n  users = [\n    " + "\n    ".join(users) + "\n  ]\n}\n"


def demo_events(agent: str, replace: dict[str, str]) -> list[str]:
    text = resources.files("workers.demo").joinpath("conversation.jsonl").read_text()
    for old, new in replace.items():
        text = text.replace(old, new)
    out = []
    for line in text.splitlines():
        event = json.loads(line)
        event.update(agent=agent, id=f"{agent}-{event['id']}")
        out.append(json.dumps(event))
    return out


class Pipeline:
    def __init__(self, server: ConfiguredNats, tmp: Path) -> None:
        self.server = server
        self.tmp = tmp
        self.svc = server.url("svc:svc")

    def env(self, agent: str) -> dict[str, str]:
        """A ``cortex mcp`` for ``agent`` with that agent's confined NATS user (``shared``: the
        user of a server for alice and bob together)."""
        return mcp_env(self.server.url(), self.tmp, CORTEX_NATS_USER=f"mcp_{agent}",
                       CORTEX_NATS_PASSWORD=f"{agent}-pw")

    def token_file(self, name: str, agents: tuple[str, ...] = ("alice", "bob")) -> Path:
        path = self.tmp / name
        path.write_text("".join(f"{agent} {TOKENS[agent]}\n" for agent in agents))
        return path


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def pipeline(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Pipeline]:
    tmp = tmp_path_factory.mktemp("mcp-pipeline")
    server = ConfiguredNats(tmp / "nats", auth_block()).start()
    up = None
    try:
        svc = server.url("svc:svc")
        assert cortex("init", url=svc).returncode == 0
        events = tmp / "demo.jsonl"
        alice, bob = demo_events("alice", {}), demo_events("bob", BOB_ONLY)
        events.write_text("".join(a + "\n" + b + "\n" for a, b in zip(alice, bob, strict=True)))
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")},
               "CORTEX_DATA_DIR": str(tmp / "workers-data"), "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100",
               "CORTEX_EMBEDDER": "hashing",  # model-free: the tools are tested here, not retrieval quality
               "CORTEX_LOG_LEVEL": "WARNING"}
        up = spawn_cortex(tmp / "up.log", "up", "--nats-url", svc, env=env)
        assert cortex("publish", str(events), url=svc).returncode == 0
        nc = await nats.connect(svc)
        try:
            await wait_for(lambda: drained(nc.jetstream()), within=120)
            await wait_for(lambda: apis_answer(nc, "alice", SERVING), within=60)
        finally:
            await nc.close()
        yield Pipeline(server, tmp)
    finally:
        if up is not None:
            stop(up)
        server.stop()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def alice_stdio(pipeline: Pipeline) -> AsyncIterator[Any]:
    """alice's ``cortex mcp`` over stdio, a subprocess of the SDK's client."""
    session = McpSession(stdio_server("alice", pipeline.env("alice")))
    yield await session.start()
    await session.stop()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def alice_http(pipeline: Pipeline) -> AsyncIterator[Any]:
    """alice's ``cortex mcp --http``, reached by the SDK's streamable HTTP client."""
    servers = HttpServers(pipeline.tmp)
    try:
        session = McpSession(servers.start("alice", pipeline.env("alice")))
        yield await session.start()
        await session.stop()
    finally:
        servers.stop_all()


@pytest.fixture(scope="module", params=["stdio", "http"])
def alice(request: pytest.FixtureRequest) -> Any:
    """alice's server over each transport in turn."""
    return request.getfixturevalue(f"alice_{request.param}")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def bob_http(pipeline: Pipeline) -> AsyncIterator[Any]:
    """bob's ``cortex mcp --http``, reached by the SDK's streamable HTTP client."""
    servers = HttpServers(pipeline.tmp)
    try:
        session = McpSession(servers.start("bob", pipeline.env("bob")))
        yield await session.start()
        await session.stop()
    finally:
        servers.stop_all()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def shared_http(pipeline: Pipeline) -> AsyncIterator[tuple[str, Any, Any]]:
    """One ``cortex mcp --http --tokens`` for alice and bob: (its URL, alice's session, bob's session)."""
    servers = HttpServers(pipeline.tmp)
    try:
        url = servers.start_tokens(pipeline.token_file("tokens"), pipeline.env("shared"))
        alice, bob = McpSession(with_token(url, TOKENS["alice"])), McpSession(with_token(url, TOKENS["bob"]))
        yield url, await alice.start(), await bob.start()
        await alice.stop()
        await bob.stop()
    finally:
        servers.stop_all()


def text(result: Any) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return str(result.content[0].text)


async def ok(client: Any, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    return result


async def test_the_tools_are_listed_with_schemas_a_model_can_use(alice: Any) -> None:
    listed = {tool.name: tool for tool in (await alice.list_tools()).tools}
    assert sorted(listed) == sorted(t.name for t in TOOLS) == sorted(
        ["cortex_recall", "cortex_remember", "cortex_forget", "cortex_update", "cortex_history", "cortex_search",
         "cortex_stats", "cortex_threads", "cortex_decisions", "cortex_commitments", "cortex_traces", "cortex_boot"])
    for tool in listed.values():
        assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert len(tool.description or "") > 120, tool.name
    recall = listed["cortex_recall"].input_schema
    assert recall["required"] == ["query"] and recall["properties"]["query"]["maxLength"] == 4000
    assert "token budget" in listed["cortex_recall"].description
    assert listed["cortex_remember"].input_schema["required"] == ["content"]
    assert listed["cortex_forget"].input_schema["required"] == ["id"]
    assert listed["cortex_threads"].annotations.read_only_hint is True
    assert listed["cortex_forget"].annotations.destructive_hint is True


async def test_threads_decisions_commitments_and_boot_return_the_demo_state(alice: Any) -> None:
    threads = await ok(alice, "cortex_threads")
    by_title = {t["title"].lower(): t for t in threads.structured_content["threads"]}
    assert any("auth migration" in title and t["status"] == "closed" for title, t in by_title.items())
    assert any("kubernetes cluster" in title and t["status"] == "open" for title, t in by_title.items())
    assert text(threads).startswith("ID  ") and "kubernetes cluster" in text(threads).lower()
    open_only = await ok(alice, "cortex_threads", status="open")
    assert {t["status"] for t in open_only.structured_content["threads"]} == {"open"}

    decisions = await ok(alice, "cortex_decisions")
    assert any("Redis" in d["what"] for d in decisions.structured_content["decisions"])
    assert "Redis" in text(decisions)
    none_since = await ok(alice, "cortex_decisions", since="2030-01-01")
    assert none_since.structured_content["decisions"] == [] and "no decisions for alice" in text(none_since)

    commitments = await ok(alice, "cortex_commitments")
    assert any("dashboard performance bug" in c["what"] for c in commitments.structured_content["commitments"])
    assert "dashboard performance bug" in text(commitments)

    traces = await ok(alice, "cortex_traces")  # the demo conversation has no tool events
    assert traces.structured_content["findings"] == [] and "no failure findings for alice" in text(traces)

    boot = await ok(alice, "cortex_boot")
    assert boot.structured_content["agent"] == "alice" and boot.structured_content["trigger"] == "request"
    assert text(boot).startswith(boot.structured_content["markdown"])
    assert "kubernetes" in text(boot).lower()


async def test_recall_search_and_stats_answer_from_the_conversation(alice: Any) -> None:
    recall = await ok(alice, "cortex_recall", query="When must we never deploy to production?")
    memories = recall.structured_content["memories"]
    assert "Fridays" in memories[0]["content"] and memories[0]["id"] in text(recall)  # whole ids, for forget
    assert f"{len(memories)} memories, {recall.structured_content['tokens']} tokens" in text(recall)

    search = await ok(alice, "cortex_search", query="Redis dashboard caching")
    assert any(h["kind"] == "decision" and "Redis" in h["text"] for h in search.structured_content["hits"])

    stats = await ok(alice, "cortex_stats")
    assert stats.structured_content["agent"] == "alice" and stats.structured_content["counts"]["decisions"] >= 4
    assert "threads open" in text(stats) and "mood" in text(stats)


async def test_remember_then_recall_finds_it_and_forget_removes_it(alice: Any) -> None:
    remembered = await ok(alice, "cortex_remember", content="The office plant on the third floor is called Gerald.")
    memory_id = remembered.structured_content["memory_id"]
    assert memory_id == remembered_id("alice", remembered.structured_content["event_id"]) and memory_id in text(
        remembered)

    async def recalled() -> bool:
        reply = await ok(alice, "cortex_recall", query="What is the office plant called?")
        return any(m["id"] == memory_id for m in reply.structured_content["memories"])

    await wait_for(recalled, within=30, interval=0.2)
    await ok(alice, "cortex_forget", id=memory_id)

    async def forgotten() -> bool:
        return not await recalled()

    await wait_for(forgotten, within=30, interval=0.2)


async def test_update_changes_a_memory_and_history_lists_every_version(alice: Any) -> None:
    """Issue 41 (mem0's update and history): cortex_update publishes a memory_update, the recall
    worker changes the memory in place and keeps the version it replaces; cortex_history lists both."""
    remembered = await ok(alice, "cortex_remember", content="The staging database lives on db-2.", type="fact")
    memory_id = remembered.structured_content["memory_id"]

    async def recalled(words: str) -> bool:
        reply = await ok(alice, "cortex_recall", query="Where does the staging database live?")
        return any(m["id"] == memory_id and words in m["content"] for m in reply.structured_content["memories"])

    await wait_for(lambda: recalled("db-2"), within=30, interval=0.2)
    updated = await ok(alice, "cortex_update", id=memory_id, content="The staging database lives on db-7.")
    assert updated.structured_content["memory_id"] == memory_id
    await wait_for(lambda: recalled("db-7"), within=30, interval=0.2)

    shown = await ok(alice, "cortex_history", id=memory_id)
    versions = shown.structured_content["versions"]
    assert [v["content"] for v in versions] == ["The staging database lives on db-2.",
                                                "The staging database lives on db-7."]
    assert [v["event"] for v in versions] == [remembered.structured_content["event_id"],
                                              updated.structured_content["event_id"]]
    assert "db-2" in text(shown) and "(current)" in text(shown)
    bad = await alice.call_tool("cortex_update", {"id": "not-a-uuid", "content": "x"})
    assert bad.is_error and "not a memory id" in text(bad)


async def test_remember_and_recall_for_one_person_keep_to_that_person(alice: Any) -> None:
    """Issue 41 (mem0's user_id): the tools' person argument — what the gateway plugin passes
    for the person of the turn — reaches the recall worker: a memory remembered for one
    person is found for them and without a person, never for another person."""
    remembered = await ok(alice, "cortex_remember", content="Kim's parcel locker PIN is 5521.", person="kim")
    memory_id = remembered.structured_content["memory_id"]

    async def found(**person: str) -> bool:
        reply = await ok(alice, "cortex_recall", query="parcel locker PIN", **person)
        return any(m["id"] == memory_id for m in reply.structured_content["memories"])

    await wait_for(lambda: found(person="kim"), within=30, interval=0.2)
    assert await found() and not await found(person="lee")
    briefing = await ok(alice, "cortex_boot", person="lee")
    assert not briefing.is_error


async def test_a_server_for_another_agent_sees_none_of_it(alice_stdio: Any, bob_http: Any) -> None:
    alice = alice_stdio
    threads = await ok(bob_http, "cortex_threads")
    assert "billing export" in text(threads).lower()
    for tool, arguments in (("cortex_threads", {}), ("cortex_decisions", {}), ("cortex_commitments", {}),
                            ("cortex_boot", {}), ("cortex_stats", {}), ("cortex_traces", {}),
                            ("cortex_search", {"query": "auth migration kubernetes Redis"}),
                            ("cortex_recall", {"query": "auth migration kubernetes Redis"})):
        result = await bob_http.call_tool(tool, arguments)
        seen = text(result) + json.dumps(result.structured_content)
        assert not any(marker in seen for marker in ALICE_MARKERS), (tool, seen[:500])

    mine = await ok(alice, "cortex_remember", content="Alice's locker code is 4711.")
    memory_id = mine.structured_content["memory_id"]

    async def alice_recalls() -> bool:
        reply = await ok(alice, "cortex_recall", query="What is the locker code?")
        return any(m["id"] == memory_id for m in reply.structured_content["memories"])

    await wait_for(alice_recalls, within=30, interval=0.2)
    theirs = await ok(bob_http, "cortex_recall", query="What is the locker code?")
    assert all("4711" not in m["content"] for m in theirs.structured_content["memories"])
    await ok(bob_http, "cortex_forget", id=memory_id)  # bob's forget of alice's id: applied to bob only
    other = await ok(bob_http, "cortex_remember", content="Bob's locker code is 1234.")  # a later event
    await wait_for(lambda: _recalled_by(bob_http, other.structured_content["memory_id"]), within=30, interval=0.2)
    assert await alice_recalls()  # bob's forget, applied before his remember, did not touch alice's memory


async def _recalled_by(client: Any, memory_id: str, what: str = "locker code") -> bool:
    reply = await ok(client, "cortex_recall", query=f"What is the {what}?")
    return any(m["id"] == memory_id for m in reply.structured_content["memories"])


async def test_the_feedback_the_tools_publish_is_dead_lettered_by_no_worker(
    pipeline: Pipeline, alice_stdio: Any
) -> None:
    """remember and memory_forget travel the stream to every feedback consumer (threads,
    decisions, boot, recall): each takes them without a dead letter, and so does a fact_access."""
    await ok(alice_stdio, "cortex_remember", content="The release train leaves every second Tuesday.", type="fact")
    nc = await nats.connect(pipeline.svc)
    try:
        js = nc.jetstream()
        access = {"id": "fa-1", "agent": "alice", "ts": "2026-02-17T10:10:00Z", "kind": "fact_access",
                  "value": ["fact:1"]}
        await js.publish("cortex.feedback.alice.fact_access", json.dumps(access).encode())
        await wait_for(lambda: drained(js), within=60)
        assert (await js.stream_info("CORTEX_DLQ")).state.messages == 0
    finally:
        await nc.close()


async def test_confined_credentials_reach_no_other_agent(pipeline: Pipeline) -> None:
    """What ``nats_permissions`` grants alice's server: her APIs and her feedback, nothing of bob's."""
    refusals: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        refusals.append(exc)

    nc = await nats.connect(pipeline.server.url("mcp_alice:alice-pw"), inbox_prefix="_INBOX_alice",
                            error_cb=on_error)
    try:
        reply = await nc.request("cortex.api.threads.alice", b"{}", timeout=5)
        assert json.loads(reply.data)["threads"]
        for subject in ("cortex.api.threads.bob", "cortex.feedback.bob.remember", "cortex.msg.alice.received"):
            with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
                await nc.request(subject, b"{}", timeout=0.5)

        async def refused() -> bool:
            return all(any(s in str(e) for e in refusals)
                       for s in ("cortex.api.threads.bob", "cortex.feedback.bob.remember"))

        await wait_for(refused, within=10)
    finally:
        await nc.close()


async def test_credentials_without_the_agent_are_a_tool_error_that_says_so(pipeline: Pipeline) -> None:
    """A server started for alice with bob's confined user: NATS refuses every subject of
    alice's, and the tool says which permission is missing instead of reporting a timeout."""
    session = McpSession(stdio_server("alice", pipeline.env("bob"), "--timeout", "1"))
    client = await session.start()
    try:
        result = await client.call_tool("cortex_threads", {})
        assert result.is_error
        assert text(result) == ("NATS refused to let this server publish to cortex.api.threads.alice: its "
                                "credentials lack that permission (docs/integration.md lists what `cortex mcp` "
                                "needs).")
    finally:
        await session.stop()


async def test_one_server_serves_each_agent_its_own_and_nothing_of_the_other(shared_http: tuple[str, Any, Any]) -> None:
    _, alice, bob = shared_http
    threads = await ok(alice, "cortex_threads")
    assert "kubernetes cluster" in text(threads).lower()
    assert (await ok(alice, "cortex_boot")).structured_content["agent"] == "alice"
    assert (await ok(bob, "cortex_boot")).structured_content["agent"] == "bob"
    assert "billing export" in text(await ok(bob, "cortex_threads")).lower()
    for tool, arguments in (("cortex_threads", {}), ("cortex_decisions", {}), ("cortex_boot", {}),
                            ("cortex_search", {"query": "auth migration kubernetes Redis"}),
                            ("cortex_recall", {"query": "auth migration kubernetes Redis"})):
        result = await bob.call_tool(tool, arguments)
        seen = text(result) + json.dumps(result.structured_content)
        assert not any(marker in seen for marker in ALICE_MARKERS), (tool, seen[:500])
    mine = await ok(alice, "cortex_remember", content="Alice's bike lock code is 8812.")
    assert mine.structured_content["memory_id"] == remembered_id("alice", mine.structured_content["event_id"])
    await wait_for(lambda: _recalled_by(alice, mine.structured_content["memory_id"], "bike lock code"), within=30,
                   interval=0.2)
    theirs = await ok(bob, "cortex_recall", query="What is the bike lock code?")
    assert all("8812" not in m["content"] for m in theirs.structured_content["memories"])


async def test_a_missing_or_wrong_token_is_a_401_with_one_line(shared_http: tuple[str, Any, Any]) -> None:
    url, _, _ = shared_http
    assert initialize_status(url, None) == (401, MISSING + "\n")
    assert initialize_status(url, "alice-0123456789abcdeX") == (401, REFUSED + "\n")
    assert initialize_status(url, TOKENS["alice"])[0] == 200
    session = McpSession(with_token(url, "not-a-token-of-anyone"))
    with pytest.raises(ExceptionGroup) as refused:  # the SDK's client: its initialize answered by an HTTP error
        await session.start()
    assert refused.group_contains(MCPError, match="error response")


async def test_a_revoked_token_is_refused_from_the_next_request_on(pipeline: Pipeline) -> None:
    tokens = pipeline.token_file("revocable")
    servers = HttpServers(pipeline.tmp)
    try:
        url = servers.start_tokens(tokens, pipeline.env("shared"))
        alice = McpSession(with_token(url, TOKENS["alice"]))
        client = await alice.start()
        await ok(client, "cortex_stats")
        tokens.write_text(f"bob {TOKENS['bob']}\n")  # alice's token revoked: her line removed

        async def refused() -> bool:
            return initialize_status(url, TOKENS["alice"])[0] == 401

        await wait_for(refused, within=15, interval=0.2)
        with pytest.raises(MCPError):  # the open session is refused too: every request is checked
            await asyncio.wait_for(client.call_tool("cortex_stats", {}), timeout=30)
        assert initialize_status(url, TOKENS["bob"])[0] == 200
        await alice.stop()
    finally:
        servers.stop_all()
