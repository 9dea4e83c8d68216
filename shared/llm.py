"""One LLM client for every LLM path (narrative, recall capture, knowledge extraction).

* Answers go through ``cortex_llm_cache``, keyed by the agent and sha256 of model + purpose +
  system + prompt (``answer.<agent>.<sha256>``, ``shared.names.llm_answer_key``: `cortex
  forget` purges an agent's answers, derived from her text, with her usage counters), so a
  replay costs nothing and reproduces byte for byte. Outcomes that are the same on every try
  are cached too, so a replay takes the branch the live run took: the model's refusal or
  empty answer, a request the API rejects as invalid (400, 413, 422), over budget.
* A failure that says nothing about the prompt — the API unreachable or timing out,
  429, 5xx/529 overloaded, and 401/403/404 (a key or model setting to fix) — is **never
  cached**: after the SDK's own retries (``max_retries``, honouring ``retry-after``) it
  raises ``TransientError``, so the consume loop retries the event in place with capped
  backoff while the worker reports not ready, and the document gets the model's answer
  once the API is back (contract: "Dead letters and retries").
* A process-wide concurrency cap (``CORTEX_LLM_MAX_CONCURRENCY``): every client of the
  process (a host runs several workers; recall holds two clients) waits on one ``LlmCap``.
* A per-agent daily token budget (``CORTEX_LLM_DAILY_TOKENS``) counted per day of *event*
  time, so it replays; over budget → the caller's structured path, counted.

Conversation text must reach the model XML-escaped inside delimiters: ``shared.quoting``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import msgspec
from nats.js.client import JetStreamContext
from prometheus_client import Counter

from shared.config import Settings
from shared.errors import TransientError
from shared.kv import kv_read, kv_update
from shared.names import BUCKET_LLM_CACHE, llm_answer_key, llm_usage_key

log = logging.getLogger(__name__)

LLM_CALLS = Counter("cortex_llm_calls_total", "LLM requests by purpose and outcome", ["purpose", "outcome"])
LLM_TOKENS = Counter("cortex_llm_tokens_total", "LLM tokens by purpose and direction", ["purpose", "direction"])


def _answer_text(response: Any, tool: dict[str, Any] | None) -> str:
    if tool is not None:
        for block in response.content:
            if getattr(block, "type", "") == "tool_use":
                return json.dumps(block.input, sort_keys=True, ensure_ascii=False)
        return ""
    return "".join(getattr(block, "text", "") for block in response.content).strip()


# Statuses that reject the request itself: retrying the same prompt cannot succeed.
PERMANENT_STATUSES = frozenset({400, 413, 422})


def llm_status(exc: BaseException) -> int | None:
    """The HTTP status of an SDK error (None: no response, e.g. unreachable or timed out)."""
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


class CachedAnswer(msgspec.Struct, kw_only=True):
    """What the cache holds for one prompt: the answer, or why there is none."""

    text: str | None
    outcome: str  # "ok" | "refused" | "failed" (the request was rejected) | "over_budget"
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(CachedAnswer)


def _cached(raw: bytes | None) -> CachedAnswer | None:
    """The cached answer; an entry that is not one (garbage in the bucket) is a miss, and
    the answer that replaces it is written over it."""
    if raw is None:
        return None
    try:
        return _decoder.decode(raw)
    except Exception:  # untrusted bytes: this entry's problem only
        log.warning("llm_cache_entry_unreadable")
        return None


def _tokens(raw: bytes | None) -> int:
    """Tokens used so far today; an unreadable counter counts as none."""
    try:
        return int(raw or b"0")
    except ValueError:
        return 0


class LlmCap:
    """At most ``limit`` requests to the API at once; ``waiting`` and ``running`` count the
    requests queued for a slot and holding one."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.waiting = 0
        self.running = 0
        self._sem = asyncio.Semaphore(limit)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        self.waiting += 1
        try:
            await self._sem.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            self._sem.release()


# asyncio primitives belong to one event loop: the process's cap is kept per running loop
# (a deployed process runs one; each test has its own).
_CAPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LlmCap] = weakref.WeakKeyDictionary()


def process_cap(limit: int) -> LlmCap:
    """The process's cap, made with the first caller's ``limit`` (every client of a process
    reads the same setting; a different one is logged and the first kept)."""
    loop = asyncio.get_running_loop()
    cap = _CAPS.get(loop)
    if cap is None:
        cap = _CAPS[loop] = LlmCap(limit)
    elif cap.limit != limit:
        log.warning("llm_cap_setting_differs", extra={"cap": cap.limit, "asked": limit})
    return cap


async def _adopt_unattributed(kv: Any, digest: str, key: str) -> bytes | None:
    """An answer cached by an earlier version under the bare digest (no agent: `cortex forget`
    cannot attribute it): the first agent whose call asks for it takes it under her own key
    and the bare one is purged, so a replay after the upgrade still reads the answer the live
    run got, and from then on forgetting her removes it. The bucket has no TTL: a bare key
    that is never asked for again stays until the bucket is purged (docs/operations.md,
    Forgetting an agent). Another agent with the very same prompt then misses: one more call."""
    raw, _ = await kv_read(kv, digest)
    if raw is not None:
        await kv.put(key, raw)
        await kv.purge(digest)
    return raw


class LlmClient:
    def __init__(self, settings: Settings, js: JetStreamContext, http_client: Any = None,
                 base_url: str | None = None, max_retries: int = 3, timeout_s: float = 30.0) -> None:
        self.model = settings.llm_model
        self.daily_tokens = settings.llm_daily_tokens
        self._js = js
        self.max_concurrency = settings.llm_max_concurrency
        self._client: Any = None
        if settings.anthropic_api_key:
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic(api_key=settings.anthropic_api_key, http_client=http_client,
                                          base_url=base_url, max_retries=max_retries, timeout=timeout_s)

    @property
    def enabled(self) -> bool:
        return self._client is not None

    def digest(self, purpose: str, system: str, prompt: str) -> str:
        return hashlib.sha256(f"{self.model}\0{purpose}\0{system}\0{prompt}".encode()).hexdigest()

    async def complete(self, *, agent: str, purpose: str, system: str, prompt: str, when: datetime,
                       max_tokens: int = 1024, tool: dict[str, Any] | None = None) -> str | None:
        """The model's text — or, with ``tool`` (forced tool use for structured output), the
        tool input as JSON text — or None (the caller takes its structured path)."""
        if self._client is None:
            return None
        kv = await self._js.key_value(BUCKET_LLM_CACHE)
        digest = self.digest(purpose, system, prompt + (json.dumps(tool, sort_keys=True) if tool else ""))
        key = llm_answer_key(agent, digest)
        raw, _ = await kv_read(kv, key)
        if raw is None:
            raw = await _adopt_unattributed(kv, digest, key)
        cached = _cached(raw)
        if cached is not None:
            LLM_CALLS.labels(purpose, "cache_hit").inc()
            return cached.text
        answer = await self._ask(agent, purpose, system, prompt, when, max_tokens, tool)
        await kv.put(key, _encoder.encode(answer))
        return answer.text

    async def _ask(self, agent: str, purpose: str, system: str, prompt: str, when: datetime,
                   max_tokens: int, tool: dict[str, Any] | None = None) -> CachedAnswer:
        usage_key = llm_usage_key(agent, when.date().isoformat())
        kv = await self._js.key_value(BUCKET_LLM_CACHE)
        used_raw, _ = await kv_read(kv, usage_key)
        if self.daily_tokens and _tokens(used_raw) >= self.daily_tokens:
            LLM_CALLS.labels(purpose, "over_budget").inc()
            return CachedAnswer(text=None, outcome="over_budget", model=self.model)
        async with process_cap(self.max_concurrency).slot():
            extra: dict[str, Any] = {}
            if tool is not None:
                extra = {"tools": [tool], "tool_choice": {"type": "tool", "name": tool["name"]}}
            try:
                response = await self._client.messages.create(
                    model=self.model, max_tokens=max_tokens, system=system,
                    messages=[{"role": "user", "content": prompt}], **extra,
                )
            except Exception as exc:  # the SDK already retried 429/5xx with backoff
                return self._failure(purpose, exc)
        text = _answer_text(response, tool)
        tokens_in, tokens_out = response.usage.input_tokens, response.usage.output_tokens
        LLM_TOKENS.labels(purpose, "input").inc(tokens_in)
        LLM_TOKENS.labels(purpose, "output").inc(tokens_out)
        await kv_update(kv, usage_key, lambda old: str(_tokens(old) + tokens_in + tokens_out).encode())
        if response.stop_reason == "refusal" or not text:
            LLM_CALLS.labels(purpose, "refused").inc()
            return CachedAnswer(text=None, outcome="refused", input_tokens=tokens_in, output_tokens=tokens_out,
                                model=self.model)
        LLM_CALLS.labels(purpose, "ok").inc()
        return CachedAnswer(text=text, outcome="ok", input_tokens=tokens_in, output_tokens=tokens_out,
                            model=self.model)

    def _failure(self, purpose: str, exc: Exception) -> CachedAnswer:
        """A rejected request (the same on every try) is an answer to cache; anything else is
        transient: raised, never cached (see the module docstring)."""
        status = llm_status(exc)
        if status in PERMANENT_STATUSES:
            LLM_CALLS.labels(purpose, "failed").inc()
            log.warning("llm_request_rejected", extra={"purpose": purpose, "status": status,
                                                       "error": type(exc).__name__})
            return CachedAnswer(text=None, outcome="failed", model=self.model)
        LLM_CALLS.labels(purpose, "unavailable").inc()
        what = f"HTTP {status} {type(exc).__name__}" if status else type(exc).__name__
        raise TransientError(f"LLM unavailable ({purpose}): {what}") from exc

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
