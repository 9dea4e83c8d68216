"""Briefings that do not queue behind messages: session starts and compactions read early.

The boot worker's consume loop applies every event of its agents — each message is a
"change" — in stream order. Above what the machine sustains it falls behind, and a
session start then waited in line behind thousands of messages before its sources were
even looked at (docs/BENCHMARKS.md, issue 39, "No cliff": 10–20 s at 1 000 msg/s, of
which the loop's queue was most). So the worker also reads the *triggers* (session
starts and compactions: the events a briefing is made for) on a consumer of their own —
ephemeral, filtered to those subjects of its partition, never behind by more than a few
triggers — and makes each one's document at once: its sources as of the trigger
(``BootSources.at_trigger``: waited for, the pace rule naming a source that will not
catch up in time lagging), composed on the stored document, written with compare-and-set.
No source is waited for past ``WAIT_BUDGET_S`` after the trigger's storing in the stream
(whatever is left of it when the trigger is read): a slow source is named lagging instead, so
the briefing is on time.
A source still behind is completed later (``workers.boot.complete``), as for any document.
Each trigger is checked against the stored document while its reading begins (one the loop
made already is not read further: its reading is cancelled); at most ``PARALLEL`` are read
at once and ``MAX_TAKEN`` taken, so a worker restarted far behind reads its backlog of
triggers as it goes.

Why this is the document the loop (and a replay) makes:

* **Its inputs.** A briefing for the trigger at S reads each source as of S — never
  boot's own earlier events. The document it is stamped on contributes only the counted
  events (``integrity.events``: the triggers, which this path reads in stream order, every
  one of the agent's) and nothing else (a trigger's session is its own).
* **Exactly once.** The document's watermark decides, as for any writer: this path skips
  a trigger the stored document holds, and the loop skips one this path wrote (its cache
  takes the write, ``ProjectionHandler.adopt``; a stale cache conflicts and rebases onto
  it). The loop's change documents before S that it has not made yet are then skipped
  too — an in-order run writes them and then S's over them: after S, the two agree.
  A trigger's sources are read once, whichever path reaches it first: the loop takes a
  reading this path began (``reading``; for an agent with a document even during the
  stored-document check), and hands this path a reading it began itself (``share``).
* **Only while the process holds the lease.** Each write passes the loop's fence first
  (``WorkerContext.fence``): a deposed instance (its lease taken by a standby or a replay,
  its process paused past the TTL) writes nothing once its fence has closed — a replay that
  has deleted the documents and is making them again from sequence 1 waits out exactly that,
  and a write of this path on a replayed document at R < S would miss the triggers between
  them in its count, and make the replay skip them (docs/operations.md).
* **What it leaves to the loop.** An agent without a stored document (its first
  briefing; an agent just forgotten, whose events and documents ``cortex forget``
  purged: a write here never creates a key), a trigger after one it left or failed, the
  OpenClaw store's triggers (decided in stream order, ``shared.duplicates``: this path
  reads them only to leave the agent's next ones to the loop too, their count), after a
  rebuild of the loop's documents each agent's triggers until the loop has made its
  document past what this path read (``reset``), and
  everything when its consumer cannot be made (the permissions of an older deployment):
  the loop makes those documents as before. Losing this path loses time, never a
  document.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

import msgspec
import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from nats.js import api
from nats.js.kv import KeyValue
from prometheus_client import Histogram

from schemas.docs import BootDoc
from shared.backoff import backoff_delay
from shared.codec import Envelope, Limits, decode_event, event_limits
from shared.errors import LeaseLost
from shared.inputs import Reading
from shared.kv import checkpoint_value, kv_cas, kv_read
from shared.names import (
    BUCKET_BOOT,
    BUCKET_CHECKPOINTS,
    EVENTS_STREAM,
    OPENCLAW_FAMILY,
    OPENCLAW_SESSION_AGENT,
    OPENCLAW_TYPES,
    early_consumer,
    partition_slots,
    slot_of,
)
from shared.projection import Projection, step
from shared.pull import PullFetcher, consumer_seq, fetcher_for, stream_seq
from shared.runtime import WorkerContext, channel_filter
from shared.tasks import cancel_and_wait

log = logging.getLogger(__name__)

EARLY_SECONDS = Histogram(
    "cortex_boot_early_seconds",
    "Session starts and compactions read early (workers.boot.early): wall-clock seconds from the event's "
    "storing in the stream to each stage — delivered (to the trigger consumer), read (its sources waited for "
    "and read as of it), written (its BOOTSTRAP document stored)", ["stage"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0))

TRIGGER_KINDS = (("session", "start"), ("compaction", "before"))
# How long after a trigger's storing its sources are waited for, at most (whatever the bound,
# ``CORTEX_BOOT_WAIT_MS``): a session start is briefed within ~1 s of it above capacity (issue 39),
# and the as-of reads, the composing and the write after the wait took 0.1–0.3 s at p90 there
# (docs/BENCHMARKS.md, issue 39, "Eighth round"). A source still behind then is named lagging and
# completed later (``workers.boot.complete``), as at the bound.
WAIT_BUDGET_S = 0.5
# Within that budget a throughput worker's document (recall, knowledge, narrative, traces, channels,
# snapshot: ``shared.priority``, run second under load) is waited for like a latency worker's only
# while that worker is not busy: at low load it has the session's last few messages left, applies
# them within the budget, and the document is complete. Busy — its checkpoint has moved at least
# ``BUSY_PACE`` stream events a second over the last seconds (``WatermarkTracker.pace``: the
# pipeline under a sustained load), or its consumer has more than ``FEW_LEFT`` messages left to
# apply (the server's count, pending and unacked: a backlog) — the priority classes keep it
# waiting for a core: it is waited for ``THROUGHPUT_BUDGET_S``, then shown as of its last cut,
# named lagging and the document completed when it catches up (``workers.boot.complete``), so a
# session start is read from the latency workers at once (issue 39: capacity 43–50 → 150–175 msg/s
# with a fixed 0.05 s wait, which named recall lagging at low load too: docs/BENCHMARKS.md, "Twelfth
# round"). No budget (a backlog's or a replay's trigger): every source to the bound, as before.
BUSY_PACE = 10.0
FEW_LEFT = 16
THROUGHPUT_BUDGET_S = 0.05
PARALLEL = 16  # triggers read at once (each agent's in stream order)
MAX_TAKEN = 1024  # triggers taken and not done with; the consumer is read no further meanwhile
HELD_READINGS = 512  # readings kept for the loop to take when it reaches their triggers
SHARED_READINGS = 64  # the loop's own readings kept for this path to take (``share``)
FETCH_S = 1.0
INACTIVE_S = 30.0  # the server removes the consumer this long after its worker went away
CONFLICTS = 5  # compare-and-set attempts before a trigger is left to the loop

# (agent, doc, reading, revision): a document this path stored
Written = Callable[[str, BootDoc, Reading, int], Awaitable[None]]


class Read(Protocol):
    """The trigger's sources read as of it, none waited for past ``until`` (``BootSources.at_trigger``)."""

    def __call__(self, env: Envelope, *, until: float | None) -> Coroutine[Any, Any, Reading]: ...


def wait_until(stored_at: float | None, wall_now: float, monotonic_now: float) -> float | None:
    """The ``time.monotonic()`` past which the trigger stored at ``stored_at`` (wall clock, the
    stream's) waits for no source: ``WAIT_BUDGET_S`` after its storing. Its age is taken as
    0 to ``WAIT_BUDGET_S`` whatever the clocks say (a server's clock ahead of this one's waits
    the whole budget, one behind waits none: the document is completed later either way).
    None when the storing time is unknown: the bound alone."""
    if stored_at is None:
        return None
    age = min(max(0.0, wall_now - stored_at), WAIT_BUDGET_S)
    return monotonic_now + WAIT_BUDGET_S - age


def loop_until(stored_at: float | None, wall_now: float, monotonic_now: float) -> float | None:
    """The end of the wait when the consume loop reads a trigger itself (the early path had
    not begun it: the loop, caught up, often reaches a trigger first): ``wait_until``'s, when
    the trigger was stored less than ``WAIT_BUDGET_S`` ago; else None, the bound alone — a
    trigger the loop reaches later is a backlog's or a replay's (which waits to its bound so
    that its documents are the complete ones), as before."""
    if stored_at is None or wall_now - stored_at > WAIT_BUDGET_S:
        return None
    return wait_until(stored_at, wall_now, monotonic_now)


def trigger_filters(prefix: str, partition: int | None, partitions: int) -> list[str]:
    """The stored subjects (``<prefix>.<family>.<slot>.<agent>.<kind>``) of the triggers a
    producer publishes, in the partition's slots, and the OpenClaw store's
    (``<prefix>.openclaw.<slot>.<agent>.<type token>``, and those filed under its session token
    as the loop reads them): the loop decides those in stream order, but a later trigger of
    the agent read here must know of them (``_take``)."""
    slots = ["*"] if partition is None or partitions <= 1 else [str(s) for s in partition_slots(partition, partitions)]
    store = [token for token, mapped in OPENCLAW_TYPES.items() if mapped in TRIGGER_KINDS]
    filters = [f"{prefix}.{family}.{slot}.*.{kind}" for slot in slots for family, kind in TRIGGER_KINDS]
    filters += [f"{prefix}.{OPENCLAW_FAMILY}.{slot}.*.{token}" for slot in slots for token in store]
    shared_slot = str(slot_of(OPENCLAW_SESSION_AGENT))
    if slots != ["*"] and shared_slot not in slots:  # as the loop's (consumer_filter_subjects): any partition's agents
        filters += [f"{prefix}.{OPENCLAW_FAMILY}.{shared_slot}.{OPENCLAW_SESSION_AGENT}.{token}" for token in store]
    return filters


class Stages:
    """One trigger's stages, wall-clock (``time.time()``), for the ``trigger_stages`` line at
    DEBUG (``workers.bench.bootstages`` reads them). ``stages()`` gives one only while DEBUG is
    on; otherwise ``OFF``, whose marks do nothing."""

    __slots__ = ("marks", "stored_at")

    def __init__(self, stored_at: float | None) -> None:
        self.stored_at = stored_at
        self.marks: dict[str, float] = {}

    def mark(self, stage: str) -> None:
        self.marks.setdefault(stage, time.time())

    def emit(self, env: Envelope, path: str, outcome: str) -> None:
        """``<stage>_ms``: milliseconds from ``t0``, the trigger's storing in the stream (or, its
        storing time unknown, the first stage)."""
        origin = self.stored_at if self.stored_at is not None else min(self.marks.values(), default=0.0)
        extra: dict[str, Any] = {"agent": env.agent, "seq": env.seq, "path": path, "outcome": outcome,
                                 "t0": round(origin, 4)}
        extra.update({f"{stage}_ms": round((at - origin) * 1000, 1) for stage, at in self.marks.items()})
        log.debug("trigger_stages", extra=extra)


class _Off(Stages):
    def mark(self, stage: str) -> None:
        pass

    def emit(self, env: Envelope, path: str, outcome: str) -> None:
        pass


OFF: Stages = _Off(None)


def stages(stored_at: float | None) -> Stages:
    """A trigger's stage record when DEBUG is on (``Stages``), else ``OFF``."""
    return Stages(stored_at) if log.isEnabledFor(logging.DEBUG) else OFF


async def watch_loop_lag(every_s: float = 0.02, report_s: float = 1.0) -> None:
    """DEBUG only: how late the event loop runs a callback due every ``every_s`` — a loop busy
    with the consume loop's batches delays every await of the early path by as much. One
    ``loop_lag`` line every ``report_s``: the largest delay and the 90th percentile, ms."""
    lags: list[float] = []
    reported = time.monotonic()
    beat = [reported]
    stop = threading.Event()
    threading.Thread(target=_stall_stacks, args=(threading.get_ident(), beat, stop), daemon=True,
                     name="boot-stall-stacks").start()
    try:
        while True:
            due = time.monotonic() + every_s
            await asyncio.sleep(every_s)
            now = beat[0] = time.monotonic()
            lags.append(max(0.0, now - due))
            if now - reported >= report_s:
                lags.sort()
                log.debug("loop_lag", extra={"max_ms": round(lags[-1] * 1000, 1),
                                             "p90_ms": round(lags[int(0.9 * (len(lags) - 1))] * 1000, 1),
                                             "samples": len(lags), "at": round(time.time(), 3)})
                lags, reported = [], now
    finally:
        stop.set()


def _stall_stacks(loop_thread: int, beat: list[float], stop: threading.Event, stalled_s: float = 0.25) -> None:
    """DEBUG only, on a thread of its own: while the event loop has not ticked for ``stalled_s``,
    the loop thread's innermost frames every 0.1 s (``loop_stalled``): what held it."""
    while not stop.wait(0.1):
        late = time.monotonic() - beat[0]
        frame = sys._current_frames().get(loop_thread)
        if late < stalled_s or frame is None:
            continue
        where = [f"{f.f_code.co_filename.rsplit('/', 3)[-1]}:{line} {f.f_code.co_name}"
                 for f, line in traceback.walk_stack(frame)][:12]
        log.debug("loop_stalled", extra={"late_ms": round(late * 1000), "stack": where})


class _Gap(Exception):
    """A delivery of the trigger consumer went missing: it is made again (``_run``)."""


async def _stored(kv: KeyValue, agent: str) -> tuple[BootDoc | None, int]:
    raw, revision = await kv_read(kv, agent)
    return (msgspec.json.decode(raw, type=BootDoc) if raw is not None else None), revision


def _stored_at(msg: Msg) -> float | None:
    """The wall-clock time the stream stored the message (its metadata), for the metric."""
    with contextlib.suppress(Exception):
        return msg.metadata.timestamp.timestamp()
    return None


class EarlyTriggers:
    """Reads the worker's triggers on their own consumer and writes their documents at once
    (see the module docstring). ``reading(seq)`` hands the loop the reading of a trigger
    this path has begun; ``written`` is told of every document it stored."""

    def __init__(self, ctx: WorkerContext, projection: Projection[BootDoc, Reading],
                 read: Read, written: Written) -> None:
        self._ctx = ctx
        self._projection = projection
        self._read = read
        self._written = written
        self._limits: Limits = event_limits(ctx.settings)
        self._channel_ok = channel_filter(ctx.settings, ctx.shadow)  # the loop's own: an ignored channel briefs nothing
        self._name = early_consumer(ctx.consumer)
        self._task: asyncio.Task[None] | None = None
        self._lag: asyncio.Task[None] | None = None  # DEBUG only: ``watch_loop_lag``
        self._readings: OrderedDict[int, asyncio.Task[Reading]] = OrderedDict()
        self._begun: dict[int, asyncio.Task[Reading]] = {}  # readings at their trigger's check
        self._shared: OrderedDict[int, asyncio.Task[Reading]] = OrderedDict()  # the loop's (``share``)
        self._taken: set[int] = set()  # of those, the ones the loop took (``reading``): not cancelled here
        self._chains: dict[str, asyncio.Task[None]] = {}  # agent → its last trigger's task
        self._left: dict[str, int] = {}  # agent → the last trigger left to the loop (or failed)
        self._slots = asyncio.Semaphore(PARALLEL)
        self._intake = asyncio.Semaphore(MAX_TAKEN)
        self.handled = 0  # triggers taken and done with (written, made already, or left to the loop)
        self._top = 0  # the stream sequence of the last trigger taken
        # after the loop's reset (documents made again from further back: a rebuild), a stored
        # document below this may not hold the agent's triggers the early path did not see
        self._floor = 0
        self._refloor = False  # the floor is raised to just below the next trigger taken
        self._kv: KeyValue | None = None  # the BootDoc bucket's handle (``_bucket``)
        self._kv_made = asyncio.Lock()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self._name)
        if log.isEnabledFor(logging.DEBUG):
            self._lag = asyncio.create_task(watch_loop_lag(), name=f"{self._name}-lag")

    async def stop(self) -> None:
        tasks = [t for t in (self._task, self._lag, *self._chains.values(), *self._readings.values()) if t is not None]
        for task in tasks:
            with contextlib.suppress(Exception):
                await cancel_and_wait(task)
        self._chains.clear()
        self._readings.clear()
        self._begun.clear()
        self._shared.clear()
        self._taken.clear()
        with contextlib.suppress(Exception):
            await self._ctx.js.delete_consumer(EVENTS_STREAM, self._name)

    def reset(self) -> None:
        """The loop starts over from further back (``ProjectionHandler.reset``: a rebuild makes
        every document again from its checkpoint, which it may move back after this path
        opened past it). Until the loop has stored an agent's document past what this path
        has taken — or, its consumer perhaps opened past the old checkpoint, past the next
        trigger it takes — the agent's triggers are the loop's: a stored document may miss the
        ones in between (their count)."""
        self._floor = max(self._floor, self._top)
        self._refloor = True

    def reading(self, seq: int, budgeted: bool = False) -> asyncio.Task[Reading] | None:
        """The reading of the trigger at ``seq`` if this path began it (taken: the loop's): one
        held for the loop (the trigger is this path's) — or, ``budgeted`` (the loop's own reading
        would end within the same budget: the agent has a document), one begun and still at its
        stored-document check, so that the sources are not read a second time beside it."""
        held = self._readings.pop(seq, None)
        if held is not None or not budgeted:
            return held
        begun = self._begun.pop(seq, None)
        if begun is not None:
            self._taken.add(seq)
        return begun

    async def loop_until(self, env: Envelope) -> float | None:
        """Where the loop's own reading of ``env`` stops waiting (``loop_until``): a trigger's
        storing time is the stream's (one direct get, which boot's user may make where the
        stream API's message get is not granted; None, the bound, when it cannot be had)."""
        if (env.family, env.kind) not in TRIGGER_KINDS:
            return None  # a change document reads the last stream cut, as before
        try:
            stored = await self._ctx.js.get_msg(EVENTS_STREAM, env.seq, direct=True)
        except Exception:
            return None
        stored_at = stored.time.timestamp() if stored.time is not None else None
        return loop_until(stored_at, time.time(), time.monotonic())

    # ------------------------------------------------------------------ the consumer

    async def _run(self) -> None:
        """Read the triggers. After any failure — NATS away, the consumer gone, a delivery lost
        on the way, no permission to make it (the loop then makes every document) — the
        consumer is made again past the last trigger taken, never past one it did not see: a
        trigger passed over would be missing from the agent's next document (its count)."""
        failures = 0
        while True:
            fetcher = None
            try:
                fetcher = await self._open()
                failures = 0
                await self._consume(fetcher)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                if failures == 1 or failures % 10 == 0:
                    log.warning("boot_early_unavailable", extra={"consumer": self._name, "failures": failures,
                                                                 "error": repr(exc)[:300]})
                await asyncio.sleep(backoff_delay(failures, 0.5, 30.0))
            finally:
                if fetcher is not None:
                    with contextlib.suppress(Exception):
                        await fetcher.abandon()

    async def _consume(self, fetcher: PullFetcher) -> None:
        """Take what the consumer delivers, in order, until a delivery is missing (raised)."""
        expected = 1
        while True:
            try:
                msgs = await fetcher.fetch(256, FETCH_S)
            except (TimeoutError, nats.errors.TimeoutError):
                continue
            for msg in msgs:
                if consumer_seq(msg) != expected:
                    raise _Gap(f"delivery {consumer_seq(msg)} where {expected} was due")
                expected += 1
                await self._intake.acquire()  # at most ``MAX_TAKEN`` waiting: a long backlog is read as it goes
                if not self._take(msg):
                    self._intake.release()

    async def _open(self) -> PullFetcher:
        """The consumer, from past the loop's checkpoint (what is at or below it is applied) or
        the last trigger taken, whichever is later."""
        ctx = self._ctx
        raw, _ = await kv_read(await ctx.js.key_value(BUCKET_CHECKPOINTS), ctx.consumer)
        start = max(checkpoint_value(raw) or 0, self._top) + 1
        with contextlib.suppress(nats.js.errors.NotFoundError):
            await ctx.js.delete_consumer(EVENTS_STREAM, self._name)  # one a dead worker left behind
        settings = ctx.settings
        await ctx.js.add_consumer(EVENTS_STREAM, api.ConsumerConfig(
            name=self._name, ack_policy=api.AckPolicy.NONE, deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=start, filter_subjects=trigger_filters(settings.prefix, ctx.partition, settings.partitions),
            inactive_threshold=INACTIVE_S, mem_storage=True, num_replicas=1,
            description=f"Cortex: {ctx.consumer} reading session starts and compactions early"))
        fetcher = fetcher_for(ctx.js, EVENTS_STREAM, self._name)
        await fetcher.start()
        return fetcher

    def _take(self, msg: Msg) -> bool:
        """Queue the trigger behind the agent's previous one; False when there is nothing to brief."""
        seq = self._top = stream_seq(msg)
        if self._refloor:  # every trigger from here on is seen: those before it perhaps not (``reset``)
            self._floor, self._refloor = max(self._floor, seq - 1), False
        env = decode_event(self._ctx.settings.prefix, msg.subject, seq, msg.data, self._limits)
        if not isinstance(env, Envelope) or not self._channel_ok(env) or not self._projection.accepts(env):
            return False  # bad input is the loop's to dead-letter; a kind boot does not brief is nothing
        stored_at = _stored_at(msg)
        if stored_at is not None:
            EARLY_SECONDS.labels("delivered").observe(max(0.0, time.time() - stored_at))
        trace = stages(stored_at)
        trace.mark("delivered")
        before = self._chains.get(env.agent)
        if env.duplicate_key is not None:  # the store's: decided in stream order, so briefed by the loop
            self._chains[env.agent] = asyncio.create_task(self._leave(env, before), name=f"{self._name}-{seq}")
            return True
        self._chains[env.agent] = asyncio.create_task(self._brief(env, before, stored_at, trace),
                                                      name=f"{self._name}-{seq}")
        return True

    # ------------------------------------------------------------------ one trigger

    async def _brief(self, env: Envelope, before: asyncio.Task[None] | None, stored_at: float | None,
                     trace: Stages = OFF) -> None:
        """After the agent's previous trigger: its sources read (at most ``PARALLEL`` triggers
        at once) and its document written — unless it is made already or the loop's."""
        if before is not None:
            with contextlib.suppress(Exception):
                await before
        outcome = "loop's"
        try:
            trace.mark("chained")
            async with self._slots:
                trace.mark("slot")
                kv = await self._bucket()
                # the loop's own reading when it began one (``share``: the loop reached the trigger
                # first), else one begun here before the stored-document check (tens to hundreds of
                # ms above capacity) — the loop takes it if it reaches the trigger meanwhile
                # (``reading``): a trigger's sources are read once
                reading = self._shared.pop(env.seq, None)
                own = reading is None
                if reading is None:
                    reading = self._begun[env.seq] = self._start(env, stored_at)
                try:
                    outcome = await self._check(kv, env, reading, own, stored_at, trace)
                finally:
                    self._begun.pop(env.seq, None)
                    if env.seq in self._taken:
                        self._taken.discard(env.seq)  # the loop's now: it awaits it
                    elif own and not reading.done():  # not this path's (or stopping): the loop reads it itself
                        await cancel_and_wait(reading)
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except LeaseLost:  # another instance's now (its loop makes it): this one's loop is stopping
            self._left[env.agent] = env.seq
            outcome = "lease lost"
        except Exception as exc:  # the loop makes it (and, in order, the agent's later ones)
            self._left[env.agent] = env.seq
            outcome = "failed"
            log.warning("boot_early_failed", extra={"agent": env.agent, "seq": env.seq, "error": repr(exc)[:300]})
        finally:
            trace.emit(env, "early", outcome)
            self.handled += 1
            self._intake.release()
            if self._chains.get(env.agent) is asyncio.current_task():
                del self._chains[env.agent]

    async def _check(self, kv: KeyValue, env: Envelope, reading: asyncio.Task[Reading], own: bool,
                     stored_at: float | None, trace: Stages) -> str:
        """The stored-document check, then — the trigger this path's — the document written from
        ``reading`` (``own``: begun here, else the loop's; one the loop stopped or that failed is
        read again here)."""
        stored = (await _stored(kv, env.agent))[0]
        trace.mark("checked")
        self._begun.pop(env.seq, None)
        if not self._ours(env, stored):
            return "made" if stored is not None and stored.integrity.last_seq >= env.seq else "loop's"
        if own:
            self._hold(env.seq, reading)
            return await self._write(kv, env, await reading, stored_at, trace)
        await asyncio.wait([reading])
        if reading.cancelled() or reading.exception() is not None:
            return await self._write(kv, env, await self._read(env, until=wait_until(stored_at, time.time(),
                                                                                      time.monotonic())),
                                     stored_at, trace)
        return await self._write(kv, env, reading.result(), stored_at, trace)

    async def _bucket(self) -> KeyValue:
        """The BootDoc bucket's handle, made once: ``js.key_value`` asks the server for the bucket's
        stream (a round trip on every trigger's way to its document, issue 39 eighteenth round);
        the handle holds only names, so it stays good whatever happens to the bucket."""
        async with self._kv_made:  # the triggers (completions) read at once ask once
            if self._kv is None:
                self._kv = await self._ctx.js.key_value(self._ctx.bucket(BUCKET_BOOT))
        return self._kv

    def share(self, seq: int, reading: asyncio.Task[Reading]) -> None:
        """The loop's own reading of the trigger at ``seq``, begun before this path began one (the
        loop, caught up, reaches most triggers first): this path writes from it rather than read
        every source a second time. The last ``SHARED_READINGS`` are kept."""
        self._shared[seq] = reading
        while len(self._shared) > SHARED_READINGS:
            self._shared.popitem(last=False)

    async def _leave(self, env: Envelope, before: asyncio.Task[None] | None) -> None:
        """After the agent's previous trigger: this one is the loop's, and so are the agent's
        next ones until the loop has stored it (``_left_behind``: their count includes it)."""
        try:
            if before is not None:
                with contextlib.suppress(Exception):
                    await before
            self._left[env.agent] = env.seq
        finally:
            self.handled += 1
            self._intake.release()
            if self._chains.get(env.agent) is asyncio.current_task():
                del self._chains[env.agent]

    def _start(self, env: Envelope, stored_at: float | None) -> asyncio.Task[Reading]:
        """The trigger's reading, begun (its sources waited for within ``WAIT_BUDGET_S`` of its
        storing)."""
        until = wait_until(stored_at, time.time(), time.monotonic())
        return asyncio.create_task(self._read(env, until=until), name=f"{self._name}-read-{env.seq}")

    def _hold(self, seq: int, reading: asyncio.Task[Reading]) -> None:
        """The loop takes the reading if it reaches the trigger meanwhile — only one of a
        trigger this path writes: the loop reads the others (an agent's first briefing, to its
        bound) itself. Not one it took already, during the check."""
        if seq in self._taken:
            return
        self._readings[seq] = reading
        while len(self._readings) > HELD_READINGS:
            self._readings.popitem(last=False)  # the loop reads that one itself, if it ever needs it

    def _ours(self, env: Envelope, stored: BootDoc | None) -> bool:
        """Whether this path writes ``env``'s document over ``stored``: not when it is made
        already (by the loop, a redelivery), nor when it is the loop's to make — no document (a
        key is never created here), or after a trigger of the agent left to the loop that the
        loop has not stored yet (the count)."""
        if stored is not None and stored.integrity.last_seq >= env.seq:
            return False
        if stored is None or self._left_behind(env, stored):
            self._left[env.agent] = env.seq
            return False
        return True

    async def _write(self, kv: KeyValue, env: Envelope, reading: Reading, stored_at: float | None,
                     trace: Stages = OFF) -> str:
        """The document written (or not: what happened instead, for ``trigger_stages``)."""
        if stored_at is not None:
            EARLY_SECONDS.labels("read").observe(max(0.0, time.time() - stored_at))
        trace.mark("read")
        for _ in range(CONFLICTS):
            stored, revision = await _stored(kv, env.agent)
            if not self._ours(env, stored):
                return "made"  # by the loop meanwhile (or a trigger left to it)
            doc, changed = step(self._projection, stored, env, reading, self._ctx.producer)
            if not changed:
                return "unchanged"
            self._ctx.fence()  # only while this process holds the lease (``LeaseLost``: the loop stops too)
            try:
                written = await kv_cas(kv, env.agent, msgspec.json.encode(doc), revision)
            except nats.js.errors.KeyWrongLastSequenceError:
                continue  # the loop (or a completion) wrote meanwhile: stamped on what is there now
            if stored_at is not None:
                EARLY_SECONDS.labels("written").observe(max(0.0, time.time() - stored_at))
            trace.mark("written")
            await self._written(env.agent, doc, reading, written)
            return "written"
        self._left[env.agent] = env.seq
        return "conflicts"

    def _left_behind(self, env: Envelope, stored: BootDoc) -> bool:
        """A trigger of the agent before this one was left to the loop, which has not stored
        it yet: this one's document would miss it (its count), so it is the loop's too."""
        if stored.integrity.last_seq < self._floor:
            return True  # made again from further back (``reset``), not yet past what this path missed
        left = self._left.get(env.agent)
        if left is None:
            return False
        if stored.integrity.last_seq >= left:
            del self._left[env.agent]
            return False
        return True
