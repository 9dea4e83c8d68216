"""The optional Claude re-ranker (issue 23; the semantic-memory design's "optional Claude
re-ranker"): through the real SDK against a fake HTTP transport and a real nats-server (the
LLM cache and the daily budget), then once through the recall API."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import msgspec
import nats
import pytest
from nats.aio.client import Client

from schemas.api import RecallReply
from shared.config import load_settings
from shared.llm import LlmClient
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.recall import rerank as reranker
from workers.recall.embedders import HashingEmbedder
from workers.recall.models import Memory, RankedMemory, memory_id
from workers.registry import all_specs, consumer_specs

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def ranked(*texts: str) -> list[RankedMemory]:
    out = []
    for i, text in enumerate(texts):
        memory = Memory(id=memory_id("a", f"e{i}", 0), agent="a", content=text, type="fact", scope="permanent",
                        confidence=1.0, source_event=f"e{i}", created_at=T0, last_accessed=T0)
        out.append(RankedMemory(memory=memory, score=1.0 - i / 10, similarity=0.5, cosine=0.5, recency=1.0,
                                frequency=0.0, type_boost=1.0, scope_boost=1.0))
    return out


class Claude:
    def __init__(self, order: list[Any], status: int = 200) -> None:
        self.order, self.status, self.prompts = order, status, []  # type: ignore[var-annotated]

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.prompts.append(body["messages"][0]["content"])
        if self.status != 200:
            return httpx2.Response(self.status, json={"type": "error", "error": {"type": "api_error",
                                                                               "message": "down"}})
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "tool_use", "id": "t1", "name": reranker.TOOL_NAME, "input": {"order": self.order}}],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 300, "output_tokens": 20}})


def client(nc: Client, tmp_path: Path, claude: Claude, **env: str) -> LlmClient:
    settings = load_settings({"CORTEX_DATA_DIR": str(tmp_path), "ANTHROPIC_API_KEY": "sk-test", **env})
    return LlmClient(settings, nc.jetstream(), http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(
        claude.handler)))


@pytest.fixture
async def provisioned(nc: Client, tmp_path: Path) -> AsyncIterator[None]:
    await provision(nc.jetstream(), load_settings({"CORTEX_DATA_DIR": str(tmp_path)}), [])
    yield


async def test_claudes_order_is_applied_validated_and_cached(nc: Client, tmp_path: Path, provisioned: None) -> None:
    claude = Claude([3, 9, 3, 1])  # 9 was never offered, 3 is repeated
    llm = client(nc, tmp_path, claude)
    candidates = ranked("the office dog", "lunch at noon", "the deploy day is Thursday", "beyond the depth")
    out = await reranker.rerank(llm, "a", "When do we deploy?", candidates, T0, depth=3)
    assert [r.memory.content for r in out] == ["the deploy day is Thursday", "the office dog", "lunch at noon",
                                               "beyond the depth"]
    (prompt,) = claude.prompts
    assert '<memory number="3"' in prompt and "beyond the depth" not in prompt
    assert await reranker.rerank(llm, "a", "When do we deploy?", candidates, T0, depth=3) == out
    assert len(claude.prompts) == 1  # the same question over the same candidates: the cache answers
    await llm.aclose()


async def test_an_outage_or_a_spent_budget_keeps_the_formulas_order(nc: Client, tmp_path: Path,
                                                                     provisioned: None) -> None:
    candidates = ranked("one", "two", "three")
    down = client(nc, tmp_path, Claude([], status=503))
    assert await reranker.rerank(down, "a", "q", candidates, T0, depth=3) == candidates
    await down.aclose()
    claude = Claude([2, 1])
    budgeted = client(nc, tmp_path, claude, CORTEX_LLM_DAILY_TOKENS="100")
    assert [r.memory.content for r in await reranker.rerank(budgeted, "b", "q", candidates, T0, 3)][:2] == [
        "two", "one"]  # 320 tokens: the day's budget of 100 is spent now
    assert await reranker.rerank(budgeted, "b", "another q", candidates, T0, 3) == candidates
    assert len(claude.prompts) == 1
    await budgeted.aclose()


async def test_the_recall_api_answers_in_claudes_order_when_asked_to(nats_url: str, tmp_path: Path,
                                                                      wait_for: Any) -> None:
    claude = Claude([2, 1])
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path), "ANTHROPIC_API_KEY": "k",
                              "CORTEX_RECALL_RERANK": "true", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, [all_specs()["recall"]], __version__, extras={
        "embedder": HashingEmbedder(256),
        "llm_http_client": httpx2.AsyncClient(transport=httpx2.MockTransport(claude.handler))})
    task = asyncio.create_task(host.run())
    try:
        for i, text in enumerate(["Remember: the deploy day is Tuesday.", "Remember: deploys need a review."]):
            event = {"id": f"r{i}", "agent": "rex", "ts": (T0 + timedelta(minutes=i)).isoformat(),
                     "kind": "remember", "value": {"content": text}}
            await js.publish("cortex.feedback.rex.remember", json.dumps(event).encode())

        async def asked() -> RecallReply | None:
            try:
                raw = await nc.request("cortex.api.recall.rex", b'{"query": "deploy day", "limit": 2}', timeout=5)
                reply = msgspec.json.decode(raw.data, type=RecallReply)
            except Exception:
                return None
            return reply if len(reply.memories) == 2 and claude.prompts else None

        reply = await wait_for(asked, within=60)
        offered = claude.prompts[-1]  # the formula's order, numbered; Claude answered [2, 1]
        second = offered[offered.index('<memory number="2"'):].split(">", 1)[1].split("</memory>", 1)[0]
        assert reply.memories[0].content == second
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()
