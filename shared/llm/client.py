"""One LLM client for every LLM path (narrative, the briefing's wording, knowledge, recall
capture, supersession and re-ranking, trace triage, ``cortex index --summarize``).

* **Bounded, never stalling.** A call is at most ``CORTEX_LLM_ATTEMPTS`` requests of at most
  ``CORTEX_LLM_TIMEOUT_S`` each, with a backoff between them (a ``Retry-After`` the API
  gives is honoured when it fits), all within ``CORTEX_LLM_DEADLINE_S``. A key refused or a
  model unknown (401/402/403/404) is not retried at all. Past the bound the caller gets no
  text and takes its structured path: the worker writes the document the patterns make and
  goes on. From then on the model is *unreachable* for that worker (``availability``): its
  calls fall back at once, with no request, until the model answers again.
* **Enriched later.** A call whose caller says how to apply a later answer (``Later``) is
  kept and asked again in the background (``deferred``); the answer lands as an
  ``llm_answer`` event, which the worker applies as a later revision of its document.
* **Replays reproduce.** Answers go through ``cortex_llm_cache``, keyed by the agent and
  sha256 of model + purpose + system + prompt (``answer.<agent>.<sha256>``: `cortex forget`
  purges an agent's answers with her usage counters and deferred calls). Every outcome of a
  call made for an event is cached — the answer, a refusal, a request the API rejects (400,
  413, 422), an exhausted budget, and *no model* (unreachable, or only unusable answers) — so
  a replay takes the branch the live run took, and the late answer comes from the stream.
  A call made for a request (the re-ranker, a summary) does not cache *no model*: the next
  request asks again.
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
import time
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import msgspec
from nats.js.client import JetStreamContext

from shared.codec import VALUE_SLACK_BYTES
from shared.config import Settings
from shared.kv import kv_read, kv_update
from shared.llm.availability import Availability, LlmHealth
from shared.llm.deferred import Again, Deferrals, Later, PendingCall
from shared.llm.metrics import LLM_CALLS, LLM_FAILURES, LLM_SECONDS, LLM_TOKENS
from shared.llm.providers import (
    UNREACHABLE,
    AnthropicProvider,
    LlmReply,
    LlmRequest,
    OpenAIProvider,
    Provider,
    ProviderFailure,
)
from shared.names import BUCKET_LLM_CACHE, llm_answer_key, llm_health_key, llm_usage_key

if TYPE_CHECKING:
    from shared.runtime import WorkerContext

log = logging.getLogger(__name__)

# Outcomes where the caller got no text because of the model, not the prompt: "unavailable"
# (the model could not be reached within the bound) and "malformed" (only unusable answers).
NO_MODEL: Final = frozenset({"unavailable", "malformed"})

Check = Callable[[str], bool]
"""Whether an answer is usable (the caller's parser accepts it); an unusable one is asked again."""


class CachedAnswer(msgspec.Struct, kw_only=True):
    """What the cache holds for one prompt: the answer, or why there is none."""

    text: str | None
    # "ok" | "refused" | "failed" (the request was rejected) | "over_budget" | "unavailable" | "malformed"
    outcome: str
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""


class Answer(msgspec.Struct, frozen=True):
    """A call's text (None: take the structured path) and its outcome (``CachedAnswer``'s,
    or "disabled" when no model is configured)."""

    text: str | None
    outcome: str


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


def retry_delay(attempt: int, retry_after_s: float | None, base_s: float, cap_s: float = 30.0) -> float:
    """The wait before request ``attempt + 1`` of a call: what the API asked for, else
    base·2^(attempt-1) (capped)."""
    if retry_after_s is not None:
        return retry_after_s
    return float(min(cap_s, base_s * (2 ** min(attempt - 1, 30))))


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


def make_provider(settings: Settings, http_client: Any = None) -> Provider | None:
    """The configured model API (``Settings.model_provider``), or None: no LLM is called on any path."""
    match settings.model_provider:
        case "anthropic":
            return AnthropicProvider(settings.model_key or "", settings.llm_base_url, http_client)
        case "openai":
            return OpenAIProvider(settings.model_key, settings.llm_base_url, http_client)
    return None


# The model role of each call's purpose: ``CORTEX_LLM_MODEL_<ROLE>`` names its model (default
# CORTEX_LLM_MODEL). A purpose not listed takes CORTEX_LLM_MODEL.
ROLES: Final[dict[str, str]] = {
    "recall": "capture", "summary": "capture",
    "knowledge": "extraction", "supersede": "extraction", "extract": "extraction",
    "narrative": "narrative", "briefing": "narrative",
    "trace_triage": "triage",
    "rerank": "rerank",
}


def role_models(settings: Settings) -> dict[str, str]:
    """The model of each role (the settings' own, or CORTEX_LLM_MODEL)."""
    own = {"capture": settings.llm_model_capture, "extraction": settings.llm_model_extraction,
           "narrative": settings.llm_model_narrative, "triage": settings.llm_model_triage,
           "rerank": settings.llm_model_rerank}
    return {role: model or settings.llm_model for role, model in own.items()}


class LlmClient:
    """The calls of one worker consumer (``name``: its health key and gauge), one API or one
    command. With ``worker`` set, calls made with ``later`` are kept and asked again when
    the model could not answer them (``deferred``); ``checks`` say, per purpose, whether an
    answer is usable."""

    def __init__(self, settings: Settings, js: JetStreamContext, *, http_client: Any = None,
                 provider: Provider | None = None, name: str = "", worker: str | None = None,
                 doc_bucket: str | None = None, partition: int | None = None,
                 checks: Mapping[str, Check] | None = None) -> None:
        self._settings = settings
        self._js = js
        self.model = settings.llm_model
        self.daily_tokens = settings.llm_daily_tokens
        self.hourly_tokens = settings.llm_hourly_tokens
        self.max_concurrency = settings.llm_max_concurrency
        self._provider = provider if provider is not None else make_provider(settings, http_client)
        self._checks = dict(checks or {})
        self._models = role_models(settings)
        self.availability = Availability(name or "client", settings.llm_retry_base_ms / 1000,
                                         settings.llm_probe_max_ms / 1000,
                                         self._report if name and self._provider is not None else None,
                                         provider=self._provider.name if self._provider else "", model=self.model)
        self._name = name
        self._deferrals: Deferrals | None = None
        if worker is not None and self._provider is not None:
            self._deferrals = Deferrals(
                js, worker=worker, prefix=settings.prefix, doc_bucket=doc_bucket, partition=partition,
                partitions=settings.partitions, availability=self.availability, ask_again=self._ask_again,
                retry_base_s=settings.llm_retry_base_ms / 1000,
                max_value_bytes=settings.runtime.max_content_bytes + VALUE_SLACK_BYTES)

    @property
    def enabled(self) -> bool:
        return self._provider is not None

    @property
    def deferred(self) -> int:
        """Calls waiting to be asked again."""
        return self._deferrals.count if self._deferrals is not None else 0

    async def start(self) -> None:
        """Take up the deferred calls an earlier instance left and start asking them."""
        if self._deferrals is not None:
            await self._deferrals.start()

    def model_for(self, purpose: str) -> str:
        role = ROLES.get(purpose)
        return self._models[role] if role is not None else self.model

    def digest(self, purpose: str, system: str, prompt: str) -> str:
        model = self.model_for(purpose)
        return hashlib.sha256(f"{model}\0{purpose}\0{system}\0{prompt}".encode()).hexdigest()

    async def complete(self, *, agent: str, purpose: str, system: str, prompt: str, when: datetime,
                       max_tokens: int = 1024, tool: dict[str, Any] | None = None, later: Later | None = None,
                       replayed: bool = True) -> str | None:
        """The model's text — or, with ``tool`` (forced tool use for structured output), the
        tool input as JSON text — or None (the caller takes its structured path)."""
        return (await self.answer(agent=agent, purpose=purpose, system=system, prompt=prompt, when=when,
                                  max_tokens=max_tokens, tool=tool, later=later, replayed=replayed)).text

    async def answer(self, *, agent: str, purpose: str, system: str, prompt: str, when: datetime,
                     max_tokens: int = 1024, tool: dict[str, Any] | None = None, later: Later | None = None,
                     replayed: bool = True) -> Answer:
        """``complete`` with the outcome. ``later``: ask again if the model cannot answer now
        (module docstring); ``replayed`` False for a call made for a request, not an event
        (no model is then not cached)."""
        if self._provider is None:
            return Answer(None, "disabled")
        request = LlmRequest(model=self.model_for(purpose), system=system, prompt=prompt, max_tokens=max_tokens,
                             tool=tool)
        kv = await self._js.key_value(BUCKET_LLM_CACHE)
        digest = self.digest(purpose, system, prompt + (json.dumps(tool, sort_keys=True) if tool else ""))
        key = llm_answer_key(agent, digest)
        raw, _ = await kv_read(kv, key)
        if raw is None:
            raw = await _adopt_unattributed(kv, digest, key)
        cached = _cached(raw)
        if cached is not None:
            LLM_CALLS.labels(purpose, "cache_hit").inc()
            return Answer(cached.text, cached.outcome)
        got = await self._ask(agent, purpose, request, when)
        if got.outcome not in NO_MODEL or replayed:
            await kv.put(key, _encoder.encode(got))
        if got.outcome in NO_MODEL and later is not None and self._deferrals is not None:
            await self._deferrals.add(PendingCall(agent=agent, worker=self._deferrals.worker, purpose=purpose,
                                                  digest=digest, request=request, asked_at=when,
                                                  context=later.context))
        return Answer(got.text, got.outcome)

    def _budgets(self, agent: str, when: datetime) -> list[tuple[str, int]]:
        """The agent's usage counters for ``when`` and their caps: its day, and (with
        ``CORTEX_LLM_HOURLY_TOKENS``) its hour, both of event time, so a replay spends alike."""
        budgets = [(llm_usage_key(agent, when.date().isoformat()), self.daily_tokens)]
        if self.hourly_tokens:
            budgets.append((llm_usage_key(agent, when.strftime("%Y-%m-%dT%H")), self.hourly_tokens))
        return budgets

    async def _over_budget(self, agent: str, when: datetime) -> bool:
        kv = await self._js.key_value(BUCKET_LLM_CACHE)
        for key, cap in self._budgets(agent, when):
            if cap and _tokens((await kv_read(kv, key))[0]) >= cap:
                return True
        return False

    async def _ask(self, agent: str, purpose: str, request: LlmRequest, when: datetime) -> CachedAnswer:
        if await self._over_budget(agent, when):
            LLM_CALLS.labels(purpose, "over_budget").inc()
            return CachedAnswer(text=None, outcome="over_budget", model=request.model)
        if not self.availability.may_call(self.deferred):  # known down: no request, no wait
            LLM_CALLS.labels(purpose, "unavailable").inc()
            return CachedAnswer(text=None, outcome="unavailable", model=request.model)
        try:
            reply = await self._bounded(agent, purpose, request, when)
        except ProviderFailure as failure:
            return await self._failed(purpose, request, failure)
        await self.availability.answered(self.deferred)
        tokens = {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens}
        if reply.refused or not reply.text:
            LLM_CALLS.labels(purpose, "refused").inc()
            return CachedAnswer(text=None, outcome="refused", model=request.model, **tokens)
        LLM_CALLS.labels(purpose, "ok").inc()
        return CachedAnswer(text=reply.text, outcome="ok", model=request.model, **tokens)

    async def _bounded(self, agent: str, purpose: str, request: LlmRequest, when: datetime) -> LlmReply:
        """The call's requests within its bound (module docstring); raises the last failure."""
        settings = self._settings
        deadline = time.monotonic() + settings.llm_deadline_s
        check = self._checks.get(purpose)
        last = ProviderFailure("timeout", f"no answer within {settings.llm_deadline_s:g} s")
        for attempt in range(1, settings.llm_attempts + 1):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                reply = await self._request(purpose, request, min(settings.llm_timeout_s, remaining))
            except ProviderFailure as failure:
                if failure.permanent:
                    raise
                last = failure
            else:
                await self._spend(agent, purpose, when, reply)
                if reply.refused or not reply.text or check is None or check(reply.text):
                    return reply
                last = ProviderFailure("malformed", "the answer failed its check")
                LLM_FAILURES.labels("malformed").inc()
            delay = retry_delay(attempt, last.retry_after_s, settings.llm_retry_base_ms / 1000)
            if attempt == settings.llm_attempts or time.monotonic() + delay >= deadline:
                break  # a wait past the bound would hold the worker back: fall back now
            await asyncio.sleep(delay)
        raise last

    async def _request(self, purpose: str, request: LlmRequest, timeout_s: float) -> LlmReply:
        """One request, under the process's cap, given up after ``timeout_s`` whatever the SDK does."""
        assert self._provider is not None
        async with process_cap(self.max_concurrency).slot():
            started = time.perf_counter()
            try:
                async with asyncio.timeout(timeout_s):
                    return await self._provider.ask(request, timeout_s)
            except TimeoutError as exc:
                LLM_FAILURES.labels("timeout").inc()
                raise ProviderFailure("timeout", f"no answer within {timeout_s:.3g} s") from exc
            except ProviderFailure as failure:
                LLM_FAILURES.labels(failure.cause).inc()
                raise
            finally:
                LLM_SECONDS.labels(purpose).observe(time.perf_counter() - started)

    async def _spend(self, agent: str, purpose: str, when: datetime, reply: LlmReply) -> None:
        LLM_TOKENS.labels(purpose, "input").inc(reply.input_tokens)
        LLM_TOKENS.labels(purpose, "output").inc(reply.output_tokens)
        kv = await self._js.key_value(BUCKET_LLM_CACHE)
        spent = reply.input_tokens + reply.output_tokens
        for key, _ in self._budgets(agent, when):
            await kv_update(kv, key, lambda old: str(_tokens(old) + spent).encode())

    async def _failed(self, purpose: str, request: LlmRequest, failure: ProviderFailure) -> CachedAnswer:
        """No usable answer: a rejected request is an answer to cache (the same on every
        try); otherwise the model is what failed (module docstring)."""
        if failure.cause == "rejected":
            LLM_CALLS.labels(purpose, "failed").inc()
            log.warning("llm_request_rejected", extra={"purpose": purpose, "status": failure.status})
            return CachedAnswer(text=None, outcome="failed", model=request.model)
        if failure.cause == "malformed":
            LLM_CALLS.labels(purpose, "malformed").inc()
            return CachedAnswer(text=None, outcome="malformed", model=request.model)
        await self.availability.failed(failure, self.deferred)
        LLM_CALLS.labels(purpose, "unavailable").inc()
        log.warning("llm_fell_back", extra={"purpose": purpose, "cause": str(failure)})
        return CachedAnswer(text=None, outcome="unavailable", model=request.model)

    async def _ask_again(self, call: PendingCall) -> tuple[Again, LlmReply | None]:
        """One request for a deferred call (the asker's backoff is its retry): answered,
        later (the model still unreachable), malformed, or drop (refused, rejected, over the
        budget of its day)."""
        if await self._over_budget(call.agent, call.asked_at):
            return "drop", None
        try:
            reply = await self._request(call.purpose, call.request, self._settings.llm_timeout_s)
        except ProviderFailure as failure:
            if failure.cause in UNREACHABLE:
                await self.availability.failed(failure, self.deferred)
                return "later", None
            return "drop", None
        await self.availability.answered(self.deferred)
        await self._spend(call.agent, call.purpose, call.asked_at, reply)
        if reply.refused or not reply.text:
            return "drop", None
        check = self._checks.get(call.purpose)
        if check is not None and not check(reply.text):
            LLM_FAILURES.labels("malformed").inc()
            return "malformed", None
        return "answered", reply

    async def _report(self, health: LlmHealth) -> None:
        kv = await self._js.key_value(BUCKET_LLM_CACHE)
        await kv.put(llm_health_key(self._name), _encoder.encode(health))

    async def aclose(self) -> None:
        if self._deferrals is not None:
            await self._deferrals.aclose()
        if self._provider is not None:
            await self._provider.aclose()


async def started_llm(settings: Settings, js: JetStreamContext, *, name: str = "", http_client: Any = None,
                      worker: str | None = None, doc_bucket: str | None = None, partition: int | None = None,
                      checks: Mapping[str, Check] | None = None) -> LlmClient:
    """The one place a client is made: built and started (it takes up the deferred calls an
    earlier instance of ``worker`` left). Every worker's comes through ``worker_llm``; a
    command's (``cortex index --summarize``) directly, with no name (its state is no worker's
    in ``cortex status``) and no worker (it defers nothing: a command does not outlive its
    call)."""
    client = LlmClient(settings, js, http_client=http_client, name=name, worker=worker, doc_bucket=doc_bucket,
                       partition=partition, checks=checks)
    await client.start()
    return client


async def worker_llm(ctx: WorkerContext, doc_bucket: str | None, checks: Mapping[str, Check] | None = None,
                     defers: bool = True) -> LlmClient:
    """The client of one worker consumer, started: its deferred calls are answered into the
    stream, its state goes to ``cortex status`` under its consumer's name. A shadow worker
    defers nothing: it applies the live worker's answers (``deferred``)."""
    return await started_llm(ctx.settings, ctx.js, http_client=ctx.extras.get("llm_http_client"),
                             name=ctx.consumer or f"{ctx.worker}-api",
                             worker=ctx.worker if defers and not ctx.shadow else None,
                             doc_bucket=ctx.bucket(doc_bucket) if doc_bucket else None,
                             partition=ctx.partition, checks=checks)
