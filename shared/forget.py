"""Removing an agent everywhere (``cortex forget AGENT``): its events, its documents in
every bucket (history included), its dead letters, its LLM usage counters and cached LLM
answers, and its memories
— as one operation that completes, possibly later, or does nothing.

How it stays consistent while the agent's events keep arriving:

1. **Pause.** The forget takes over the lease of every consumer that applies the agent's
   events (each worker's, live and shadow, of the agent's partition) in one compare-and-set,
   then waits out the holders' lease TTL: their fences have closed, nothing of theirs can
   land any more. Each paused consumer sits at its checkpoint; new events queue in the stream.
2. **Memories first.** Each collection whose recall worker is not running (the live one's,
   and the shadow one's ``cortex_shadow_memories`` where a shadow recall worker ran) is
   opened here and the agent's memories are deleted. If that fails, the leases are released
   and *nothing* was removed. A recall worker was running (live or shadow): a
   ``memory_forget`` FeedbackEvent with ``value: "all"`` (the *marker*) is published. It is
   the cut: the agent's events before it are purged, each running recall worker deletes every
   memory of its collection when it reaches it (in stream order, so before any of the agent's
   newer events), and the events after it are applied onto nothing.
3. **Purge** the agent's events below the marker (all of them without one), her documents,
   dead letters, usage counters and cached LLM answers, then release the leases. The paused
   workers resume at their checkpoints: what they had applied of her is gone with the
   documents, what they had not applied is gone from the stream, and her newer events build
   new documents from nothing — every document agrees with the stream.
4. **Memories applied.** The forget waits (bounded) until the checkpoint of each recall
   worker that was running passes the marker, then deletes the marker itself (its only
   effect was on events that no longer exist). Until then the forget is *pending*: it
   completes on its own when they apply the marker, and ``cortex forget AGENT --status``
   says which.

Every step is recorded in ``cortex_forgets/<agent>`` (counts and times, no content), so a
forget interrupted half way (the connection lost) says so and a repeat finishes it: every
step is safe to do again.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.header
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, TypeGuard, TypeVar

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext

from schemas.events import FeedbackEvent
from shared.codec import subject_agent
from shared.feedback import publish_feedback
from shared.kv import checkpoint_value, kv_keys, kv_read
from shared.lease import Lease, LeaseRefused
from shared.names import (
    BUCKET_CHECKPOINTS,
    BUCKET_FORGETS,
    BUCKET_LEASES,
    BUCKET_LLM_CACHE,
    DLQ_STREAM,
    EVENTS_STREAM,
    NOTES_STREAM,
    agent_event_filters,
    llm_answer_key,
    llm_pending_key,
    llm_usage_key,
    notes_subject,
    session_agent_filter,
    shadow_bucket,
)
from shared.openclaw import filed_agent_of
from shared.provision import ensure_bucket
from shared.tasks import cancel_and_wait

log = logging.getLogger(__name__)

MARKER_ACTOR = "cortex forget"
T = TypeVar("T")
State = Literal["running", "pending", "complete", "aborted"]
Mode = Literal["live", "shadow"]  # whose memories: the live recall worker's collection or the shadow one's


class ForgetReport(msgspec.Struct, kw_only=True):
    events: int = 0
    documents: int = 0
    dead_letters: int = 0
    usage_keys: int = 0
    llm_answers: int = 0  # cached LLM answers (answer.<agent>.*: her prompts and what was made of them)
    llm_pending: int = 0  # calls waiting for the model to answer them again (pending.<agent>.*: her prompts)
    memories: str = "not attempted"


class ForgetRecord(msgspec.Struct, kw_only=True):
    """The status of the agent's last forget (``cortex_forgets/<agent>``)."""

    agent: str
    id: str
    state: State
    step: str
    started: datetime
    updated: datetime
    marker_seq: int = 0  # the memory_forget marker the recall worker must apply (0: none)
    recall_consumer: str = ""  # the live recall worker's consumer of the agent
    # the recall consumers (live, shadow) that were running, so apply the marker: the forget
    # completes once each has; empty in a record of an earlier version: recall_consumer
    waits_on: list[str] = msgspec.field(default_factory=list)
    report: ForgetReport = msgspec.field(default_factory=ForgetReport)
    error: str = ""


class ForgetError(Exception):
    """The forget stopped; the message says what was removed (nothing, or how to finish it)."""


def is_agent_forget(event: object) -> TypeGuard[FeedbackEvent]:
    """The marker of ``cortex forget AGENT``: every memory of the agent, from before it."""
    return (isinstance(event, FeedbackEvent) and event.kind == "memory_forget" and event.value == "all"
            and not event.target)


def header_text(value: Any) -> str:
    """A header value as text. nats-py parses stored messages' headers with the e-mail
    parser, which hands a non-ASCII value back as an ``email.header.Header`` (its ``str``
    mangles the UTF-8): decode its raw parts as UTF-8."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, email.header.Header):
        parts = email.header.decode_header(value)
        return "".join(p.decode("utf-8", "replace") if isinstance(p, bytes) else p for p, _ in parts)
    return str(value)


# ---------------------------------------------------------------------------- the purges


async def _count(js: JetStreamContext, subject: str) -> int:
    info = await js.stream_info(EVENTS_STREAM, subjects_filter=subject)
    return sum((info.state.subjects or {}).values()) if info.state.subjects else 0


async def purge_events(js: JetStreamContext, prefix: str, agent: str, below: int | None = None) -> int:
    """Purge the agent's events (those below sequence ``below`` when given); returns how many.
    Her notes published as the contract's ``<prefix>.notes.<agent>`` go from CORTEX_NOTES too
    (all of them: the copies in CORTEX_EVENTS are the events counted)."""
    removed = 0
    for subject in agent_event_filters(prefix, agent):
        before = await _count(js, subject)
        await js.purge_stream(EVENTS_STREAM, subject=subject, seq=below)
        removed += before - await _count(js, subject)
    removed += await delete_session_agent_events(js, prefix, agent, below)
    with contextlib.suppress(nats.js.errors.NotFoundError):  # a stream made before CORTEX_NOTES existed
        await js.purge_stream(NOTES_STREAM, subject=notes_subject(prefix, agent))
    return max(0, removed)


async def delete_session_agent_events(js: JetStreamContext, prefix: str, agent: str, below: int | None) -> int:
    """Delete the agent's events among those the OpenClaw store filed under its session token
    (``shared.names.OPENCLAW_SESSION_AGENT``): they share one subject with every other agent's
    of that gateway, so no purge by subject can take them — each is read, and deleted when its
    session key names ``agent`` (``shared.openclaw.filed_agent``). Returns how many."""
    subject, seq, removed = session_agent_filter(prefix), 1, 0
    while below is None or seq < below:
        try:
            msg = await js.get_msg(EVENTS_STREAM, seq=seq, subject=subject, next=True)
        except nats.js.errors.NotFoundError:
            break
        if not msg.seq or (below is not None and msg.seq >= below):
            break
        if msg.data is not None and filed_agent_of(msg.data) == agent:
            await js.delete_msg(EVENTS_STREAM, msg.seq)
            removed += 1
        seq = msg.seq + 1
    return removed


# Not an agent id (those have no dots): where forgets record the stream's first sequence when
# their purges alone moved it (shared.replay.check_history reads it).
FORGOTTEN_HEAD_KEY = "stream.forgotten-head"


async def _first_seq(js: JetStreamContext) -> int:
    return int((await js.stream_info(EVENTS_STREAM)).state.first_seq)


async def forgotten_head(js: JetStreamContext) -> int:
    """The stream's first sequence as forgets alone left it (1: none moved it): a full replay
    may start above 1 that far — every event below was a forgotten agent's."""
    try:
        raw, _ = await kv_read(await js.key_value(BUCKET_FORGETS), FORGOTTEN_HEAD_KEY)
    except nats.js.errors.BucketNotFoundError:
        return 1
    return int(raw) if raw else 1


async def start_forgotten(js: JetStreamContext, first_seq: int) -> bool:
    """Whether every event below ``first_seq``, the stream's first sequence, was a forgotten
    agent's: only forgets moved its start, if anything did (retention or a purge dropped
    events that made documents, which nothing can derive again)."""
    return first_seq <= 1 or first_seq <= await forgotten_head(js)


async def purge_events_at_the_head(js: JetStreamContext, prefix: str, agent: str, below: int | None) -> int:
    """``purge_events``, the stream's start it leaves recorded (``_at_the_head``)."""
    return await _at_the_head(js, lambda: purge_events(js, prefix, agent, below))


async def _at_the_head(js: JetStreamContext, remove: Callable[[], Awaitable[T]]) -> T:
    """``remove`` (a forget's removal of its events, or of its marker); when that moved the
    stream's first sequence and nothing but forgets had moved it before (retention had not),
    the new first sequence is recorded: the events below it are all forgotten ones, which a
    replay (and a derivation, ``start_forgotten``) has no need of."""
    head = await _first_seq(js)
    removed = await remove()
    after = await _first_seq(js)
    if after > head and head <= await forgotten_head(js):
        await (await js.key_value(BUCKET_FORGETS)).put(FORGOTTEN_HEAD_KEY, str(after).encode())
    return removed


async def purge_documents(js: JetStreamContext, agent: str, buckets: Sequence[str]) -> int:
    """Purge the agent's documents from ``buckets`` (every worker's: ``workers.registry.doc_buckets``)
    and their shadow copies."""
    removed = 0
    for bucket in (*buckets, *(shadow_bucket(b) for b in buckets)):
        try:
            kv = await js.key_value(bucket)
        except nats.js.errors.BucketNotFoundError:
            continue
        for key in await kv_keys(js, bucket, agent):
            await kv.purge(key)  # purge, not delete: no revision of the document survives
            removed += 1
    return removed


async def purge_usage(js: JetStreamContext, agent: str) -> int:
    """Purge the agent's LLM usage counters (``usage.<agent>.<day>``); returns how many."""
    return await _purge_prefixed(js, BUCKET_LLM_CACHE, llm_usage_key(agent))


async def purge_llm_answers(js: JetStreamContext, agent: str) -> int:
    """Purge the LLM answers cached for the agent (``answer.<agent>.<sha256>``: her text went
    into the prompts); returns how many. Answers an earlier version cached under a bare
    digest cannot be attributed to anyone (``shared.llm._adopt_unattributed``)."""
    return await _purge_prefixed(js, BUCKET_LLM_CACHE, llm_answer_key(agent))


async def purge_llm_pending(js: JetStreamContext, agent: str) -> int:
    """Purge the agent's calls that fell back and wait for the model (``pending.<agent>.*``:
    her text is in their prompts); a worker's background asker drops one whose key is gone
    instead of publishing its answer (``shared.llm.deferred``)."""
    return await _purge_prefixed(js, BUCKET_LLM_CACHE, llm_pending_key(agent))


async def _purge_prefixed(js: JetStreamContext, bucket: str, prefix: str) -> int:
    kv = await js.key_value(bucket)
    keys = [k for k in await kv_keys(js, bucket, prefix) if k.startswith(f"{prefix}.")]
    for key in keys:
        await kv.purge(key)
    return len(keys)


async def purge_dead_letters(js: JetStreamContext, prefix: str, agent: str) -> int:
    """Dead letters are keyed by worker, not agent: look at each one's original subject."""
    info = await js.stream_info(DLQ_STREAM)
    removed = 0
    if not info.state.messages:
        return 0  # an empty stream reports sequence 0, which get_msg refuses
    for seq in range(max(1, info.state.first_seq), info.state.last_seq + 1):
        try:
            msg = await js.get_msg(DLQ_STREAM, seq)
        except nats.js.errors.NotFoundError:
            continue
        original = header_text((msg.headers or {}).get("Cortex-Original-Subject"))
        if subject_agent(prefix, original) == agent:
            await js.delete_msg(DLQ_STREAM, seq)
            removed += 1
    return removed


# ---------------------------------------------------------------------------- the pause


def _refuse(holder: str) -> str | None:
    if holder.startswith(("replay-", "forget-")):
        kind = "a replay" if holder.startswith("replay-") else "another forget"
        return f"{kind} is running ({holder}); run the forget again when it is done"
    return None


class WorkerPause:
    """The leases of ``consumers``, taken over and kept alive; entering returns once every
    previous holder's fence has closed. ``check`` raises when one was lost meanwhile."""

    def __init__(self, js: JetStreamContext, consumers: Sequence[str], instance: str, ttl_s: int,
                 say: Callable[[str], None] | None = None) -> None:
        self._say = say
        self._leases = [Lease(js, c, instance, ttl_s, label=f"forget:{c}") for c in consumers]
        self._keepers: list[asyncio.Task[None]] = []
        self.lost: list[str] = []
        self.holders: dict[str, str | None] = {}

    async def __aenter__(self) -> WorkerPause:
        try:
            wait_s = 0
            for lease in self._leases:
                holder = await lease.take_over(_refuse, self._say)
                self.holders[lease.consumer] = holder.instance
                wait_s = max(wait_s, holder.ttl_s)
                self._keepers.append(asyncio.create_task(self._keep(lease), name=f"forget-{lease.consumer}"))
            await asyncio.sleep(wait_s)  # a deposed holder may write until its fence closes: wait it out
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def _keep(self, lease: Lease) -> None:
        await lease.keep_alive(lambda: self.lost.append(lease.consumer))

    def check(self) -> None:
        if self.lost:
            raise ForgetError(f"the lease of {', '.join(self.lost)} was taken while the forget held it")

    async def __aexit__(self, *exc: object) -> None:
        for task in self._keepers:
            await cancel_and_wait(task)
        for lease in self._leases:
            await lease.release()


# ---------------------------------------------------------------------------- the operation


def _now() -> datetime:
    return datetime.now(UTC)  # operational record (when a person ran it), not derived state


class Records:
    """``cortex_forgets``: the last forget of each agent."""

    def __init__(self, js: JetStreamContext, replicas: int = 1) -> None:
        self._js = js
        self._replicas = replicas  # of the bucket, made by the first forget (CORTEX_REPLICAS)

    async def save(self, record: ForgetRecord) -> None:
        await ensure_bucket(self._js, BUCKET_FORGETS, replicas=self._replicas)
        record.updated = _now()
        await (await self._js.key_value(BUCKET_FORGETS)).put(record.agent, msgspec.json.encode(record))

    async def load(self, agent: str) -> ForgetRecord | None:
        try:
            raw, _ = await kv_read(await self._js.key_value(BUCKET_FORGETS), agent)
        except nats.js.errors.BucketNotFoundError:
            return None
        if raw is None:
            return None
        try:
            return msgspec.json.decode(raw, type=ForgetRecord)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, UnicodeDecodeError):
            # a damaged record: forget as if none were kept (a forget is idempotent: every
            # step runs again), and say so once
            log.error("forget_record_unreadable", extra={"agent": agent, "value": raw[:64].hex()})
            return None


class AgentForget:
    """One ``cortex forget AGENT`` (see the module docstring)."""

    def __init__(self, js: JetStreamContext, *, prefix: str, agent: str, consumers: Sequence[str],
                 recall_consumer: str, lease_ttl_s: int, buckets: Sequence[str],
                 erase_memories: Callable[[Sequence[Mode]], Awaitable[str]],
                 say: Callable[[str], None] = lambda _: None,
                 replicas: int = 1, shadow_recall_consumer: str = "") -> None:
        """``erase_memories(modes)``: delete the agent's memories from those collections here
        (their recall worker is not running); ``shadow_recall_consumer``: the shadow recall
        worker's consumer of the agent, given when it exists (a shadow recall worker ran)."""
        self._js = js
        self._shadow_recall = shadow_recall_consumer
        self._buckets = list(buckets)
        self._prefix = prefix
        self._consumers = list(consumers)
        self._erase = erase_memories
        self._say = say
        self._ttl = lease_ttl_s
        self._records = Records(js, replicas)
        now = _now()
        self.record = ForgetRecord(agent=agent, id=uuid.uuid4().hex[:12], state="running", step="pausing the workers",
                                   started=now, updated=now, recall_consumer=recall_consumer)

    async def _step(self, step: str) -> None:
        self.record.step = step
        self._say(step)
        await self._records.save(self.record)

    async def run(self, wait_s: float) -> ForgetRecord:
        """Everything but the wait for the recall worker, then that wait (``wait_s`` at most)."""
        await self._step("pausing the workers")
        try:
            async with WorkerPause(self._js, self._consumers, f"forget-{self.record.id}", self._ttl,
                                   self._say) as pause:
                await self._memories(pause)
                await self._purge(pause)
        except LeaseRefused as exc:
            await self._abort(str(exc))
        except ForgetError:
            raise
        except Exception as exc:
            raise ForgetError(f"forget of {self.record.agent} interrupted while {self.record.step}: {exc!r}; "
                              f"run `cortex forget {self.record.agent} --yes` again to finish it") from exc
        if self.record.marker_seq:
            await self.wait_applied(wait_s)
        return self.record

    @staticmethod
    def holders_had(pause: WorkerPause, consumer: str) -> bool:
        return bool(consumer) and pause.holders.get(consumer) is not None

    async def _abort(self, why: str) -> None:
        self.record.state = "aborted"
        self.record.error = why
        await self._records.save(self.record)
        raise ForgetError(f"{why}: nothing of {self.record.agent} was removed")

    async def _memories(self, pause: WorkerPause) -> None:
        """The memories of each collection whose recall worker is not running are deleted here,
        first (a failure: nothing removed); a running one (live or shadow) gets the marker. The
        shadow collection is looked at only where a shadow recall worker ran (its consumer
        exists), or the store is opened here anyway."""
        consumers: dict[Mode, str] = {"live": self.record.recall_consumer, "shadow": self._shadow_recall}
        running = [mode for mode, consumer in consumers.items() if self.holders_had(pause, consumer)]
        erase: list[Mode] = [mode for mode in ("shadow", "live") if mode not in running
                             and (mode == "live" or self._shadow_recall or "live" not in running)]
        if erase:
            await self._step("deleting the memories")
            try:
                self.record.report.memories = await self._erase(erase)
            except Exception as exc:
                await self._abort(str(exc))
        if running:
            await self._step("publishing the memory forget for the recall worker")
            agent = self.record.agent
            marker = FeedbackEvent(id=f"forget-{self.record.id}", agent=agent, ts=_now(), kind="memory_forget",
                                   value="all", actor=MARKER_ACTOR)
            ack = await publish_feedback(self._js, self._prefix, marker, stream=EVENTS_STREAM)
            self.record.marker_seq = int(ack.seq)
            self.record.waits_on = [consumers[mode] for mode in running]
            self.record.report.memories = "pending: the recall worker deletes them when it applies the forget"

    async def _purge(self, pause: WorkerPause) -> None:
        report, agent = self.record.report, self.record.agent
        pause.check()
        await self._step("purging the events")
        report.events = await purge_events_at_the_head(self._js, self._prefix, agent, self.record.marker_seq or None)
        pause.check()
        await self._step("purging the documents")
        report.documents = await purge_documents(self._js, agent, self._buckets)
        pause.check()
        await self._step("purging the dead letters")
        report.dead_letters = await purge_dead_letters(self._js, self._prefix, agent)
        report.usage_keys = await purge_usage(self._js, agent)
        report.llm_answers = await purge_llm_answers(self._js, agent)
        report.llm_pending = await purge_llm_pending(self._js, agent)
        self.record.state = "pending" if self.record.marker_seq else "complete"
        await self._step("waiting for the recall worker" if self.record.marker_seq else "done")

    async def wait_applied(self, wait_s: float) -> None:
        deadline = time.monotonic() + wait_s
        while not await finish_if_applied(self._js, self.record):
            if time.monotonic() >= deadline:
                return
            await asyncio.sleep(0.2)


async def recall_checkpoint(js: JetStreamContext, consumer: str) -> int:
    raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), consumer)
    return checkpoint_value(raw) or 0  # unreadable: the worker rewinds to the start and rewrites it


async def finish_if_applied(js: JetStreamContext, record: ForgetRecord) -> bool:
    """A pending forget whose marker the recall worker has applied: delete the marker and
    record it complete. True when the forget is complete."""
    if record.state == "complete":
        return True
    if record.state != "pending":
        return False
    for consumer in record.waits_on or [record.recall_consumer]:
        if await recall_checkpoint(js, consumer) < record.marker_seq:
            return False
    await _at_the_head(js, lambda: _delete_marker(js, record.marker_seq))  # it may open the stream now
    record.state = "complete"
    record.step = "done"
    record.report.memories = "deleted by the recall worker"
    await Records(js).save(record)
    return True


async def _delete_marker(js: JetStreamContext, seq: int) -> None:
    with contextlib.suppress(nats.js.errors.NotFoundError):
        await js.delete_msg(EVENTS_STREAM, seq)


async def forget_status(js: JetStreamContext, agent: str) -> ForgetRecord | None:
    """The agent's last forget, completed first if its marker was applied meanwhile. A
    record still ``running`` whose forget holds no lease any more was interrupted."""
    record = await Records(js).load(agent)
    if record is None:
        return None
    if record.state == "pending":
        await finish_if_applied(js, record)
    elif record.state == "running" and not await _still_running(js, record):
        record.error = record.error or "interrupted"
    return record


async def _still_running(js: JetStreamContext, record: ForgetRecord) -> bool:
    kv = await js.key_value(BUCKET_LEASES)
    instance = f"forget-{record.id}".encode()
    for key in await kv_keys(js, BUCKET_LEASES):
        raw, _ = await kv_read(kv, key)
        if raw == instance:
            return True
    return False
