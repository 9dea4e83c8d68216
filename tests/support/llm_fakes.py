"""Model APIs faked at the SDKs' HTTP transport (httpx2, which both ``anthropic`` and ``openai``
use): Anthropic's Messages API and OpenAI's Chat Completions, by the request's path. The
SDKs are real; only the peer is canned."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx2

NARRATIVE_TEXT = "## Tuesday\nThe auth migration moved on; Maria owns the rollout."
KNOWLEDGE_ANSWER = json.dumps({"entities": [{"type": "product", "value": "Cortex"}],
                               "facts": [{"subject": "Maria", "predicate": "uses", "object": "Cortex"}]})
CAPTURED = "Never deploy on Fridays."
CAUSES = ["unreachable", "401", "403", "429", "500", "slow", "malformed"]
# what each provider needs to be the configured one in these tests
PROVIDER_ENV = {
    "anthropic": {"ANTHROPIC_API_KEY": "sk-test"},
    "openai": {"CORTEX_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-test", "CORTEX_LLM_MODEL": "gpt-4.1-mini"},
}


def is_openai(request: httpx2.Request) -> bool:
    return request.url.path.endswith("/chat/completions")


class Asked:
    """What a request asks, whatever its wire format: the system prompt, the user prompt and
    the tool the model must call (None: plain text)."""

    def __init__(self, body: dict[str, Any], openai: bool) -> None:
        self.body = body
        self.openai = openai
        if openai:
            messages = body["messages"]
            self.system = next(m["content"] for m in messages if m["role"] == "system")
            self.prompt = next(m["content"] for m in messages if m["role"] == "user")
            self.tool = body["tools"][0]["function"]["name"] if body.get("tools") else None
        else:
            self.system = body.get("system", "")
            self.prompt = body["messages"][0]["content"]
            self.tool = body["tools"][0]["name"] if body.get("tools") else None


def text_reply(text: str, openai: bool) -> dict[str, Any]:
    if openai:
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4.1-mini",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 30, "total_tokens": 130}}
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 30}}


def tool_reply(name: str, data: dict[str, Any], openai: bool) -> dict[str, Any]:
    if openai:
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(data)}}
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4.1-mini",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                             "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 200, "completion_tokens": 60, "total_tokens": 260}}
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": data}],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 200, "output_tokens": 60}}


def error_reply(status: int, kind: str, openai: bool, **headers: str) -> httpx2.Response:
    body = ({"error": {"message": kind, "type": kind, "code": kind}} if openai
            else {"type": "error", "error": {"type": kind, "message": kind}})
    return httpx2.Response(status, headers=headers, json=body)


def good_answer(asked: Asked) -> dict[str, Any]:
    """A good answer to each kind of call Cortex makes (knowledge, narrative, the briefing's
    wording, recall's capture and supersession)."""
    match asked.tool:
        case "record_memories":
            return tool_reply("record_memories", {"memories": [{"content": CAPTURED, "type": "rule",
                                                                "confidence": 0.9}]}, asked.openai)
        case "improved_briefing":
            return tool_reply("improved_briefing", {"threads": [
                {"id": i, "title": "Auth migration to the key service"}
                for i in re.findall(r'<thread id="([^"]+)"', asked.prompt)]}, asked.openai)
        case "record_replacements":
            return tool_reply("record_replacements", {"replacements": []}, asked.openai)
        case str() as name:
            return tool_reply(name, {}, asked.openai)
    if "entities" in asked.system:
        return text_reply(KNOWLEDGE_ANSWER, asked.openai)
    return text_reply(NARRATIVE_TEXT, asked.openai)


class Model:
    """A model API (either wire format), failing with ``cause`` until ``back`` is set, then
    answering every call well (``good_answer``)."""

    def __init__(self, cause: str) -> None:
        self.cause = cause
        self.back = asyncio.Event()
        self.requests: list[dict[str, Any]] = []
        self.answered = 0

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle))

    async def handle(self, request: httpx2.Request) -> httpx2.Response:
        asked = Asked(json.loads(request.content), is_openai(request))
        self.requests.append(asked.body)
        if not self.back.is_set():
            return await self.fail(request, asked)
        self.answered += 1
        return httpx2.Response(200, json=good_answer(asked))

    async def fail(self, request: httpx2.Request, asked: Asked) -> httpx2.Response:
        openai = asked.openai
        match self.cause:
            case "unreachable":
                raise httpx2.ConnectError("connection refused", request=request)
            case "401":
                return error_reply(401, "authentication_error", openai)
            case "403":
                return error_reply(403, "permission_error", openai)
            case "429":
                return error_reply(429, "rate_limit_error", openai, **{"retry-after": "0.05"})
            case "500":
                return error_reply(500, "api_error", openai)
            case "slow":
                await self.back.wait()  # longer than the bound: cut by the client
                return httpx2.Response(200, json=good_answer(asked))
            case _:
                return httpx2.Response(200, json=self.garbage(asked))

    @staticmethod
    def garbage(asked: Asked) -> dict[str, Any]:
        if asked.tool is not None:
            return tool_reply(asked.tool, {"memories": [{"content": 5}], "threads": "none"}, asked.openai)
        return text_reply("this is not json {" if "entities" in asked.system else NARRATIVE_TEXT, asked.openai)
