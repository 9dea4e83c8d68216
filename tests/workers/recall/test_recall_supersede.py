"""Contradictions Claude judges (issue 23): at a session start — and where upkeep runs on its
cadence in an endless session (issue 41) — the recall worker offers the agent's new
statements with their closest older ones; the pairs Claude names (only as offered)
supersede. Through the real SDK against a fake HTTP transport, a real nats-server (the LLM
cache) and the embedded store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import msgspec
import pytest
from nats.aio.client import Client

from schemas.events import FeedbackEvent, MessageEvent, SessionEvent
from shared.codec import Envelope
from shared.config import load_settings
from shared.health import Health
from shared.llm import LlmClient
from shared.provision import provision
from shared.runtime import WorkerContext
from workers.recall import supersede
from workers.recall.apply import StoreApplier
from workers.recall.capture import remembered_id
from workers.recall.embedders import HashingEmbedder
from workers.recall.store import MemoryFilter
from workers.recall.worker import HOLDER, RecallHandler

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
OLD, NEW = "We deploy on Tuesdays.", "From now on we deploy on Thursdays."


def remember(seq: int, text: str) -> Envelope:
    event = FeedbackEvent(id=f"r{seq}", agent="alice", ts=T0 + timedelta(minutes=seq), kind="remember",
                          value={"content": text})
    return Envelope(seq=seq, subject="cortex.feedback.alice.remember", family="feedback", kind="remember",
                    agent="alice", event=event)


def start(seq: int) -> Envelope:
    event = SessionEvent(id=f"s{seq}", agent="alice", session=f"s{seq}", ts=T0 + timedelta(minutes=seq))
    return Envelope(seq=seq, subject="cortex.session.alice.start", family="session", kind="start", agent="alice",
                    event=event)


def said(seq: int, text: str, hours: float) -> Envelope:
    """A message of one endless session (no session start ever)."""
    event = MessageEvent(id=f"m{seq}", agent="alice", session="slack", ts=T0 + timedelta(hours=hours), role="user",
                         sender="al", content=text)
    return Envelope(seq=seq, subject="cortex.msg.alice.received", family="msg", kind="received", agent="alice",
                    event=event)


class Claude:
    """The Messages API over a fake transport: answers the judgement with ``answer``."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.answer: dict[str, Any] = {"replacements": []}

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        assert body["tool_choice"] == {"type": "tool", "name": supersede.TOOL_NAME}
        self.prompts.append(body["messages"][0]["content"])
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": supersede.TOOL_NAME, "input": self.answer}],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 200, "output_tokens": 30}})


Make = Callable[[], Awaitable[RecallHandler]]


@pytest.fixture
async def handlers(nc: Client, tmp_path: Path) -> AsyncIterator[tuple[Make, Claude]]:
    settings = load_settings({"CORTEX_DATA_DIR": str(tmp_path), "ANTHROPIC_API_KEY": "sk-test"})
    js = nc.jetstream()
    await provision(js, settings, [])
    ctx = WorkerContext(nc=nc, js=js, settings=settings, worker="recall", consumer="recall", producer="recall@test",
                        health=Health("recall"), extras={"embedder": HashingEmbedder(256)})
    claude = Claude()
    made: list[RecallHandler] = []

    async def make() -> RecallHandler:
        store, embedder = await asyncio.to_thread(HOLDER.acquire, ctx)
        llm = LlmClient(settings, js, http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(claude.handler)))
        made.append(RecallHandler(ctx, StoreApplier(store, embedder, settings.recall, ("en",)), llm))
        return made[-1]

    yield make, claude
    for handler in made:
        await handler.aclose()


async def run(handler: RecallHandler, envs: list[Envelope]) -> None:
    for env in envs:
        await handler.apply(env)
    await handler.commit()


def points() -> list[bytes]:
    assert HOLDER.store is not None
    return sorted(msgspec.json.encode(m) for m in HOLDER.store.scroll("alice"))


async def test_claude_names_a_replacement_at_the_session_start_and_a_replay_asks_the_cache(
    handlers: tuple[Make, Claude]
) -> None:
    make, claude = handlers
    handler = await make()
    old_id, new_id = remembered_id("alice", "r1"), remembered_id("alice", "r2")
    await run(handler, [remember(1, OLD), remember(2, NEW)])
    assert claude.prompts == []  # asked at a session start, not per message
    claude.answer = {"replacements": [{"new": 1, "old": [2, 7]}, {"new": 2, "old": [1]}]}  # 7, and 2→1: not offered
    await run(handler, [start(3)])
    (prompt,) = claude.prompts
    assert '<newer number="1"' in prompt and NEW in prompt and '<older number="2"' in prompt and OLD in prompt
    store = HOLDER.store
    assert store is not None
    (old,) = store.get("alice", [old_id])
    (new,) = store.get("alice", [new_id])
    assert (old.superseded_by, new.supersedes_id, new.judged) == (new_id, old_id, True)
    assert [m.id for m in store.scroll("alice", flt=MemoryFilter(current=True))] == [new_id]

    await run(handler, [start(4)])
    assert len(claude.prompts) == 1  # judged once
    final = points()

    store.delete_agent("alice")  # a replay from scratch: the same question, answered by the cache
    await run(await make(), [remember(1, OLD), remember(2, NEW), start(3), start(4)])
    assert len(claude.prompts) == 1 and points() == final


async def test_an_answer_that_names_nothing_offered_changes_nothing_but_judges(handlers: tuple[Make, Claude]) -> None:
    make, claude = handlers
    handler = await make()
    claude.answer = {"replacements": [{"new": 5, "old": [1]}], "note": "ignored"}
    await run(handler, [remember(1, OLD), remember(2, NEW), start(3)])
    store = HOLDER.store
    assert store is not None
    assert len(claude.prompts) == 1
    assert all(m.superseded_by is None for m in store.scroll("alice"))
    assert [m.judged for m in store.get("alice", [remembered_id("alice", "r2")])] == [True]


ENDLESS = [said(1, "Morning all", 0), remember(2, OLD), remember(3, NEW), said(4, "Anyone around?", 1),
           said(5, "Good morning", 26), said(6, "Lunch?", 27)]


async def test_an_endless_session_is_judged_where_its_upkeep_runs_alike_however_batched(
    handlers: tuple[Make, Claude]
) -> None:
    """No session start ever: the message that opens the next day (upkeep on its cadence)
    asks Claude about the statements made before it, once; in one batch, event by event
    in a new process, or replayed from the cache, the store ends the same."""
    make, claude = handlers
    claude.answer = {"replacements": [{"new": 1, "old": [2]}]}
    await run(await make(), ENDLESS)
    (prompt,) = claude.prompts
    assert '<newer number="1"' in prompt and NEW in prompt and '<older number="2"' in prompt and OLD in prompt
    store = HOLDER.store
    assert store is not None
    old_id, new_id = remembered_id("alice", "r2"), remembered_id("alice", "r3")
    (old,) = store.get("alice", [old_id])
    assert old.superseded_by == new_id
    whole = points()

    store.delete_agent("alice")
    one_by_one = await make()
    for env in ENDLESS:
        await run(one_by_one, [env])
    assert len(claude.prompts) == 1 and points() == whole  # the same question: the cache answered
