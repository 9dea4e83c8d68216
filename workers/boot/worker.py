"""The boot worker: BOOTSTRAP documents on session start, at the end of the compaction
pipeline and on request.

Consistency: a BootDoc made for the event at stream sequence S reflects every event of
the agent before S. The worker waits (bounded, ``CORTEX_BOOT_WAIT_MS``) until each source
worker has applied everything before S (``shared.watermarks``), then reads each source
document *as of S* (``shared.asof``); a source still behind at the bound is named in
``lagging`` and in a visible line of the document.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from prometheus_client import Counter, Gauge, Histogram

from schemas.api import BootRequest
from schemas.docs import (
    BootDoc,
    ChannelsDoc,
    CommitmentsDoc,
    DecisionsDoc,
    Integrity,
    KnowledgeDoc,
    NarrativeDoc,
    RecallDoc,
    SnapshotDoc,
    ThreadsDoc,
)
from shared.asof import DocReader
from shared.codec import Envelope
from shared.composed import source_consumer, wait_bound_s
from shared.forget import is_agent_forget
from shared.names import (
    BUCKET_BOOT,
    BUCKET_CHANNELS,
    BUCKET_COMMITMENTS,
    BUCKET_DECISIONS,
    BUCKET_KNOWLEDGE,
    BUCKET_NARRATIVES,
    BUCKET_RECALL,
    BUCKET_SNAPSHOTS,
    BUCKET_THREADS,
)
from shared.projection import ProjectionHandler, boundary
from shared.runtime import WorkerContext, WorkerSpec
from shared.service import ApiError, serve_endpoints
from shared.watermarks import WatermarkTracker
from workers.boot.assemble import assemble_boot
from workers.boot.inputs import BootInputs

log = logging.getLogger(__name__)

BOOT_CHARS = Histogram("cortex_boot_chars", "Size of BOOTSTRAP documents written", ["trigger"],
                       buckets=(500, 1000, 2000, 4000, 8000, 16000, 32000, 64000))
BOOT_GENERATED = Gauge("cortex_boot_generated_timestamp_seconds",
                       "Wall-clock time the last BOOTSTRAP document was written (for staleness alerts)")
BOOT_LAGGING = Counter("cortex_boot_lagging_total", "BOOTSTRAP documents written with a lagging source",
                       ["source"])

# (BootInputs field, bucket, document type, worker that owns it)
SOURCES: tuple[tuple[str, str, type[Any], str], ...] = (
    ("threads", BUCKET_THREADS, ThreadsDoc, "threads"),
    ("decisions", BUCKET_DECISIONS, DecisionsDoc, "decisions"),
    ("commitments", BUCKET_COMMITMENTS, CommitmentsDoc, "decisions"),
    ("snapshot", BUCKET_SNAPSHOTS, SnapshotDoc, "snapshot"),
    ("narrative", BUCKET_NARRATIVES, NarrativeDoc, "narrative"),
    ("knowledge", BUCKET_KNOWLEDGE, KnowledgeDoc, "knowledge"),
    ("channels", BUCKET_CHANNELS, ChannelsDoc, "channels"),
    ("recall", BUCKET_RECALL, RecallDoc, "recall"),
)
# Upstream documents made *for* the trigger itself (read as of S + 1 then): the snapshot
# and narrative of a compaction, and the channel summaries of every trigger.
_MADE_FOR_COMPACTION = frozenset({"snapshot", "narrative"})


def made_for_trigger(field: str, env: Envelope) -> bool:
    return field == "channels" or (env.family == "compaction" and field in _MADE_FOR_COMPACTION)


class BootSources:
    """Reads an agent's source documents, as of a sequence or as they are now."""

    def __init__(self, ctx: WorkerContext, tracker: WatermarkTracker, reader: DocReader, workers: set[str]) -> None:
        self._ctx = ctx
        self._tracker = tracker
        self._reader = reader
        self.sources = [s for s in SOURCES if s[3] in workers]

    def consumers(self, agent: str) -> dict[str, str]:
        """The source consumers that apply ``agent``'s events (its partition's) → worker."""
        return {source_consumer(self._ctx, w, agent): w for _, _, _, w in self.sources}

    async def at_trigger(self, env: Envelope) -> BootInputs:
        """Sources as they were just before ``env`` (and the documents made for it, see
        ``made_for_trigger``) — or, for a message or feedback, at the last stream cut.

        Each source is read as soon as *it* has caught up, not when the slowest one has: a
        source that caught up keeps writing while another is waited for, and the as-of
        read must find the wanted revision within the bucket's short history."""
        bound = wait_bound_s(self._ctx)
        change = env.family in ("msg", "feedback")
        consumer_of = {w: c for c, w in self.consumers(env.agent).items()}

        async def read(field: str, bucket: str, doc_type: type[Any], worker: str) -> tuple[Any, list[str]]:
            lagging = await self._tracker.wait({consumer_of[worker]: env.seq}, bound)
            if change:  # the state at the last stream cut (shared.projection.boundary)
                before = boundary(env.seq, self._ctx.settings.runtime.cut_every)
            else:
                before = env.seq + 1 if made_for_trigger(field, env) else env.seq
            doc = (await self._reader.as_of(self._ctx.bucket(bucket), env.agent, doc_type, before))[0]
            return doc, lagging

        found = await asyncio.gather(*(read(*source) for source in self.sources))
        docs = {source[0]: doc for source, (doc, _) in zip(self.sources, found, strict=True)}
        lagging = sorted({c for _, lag in found for c in lag})
        return self._inputs(env.agent, env.event.ts, docs, lagging)

    async def now(self, agent: str) -> BootInputs:
        lagging = await self._tracker.lagging_now({c: 2**62 for c in self.consumers(agent)})
        results = await asyncio.gather(*(self._reader.latest(self._ctx.bucket(b), agent, t)
                                         for _, b, t, _ in self.sources))
        docs = {field: doc for (field, _, _, _), doc in zip(self.sources, results, strict=True)}
        stamps = [d.integrity.last_event_ts for d in docs.values() if d is not None and d.integrity.last_event_ts]
        now = max(stamps) if stamps else datetime(1970, 1, 1, tzinfo=UTC)  # no event yet
        return self._inputs(agent, now, docs, lagging)

    def _inputs(self, agent: str, now: datetime, docs: dict[str, Any], lagging_consumers: list[str]) -> BootInputs:
        names = self.consumers(agent)
        lagging = sorted({names[c] for c in lagging_consumers})
        missing = sorted({w for field, _, _, w in self.sources if docs.get(field) is None})
        stamps = [d.integrity.last_event_ts for d in docs.values() if d is not None and d.integrity.last_event_ts]
        recall = docs.pop("recall", None)
        return BootInputs(agent=agent, now=now, lagging=lagging, missing=missing,
                          last_activity=max(stamps) if stamps else None,
                          key_memories=list(recall.key_memories) if recall is not None else [], **docs)


def is_change(env: Envelope) -> bool:
    """Messages, feedback and a session's end change source documents: a "change" trigger
    (throttled by event time and coalesced per batch, see ``BootHandler``). Not the marker
    of ``cortex forget AGENT``: it follows the purge of every document of the agent, and a
    briefing made of nothing would be a document that no remaining event explains."""
    if is_agent_forget(env.event):
        return False
    return env.family in ("msg", "feedback") or is_session_end(env)


def is_session_end(env: Envelope) -> bool:
    return (env.family, env.kind) == ("session", "end")


def trigger_of(env: Envelope) -> str:
    if is_change(env):
        return "change"
    return "session_start" if env.family == "session" else "compaction"


def boot_doc(inputs: BootInputs, markdown: str, trigger: str, session: str | None) -> BootDoc:
    return BootDoc(agent=inputs.agent, session=session, generated_at=inputs.now, trigger=trigger,  # type: ignore[arg-type]
                   chars=len(markdown), markdown=markdown, lagging=inputs.lagging, integrity=Integrity())


class BootProjection:
    bucket = BUCKET_BOOT
    doc_type = BootDoc

    def __init__(self, ctx: WorkerContext, sources: BootSources) -> None:
        self._ctx = ctx
        self._sources = sources
        self._tz = ZoneInfo(ctx.settings.timezone)
        self.prepared: dict[int, BootInputs] = {}  # stream sequence → inputs read ahead

    def accepts(self, env: Envelope) -> bool:
        boot = self._ctx.settings.boot
        if not boot.enabled:
            return False
        if (env.family, env.kind) == ("session", "start"):
            return boot.on_session_start
        if is_session_end(env):
            return True
        return (env.family, env.kind) == ("compaction", "before") or is_change(env)

    async def prepare(self, env: Envelope, doc: Any = None) -> BootInputs:
        # change documents are read at commit, all of the batch's at once (BootHandler.commit)
        ready = self.prepared.pop(env.seq, None)
        return ready if ready is not None else await self._sources.at_trigger(env)

    def counts(self, env: Envelope) -> bool:
        """Change documents are coalesced per batch, so they are not counted: the count
        must not depend on how a replay happens to batch the stream."""
        return not is_change(env)

    def compose(self, doc: BootDoc | None, env: Envelope, inputs: Any) -> BootDoc:
        markdown = assemble_boot(inputs, self._ctx.settings.boot, self._tz)
        session = getattr(env.event, "session", None) or (doc.session if doc is not None else None)
        return boot_doc(inputs, markdown, trigger_of(env), session)

    def apply(self, doc: BootDoc | None, env: Envelope) -> BootDoc | None:
        raise NotImplementedError("composed projection: prepare + compose")


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".BOOTSTRAP.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class BootHandler(ProjectionHandler):
    """Adds the workspace sink (``<CORTEX_WORKSPACE>/<agent>/BOOTSTRAP.md`` after each
    commit) and the change throttle.

    Session start, compaction and session end always make a document, each as of its
    own event (the sources cut there). A message or feedback (a "change") makes one only
    when a stream cut (every ``runtime.cut_every`` sequences, ``shared.projection.boundary``)
    lies between it and the agent's last document, and it comes at least
    ``boot.change_interval_ms`` of *event* time after that document; the document shows
    the sources as they were at that cut — the sources write a revision of every pending
    document there, so the state at a cut does not depend on how they batched the stream.
    Whether a change is due depends on events only (sequences, ``ts`` and the stored
    document), so any replay, however batched, makes the same documents. Due changes are
    coalesced per batch: only the last one of an agent is assembled (the earlier ones
    would be overwritten at the same commit). Between documents
    ``cortex.api.boot`` assembles a fresh one on request.
    """

    def __init__(self, ctx: WorkerContext, tracker: WatermarkTracker, sources: BootSources) -> None:
        self._projection = BootProjection(ctx, sources)
        super().__init__(ctx.js, ctx.worker, ctx.producer, [self._projection],
                         bucket_names={BUCKET_BOOT: ctx.bucket(BUCKET_BOOT)})
        self._tracker = tracker
        self._workspace = Path(ctx.settings.workspace) if ctx.settings.workspace and not ctx.shadow else None
        self._written: set[str] = set()
        self._sources = sources
        self._changes: dict[str, Envelope] = {}
        interval_ms = ctx.settings.boot.change_interval_ms
        self._cut_every = ctx.settings.runtime.cut_every
        self._interval = timedelta(milliseconds=interval_ms) if interval_ms else None
        self._warned = False

    async def apply(self, env: Envelope) -> bool:
        if is_change(env):
            # throttled by event time, then coalesced: one per agent per batch, made at commit
            if await self._change_due(env):
                self._changes[env.agent] = env
            return True
        changed = await super().apply(env)
        if changed:
            self._written.add(env.agent)
        return changed

    async def _change_due(self, env: Envelope) -> bool:
        """Whether this change makes a document. A session's end always does. A message or
        feedback does when a stream cut (``runtime.cut_every``) lies between it and the
        agent's last document (made by an earlier change of this batch, or stored) and it
        comes ``change_interval_ms`` of event time after that document; its document shows
        the sources as they were at that cut. Both depend on events only."""
        if is_session_end(env):
            return True
        every = self._cut_every
        cut = boundary(env.seq, every)
        if cut == 0:
            return False  # no cut yet: nothing to show as of one
        doc: BootDoc | None = await self.current(BUCKET_BOOT, env.agent)
        if doc is not None and doc.integrity.last_seq >= env.seq:
            return False  # applied before: a redelivery or the replay of a made document
        pending = self._changes.get(env.agent)
        if pending is not None and (doc is None or pending.seq > doc.integrity.last_seq):
            last_seq, last_made = pending.seq, pending.event.ts
        elif doc is not None:
            last_seq, last_made = doc.integrity.last_seq, doc.generated_at
        else:
            return True
        if cut <= boundary(last_seq, every):
            return False  # the last document already shows this cut or a later state
        return self._interval is None or env.event.ts - last_made >= self._interval

    async def commit(self) -> None:
        changes, self._changes = self._changes, {}
        for agent, env in list(changes.items()):  # a later trigger of this batch made one already
            doc = await self.current(BUCKET_BOOT, agent)
            if doc is not None and doc.integrity.last_seq >= env.seq:
                del changes[agent]
        # the agents' sources are waited for and read all at once: one bound for the batch
        ready = await asyncio.gather(*(self._sources.at_trigger(env) for env in changes.values()))
        self._projection.prepared = {env.seq: inputs for env, inputs in zip(changes.values(), ready, strict=True)}
        try:
            for agent, env in sorted(changes.items()):
                if await super().apply(env):
                    self._written.add(agent)
        finally:
            self._projection.prepared = {}
        await super().commit()

    async def on_committed(self, seq: int) -> None:
        agents, self._written = sorted(self._written), set()
        for agent in agents:
            doc = self.cached(BUCKET_BOOT, agent)
            if doc is not None:
                BOOT_CHARS.labels(doc.trigger).observe(doc.chars)
                BOOT_GENERATED.set(time.time())
                for source in doc.lagging:
                    BOOT_LAGGING.labels(source).inc()
        if self._workspace is None:
            return
        for agent in agents:  # agent ids are validated tokens: never a path from an event
            doc = self.cached(BUCKET_BOOT, agent)
            if doc is None:
                continue
            try:
                write_atomically(self._workspace / agent / "BOOTSTRAP.md", doc.markdown)
            except OSError as exc:
                if not self._warned:
                    log.warning("workspace_not_writable", extra={"path": str(self._workspace), "error": str(exc)})
                    self._warned = True

    def reset(self) -> None:
        super().reset()
        self._written.clear()
        self._changes.clear()

    async def aclose(self) -> None:
        await self._tracker.stop()


def _known_workers() -> set[str]:
    from workers.registry import all_specs

    return set(all_specs())


async def build(ctx: WorkerContext) -> ProjectionHandler:
    tracker = WatermarkTracker(ctx.js)
    await tracker.start()
    sources = BootSources(ctx, tracker, DocReader(ctx.js), _known_workers())
    return BootHandler(ctx, tracker, sources)


async def serve(ctx: WorkerContext, stop: asyncio.Event) -> None:
    """``cortex.api.boot.<agent>``: a fresh assembly from the documents as they are now."""
    tracker = WatermarkTracker(ctx.js)
    await tracker.start()
    sources = BootSources(ctx, tracker, DocReader(ctx.js), _known_workers())
    tz = ZoneInfo(ctx.settings.timezone)

    async def handle(agent: str, req: BootRequest) -> BootDoc:
        if req.max_chars is not None and not 2000 <= req.max_chars <= 64000:
            raise ApiError(400, "max_chars must be between 2000 and 64000")
        inputs = await sources.now(agent)
        markdown = assemble_boot(inputs, ctx.settings.boot, tz, req.max_chars)
        return boot_doc(inputs, markdown, "request", req.session)

    ctx.health.set_ready(True, "serving")
    try:
        await serve_endpoints(ctx.nc, ctx.settings.prefix, "cortex-boot", "0.1.0",
                              [("boot", BootRequest, handle)], stop)
    finally:
        await tracker.stop()


SPEC = WorkerSpec(name="boot", families=("msg", "feedback", "session", "compaction"), build=build, serve=serve,
                  config_sections=("boot",), buckets=(BUCKET_BOOT,))

