"""Calls that fell back to the structured path, asked again once the model answers.

A call made while the model cannot be reached (or that got only unusable answers within its
bound) leaves the worker's document as the patterns made it, and — when its caller says
how to apply a later answer (``Later``) — it is kept here, in ``cortex_llm_cache`` under
``pending.<agent>.<worker>.<digest>`` (so a restart keeps it, and `cortex forget` purges it).
A background task of the worker's client asks the oldest one again whenever the model may be
tried (``shared.llm.availability``); the answer is published as an ``llm_answer``
FeedbackEvent carrying the text, and the worker applies it to its document like any other
event — a later revision, in stream order.

Why an event: a replay must make the documents the live run made. The call that fell back is
cached as having had no model (outcome ``unavailable``), so a replay takes the structured path
at that point too; the answer that came later is in the stream, at the place it landed, so a
replay applies it there — the same bytes, no model asked, with or without the cache.

Only the active instance asks (the client lives in its handler); a partitioned worker's
consumer asks for its own partition's agents; a shadow worker defers nothing (it applies the
live worker's answers, which are in the same stream).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Literal

import msgspec
from nats.js.client import JetStreamContext

from schemas.events import FeedbackEvent, LlmAnswerValue
from shared.backoff import backoff_delay
from shared.feedback import publish_feedback
from shared.kv import kv_keys, kv_read
from shared.llm.availability import Availability
from shared.llm.metrics import LLM_DEFERRED, LLM_ENRICHMENTS
from shared.llm.providers import LlmReply, LlmRequest
from shared.names import BUCKET_LLM_CACHE, llm_pending_key, partition_of
from shared.tasks import cancel_and_wait

log = logging.getLogger(__name__)

MAX_MALFORMED = 5  # unusable answers to one deferred call before it is given up
ANSWER_ACTOR = "cortex-llm"


class Later(msgspec.Struct, frozen=True):
    """Ask this call again once the model answers, and publish the answer as an
    ``llm_answer`` event; ``context`` travels with it (what the worker needs to apply it)."""

    context: Any = None


class PendingCall(msgspec.Struct, frozen=True, kw_only=True):
    agent: str
    worker: str
    purpose: str
    digest: str
    request: LlmRequest
    asked_at: datetime
    context: Any = None
    malformed: int = 0


Again = Literal["answered", "later", "malformed", "drop"]
AskAgain = Callable[[PendingCall], Awaitable[tuple[Again, LlmReply | None]]]


class _Watermark(msgspec.Struct, frozen=True):
    last_event_ts: datetime | None = None


class _Head(msgspec.Struct, frozen=True):
    """What an answer's time needs of the worker's document: its latest event time."""

    integrity: _Watermark = _Watermark()


_PENDING = msgspec.json.Decoder(PendingCall)
_HEAD = msgspec.json.Decoder(_Head)
_encoder = msgspec.json.Encoder()


def answer_event_id(worker: str, agent: str, digest: str) -> str:
    """The ``llm_answer`` event's id: one per deferred call (a publish retried is stored once)."""
    return "llm-" + hashlib.sha256(f"{worker}\0{agent}\0{digest}".encode()).hexdigest()[:40]


def answer_event(call: PendingCall, reply: LlmReply, now: datetime | None) -> FeedbackEvent:
    """The event carrying ``reply`` for ``call``; its time is the latest of the call's and the
    worker's document's (``now``), so the document's time never goes back."""
    ts = max(call.asked_at, now) if now is not None else call.asked_at
    value = LlmAnswerValue(purpose=call.purpose, text=reply.text, asked_at=call.asked_at, context=call.context)
    return FeedbackEvent(id=answer_event_id(call.worker, call.agent, call.digest), agent=call.agent, ts=ts,
                         kind="llm_answer", target=None, value=msgspec.to_builtins(value), actor=ANSWER_ACTOR)


class Deferrals:
    """One worker consumer's deferred calls and the task that asks them again."""

    def __init__(self, js: JetStreamContext, *, worker: str, prefix: str, doc_bucket: str | None,
                 partition: int | None, partitions: int, availability: Availability, ask_again: AskAgain,
                 retry_base_s: float, max_value_bytes: int) -> None:
        self._js = js
        self.worker = worker
        self._prefix = prefix
        self._doc_bucket = doc_bucket
        self._partition = partition
        self._partitions = partitions
        self._availability = availability
        self._ask_again = ask_again
        self._retry_base_s = retry_base_s
        self._max_value_bytes = max_value_bytes
        self._pending: dict[str, PendingCall] = {}  # by key, oldest first
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._gauge = LLM_DEFERRED.labels(worker)

    @property
    def count(self) -> int:
        return len(self._pending)

    def _mine(self, key: str) -> bool:
        parts = key.split(".")
        if len(parts) != 4 or parts[2] != self.worker:
            return False
        return self._partition is None or partition_of(parts[1], self._partitions) == self._partition

    async def start(self) -> None:
        """Take up the calls an earlier instance left, and start asking."""
        kv = await self._js.key_value(BUCKET_LLM_CACHE)
        for key in await kv_keys(self._js, BUCKET_LLM_CACHE, "pending"):
            if not self._mine(key):
                continue
            raw, _ = await kv_read(kv, key)
            try:
                self._pending[key] = _PENDING.decode(raw or b"")
            except msgspec.DecodeError:  # garbage in the bucket: that entry's problem only
                log.warning("llm_pending_unreadable", extra={"key": key})
                await kv.purge(key)
        self._gauge.set(len(self._pending))
        self._task = asyncio.create_task(self._run(), name=f"{self.worker}-llm-deferred")
        if self._pending:
            self._wake.set()

    async def add(self, call: PendingCall) -> None:
        key = llm_pending_key(call.agent, call.worker, call.digest)
        kv = await self._js.key_value(BUCKET_LLM_CACHE)
        await kv.put(key, _encoder.encode(call))
        self._pending[key] = call
        self._gauge.set(len(self._pending))
        self._wake.set()

    async def aclose(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    async def _run(self) -> None:
        while True:
            if not self._pending:
                self._wake.clear()
                await self._availability.report(0)
                await self._wake.wait()
                continue
            await asyncio.sleep(self._availability.wait_s())
            key, call = next(iter(self._pending.items()))
            try:
                await self._try(key, call)
            except Exception as exc:  # NATS down while publishing: the call stays, tried again
                log.warning("llm_answer_unpublished", extra={"worker": self.worker, "error": repr(exc)})
                await asyncio.sleep(self._retry_base_s)

    async def _try(self, key: str, call: PendingCall) -> None:
        verdict, reply = await self._ask_again(call)
        if verdict == "answered" and reply is not None:
            await self._publish(key, call, reply)
        elif verdict == "malformed" and call.malformed + 1 < MAX_MALFORMED:
            again = msgspec.structs.replace(call, malformed=call.malformed + 1)
            await self._requeue(key, again)
            await asyncio.sleep(backoff_delay(again.malformed, self._retry_base_s, 60.0))
        elif verdict in ("malformed", "drop"):
            log.warning("llm_deferred_given_up", extra={"worker": self.worker, "agent": call.agent,
                                                        "purpose": call.purpose, "verdict": verdict})
            await self._forget(key, "given_up")

    async def _requeue(self, key: str, call: PendingCall) -> None:
        """Last in line (the others go first), with its count of unusable answers."""
        kv = await self._js.key_value(BUCKET_LLM_CACHE)
        await kv.put(key, _encoder.encode(call))
        self._pending.pop(key, None)
        self._pending[key] = call

    async def _publish(self, key: str, call: PendingCall, reply: LlmReply) -> None:
        kv = await self._js.key_value(BUCKET_LLM_CACHE)
        if (await kv_read(kv, key))[0] is None:  # `cortex forget` purged it meanwhile: her text stays gone
            self._pending.pop(key, None)
            self._gauge.set(len(self._pending))
            LLM_ENRICHMENTS.labels(self.worker, "forgotten").inc()
            return
        event = answer_event(call, reply, await self._watermark(call.agent))
        if len(_encoder.encode(event.value)) > self._max_value_bytes:  # the codec would refuse it
            log.warning("llm_answer_too_large", extra={"worker": self.worker, "agent": call.agent,
                                                       "purpose": call.purpose, "chars": len(reply.text)})
            await self._forget(key, "given_up")
            return
        await publish_feedback(self._js, self._prefix, event)
        log.info("llm_answer_published", extra={"worker": self.worker, "agent": call.agent, "purpose": call.purpose,
                                                "event": event.id})
        await self._forget(key, "published")

    async def _forget(self, key: str, outcome: str) -> None:
        kv = await self._js.key_value(BUCKET_LLM_CACHE)
        await kv.purge(key)
        self._pending.pop(key, None)
        self._gauge.set(len(self._pending))
        LLM_ENRICHMENTS.labels(self.worker, outcome).inc()

    async def _watermark(self, agent: str) -> datetime | None:
        """The latest event time of the agent's document (none: no document yet)."""
        if self._doc_bucket is None:
            return None
        kv = await self._js.key_value(self._doc_bucket)
        raw, _ = await kv_read(kv, agent)
        try:
            return _HEAD.decode(raw).integrity.last_event_ts if raw is not None else None
        except msgspec.DecodeError:
            return None
