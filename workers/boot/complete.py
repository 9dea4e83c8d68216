"""Completing BOOTSTRAP documents made while a source lagged.

A document for the trigger at sequence S waits at most ``CORTEX_BOOT_WAIT_MS`` for its
sources; one still behind then (the recall worker embedding a backlog, say) is named in
``lagging`` and in a visible line. The document does not stay like that until the agent's
next trigger: once every lagging source has applied the events before S, it is assembled
again *as of S* — the sources that had caught up as they were read at the bound, the
lagging ones as of S now — and written over the stored one with compare-and-set, the
workspace file following. Trigger, session, ``generated_at`` (the trigger's event time)
and ``integrity`` (watermark S, the same event count) stay as they were: it is the
document an unhurried pipeline would have made, so a whole-pipeline replay reproduces it
byte for byte. ``lagging`` left in a stored document then means a source is stuck.

* **Racing the agent's next trigger.** A newer document (stored, or made and not yet
  written by the consume loop) supersedes the completion, which is dropped. A completion
  written first becomes the base the next document is stamped on — the same watermark
  and count, so exactly as if nothing had lagged (the consume loop's write conflicts and
  rebases onto it when its cache did not take it, ``ProjectionHandler.adopt``).
* **Restarts.** An outstanding completion is a stored document naming a lagging source,
  nothing more: a starting boot worker finds those of its partition's agents in its bucket
  and completes them, the trigger read back from the stream by its sequence
  (``integrity.last_seq``) and every source re-read as of it.
* **Memory.** One entry per agent (a newer document replaces it), at most
  ``MAX_OUTSTANDING``; the documents read at the bound are held by the newest ``MAX_HELD``
  entries, older ones re-read every source when they complete (within the sources'
  history, ``shared.asof``).
* **Metrics.** ``cortex_boot_completed_total{source}`` counts completions;
  ``cortex_boot_lagging_total{source}`` counts documents whose source was stuck — still
  behind ``STUCK_AFTER_S`` after the document was made, or given up beyond
  ``MAX_OUTSTANDING`` (wall-clock time: metrics only, never in a document);
  ``cortex_boot_completions_outstanding`` is the number waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

import msgspec
import nats.js.errors
from nats.js.kv import KeyValue
from prometheus_client import Counter, Gauge

from schemas.docs import BootDoc
from shared.codec import Envelope, Rejection, decode_event
from shared.inputs import Reading
from shared.kv import kv_cas, kv_keys, kv_read
from shared.names import BUCKET_BOOT, EVENTS_STREAM, partition_of
from shared.runtime import WorkerContext, loop_config
from shared.tasks import cancel_and_wait
from shared.watermarks import WatermarkTracker
from workers.boot.assemble import assemble_boot
from workers.boot.sources import BootSources

log = logging.getLogger(__name__)

BOOT_COMPLETED = Counter("cortex_boot_completed_total",
                         "BOOTSTRAP documents completed as of their trigger once a source that lagged at the wait "
                         "bound caught up", ["source"])
BOOT_LAGGING = Counter("cortex_boot_lagging_total",
                       "BOOTSTRAP documents whose source was stuck: still behind its trigger "
                       "STUCK_AFTER_S (60 s) after the document was made", ["source"])
BOOT_OUTSTANDING = Gauge("cortex_boot_completions_outstanding",
                         "BOOTSTRAP documents waiting for a lagging source to catch up", ["consumer"])

STUCK_AFTER_S = 60.0
MAX_OUTSTANDING = 10_000
MAX_HELD = 256
POLL_S = 1.0  # how often consumers without a moving checkpoint are looked at (drained?)
PARALLEL = 8  # completions written at once


@dataclass
class Outstanding:
    agent: str
    seq: int  # the trigger's stream sequence: the stored document's integrity.last_seq
    lagging: list[str]  # source workers, as in BootDoc.lagging
    env: Envelope | None  # None after a restart: read back from the stream
    docs: dict[str, Any] | None  # what was read at the bound; None: every source is re-read
    since: float  # when the first document of the agent that still lags was made (monotonic)
    counted: bool = False  # counted as stuck


def _decode_doc(raw: bytes | None) -> BootDoc | None:
    if raw is None:
        return None
    try:
        return msgspec.json.decode(raw, type=BootDoc)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None  # not a document this worker can complete; the next trigger replaces it


class Completer:
    """The boot worker's outstanding completions (see the module docstring).

    ``newest(agent)`` is the watermark of the consume loop's document for the agent (its
    uncommitted change included); ``written(agent, doc, revision_before, revision, reading)`` is
    awaited after each completion is stored (``reading``: the sources it was made from)."""

    def __init__(self, ctx: WorkerContext, tracker: WatermarkTracker, sources: BootSources,
                 newest: Callable[[str], int],
                 written: Callable[[str, BootDoc, int, int, Reading], Awaitable[None]]) -> None:
        self._ctx = ctx
        self._tracker = tracker
        self._sources = sources
        self._newest = newest
        self._written = written
        self._tz = ZoneInfo(ctx.settings.timezone)
        self._entries: dict[str, Outstanding] = {}  # agent → entry, oldest registration first
        self._consumers: dict[str, dict[str, str]] = {}  # agent → source worker → consumer (``_consumer_of``)
        self._kick = asyncio.Event()
        # what the last tick looked at: the lagging consumers' checkpoints then, and when (``tick``)
        self._looked: dict[str, int] | None = None
        self._looked_at = 0.0
        self._task: asyncio.Task[None] | None = None
        self._gauge = BOOT_OUTSTANDING.labels(ctx.consumer)
        self._kv: KeyValue | None = None  # the BootDoc bucket's handle (``_bucket``)
        self._kv_made = asyncio.Lock()

    # ------------------------------------------------------------------ the consume loop's side

    def register(self, agent: str, doc: BootDoc, reading: Reading | None) -> None:
        """The consume loop stored ``doc`` for ``agent``: completed later when it lags."""
        before = self._entries.pop(agent, None)
        if not doc.lagging:
            self._update_gauge()
            return
        usable = reading is not None and reading.env.seq == doc.integrity.last_seq
        entry = Outstanding(agent=agent, seq=doc.integrity.last_seq, lagging=list(doc.lagging),
                            env=reading.env if usable and reading else None,
                            docs=dict(reading.docs) if usable and reading else None,
                            since=before.since if before is not None else time.monotonic(),
                            counted=before.counted if before is not None else False)
        self._add(entry)
        self._kick.set()

    def _add(self, entry: Outstanding) -> None:
        self._entries[entry.agent] = entry
        self._looked = None  # a new entry: the next tick looks at everything
        held = [e for e in self._entries.values() if e.docs is not None]
        for old in held[:max(0, len(held) - MAX_HELD)]:
            old.docs = None  # re-read when it completes
        while len(self._entries) > MAX_OUTSTANDING:
            dropped = self._entries.pop(next(iter(self._entries)))
            self._count_stuck(dropped)
            log.warning("boot_completion_dropped", extra={"agent": dropped.agent, "seq": dropped.seq})
        self._update_gauge()

    @property
    def outstanding(self) -> int:
        return len(self._entries)

    def _update_gauge(self) -> None:
        self._gauge.set(len(self._entries))

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"{self._ctx.consumer}-complete")

    async def stop(self) -> None:
        if self._task is not None:
            with contextlib.suppress(Exception):  # a test's teardown waited 120 s on it: see shared.tasks
                await cancel_and_wait(self._task)
        self._entries.clear()
        self._update_gauge()

    async def _run(self) -> None:
        await self._recover()
        while True:
            await self._wake()
            try:
                await self.tick()
            except Exception as exc:  # a store hiccup: everything is still outstanding, next tick tries again
                log.warning("boot_completion_failed", extra={"error": repr(exc)[:300]})

    async def _wake(self) -> None:
        """Until a checkpoint moves (while something is outstanding), a registration, or ``POLL_S``."""
        events = [self._kick] + ([self._tracker.changed()] if self._entries else [])
        waits = [asyncio.ensure_future(e.wait()) for e in events]
        try:
            await asyncio.wait(waits, timeout=POLL_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        self._kick.clear()

    async def _recover(self) -> None:
        """The stored documents of this partition's agents that still name a lagging source."""
        failures = 0
        while True:
            try:
                await self._scan()
                return
            except nats.js.errors.BucketNotFoundError:
                return  # no documents at all: nothing to complete
            except Exception as exc:  # the store unreachable, a timeout: tried again, nothing is lost
                failures += 1
                log.warning("boot_completion_scan_failed", extra={"error": repr(exc)[:300], "failures": failures})
                await asyncio.sleep(min(30.0, 0.5 * 2 ** min(failures, 6)))

    async def _scan(self) -> None:
        ctx = self._ctx
        bucket = ctx.bucket(BUCKET_BOOT)
        kv = await ctx.js.key_value(bucket)
        for agent in await kv_keys(ctx.js, bucket):
            if ctx.partition is not None and partition_of(agent, ctx.settings.partitions) != ctx.partition:
                continue
            if agent in self._entries or len(self._entries) >= MAX_OUTSTANDING:
                continue
            doc = _decode_doc((await kv_read(kv, agent))[0])
            if doc is not None and doc.lagging and agent not in self._entries:
                self._add(Outstanding(agent=agent, seq=doc.integrity.last_seq, lagging=list(doc.lagging),
                                      env=None, docs=None, since=time.monotonic()))
        if self._entries:
            log.info("boot_completions_recovered", extra={"outstanding": len(self._entries)})

    # ------------------------------------------------------------------ completing

    async def tick(self) -> None:
        """Complete every entry whose lagging sources have caught up; count the stuck ones.

        A tick runs at every checkpoint move while anything is outstanding (tens to hundreds a
        second under load), and above capacity every session start is outstanding for seconds:
        each source consumer the entries wait for is looked at once a tick (``lagging_now`` with
        the furthest trigger any entry needs of it), not once an entry. A consumer is behind an
        entry's trigger while its checkpoint is short of it and it has something left to apply
        (not drained) — the same answer ``lagging_now`` gives entry by entry. A tick that finds
        none of those consumers moved since the last one (woken by another consumer: a latency
        worker's commits) and less than ``POLL_S`` after it, and no entry registered since, looks
        no further: ``lagging_now`` would have answered from its cache (``cache_s=POLL_S``) alike."""
        now = time.monotonic()
        if self._unchanged(now):
            return  # woken by another consumer's move: nothing an entry waits for has changed
        due = await self._due(now)
        for start in range(0, len(due), PARALLEL):
            chunk = due[start:start + PARALLEL]
            results = await asyncio.gather(*(self._complete(e) for e in chunk), return_exceptions=True)
            for entry, result in zip(chunk, results, strict=True):
                if isinstance(result, Exception):  # a store hiccup: still outstanding, the next tick tries again
                    log.warning("boot_completion_failed", extra={"agent": entry.agent, "error": repr(result)[:300]})
        if any(self._entries.get(e.agent) is e for e in due):
            self._looked = None  # one due is still outstanding (tried again, or another source behind now)
        self._update_gauge()

    def _unchanged(self, now: float) -> bool:
        """Nothing the last tick looked at has moved, it was less than ``POLL_S`` ago, and no
        entry came since."""
        looked = self._looked
        return looked is not None and now - self._looked_at < POLL_S \
            and all(self._tracker.checkpoint(c) == seq for c, seq in looked.items())

    async def _due(self, now: float) -> list[Outstanding]:
        """The entries whose lagging sources have all reached their triggers (the stuck ones counted)."""
        due = []
        wanted: list[tuple[Outstanding, dict[str, int]]] = []
        furthest: dict[str, int] = {}
        for entry in list(self._entries.values()):
            consumer_of = self._consumer_of(entry.agent)
            needs = {consumer_of[w]: entry.seq for w in entry.lagging if w in consumer_of}
            wanted.append((entry, needs))
            for consumer, seq in needs.items():
                furthest[consumer] = max(seq, furthest.get(consumer, 0))
        self._tracker.follow(furthest)
        self._looked = {c: self._tracker.checkpoint(c) for c in furthest}  # before looking: a move after it is seen
        self._looked_at = now
        behind = set()  # consumers short of some entry's trigger with something left to apply
        for consumer, seq in furthest.items():
            if await self._tracker.lagging_now({consumer: seq}, cache_s=POLL_S):
                behind.add(consumer)
        for entry, needs in wanted:
            if all(c not in behind or self._tracker.checkpoint(c) >= seq for c, seq in needs.items()):
                due.append(entry)
            elif not entry.counted and now - entry.since >= STUCK_AFTER_S:
                self._count_stuck(entry)
        return due

    def _consumer_of(self, agent: str) -> dict[str, str]:
        """The agent's source worker → its consumer (its partition's), kept: a tick asks it of
        every outstanding entry, and it never changes while the process runs."""
        found = self._consumers.get(agent)
        if found is None:
            if len(self._consumers) >= 2 * MAX_OUTSTANDING:
                self._consumers.clear()
            found = self._consumers[agent] = {w: c for c, w in self._sources.consumers(agent).items()}
        return found

    def _count_stuck(self, entry: Outstanding) -> None:
        if not entry.counted:
            entry.counted = True
            for source in entry.lagging:
                BOOT_LAGGING.labels(source).inc()

    def _drop(self, entry: Outstanding) -> None:
        if self._entries.get(entry.agent) is entry:
            del self._entries[entry.agent]

    async def _bucket(self) -> KeyValue:
        """The BootDoc bucket's handle, made once (``js.key_value`` is a stream-info request)."""
        async with self._kv_made:  # the triggers (completions) read at once ask once
            if self._kv is None:
                self._kv = await self._ctx.js.key_value(self._ctx.bucket(BUCKET_BOOT))
        return self._kv

    async def _complete(self, entry: Outstanding) -> None:
        agent = entry.agent
        if self._newest(agent) > entry.seq:
            self._drop(entry)  # the consume loop made a newer document: it replaces this one
            return
        kv = await self._bucket()
        raw, revision = await kv_read(kv, agent)
        stored = _decode_doc(raw)
        if stored is None or stored.integrity.last_seq != entry.seq or not stored.lagging:
            self._drop(entry)  # replaced, completed, forgotten or unreadable
            return
        env = entry.env or await self._trigger(entry.seq)
        if env is None:
            self._drop(entry)
            return
        doc, docs = await self._assemble(entry, env, stored)
        if doc.lagging == stored.lagging and doc.markdown == stored.markdown:
            return  # a source fell behind again before it was read: the next tick tries again
        if self._newest(agent) > entry.seq:
            self._drop(entry)
            return
        try:
            written = await kv_cas(kv, agent, msgspec.json.encode(doc), revision)
        except nats.js.errors.KeyWrongLastSequenceError:
            return  # someone wrote meanwhile: the next tick reads what is there now
        for source in sorted(set(stored.lagging) - set(doc.lagging)):
            BOOT_COMPLETED.labels(source).inc()
        log.info("boot_completed", extra={"agent": agent, "seq": entry.seq, "sources": stored.lagging})
        if self._entries.get(agent) is entry:
            if doc.lagging:  # another source is behind now: completed again when it catches up
                entry.lagging, entry.docs = list(doc.lagging), docs
            else:
                del self._entries[agent]
        await self._written(agent, doc, revision, written, Reading(env, docs, list(doc.lagging)))

    async def _assemble(self, entry: Outstanding, env: Envelope, stored: BootDoc) -> tuple[BootDoc, dict[str, Any]]:
        """The document as of the trigger: the held sources as they were read at the bound,
        the lagging ones (or, with nothing held, all) read as of the trigger now."""
        if entry.docs is not None:
            fresh = await self._sources.at_trigger(env, self._sources.fields_of(stored.lagging))
            docs = {**entry.docs, **fresh.docs}
        else:
            fresh = await self._sources.at_trigger(env)
            docs = dict(fresh.docs)
        inputs = self._sources.inputs(Reading(env, docs, fresh.lagging))
        markdown = assemble_boot(self._sources.sections, inputs, self._ctx.settings.boot, self._tz,
                                 knobs=self._sources.knobs)
        integrity = msgspec.structs.replace(stored.integrity, producer=self._ctx.producer)
        doc = msgspec.structs.replace(stored, generated_at=inputs.now, chars=len(markdown), markdown=markdown,
                                      lagging=inputs.lagging, integrity=integrity)
        return doc, docs

    async def _trigger(self, seq: int) -> Envelope | None:
        """The trigger event, read back from the stream (after a restart)."""
        try:
            msg = await self._ctx.js.get_msg(EVENTS_STREAM, seq)
        except nats.js.errors.NotFoundError:
            return None  # gone (retention, forget): nothing to complete it as of
        settings = self._ctx.settings
        assert msg.subject is not None and msg.data is not None
        decoded = decode_event(settings.prefix, msg.subject, seq, msg.data, loop_config(settings).limits)
        return None if isinstance(decoded, Rejection) else decoded
