"""The boot worker: BOOTSTRAP documents on session start, at the end of the compaction
pipeline and on request.

Consistency: a BootDoc made for the event at stream sequence S reflects every event of
the agent before S. The worker waits (bounded, ``CORTEX_BOOT_WAIT_MS``) until each source
worker has applied everything before S (``shared.watermarks``), then reads each source
document *as of S* (``shared.asof``, ``workers.boot.sources``); a source still behind at
the bound is named in ``lagging`` and in a visible line — until it catches up: the
document is then completed as of the same trigger (``workers.boot.complete``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import msgspec
from prometheus_client import Gauge, Histogram

from schemas.api import BootRequest
from schemas.docs import BootDoc, Integrity
from schemas.events import FeedbackEvent
from shared.codec import Envelope
from shared.feedback import publish_ids
from shared.forget import is_agent_forget
from shared.inputs import Reading
from shared.names import BUCKET_BOOT, feedback_subject
from shared.projection import Projection, ProjectionHandler, boundary
from shared.runtime import WorkerContext, WorkerSpec
from shared.service import ApiError, serve_worker
from shared.tasks import cancel_and_wait
from shared.watermarks import WatermarkTracker
from workers.boot.assemble import assemble_boot
from workers.boot.complete import Completer
from workers.boot.early import OFF, EarlyTriggers, Stages, stages
from workers.boot.inputs import BootInputs
from workers.boot.sources import BootSources
from workers.boot.throttle import Made, change_due

__all__ = ["SPEC", "BootHandler", "build", "serve"]

log = logging.getLogger(__name__)

BOOT_CHARS = Histogram("cortex_boot_chars", "Size of BOOTSTRAP documents written", ["trigger"],
                       buckets=(500, 1000, 2000, 4000, 8000, 16000, 32000, 64000))
BOOT_GENERATED = Gauge("cortex_boot_generated_timestamp_seconds",
                       "Wall-clock time the last BOOTSTRAP document was written (for staleness alerts)")


# Briefings the agent is given (a session's start, a compaction): the results they show are seen.
ACKNOWLEDGING = frozenset({"session_start", "compaction"})


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


def session_of(env: Envelope, doc: BootDoc | None) -> str | None:
    """The session a document names: its trigger's (an event with a session, "" included),
    else the agent's previous document's (feedback has none) — None until the agent has one."""
    session: str | None = getattr(env.event, "session", None)
    if session is None and doc is not None:
        session = doc.session
    return session


def boot_doc(inputs: BootInputs, markdown: str, trigger: str, session: str | None) -> BootDoc:
    return BootDoc(agent=inputs.agent, session=session, generated_at=inputs.now, trigger=trigger,  # type: ignore[arg-type]
                   chars=len(markdown), markdown=markdown, lagging=inputs.lagging, integrity=Integrity())


async def _no_end(env: Envelope) -> float | None:
    return None


class BootProjection(Projection[BootDoc, Reading]):
    bucket = BUCKET_BOOT
    doc_type = BootDoc

    def __init__(self, ctx: WorkerContext, sources: BootSources) -> None:
        self._ctx = ctx
        self._sources = sources
        self._tz = ZoneInfo(ctx.settings.timezone)
        self.readings: dict[str, Reading] = {}  # agent → the last sources read (until on_committed)
        # the reading of a trigger ``workers.boot.early`` began (None: none), taken once
        self.early: Callable[[int, bool], asyncio.Task[Reading] | None] = lambda seq, budgeted: None
        # where the loop's own reading of a trigger stops waiting (``EarlyTriggers.loop_until``)
        self.until: Callable[[Envelope], Awaitable[float | None]] = _no_end
        # the loop's own budgeted reading of a trigger, handed to the early path (``EarlyTriggers.share``)
        self.share: Callable[[int, asyncio.Task[Reading]], None] = lambda seq, reading: None
        self.traces: dict[int, Stages] = {}  # trigger seq → its stages (DEBUG only: ``trigger_stages``)

    def accepts(self, env: Envelope) -> bool:
        boot = self._ctx.settings.boot
        if not boot.enabled:
            return False
        if (env.family, env.kind) == ("session", "start"):
            return boot.on_session_start
        if is_session_end(env):
            return True
        return (env.family, env.kind) == ("compaction", "before") or is_change(env)

    async def prepare(self, env: Envelope, doc: BootDoc | None = None) -> Reading:
        """The sources as of a session's start or a compaction, read in stream order (a
        batch's changes are read together at commit: ``prepare_batch``). An agent's first
        briefing (no ``doc``) waits for them to the bound, as before; a later trigger no
        longer than the early path's budget from its storing, when the loop reaches it first
        (``workers.boot.early.loop_until``: the triggers that path writes, on time alike)."""
        return (await self._prepare([env], budgeted=doc is not None))[0]

    async def prepare_batch(self, envs: list[Envelope]) -> list[Reading]:
        """The sources as of each event, waited for and read all at once: one wait bound for
        them all. Each agent's last reading is kept until ``on_committed`` registers it."""
        return await self._prepare(envs, budgeted=False)

    async def _prepare(self, envs: list[Envelope], *, budgeted: bool) -> list[Reading]:
        readings = await asyncio.gather(*(self._reading(env, budgeted) for env in envs))
        for env, reading in zip(envs, readings, strict=True):
            self.readings[env.agent] = reading  # what a completion starts from, should a source lag
        return readings

    async def _reading(self, env: Envelope, budgeted: bool) -> Reading:
        """The sources as of ``env``: the early path's reading when it began one — held for the
        loop, or, ``budgeted``, one still at its stored-document check (``EarlyTriggers.reading``:
        never the sources read twice for one trigger); a failed one is read again here — else
        read now, ``budgeted``: within the early path's budget from the trigger's storing (the
        loop, caught up, often reaches a trigger before that path has begun reading it)."""
        trace = stages(None) if not is_change(env) else OFF
        if trace is not OFF:
            self.traces[env.seq] = trace
        trace.mark("loop_reached")
        taken = await self._taken(env, budgeted)
        if taken is not None:
            trace.mark("loop_took_early")
            return taken
        if not budgeted:
            reading = await self._sources.at_trigger(env, until=None)
        else:
            until = await self.until(env)
            taken = await self._taken(env, budgeted)  # the early path may have begun it meanwhile
            if taken is not None:
                trace.mark("loop_took_early")
                return taken
            own = asyncio.create_task(self._sources.at_trigger(env, until=until))
            self.share(env.seq, own)  # the early path takes it if it has not begun its own
            reading = await own
        trace.mark("loop_read")
        return reading

    async def _taken(self, env: Envelope, budgeted: bool) -> Reading | None:
        """The early path's reading of ``env`` (``EarlyTriggers.reading``), None when it has none
        (or it failed: read here)."""
        early = self.early(env.seq, budgeted)
        if early is None:
            return None
        await asyncio.wait([early])
        if early.cancelled() or early.exception() is not None:
            return None
        return early.result()

    def counts(self, env: Envelope) -> bool:
        """Change documents are coalesced per batch, so they are not counted: the count
        must not depend on how a replay happens to batch the stream."""
        return not is_change(env)

    def compose(self, doc: BootDoc | None, env: Envelope, inputs: Reading) -> BootDoc:
        boot_inputs = self._sources.inputs(inputs)
        markdown = assemble_boot(self._sources.sections, boot_inputs, self._ctx.settings.boot, self._tz,
                                 knobs=self._sources.knobs)
        return boot_doc(boot_inputs, markdown, trigger_of(env), session_of(env, doc))


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


def is_subagent_session(session: str) -> bool:
    """An OpenClaw sub-agent's session (``agent:forge:subagent:<uuid>``, what ``sessions_spawn``
    starts): its start briefs the sub-agent, not the agent that waits for the results, so it
    acknowledges none — a result told there was marked seen and never reached the parent."""
    return ":subagent:" in session


class BootHandler(ProjectionHandler):
    """Adds the workspace sink (``<CORTEX_WORKSPACE>/<agent>/BOOTSTRAP.md`` after each
    commit) and the change throttle.

    Session start, compaction and session end always make a document, each as of its
    own event (the sources cut there). A message or feedback (a "change") makes one only
    when the throttle says it is due (``workers.boot.throttle``: a stream cut between it
    and the agent's last document, and ``boot.change_interval_ms`` of event time); the
    document shows the sources as they were at that cut — the sources write a revision of
    every pending document there, so the state at a cut does not depend on how they
    batched the stream. Due changes are coalesced per batch: only the last one of an agent
    is assembled (the earlier ones would be overwritten at the same commit), their sources
    read together at commit. Between documents ``cortex.api.boot`` assembles a fresh one
    on request.

    A document stored with a lagging source is completed once the source catches up
    (``workers.boot.complete``), in KV and in the workspace file.
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
        self._ctx = ctx
        self._tz = ZoneInfo(ctx.settings.timezone)
        self.completer = Completer(ctx, tracker, sources, self._newest, self._completed)
        self.completer.start()
        self.early = EarlyTriggers(ctx, self._projection, self._read_early, self._early_written)
        self._warming: asyncio.Task[None] | None = None  # ``warm``
        self._projection.early = self.early.reading
        self._projection.until = self.early.loop_until
        self._projection.share = self.early.share

    async def _read_early(self, env: Envelope, *, until: float | None) -> Reading:
        return await self._sources.at_trigger(env, until=until)

    def _newest(self, agent: str) -> int:
        doc: BootDoc | None = self.cached(BUCKET_BOOT, agent)
        return doc.integrity.last_seq if doc is not None else 0

    async def _completed(self, agent: str, doc: BootDoc, revision_before: int, revision: int,
                         reading: Reading) -> None:
        """A completion was stored: the cache takes it, and the workspace file follows —
        unless the consume loop already holds a newer document (it writes that one). What it
        shows is seen as the first document's was (``_acknowledge``): a source behind at first —
        the operations of a throughput worker — shows its unread results only now."""
        self.adopt(BUCKET_BOOT, agent, doc, revision)
        BOOT_GENERATED.set(time.time())
        if self._newest(agent) <= doc.integrity.last_seq:
            self._write_workspace(agent, doc)
        await self._acknowledge(agent, doc, reading, completion=revision)

    async def _early_written(self, agent: str, doc: BootDoc, reading: Reading, revision: int) -> None:
        """A trigger's document stored early (``workers.boot.early``): the cache takes it (the
        loop then skips the trigger and the agent's changes before it), it is completed when a
        source lags, and the workspace and the acknowledgement follow as after a commit."""
        self.adopt(BUCKET_BOOT, agent, doc, revision)
        BOOT_CHARS.labels(doc.trigger).observe(doc.chars)
        BOOT_GENERATED.set(time.time())
        if self._newest(agent) <= doc.integrity.last_seq:
            self.completer.register(agent, doc, reading)
            self._write_workspace(agent, doc)
        await self._acknowledge(agent, doc, reading)

    async def apply(self, env: Envelope) -> bool:
        if is_change(env):
            # throttled by event time, then coalesced: one per agent per batch, made at commit.
            # True when it is due: it makes a document (one a later change or trigger of the
            # same batch may replace before it is written), so the applied count does not
            # depend on how the stream is batched.
            if not self._projection.accepts(env) or not await self._change_due(env):
                return False
            self._changes[env.agent] = env
            return True
        changed = await super().apply(env)
        if changed:
            self._written.add(env.agent)
        return changed

    async def _change_due(self, env: Envelope) -> bool:
        """Whether this change makes a document (``workers.boot.throttle``): a session's end
        always does, unless the stored document holds it already (a redelivery, a replay)."""
        if not is_session_end(env) and boundary(env.seq, self._cut_every) == 0:
            return False  # no cut yet (known without reading the document)
        doc: BootDoc | None = await self.current(BUCKET_BOOT, env.agent)
        if doc is not None and doc.integrity.last_seq >= env.seq:
            return False  # applied before: a redelivery or the replay of a made document
        if is_session_end(env):
            return True
        pending = self._changes.get(env.agent)
        last = None
        if pending is not None and (doc is None or pending.seq > doc.integrity.last_seq):
            last = Made(pending.seq, pending.event.ts)
        elif doc is not None:
            last = Made(doc.integrity.last_seq, doc.generated_at)
        return change_due(env.seq, env.event.ts, last, self._cut_every, self._interval)

    async def commit(self) -> None:
        """The batch's due changes are made (their sources read together), then written with
        the rest. A failure before they are made (a source unreadable) leaves them pending:
        the loop's retry of ``commit`` makes them."""
        changes = []
        for agent, env in sorted(self._changes.items()):
            doc = await self.current(BUCKET_BOOT, agent)
            if doc is None or doc.integrity.last_seq < env.seq:  # else a later trigger of the batch made one
                changes.append(env)
        readings = await self._projection.prepare_batch(changes)
        for env, reading in zip(changes, readings, strict=True):
            if await self.apply_prepared(self._projection, env, reading):
                self._written.add(env.agent)
        self._changes = {}
        await super().commit()

    async def on_committed(self, seq: int) -> None:
        agents, self._written = sorted(self._written), set()
        readings, self._projection.readings = self._projection.readings, {}
        traces, self._projection.traces = self._projection.traces, {}
        for agent in agents:
            doc = self.cached(BUCKET_BOOT, agent)
            if doc is not None:
                reading = readings.get(agent)
                if reading is not None and reading.env.seq != doc.integrity.last_seq:
                    reading = None  # the stored document is another's (the early path's, rebased onto)
                trace = traces.pop(doc.integrity.last_seq, None)
                if trace is not None and reading is not None:
                    trace.mark("committed")
                    trace.emit(reading.env, "loop", "written")
                BOOT_CHARS.labels(doc.trigger).observe(doc.chars)
                BOOT_GENERATED.set(time.time())
                self.completer.register(agent, doc, reading)
                self._write_workspace(agent, doc)
                await self._acknowledge(agent, doc, reading)

    async def _acknowledge(self, agent: str, doc: BootDoc, reading: Reading | None,
                           completion: int | None = None) -> None:
        """What a briefing given to the agent (at a session's start or a compaction) showed is
        seen (each section's ``Seen`` of the briefings given: the unread operation results it
        showed, so the next briefing does not repeat them). One event per such section; its
        id derives from the briefing's trigger, so a redelivered batch publishes it once (the
        stream's duplicate window); a completion's (``completion``: its revision) is another event,
        so that what only the completed document shows is seen too."""
        if doc.trigger not in ACKNOWLEDGING or reading is None or self._ctx.shadow:
            return
        if is_subagent_session(getattr(reading.env.event, "session", "")):
            return  # a spawned sub-agent's briefing: the results are the parent session's news
        docs = self._sources.inputs(reading).docs  # as the briefing read them
        for section in self._sources.sections:
            seen, shown_doc = section.seen, docs.get(section.bucket)
            if seen is None or not seen.given or not isinstance(shown_doc, section.doc_type):
                continue
            shown = seen.ids(shown_doc, doc.markdown, self._tz)
            if not shown:
                continue
            at = f"{doc.integrity.last_seq}" if completion is None else f"{doc.integrity.last_seq}:c{completion}"
            event = FeedbackEvent(id=f"{seen.tag}:{agent}:{at}", agent=agent,
                                  ts=doc.generated_at, kind=seen.kind, value=shown, actor="boot")
            subject = feedback_subject(self._ctx.settings.prefix, agent, event.kind)
            await self._ctx.js.publish(subject, msgspec.json.encode(event), headers={"Nats-Msg-Id": event.id})

    def _write_workspace(self, agent: str, doc: BootDoc) -> None:
        if self._workspace is None:
            return
        try:  # agent ids are validated tokens: never a path from an event
            write_atomically(self._workspace / agent / "BOOTSTRAP.md", doc.markdown)
        except OSError as exc:
            if not self._warned:
                log.warning("workspace_not_writable", extra={"path": str(self._workspace), "error": str(exc)})
                self._warned = True

    def reset(self) -> None:
        super().reset()
        self._written.clear()
        self._changes.clear()
        self._projection.readings.clear()
        self._projection.traces.clear()
        self.early.reset()  # documents made again from further back: its triggers wait for them

    def warm(self) -> None:
        """The as-of reads' derivation made ready off the event loop now, not at the first
        source read past its history, in the middle of briefings (``Derivation.warm``)."""
        self._warming = asyncio.create_task(self._ctx.inputs.docs.warm(), name="boot-warm")

    async def aclose(self) -> None:
        if self._warming is not None:
            with contextlib.suppress(Exception):
                await cancel_and_wait(self._warming)
        await self.early.stop()
        await self.completer.stop()
        await self._ctx.aclose()


async def build(ctx: WorkerContext) -> ProjectionHandler:
    handler = BootHandler(ctx, await ctx.inputs.tracker(), BootSources(ctx))
    if ctx.settings.boot.enabled:
        handler.early.start()  # triggers briefed ahead of the loop (``workers.boot.early``)
        handler.warm()
    return handler


async def serve(ctx: WorkerContext, stop: asyncio.Event) -> None:
    """``cortex.api.boot.<agent>``: a fresh assembly from the documents as they are now. A
    request without ``session`` names the agent's latest session: the one of the document
    the worker last stored for it (what the stream says, so a replay names the same one);
    null only while the agent has had none."""
    sources = BootSources(ctx)
    tz = ZoneInfo(ctx.settings.timezone)

    async def latest_session(agent: str, req: BootRequest) -> str | None:
        if req.session is not None:
            return req.session
        stored = await ctx.inputs.docs.latest(ctx.bucket(BUCKET_BOOT), agent, BootDoc)
        return stored.session if stored is not None else None

    async def handle(agent: str, req: BootRequest) -> BootDoc:
        if req.max_chars is not None and not 2000 <= req.max_chars <= 64000:
            raise ApiError(400, "max_chars must be between 2000 and 64000")
        inputs, session = await asyncio.gather(sources.now(agent), latest_session(agent, req))
        if req.person is not None:  # a briefing for one of the people the agent talks with
            inputs = inputs.for_person(req.person)
        markdown = assemble_boot(sources.sections, inputs, ctx.settings.boot, tz, req.max_chars, sources.knobs)
        await asked_seen(inputs, markdown)
        return boot_doc(inputs, markdown, "request", session)

    async def asked_seen(inputs: BootInputs, markdown: str) -> None:
        """What a briefing asked for shows is seen (each section's ``Seen`` of the briefings
        asked for: the facts it shows are accessed, and knowledge promotes them)."""
        for section in sources.sections:
            seen, doc = section.seen, inputs.docs.get(section.bucket)
            if seen is not None and not seen.given and isinstance(doc, section.doc_type):
                stamp = seen.stamp(doc) if seen.stamp is not None else inputs.now
                await publish_ids(ctx.js, ctx.settings.prefix, inputs.agent, seen.kind,
                                  seen.ids(doc, markdown, tz), stamp, "boot-api")

    ctx.health.set_ready(True, "serving")
    try:
        await serve_worker(ctx, [("boot", BootRequest, handle)], stop)
    finally:
        await ctx.aclose()


# the boot API is served by every replica (a queue group); fact_access feedback for the facts a
# briefing shows, operation_seen for the operation results it shows (the sections' ``Seen``); its
# sources: the document of every section a worker declares (``WorkerSpec.briefing``: the
# registry adds them)
SPEC = WorkerSpec(name="boot", families=("msg", "feedback", "session", "compaction"), build=build, serve=serve,
                  config_sections=("boot",), buckets=(BUCKET_BOOT,), serves=("boot",),
                  feedback=("fact_access", "operation_seen"), reads_briefings=True)

