"""What ``cortex web`` reads, the way the CLI reads it: the request APIs (``cortex.api.<service>.<agent>``)
for the briefing, threads, decisions, commitments, recall, memories, traces and operations; the
stored documents through ``shared.asof.DocReader`` for the rest (facts, timeline, the overview);
and the stream itself for an item's source events. No worker's internals are imported: a
document's meaning is its schema's."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from typing import Any

import msgspec
import nats.errors
from nats.aio.client import Client
from nats.js.api import DeliverPolicy

from schemas.api import (
    BootRequest,
    CommitmentsReply,
    DecisionsReply,
    ErrorReply,
    MemoryReply,
    MemoryRequest,
    OperationsReply,
    OperationsRequest,
    RecallReply,
    RecallRequest,
    ThreadsReply,
    TracesReply,
    TracesRequest,
)
from schemas.docs import BootDoc, CommitmentsDoc, KnowledgeDoc, NarrativeDoc, ThreadsDoc, TraceDoc
from schemas.events import Event, FeedbackEvent, MessageEvent, NoteEvent
from shared.asof import DocReader
from shared.codec import Envelope, decode_event, event_limits
from shared.config import Settings
from shared.names import (
    BUCKET_BOOT,
    BUCKET_COMMITMENTS,
    BUCKET_DECISIONS,
    BUCKET_KNOWLEDGE,
    BUCKET_NARRATIVES,
    BUCKET_OPERATIONS,
    BUCKET_THREADS,
    BUCKET_TRACES,
    EVENTS_STREAM,
    agent_event_filters,
    api_subject,
)
from workers.conversation.ids import derive_id
from workers.web.pages import AgentRow, SourceEvent

SCAN_LIMIT = 200_000  # events read for one "why?" at most: a page, not a replay
SCAN_IDLE_S = 2.0
TEXT_CHARS = 2000
DERIVED_PER_EVENT = 16  # items one message may yield (threads and decisions number them from 0)

# the short names a page's live updates watch, and their buckets
WATCHED: dict[str, str] = {
    "boot": BUCKET_BOOT, "threads": BUCKET_THREADS, "decisions": BUCKET_DECISIONS,
    "commitments": BUCKET_COMMITMENTS, "knowledge": BUCKET_KNOWLEDGE, "narratives": BUCKET_NARRATIVES,
    "traces": BUCKET_TRACES, "operations": BUCKET_OPERATIONS,
}


class Unavailable(Exception):
    """A Cortex API did not answer (503), or answered with an error (its code: 404 for an id
    the agent does not have): one line for the page."""

    def __init__(self, message: str, status: int = 503) -> None:
        super().__init__(message)
        self.status = status


class Reader:
    """One agent-scoped read at a time over the server's one NATS connection."""

    def __init__(self, nc: Client, settings: Settings, timeout: float) -> None:
        self.nc = nc
        self.settings = settings
        self.timeout = timeout
        self.docs = DocReader(nc.jetstream())

    async def api(self, service: str, agent: str, request: msgspec.Struct | None = None) -> bytes:
        subject = api_subject(self.settings.prefix, service, agent)
        body = msgspec.json.encode(request) if request is not None else b"{}"
        try:
            reply = await self.nc.request(subject, body, timeout=self.timeout)
        except nats.errors.NoRespondersError as exc:
            raise Unavailable(f"no service answers {subject}: is the {service} worker running (`cortex up`)?") \
                from exc
        except nats.errors.TimeoutError as exc:
            raise Unavailable(f"{subject} did not answer within {self.timeout:g} s") from exc
        if reply.headers and reply.headers.get("Nats-Service-Error"):
            err = msgspec.json.decode(reply.data, type=ErrorReply).error if reply.data else None
            status = err.code if err and 400 <= err.code < 600 else 503
            raise Unavailable(err.message if err else reply.headers["Nats-Service-Error"], status)
        return bytes(reply.data)

    # ----------------------------------------------------------------- overview

    async def agents(self) -> list[str]:
        """Every agent with a threads or boot document (a part key ``agent.partN`` is no agent)."""
        js = self.nc.jetstream()
        found: set[str] = set()
        for bucket in (BUCKET_THREADS, BUCKET_BOOT):
            with contextlib.suppress(Exception):  # an empty bucket (NoKeysError) or none yet
                found.update(k for k in await (await js.key_value(bucket)).keys() if "." not in k)
        return sorted(found)

    async def overview(self, agent: str, pending: int) -> AgentRow:
        threads, boot, commitments, traces = await asyncio.gather(
            self.docs.latest(BUCKET_THREADS, agent, ThreadsDoc), self.docs.latest(BUCKET_BOOT, agent, BootDoc),
            self.docs.latest(BUCKET_COMMITMENTS, agent, CommitmentsDoc),
            self.docs.latest(BUCKET_TRACES, agent, TraceDoc))
        stamps = [d.integrity.last_event_ts for d in (threads, boot, commitments, traces)
                  if d is not None and d.integrity.last_event_ts is not None]
        return AgentRow(agent=agent, last_activity=max(stamps, default=None),
                        lagging=boot.lagging if boot else [], pending=pending,
                        findings=len(traces.findings) if traces else 0,
                        open_commitments=sum(c.status != "done" for c in commitments.commitments)
                        if commitments else 0,
                        threads=sum(t.status == "open" for t in threads.threads) if threads else 0)

    async def pending(self) -> int:
        """Events stored but not yet applied by the slowest consumer (every agent's: the
        consumers are shared)."""
        js = self.nc.jetstream()
        try:
            consumers = await js.consumers_info(EVENTS_STREAM)
            return max(((c.num_pending or 0) + (c.num_ack_pending or 0) for c in consumers), default=0)
        except Exception:
            return 0

    # ----------------------------------------------------------------- one agent

    async def briefing(self, agent: str) -> BootDoc | None:
        """The briefing as the agent would receive it now (a fresh assembly), else as stored."""
        try:
            fresh = msgspec.json.decode(await self.api("boot", agent, BootRequest()), type=BootDoc)
            if fresh.generated_at.timestamp() != 0:  # the API's "now" when no document has an event yet
                return fresh
        except Unavailable:
            pass
        return await self.docs.latest(BUCKET_BOOT, agent, BootDoc)

    async def threads(self, agent: str) -> ThreadsReply:
        return msgspec.json.decode(await self.api("threads", agent), type=ThreadsReply)

    async def decisions(self, agent: str) -> DecisionsReply:
        return msgspec.json.decode(await self.api("decisions", agent), type=DecisionsReply)

    async def commitments(self, agent: str) -> CommitmentsReply:
        return msgspec.json.decode(await self.api("commitments", agent), type=CommitmentsReply)

    async def recall(self, agent: str, query: str) -> RecallReply:
        return msgspec.json.decode(await self.api("recall", agent, RecallRequest(query=query)), type=RecallReply)

    async def memory(self, agent: str, memory_id: str) -> MemoryReply:
        return msgspec.json.decode(await self.api("memory", agent, MemoryRequest(id=memory_id)), type=MemoryReply)

    async def traces(self, agent: str) -> tuple[TracesReply, OperationsReply]:
        findings = msgspec.json.decode(await self.api("traces", agent, TracesRequest()), type=TracesReply)
        operations = msgspec.json.decode(await self.api("operations", agent, OperationsRequest()),
                                         type=OperationsReply)
        return findings, operations

    async def knowledge(self, agent: str) -> KnowledgeDoc | None:
        return await self.docs.latest(BUCKET_KNOWLEDGE, agent, KnowledgeDoc)  # joins the parts

    async def narrative(self, agent: str) -> NarrativeDoc | None:
        return await self.docs.latest(BUCKET_NARRATIVES, agent, NarrativeDoc)

    # ----------------------------------------------------------------- source events

    async def sources(self, agent: str, wanted: Callable[[Envelope], bool],
                      stop_after: int | None = None) -> tuple[list[SourceEvent], int, bool]:
        """The agent's stored events ``wanted`` picks, oldest first, read from the stream with
        an ordered consumer (at most ``SCAN_LIMIT``); how many were read, and whether that was
        all of them. ``stop_after``: enough found, stop reading."""
        js = self.nc.jetstream()
        limits = event_limits(self.settings)
        found: list[SourceEvent] = []
        scanned = 0
        for subject in agent_event_filters(self.settings.prefix, agent):
            total = sum(((await js.stream_info(EVENTS_STREAM, subjects_filter=subject)).state.subjects or {})
                        .values())
            async for seq, stored, data in _stored(js, subject, min(total, SCAN_LIMIT - scanned)):
                scanned += 1
                envelope = decode_event(self.settings.prefix, stored, seq, data, limits)
                if isinstance(envelope, Envelope) and envelope.agent == agent and wanted(envelope):
                    found.append(source_event(envelope))
                    if stop_after is not None and len(found) >= stop_after:
                        return found, scanned, True
            if total > scanned:
                return found, scanned, False
        return found, scanned, True


async def _stored(js: Any, subject: str, count: int) -> AsyncIterator[tuple[int, str, bytes]]:
    if count <= 0:
        return
    sub = await js.subscribe(subject, stream=EVENTS_STREAM, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL)
    try:
        for _ in range(count):
            try:
                msg = await sub.next_msg(timeout=SCAN_IDLE_S)
            except nats.errors.TimeoutError:
                return
            yield msg.metadata.sequence.stream, msg.subject, msg.data
            if msg.metadata.num_pending == 0:
                return
    finally:
        with contextlib.suppress(Exception):
            await sub.unsubscribe()


def _said(event: Event) -> str:
    if isinstance(event, MessageEvent | NoteEvent):
        return event.content
    if isinstance(event, FeedbackEvent):
        return f"{event.kind} {event.target or ''} {msgspec.json.encode(event.value).decode()}".strip()
    fields = {k: v for k, v in msgspec.structs.asdict(event).items() if k not in ("id", "agent", "session", "ts")}
    return msgspec.json.encode(fields).decode()


def source_event(envelope: Envelope) -> SourceEvent:
    event = envelope.event
    text = _said(event)
    who = (event.sender or event.role) if isinstance(event, MessageEvent) else \
        event.actor if isinstance(event, FeedbackEvent) else ""
    return SourceEvent(seq=envelope.seq, id=event.id, kind=f"{envelope.family}.{envelope.kind or ''}".rstrip("."),
                       ts=event.ts, who=who or "",
                       text=text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…",
                       session=str(msgspec.structs.asdict(event).get("session") or ""))


def by_event_id(ids: Sequence[str]) -> Callable[[Envelope], bool]:
    wanted = set(ids)
    return lambda envelope: envelope.event.id in wanted


def by_time(at: datetime) -> Callable[[Envelope], bool]:
    """The messages said at ``at``: a knowledge fact's source (its ``createdAt`` is the time of
    the message it was extracted from; the fact keeps no event id)."""
    return lambda envelope: isinstance(envelope.event, MessageEvent) and envelope.event.ts == at


def either(*predicates: Callable[[Envelope], bool]) -> Callable[[Envelope], bool]:
    return lambda envelope: any(p(envelope) for p in predicates)


def by_derived_id(kind: str, item_id: str, at: datetime | None) -> Callable[[Envelope], bool]:
    """The message an item of ``kind`` (thread, decision) was made from: its id is
    ``derive_id(<event id>, kind, index)`` (``unique_id`` a publisher's reused event id aside),
    so the message is found exactly, not guessed; ``at`` (the item's time, the message's)
    skips every other message without hashing."""
    def wanted(envelope: Envelope) -> bool:
        event = envelope.event
        if not isinstance(event, MessageEvent) or (at is not None and event.ts != at):
            return False
        return any(derive_id(event.id, kind, i) == item_id for i in range(DERIVED_PER_EVENT))

    return wanted
