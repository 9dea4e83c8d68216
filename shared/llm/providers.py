"""The model providers behind ``LlmClient``: one request shape, one reply shape, one failure
with a cause, whatever the API. Each provider speaks through its own SDK — ``anthropic`` for
the Messages API, ``openai`` for OpenAI's Chat Completions and every server that speaks it
(Ollama, vLLM, LM Studio, …, at ``CORTEX_LLM_BASE_URL``); nothing above this module sees an
SDK type.

A failure's cause decides what the client does with it (``shared.llm.client``):

* ``rejected`` — the API refused the request itself (400, 413, 422): the same on every try;
* ``auth`` (401, 402, 403) and ``not_found`` (404, or a model the server does not know) —
  a key or a model setting to fix: no retry in place, the model is unreachable until then;
* ``unreachable``, ``timeout``, ``rate_limited`` (429), ``server_error`` (5xx, 529
  overloaded) — retried within the call's bound (a ``Retry-After`` the API gives is
  honoured when it fits), then unreachable;
* ``malformed`` — an answer the caller cannot use (the client's check), asked again.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any, Final, Literal

import msgspec

Cause = Literal["unreachable", "timeout", "rate_limited", "server_error", "auth", "not_found", "rejected",
                "malformed"]
CAUSES: Final[tuple[Cause, ...]] = ("unreachable", "timeout", "rate_limited", "server_error", "auth", "not_found",
                                    "rejected", "malformed")
# causes no retry of the same request can change: a setting to fix, or the request itself
PERMANENT: Final = frozenset({"auth", "not_found", "rejected"})
# causes that say the model cannot be reached now (a key or model to fix included): the caller
# falls back, and the call is asked again once the model answers
UNREACHABLE: Final = frozenset({"unreachable", "timeout", "rate_limited", "server_error", "auth", "not_found"})


class LlmRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One call: the system prompt, one user turn, and optionally a tool the model must call
    (its input is the structured answer)."""

    model: str
    system: str
    prompt: str
    max_tokens: int = 1024
    tool: dict[str, Any] | None = None


class LlmReply(msgspec.Struct, frozen=True, kw_only=True):
    """What the model said: its text (or the tool's input as JSON text, keys sorted)."""

    text: str
    refused: bool = False
    input_tokens: int = 0
    output_tokens: int = 0


class ProviderFailure(Exception):
    """A call that got no usable answer, with its cause (module docstring)."""

    def __init__(self, cause: Cause, detail: str = "", status: int | None = None,
                 retry_after_s: float | None = None) -> None:
        super().__init__(f"{cause}: {detail}" if detail else cause)
        self.cause: Cause = cause
        self.detail = detail
        self.status = status
        self.retry_after_s = retry_after_s

    @property
    def permanent(self) -> bool:
        return self.cause in PERMANENT


def retry_after_s(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait an API asks for: ``retry-after-ms``, else ``retry-after`` in seconds or as an
    HTTP date; None when there is none (or it cannot be read)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _says_model_unknown(body: object) -> bool:
    """An OpenAI-compatible server may answer a model it does not have with a 400: the
    error's code or message says so."""
    text = body if isinstance(body, str) else json.dumps(body, default=str) if body is not None else ""
    lowered = text.lower()
    return "model_not_found" in lowered or ("model" in lowered and ("not found" in lowered
                                                                    or "does not exist" in lowered))


def failure_for_status(status: int, headers: Mapping[str, str], body: object = None,
                       now: float | None = None) -> ProviderFailure:
    """The failure an HTTP error status means (module docstring)."""
    wait = retry_after_s(headers, now)
    detail = f"HTTP {status}"
    if status in (401, 402, 403):
        return ProviderFailure("auth", detail, status)
    if status == 404 or (status == 400 and _says_model_unknown(body)):
        return ProviderFailure("not_found", detail, status)
    if status == 408:
        return ProviderFailure("timeout", detail, status, wait)
    if status == 429:
        return ProviderFailure("rate_limited", detail, status, wait)
    if 400 <= status < 500:
        return ProviderFailure("rejected", detail, status)
    return ProviderFailure("server_error", detail, status, wait)


class Provider(ABC):
    """One model API. ``ask`` returns the reply or raises ``ProviderFailure``; it makes one
    request (the client does the retrying) and gives up after ``timeout_s``."""

    name: str

    @abstractmethod
    async def ask(self, request: LlmRequest, timeout_s: float) -> LlmReply:
        """One request to the model."""

    async def aclose(self) -> None:
        """Release the HTTP client."""
        return None


@contextlib.contextmanager
def sdk_failures(sdk: ModuleType) -> Iterator[None]:
    """A provider SDK's errors as ``ProviderFailure``s. Both SDKs (made by one generator)
    raise the same classes, each from its own module: a status, a timeout, no connection,
    or a 200 the SDK cannot read."""
    try:
        yield
    except sdk.APIStatusError as exc:
        raise failure_for_status(exc.status_code, exc.response.headers, exc.body) from exc
    except sdk.APITimeoutError as exc:
        raise ProviderFailure("timeout", type(exc).__name__) from exc
    except sdk.APIConnectionError as exc:
        raise ProviderFailure("unreachable", type(exc).__name__) from exc
    except sdk.APIResponseValidationError as exc:
        raise ProviderFailure("server_error", type(exc).__name__) from exc


class AnthropicProvider(Provider):
    """The Messages API through the ``anthropic`` SDK (its own retries off: the client's bound
    decides). A tool is forced with ``tool_choice``; its input is the answer."""

    name = "anthropic"

    def __init__(self, api_key: str, base_url: str | None = None, http_client: Any = None) -> None:
        from anthropic import AsyncAnthropic

        self._sdk = AsyncAnthropic(api_key=api_key, base_url=base_url, http_client=http_client, max_retries=0)
        self._owns_http = http_client is None  # one handed in is shared (tests hand one to a whole host)

    async def ask(self, request: LlmRequest, timeout_s: float) -> LlmReply:
        import anthropic

        extra: dict[str, Any] = {}
        if request.tool is not None:
            extra = {"tools": [request.tool], "tool_choice": {"type": "tool", "name": request.tool["name"]}}
        with sdk_failures(anthropic):
            response = await self._sdk.messages.create(
                model=request.model, max_tokens=request.max_tokens, system=request.system,
                messages=[{"role": "user", "content": request.prompt}], timeout=timeout_s, **extra)
        text = _anthropic_text(response.content, request.tool is not None)
        return LlmReply(text=text, refused=response.stop_reason == "refusal",
                        input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens)

    async def aclose(self) -> None:
        if self._owns_http:
            await self._sdk.close()


def _anthropic_text(blocks: Any, tool: bool) -> str:
    if tool:
        for block in blocks:
            if block.type == "tool_use":
                return json.dumps(block.input, sort_keys=True, ensure_ascii=False)
        return ""
    return "".join(block.text for block in blocks if block.type == "text").strip()


OPENAI_HOST = "api.openai.com"


class OpenAIProvider(Provider):
    """Chat Completions through the ``openai`` SDK (its own retries off), at OpenAI or any
    compatible server. A tool is a function the model must call (``tool_choice``); its
    arguments are the answer. A local model that answers a forced tool with plain JSON text
    instead is taken at its word: the caller's check decides whether the text is usable.
    OpenAI itself wants ``max_completion_tokens`` (its newer models refuse ``max_tokens``);
    compatible servers are sent ``max_tokens``, the name they all read."""

    name = "openai"

    def __init__(self, api_key: str | None, base_url: str | None = None, http_client: Any = None) -> None:
        from openai import AsyncOpenAI

        # a local server needs no key, the SDK wants one: any string does
        self._sdk = AsyncOpenAI(api_key=api_key or "no-key", base_url=base_url, http_client=http_client,
                                max_retries=0)
        self._owns_http = http_client is None
        at_openai = base_url is None or OPENAI_HOST in base_url
        self._tokens = "max_completion_tokens" if at_openai else "max_tokens"

    async def ask(self, request: LlmRequest, timeout_s: float) -> LlmReply:
        import openai

        extra: dict[str, Any] = {self._tokens: request.max_tokens}
        if request.tool is not None:
            extra["tools"] = [openai_tool(request.tool)]
            extra["tool_choice"] = {"type": "function", "function": {"name": request.tool["name"]}}
        with sdk_failures(openai):
            response = await self._sdk.chat.completions.create(
                model=request.model, messages=[{"role": "system", "content": request.system},
                                               {"role": "user", "content": request.prompt}],
                timeout=timeout_s, **extra)
        if not response.choices:
            raise ProviderFailure("server_error", "an answer without a choice")
        choice = response.choices[0]
        usage = response.usage
        return LlmReply(text=_openai_text(choice.message, request.tool is not None),
                        refused=bool(choice.message.refusal) or choice.finish_reason == "content_filter",
                        input_tokens=usage.prompt_tokens if usage else 0,
                        output_tokens=usage.completion_tokens if usage else 0)

    async def aclose(self) -> None:
        if self._owns_http:
            await self._sdk.close()


def openai_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic-shaped tool (``name``, ``description``, ``input_schema``) as an OpenAI function."""
    return {"type": "function", "function": {"name": tool["name"], "description": tool.get("description", ""),
                                             "parameters": tool["input_schema"]}}


def _openai_text(message: Any, tool: bool) -> str:
    if tool:
        for call in message.tool_calls or []:
            if call.type == "function":
                return _sorted_json(call.function.arguments)
    return (message.content or "").strip()


def _sorted_json(arguments: str) -> str:
    """A tool's arguments as the Anthropic path gives them (keys sorted), so a cache entry does
    not depend on the provider's key order; text that is no JSON is passed on as it is."""
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False)
    except ValueError:
        return arguments
