"""CORTEX_LLM_PROVIDER=openai against a small OpenAI-compatible HTTP server this test starts
(real sockets, the openai SDK's own HTTP client, canned answers): what goes over the wire is
what an Ollama, vLLM or LM Studio server reads, and what comes back is what Cortex uses."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from cortex_testkit import drained, wait_for
from llm_fakes import KNOWLEDGE_ANSWER, ChatServer
from nats.aio.client import Client

from schemas.docs import KnowledgeDoc
from shared.config import load_settings
from shared.kv import kv_read
from shared.llm import LlmClient
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as srv:
        yield srv


def local(url: str, **env: str) -> Any:
    return load_settings({"CORTEX_LLM_PROVIDER": "openai", "CORTEX_LLM_BASE_URL": url, "CORTEX_LLM_API_KEY": "sk-local",
                          "CORTEX_LLM_MODEL": "llama3.1:8b", "CORTEX_LLM_TIMEOUT_S": "5",
                          "CORTEX_LLM_RETRY_BASE_MS": "10", **env})


WHEN = datetime(2026, 2, 17, 9, tzinfo=UTC)


async def test_a_text_and_a_tool_call_on_the_wire(server: ChatServer, nc: Client) -> None:
    js = nc.jetstream()
    settings = local(server.url, CORTEX_LLM_MODEL_CAPTURE="qwen2.5:7b")
    await provision(js, settings, [])
    llm = LlmClient(settings, js)  # no HTTP client handed in: the SDK's own, over a socket
    text = await llm.complete(agent="ada", purpose="knowledge", system="You extract entities",
                              prompt="<conversation>…</conversation>", when=WHEN)
    assert text == KNOWLEDGE_ANSWER
    tool = {"name": "record_memories", "description": "Record memories.",
            "input_schema": {"type": "object", "properties": {"memories": {"type": "array"}}}}
    captured = await llm.complete(agent="ada", purpose="recall", system="You extract durable memories",
                                  prompt="<conversation>…</conversation>", when=WHEN, tool=tool)
    assert captured is not None and json.loads(captured)["memories"][0]["content"] == "Never deploy on Fridays."
    assert captured == json.dumps(json.loads(captured), sort_keys=True, ensure_ascii=False)  # as Anthropic's

    (path, headers, first), (_, _, second) = server.requests
    assert path == "/v1/chat/completions" and headers["authorization"] == "Bearer sk-local"
    assert first["model"] == "llama3.1:8b" and second["model"] == "qwen2.5:7b"  # a model per role
    assert first["messages"] == [{"role": "system", "content": "You extract entities"},
                                 {"role": "user", "content": "<conversation>…</conversation>"}]
    # a compatible server reads max_tokens (OpenAI's newer models want max_completion_tokens)
    assert first["max_tokens"] == 1024 and "max_completion_tokens" not in first and "tools" not in first
    assert second["tools"] == [{"type": "function", "function": {
        "name": "record_memories", "description": "Record memories.", "parameters": tool["input_schema"]}}]
    assert second["tool_choice"] == {"type": "function", "function": {"name": "record_memories"}}
    await llm.aclose()


@pytest.mark.parametrize(("status", "error", "cause"), [
    (404, "model 'nope' not found, try pulling it first", "not_found"),  # Ollama's
    (400, "The model `nope` does not exist.", "not_found"),  # vLLM's
    (401, "Incorrect API key provided", "auth"),
])
async def test_a_model_or_key_the_server_refuses_ends_the_call_at_once(server: ChatServer, nc: Client, status: int,
                                                                       error: str, cause: str) -> None:
    js = nc.jetstream()
    settings = local(server.url)
    await provision(js, settings, [])
    server.status, server.error = status, error
    llm = LlmClient(settings, js)
    got = await llm.answer(agent="ada", purpose="knowledge", system="s", prompt="p", when=WHEN)
    assert (got.text, got.outcome) == (None, "unavailable")
    assert len(server.requests) == 1 and llm.availability.cause == f"{cause}: HTTP {status}"
    await llm.aclose()


async def test_the_knowledge_worker_through_a_local_server(server: ChatServer, nats_url: str, tmp_path: Path) -> None:
    """A worker configured for an OpenAI-compatible server gets its batch's entities from it."""
    settings = local(server.url, CORTEX_NATS_URL=nats_url, CORTEX_DATA_DIR=str(tmp_path),
                     CORTEX_RUNTIME_FETCH_TIMEOUT_MS="100", CORTEX_KNOWLEDGE_LLM_BATCH_SIZE="2")
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, [all_specs()["knowledge"]], __version__)
    task = asyncio.create_task(host.run())
    try:
        for i, text in enumerate(["Maria works at Acme Analytics GmbH.", "She owns the rollout."], 1):
            await js.publish("cortex.msg.ada.received", msgspec.json.encode({
                "id": f"m{i}", "agent": "ada", "session": "s", "ts": f"2026-02-17T09:0{i}:00Z", "role": "user",
                "sender": "albert", "content": text}))

        async def merged() -> bool:
            raw, _ = await kv_read(await js.key_value("cortex_knowledge"), "ada")
            doc = msgspec.json.decode(raw, type=KnowledgeDoc) if raw else None
            return doc is not None and any("llm" in e.source and e.value == "Cortex" for e in doc.entities)

        await wait_for(merged, within=30)
        # the document is written before the batch's events are acked: wait for the acks
        await wait_for(lambda: drained(js, ["knowledge"]), within=30)
        [(path, _, body)] = server.requests
        assert path == "/v1/chat/completions" and body["messages"][1]["content"].count("<message ") == 2
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()
