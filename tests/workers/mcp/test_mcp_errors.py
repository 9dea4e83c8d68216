"""What a model sees when something is wrong — NATS unreachable, a worker stopped or stuck, an
agent with no data, arguments over the limits: one sentence as a tool error, within the
server's timeout, and the server keeps serving. The SDK's own client on ``cortex mcp`` over stdio."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
import pytest_asyncio
from cortex_testkit import ConfiguredNats, cortex, subject_count, wait_for
from mcp_testkit import HttpServers, McpSession, mcp_env, spawn_cortex, stdio_server, with_token

from schemas.events import FeedbackEvent
from shared.names import EVENTS_STREAM, stored_subject
from workers.mcp.tools import TOOLS

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT_S = 1  # the server's --timeout: how long a tool waits for an API


class Env:
    def __init__(self, server: ConfiguredNats, tmp: Path, client: Any) -> None:
        self.server = server
        self.tmp = tmp
        self.client = client


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    """A provisioned nats-server with no worker running, and alice's ``cortex mcp`` on it."""
    tmp = tmp_path_factory.mktemp("mcp-errors")
    server = ConfiguredNats(tmp / "nats", "").start()
    try:
        assert cortex("init", url=server.url()).returncode == 0
        session = McpSession(stdio_server("alice", mcp_env(server.url(), tmp), "--timeout", str(TIMEOUT_S)))
        yield Env(server, tmp, await session.start())
        await session.stop()
    finally:
        server.stop()


def error_text(result: Any) -> str:
    assert result.is_error, result
    assert len(result.content) == 1 and result.content[0].type == "text"
    message = str(result.content[0].text)
    assert "Traceback" not in message and "\n" not in message
    return message


async def call(client: Any, tool: str, **arguments: Any) -> Any:
    """A tool call that must come back, answer or error, well within the bound (never a hang)."""
    return await asyncio.wait_for(client.call_tool(tool, arguments), timeout=TIMEOUT_S + 15)


async def test_unreachable_nats_is_a_tool_error_and_the_next_call_connects(tmp_path: Path) -> None:
    server = ConfiguredNats(tmp_path / "later", "")  # its port is chosen; nothing listens there yet
    session = McpSession(stdio_server("alice", mcp_env(server.url(), tmp_path)))
    client = await session.start()
    try:
        message = error_text(await call(client, "cortex_threads"))
        assert message.startswith("Cortex is unreachable (cannot connect to NATS at nats://127.0.0.1:")
        assert "`cortex up`" in message
        assert error_text(await call(client, "cortex_remember", content="x")).startswith("Cortex is unreachable")
        server.start()
        try:
            message = error_text(await call(client, "cortex_threads"))  # connected now: nothing serves yet
            assert message.startswith("Cortex's api worker is not running"), message
        finally:
            server.stop()
    finally:
        await session.stop()


async def test_a_stopped_api_worker_is_a_tool_error_not_a_hang(env: Env) -> None:
    api = spawn_cortex(env.tmp / "api.log", "worker", "api",
                       env=mcp_env(env.server.url(), env.tmp, CORTEX_LOG_LEVEL="WARNING"))
    try:
        async def served() -> str | None:
            message = error_text(await call(env.client, "cortex_threads"))
            return None if "not running" in message else message

        message = await wait_for(served, within=60, interval=0.2)
        assert message == ("Cortex has no data for agent 'alice' yet: none of its conversation events has been "
                           "processed; check that its gateway publishes to cortex.msg.alice.* and that the "
                           "workers run.")
    finally:
        api.kill()
        api.wait(10)
    message = error_text(await call(env.client, "cortex_threads"))
    assert message == ("Cortex's api worker is not running (nothing answers cortex.api.threads.alice); start it "
                       "with `cortex up` or `cortex worker api`, then call the tool again.")
    assert len((await env.client.list_tools()).tools) == len(TOOLS)  # the server goes on


async def test_over_http_for_many_agents_a_stopped_api_worker_is_a_tool_error_not_a_hang(env: Env) -> None:
    tokens = env.tmp / "tokens"
    tokens.write_text("alice alice-0123456789abcdef\nbob bob-0123456789abcdef\n")
    servers = HttpServers(env.tmp)
    try:
        url = servers.start_tokens(tokens, mcp_env(env.server.url(), env.tmp), "--timeout", str(TIMEOUT_S))
        session = McpSession(with_token(url, "bob-0123456789abcdef"))
        client = await session.start()
        try:
            message = error_text(await call(client, "cortex_threads"))
            assert message == ("Cortex's api worker is not running (nothing answers cortex.api.threads.bob); start "
                               "it with `cortex up` or `cortex worker api`, then call the tool again.")
            assert len((await client.list_tools()).tools) == len(TOOLS)  # the server goes on
        finally:
            await session.stop()
    finally:
        servers.stop_all()


async def test_a_worker_that_does_not_answer_times_out_as_a_tool_error(env: Env) -> None:
    nc = await nats.connect(env.server.url())
    silent = await nc.subscribe("cortex.api.boot.alice")  # takes requests, never replies: a stuck worker
    try:
        # the server has the interest once a probe of our own comes back through it (flush() is no
        # barrier: nats-py writes its PING ahead of a SUB still in the pending buffer)
        await nc.publish("cortex.api.boot.alice", b"probe")
        assert (await silent.next_msg(timeout=10)).data == b"probe"
        loop = asyncio.get_running_loop()
        started = loop.time()
        message = error_text(await call(env.client, "cortex_boot"))
        assert message == (f"Cortex's boot worker did not answer cortex.api.boot.alice within {TIMEOUT_S} s: it is "
                           "overloaded or stuck; try again shortly.")
        assert loop.time() - started < TIMEOUT_S + 10
        assert (await silent.next_msg(timeout=10)).data == b"{}"  # the request did reach the "worker"
    finally:
        await nc.close()


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("cortex_recall", {"query": "where " * 1000},
         "Invalid arguments for cortex_recall: the query is 6000 characters long and at most 4000 are allowed: "
         "ask with the few words that matter."),
        ("cortex_search", {"query": "   "}, "Invalid arguments for cortex_search: the query is blank: say what "
                                           "to look for."),
        ("cortex_recall", {}, "Invalid arguments for cortex_recall: Object missing required field `query`."),
        ("cortex_recall", {"query": "x", "limit": 0}, "Invalid arguments for cortex_recall: Expected `int` >= 1 - "
                                                      "at `$.limit`."),
        ("cortex_threads", {"status": "stale"}, "Invalid arguments for cortex_threads: Invalid enum value 'stale' "
                                                "- at `$.status`."),
        ("cortex_threads", {"agent": "bob"}, "Invalid arguments for cortex_threads: Object contains unknown field "
                                             "`agent`."),
        ("cortex_remember", {"content": "ü" * 40000},
         "The memory is 80000 bytes long and Cortex keeps at most 65536 bytes per memory: split it into shorter "
         "statements."),
        ("cortex_nonsense", {}, "There is no tool 'cortex_nonsense'; Cortex's tools are cortex_recall, "
                                "cortex_remember, cortex_forget, cortex_update, cortex_history, cortex_search, "
                                "cortex_stats, cortex_threads, "
                                "cortex_decisions, cortex_commitments, cortex_traces, cortex_boot."),
    ],
)
async def test_arguments_a_tool_cannot_take_are_one_clear_sentence(
    env: Env, tool: str, arguments: dict[str, Any], message: str
) -> None:
    assert error_text(await call(env.client, tool, **arguments)) == message


async def test_a_forget_of_anything_but_a_memory_id_is_refused_and_publishes_nothing(env: Env) -> None:
    """Such a forget reached the recall worker, whose store raised at commit: `cortex up` died,
    and again on every restart. The ids are the UUIDs cortex_recall and cortex_remember return."""
    nc = await nats.connect(env.server.url())
    try:
        js = nc.jetstream()
        forgets = "cortex.feedback.*.alice.memory_forget"
        published = await subject_count(js, forgets)
        for bad in ("nonexistent", "1b4e28ba", "{1b4e28ba-2fa1-11d2-883f-0016d3cca427}", " " * 3):
            assert error_text(await call(env.client, "cortex_forget", id=bad)) == (
                f"Invalid arguments for cortex_forget: {bad!r} is not a memory id, so nothing was forgotten: give "
                "the id (a UUID such as 1b4e28ba-2fa1-11d2-883f-0016d3cca427) that cortex_recall or cortex_remember "
                "returned.")
        assert await subject_count(js, forgets) == published
        memory_id = "1B4E28BA-2FA1-11D2-883F-0016D3CCA427"  # any case
        # a forget is stamped with the agent's latest event time, which the api worker tells: none answers
        assert error_text(await call(env.client, "cortex_forget", id=memory_id)).startswith(
            "Cortex's api worker is not running (nothing answers cortex.api.status.alice)")
        assert await subject_count(js, forgets) == published
        api = spawn_cortex(env.tmp / "api-forget.log", "worker", "api",
                           env=mcp_env(env.server.url(), env.tmp, CORTEX_LOG_LEVEL="WARNING"))
        try:
            async def forgotten() -> bool:
                return not (await call(env.client, "cortex_forget", id=memory_id)).is_error

            before = datetime.now(UTC)
            await wait_for(forgotten, within=60, interval=0.2)
            after = datetime.now(UTC)
        finally:
            api.kill()
            api.wait(10)
        assert await subject_count(js, forgets) == published + 1  # a memory id is published (as the count shows)
        last = await js.get_last_msg(EVENTS_STREAM, stored_subject("cortex", "feedback", "alice", "memory_forget"))
        event = msgspec.json.decode(last.data or b"", type=FeedbackEvent)
        # alice has no event applied: her first event is stamped as any producer would (not 1970)
        assert event.target == memory_id and before <= event.ts <= after
        # the api worker is gone again: the next forget takes the time already known (the refresh
        # after each publish is off the call's path) instead of failing
        again = await call(env.client, "cortex_forget", id=memory_id)
        assert not again.is_error, again.content
        assert await subject_count(js, forgets) == published + 2
        last = await js.get_last_msg(EVENTS_STREAM, stored_subject("cortex", "feedback", "alice", "memory_forget"))
        assert msgspec.json.decode(last.data or b"", type=FeedbackEvent).ts >= event.ts
    finally:
        await nc.close()
