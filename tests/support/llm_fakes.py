"""Model APIs faked at the SDKs' HTTP transport (httpx2, which both ``anthropic`` and ``openai``
use): Anthropic's Messages API and OpenAI's Chat Completions, by the request's path. The
SDKs are real; only the peer is canned."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

from shared.llm.deferred import MAX_MALFORMED

NARRATIVE_TEXT = "## Tuesday\nThe auth migration moved on; Maria owns the rollout."
KNOWLEDGE_ANSWER = json.dumps({"entities": [{"type": "product", "value": "Cortex"}],
                               "facts": [{"subject": "Maria", "predicate": "uses", "object": "Cortex"}]})
CAPTURED = "Never deploy on Fridays."
READ_DECISION = "Maria owns the auth migration rollout"  # what the model reads that the patterns miss
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
    wording, recall's capture and supersession, the extraction's reading of a window)."""
    match asked.tool:
        case "record_memories":
            return tool_reply("record_memories", {"memories": [{"content": CAPTURED, "type": "rule",
                                                                "confidence": 0.9}]}, asked.openai)
        case "improved_briefing":
            return tool_reply("improved_briefing", {"threads": [
                {"id": i, "title": "Auth migration to the key service"}
                for i in re.findall(r'<thread id="([^"]+)"', asked.prompt)]}, asked.openai)
        case "record_reading":  # said in the window's first message
            said = re.findall(r'<message id="([^"]+)"', asked.prompt)[:1]
            return tool_reply("record_reading", {"missed": {"decisions": [
                {"what": READ_DECISION, "who": "albert", "message": "".join(said)}]}, "wrong": []}, asked.openai)
        case "record_replacements":
            return tool_reply("record_replacements", {"replacements": []}, asked.openai)
        case str() as name:
            return tool_reply(name, {}, asked.openai)
    if "entities" in asked.system:
        return text_reply(KNOWLEDGE_ANSWER, asked.openai)
    return text_reply(NARRATIVE_TEXT, asked.openai)


class Model:
    """A model API (either wire format), failing with ``cause`` until ``back`` is set, then
    answering every call well (``good_answer``).

    ``malformed`` answers each question with garbage ``GARBLED_TIMES`` times — the call's own
    attempts and the first tries of the background asker — and then cannot be reached until
    ``back``: a model answering garbage for ever would see each deferred call given up after
    ``MAX_MALFORMED`` unusable answers (by design), and how many tries fit before the test
    sets ``back`` would be a race with the machine's load."""

    GARBLED_TIMES = MAX_MALFORMED - 1

    def __init__(self, cause: str) -> None:
        self.cause = cause
        self.back = asyncio.Event()
        self.requests: list[dict[str, Any]] = []
        self.answered = 0
        self._garbled: dict[str, int] = {}

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
                question = json.dumps(asked.body, sort_keys=True)
                self._garbled[question] = self._garbled.get(question, 0) + 1
                if self._garbled[question] > self.GARBLED_TIMES:
                    raise httpx2.ConnectError("connection refused", request=request)
                return httpx2.Response(200, json=self.garbage(asked))

    @staticmethod
    def garbage(asked: Asked) -> dict[str, Any]:
        if asked.tool is not None:
            return tool_reply(asked.tool, {"memories": [{"content": 5}], "threads": "none"}, asked.openai)
        return text_reply("this is not json {" if "entities" in asked.system else NARRATIVE_TEXT, asked.openai)


class ChatServer:
    """Chat Completions on 127.0.0.1: records each request (path, headers, body) and answers
    it well, or with ``status`` and an OpenAI-shaped error while one is set."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.status: int | None = None
        self.error = ""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status, answer = (outer.status, {"error": {"message": outer.error, "type": "invalid_request_error",
                                                          "code": None}}) if outer.status \
                    else (200, good_answer(Asked(body, openai=True)))
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # the base class's name
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
