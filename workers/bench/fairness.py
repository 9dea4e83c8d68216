"""Fairness between agents: a quiet agent's latency beside a noisy agent's burst.

One ``cortex worker channels`` process (one consumer: both agents in one partition); the
channels document counts every message, so each of the quiet agent's messages makes a
revision of its document whose ``integrity.last_seq`` is that message's sequence. Three
runs, each from a reset server and a fresh process:

* **alone**: the quiet agent publishes ``fairness_quiet`` messages, one every
  ``fairness_interval_s``; latency is publish → its document's revision (a KV watch);
* **noisy neighbour**: first a noisy agent's burst of ``fairness_burst`` messages is
  stored at once (the consumer paused while it is published), then the quiet agent's
  messages as above, while the burst drains;
* **noisy neighbour, in order**: the same with ``CORTEX_RUNTIME_READ_AHEAD=1`` (a batch:
  the consume loop takes the stream in order), what the loop did before it read ahead.

Then the recall worker (its ``cortex_recall`` document holds the same watermark), unless
``fairness_recall_burst`` is 0: alone, beside a burst of ``fairness_recall_burst`` with a
read-ahead of ``fairness_recall_read_ahead`` (lower than the default, so the burst lies well
past it at recall's pace: what the look past the read-ahead, ``shared.scout``, is for), and
in stream order.

Then, unless ``fairness_store_burst`` is 0, the channels worker beside a burst with **both
agents on an OpenClaw event store** (what the gateway's plugin publishes, without
``Nats-Msg-Id``, to a stream the server sources into CORTEX_EVENTS — the quiet agent's
messages too, so latency includes the server's copy): the look past the read-ahead on events
whose duplicate window decides (``fairness_store_read_ahead``: 0, the worker's default);
twice — each agent filed under its own id, and both under the session token ``agent`` as
the store files OpenClaw 2026.9's events (the server cannot leave the noisy agent out there).

Each run also reports how long the burst took to drain (from its first delivery)
and the worker's CPU time per event (``/proc``: load-independent, unlike the latencies on a shared machine).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import defaultdict
from typing import Any

import msgspec
import nats.js.errors
from nats.aio.client import Client
from nats.js import api

from shared.names import BUCKET_CHANNELS, BUCKET_RECALL, EVENTS_STREAM, OPENCLAW_SESSION_AGENT, consumer_name
from shared.provision import provision
from shared.tasks import cancel_and_wait
from workers.bench.events import BenchEvent, EventSource
from workers.bench.freshness import HEAD, Published, match
from workers.bench.ingest import STORE, STORE_PREFIX, store_event
from workers.bench.procs import WorkerProc
from workers.bench.results import FairnessResult, FairnessRun
from workers.bench.session import BenchError, Session
from workers.bench.stats import summarize
from workers.registry import consumer_specs

WORKER = "channels"
BUCKETS = {WORKER: BUCKET_CHANNELS, "recall": BUCKET_RECALL}  # each worker's document, with its watermark
IN_ORDER = "1"  # CORTEX_RUNTIME_READ_AHEAD of a loop that reads no further than its batch


class _Watch:
    """The revisions of one bucket as they arrive: (arrival time, last_seq) per agent."""

    def __init__(self) -> None:
        self.seen: dict[str, list[tuple[float, int]]] = defaultdict(list)
        self.revisions: dict[str, list[tuple[int, int]]] = defaultdict(list)  # (KV revision, last_seq): write order
        self._task: asyncio.Task[None] | None = None
        self._watcher: object | None = None

    async def start(self, nc: Client, bucket: str) -> None:
        kv = await nc.jetstream().key_value(bucket)
        watcher = await kv.watchall()
        self._watcher = watcher
        self._task = asyncio.create_task(self._follow(watcher), name=f"watch-{bucket}")

    async def _follow(self, watcher: object) -> None:
        async for entry in watcher:  # type: ignore[attr-defined]
            if entry is None or not entry.value or entry.key is None:
                continue
            last_seq = HEAD.decode(entry.value).integrity.last_seq
            self.seen[entry.key].append((time.perf_counter(), last_seq))
            self.revisions[entry.key].append((entry.revision or 0, last_seq))

    async def stop(self) -> None:
        if self._task is not None:
            with contextlib.suppress(Exception):
                await cancel_and_wait(self._task)
        with contextlib.suppress(Exception):
            await self._watcher.stop()  # type: ignore[union-attr]

    def applied_before(self, agent: str, other: str, seq: int) -> int:
        """``other``'s last applied sequence as its document stood before ``agent``'s document
        first held ``seq`` (in the bucket's write order: load-independent, unlike latencies)."""
        holding = min((rev for rev, last in self.revisions.get(agent, ()) if last >= seq), default=None)
        if holding is None:
            return 0
        return max((last for rev, last in self.revisions.get(other, ()) if rev < holding), default=0)

    async def covered(self, agent: str, seq: int, limit_s: float) -> None:
        """Wait until a revision of ``agent``'s document holds ``seq``."""
        deadline = time.perf_counter() + limit_s
        while not any(last >= seq for _, last in self.seen.get(agent, ())):
            if time.perf_counter() > deadline:
                raise BenchError(f"{agent}'s document did not reach sequence {seq} within {limit_s:.0f}s")
            await asyncio.sleep(0.01)


CONTRACT = "contract"
OPENCLAW = "OpenClaw store"
OPENCLAW_TOKEN = "OpenClaw store, session token"  # OpenClaw 2026.9: every agent filed under ``agent``
_WINDOW = 2000


class _Route:
    """How the run's events reach CORTEX_EVENTS: on the contract's subjects (``Nats-Msg-Id`` the
    event id), or through an OpenClaw event store as the plugin publishes them — every one of the
    run's events, so the store's sequences are CORTEX_EVENTS's (checked as the run warms up)."""

    def __init__(self, session: Session, source: str) -> None:
        self._session = session
        self.store = source in (OPENCLAW, OPENCLAW_TOKEN)
        self._under_token = source == OPENCLAW_TOKEN

    async def wire(self) -> None:
        """The store, wired as ``cortex init`` does (after the reset: CORTEX_EVENTS is empty)."""
        if not self.store:
            return
        js, settings = self._session.js, self._session.settings
        with contextlib.suppress(nats.js.errors.NotFoundError):
            await js.delete_stream(STORE)
        await js.add_stream(api.StreamConfig(name=STORE, subjects=[f"{STORE_PREFIX}.>"]))
        wired = msgspec.structs.replace(settings, openclaw=msgspec.structs.replace(
            settings.openclaw, stream=STORE, prefix=STORE_PREFIX))
        await provision(js, wired, consumer_specs())

    async def unwire(self) -> None:
        if self.store:
            with contextlib.suppress(Exception):
                await self._session.js.delete_stream(STORE)

    def _stored(self, event: BenchEvent) -> tuple[str, bytes]:
        item = store_event(event)
        if item is None:
            raise BenchError(f"a {event.kind} event has no OpenClaw store form")
        return under_session_token(*item) if self._under_token else item

    async def one(self, event: BenchEvent) -> int:
        """Publish one event; its sequence."""
        if self.store:
            return (await self._session.js.publish(*self._stored(event))).seq
        return (await self._session.js.publish(event.subject, event.data, headers={"Nats-Msg-Id": event.id})).seq

    async def all(self, events: list[BenchEvent], limit_s: float = 60.0) -> int:
        """Publish ``events`` pipelined; the last one's sequence in CORTEX_EVENTS, once it is there."""
        if not self.store:
            return await self._session.publish_all(events)
        js = self._session.js
        last = 0
        for start in range(0, len(events), _WINDOW):  # a window of unacknowledged publishes, as publish_all
            pending = [await js.publish_async(*self._stored(event)) for event in events[start:start + _WINDOW]]
            last = max([last, *[(await future).seq for future in pending]])
        deadline = time.perf_counter() + limit_s
        while (state := (await js.stream_info(EVENTS_STREAM)).state).last_seq < last:
            if time.perf_counter() > deadline:
                raise BenchError(f"the server did not copy the store's events to {last} within {limit_s:.0f}s")
            await asyncio.sleep(0.01)
        if state.messages != last:
            raise BenchError(f"CORTEX_EVENTS holds {state.messages} messages, the store {last}: their sequences differ")
        return last


def under_session_token(subject: str, data: bytes) -> tuple[str, bytes]:
    """The store event as the store files it under OpenClaw 2026.9: under the agent ``agent``,
    the agent in the session key (``agent:<id>:<rest>``)."""
    envelope: dict[str, Any] = msgspec.json.decode(data)
    agent = envelope["agent"]
    envelope.update(agent=OPENCLAW_SESSION_AGENT, session=f"agent:{agent}:{envelope['session']}")
    kind = subject.rsplit(".", 1)[1]
    return f"{STORE_PREFIX}.{OPENCLAW_SESSION_AGENT}.{kind}", msgspec.json.encode(envelope)


async def _publish_quiet(session: Session, route: _Route, source: EventSource, agent: str) -> list[Published]:
    """The quiet agent's messages, one every ``fairness_interval_s`` (absolute times)."""
    cfg = session.config
    out = []
    started = time.perf_counter()
    for i in range(cfg.fairness_quiet):
        delay = started + i * cfg.fairness_interval_s - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        event = source.message(agent)
        t0 = time.perf_counter()
        out.append(Published(agent, await route.one(event), t0, event.kind))
    return out


async def _stored_at_once(session: Session, route: _Route, worker: str, events: list[BenchEvent],
                          limit_s: float = 30.0) -> None:
    """Publish ``events`` with the worker's consumer paused, then resume it and wait until the
    worker is taking them: it meets the whole burst as a backlog (published live, a worker
    faster than the publisher keeps up and the quiet agent is never behind anything), and the
    quiet agent's first message does not wait for the worker's next pull after the resumption."""
    consumer = consumer_name(worker)
    await session.js.pause_consumer(EVENTS_STREAM, consumer, "2099-01-01T00:00:00Z")
    try:
        last = await route.all(events)
    finally:
        await session.js.resume_consumer(EVENTS_STREAM, consumer)
    deadline = time.perf_counter() + limit_s
    while True:
        info = await session.js.consumer_info(EVENTS_STREAM, consumer)
        if info.delivered is not None and (info.delivered.stream_seq or 0) > last - len(events):
            return
        if time.perf_counter() > deadline:
            raise BenchError(f"{worker} took none of the burst within {limit_s:.0f}s of its consumer's resumption")
        await asyncio.sleep(0.01)


async def run_mode(session: Session, mode: str, burst: int, read_ahead: str | None,
                   worker: str = WORKER, via: str = CONTRACT) -> FairnessRun:
    """One run from a reset server: warm up, the burst (if any), the quiet agent's messages, drain."""
    cfg = session.config
    await session.reset()
    route = _Route(session, via)
    await route.wire()
    source = EventSource(2, cfg.seed, session.prefix, id_prefix=f"fair-{len(mode)}")
    noisy, quiet = source.agents
    proc = session.procs.start(worker, env={"CORTEX_RUNTIME_READ_AHEAD": read_ahead} if read_ahead else None)
    watch_nc = await session.connect("cortex-bench-fairness")
    watch = _Watch()
    consumers = [consumer_name(worker)]
    try:
        await watch.start(watch_nc, BUCKETS[worker])
        await session.wait_leases(consumers, [proc])
        warm = await route.all([source.message(quiet), source.message(noisy)])
        await watch.covered(noisy, warm, max(60.0, cfg.drain_limit_s))  # started and caught up: nothing first-time
        cpu_before = proc.cpu_seconds()
        if burst:
            await _stored_at_once(session, route, worker, [source.message(noisy) for _ in range(burst)])
        started = time.perf_counter()
        published = await _publish_quiet(session, route, source, quiet)
        await session.wait_drained(consumers, max(120.0, burst / (20 if worker == WORKER else 5)), [proc])
        drain_s = time.perf_counter() - started
        await watch.covered(quiet, published[-1].seq, 10.0)
        run = _result(mode, burst, read_ahead, published, watch, drain_s, proc, cpu_before)
        run.worker, run.source = worker, via
        if burst:  # how much of the burst went before the quiet agent's first message
            run.first_quiet_behind = max(0, watch.applied_before(quiet, noisy, published[0].seq) - warm)
        return run
    finally:
        proc.stop()
        await watch.stop()
        await watch_nc.close()
        await route.unwire()


def _result(mode: str, burst: int, read_ahead: str | None, published: list[Published], watch: _Watch,
            drain_s: float, proc: WorkerProc, cpu_before: float | None) -> FairnessRun:
    latencies, lost = match(published, watch.seen)
    cpu_after = proc.cpu_seconds()
    events = burst + len(published)
    cpu_us = (cpu_after - cpu_before) / events * 1e6 if cpu_before is not None and cpu_after is not None else None
    return FairnessRun(mode=mode, burst=burst, read_ahead=read_ahead or "default", quiet=summarize(latencies, lost),
                       drain_s=round(drain_s, 3), cpu_us_per_event=round(cpu_us, 1) if cpu_us is not None else None)


def _modes(session: Session) -> list[tuple[str, str, int, str | None, str]]:
    """(worker, mode, burst, read-ahead, route) of each run: channels' (unless its burst is 0),
    recall's (unless its burst is 0), channels' on the OpenClaw store (unless its burst is 0)."""
    cfg = session.config
    modes: list[tuple[str, str, int, str | None, str]] = []
    if cfg.fairness_burst:
        modes += [(WORKER, "alone", 0, None, CONTRACT), (WORKER, "noisy neighbour", cfg.fairness_burst, None, CONTRACT),
                  (WORKER, "noisy neighbour, in order", cfg.fairness_burst, IN_ORDER, CONTRACT)]
    if cfg.fairness_recall_burst:
        burst, read_ahead = cfg.fairness_recall_burst, str(cfg.fairness_recall_read_ahead)
        modes += [("recall", "alone", 0, read_ahead, CONTRACT),
                  ("recall", "noisy neighbour", burst, read_ahead, CONTRACT),
                  ("recall", "noisy neighbour, in order", burst, IN_ORDER, CONTRACT)]
    if cfg.fairness_store_burst:
        store_read_ahead = str(cfg.fairness_store_read_ahead) if cfg.fairness_store_read_ahead else None
        modes += [(WORKER, "noisy neighbour", cfg.fairness_store_burst, store_read_ahead, via)
                  for via in (OPENCLAW, OPENCLAW_TOKEN)]
    return modes


async def run(session: Session) -> FairnessResult:
    cfg = session.config
    result = FairnessResult(worker=WORKER, burst=cfg.fairness_burst, quiet_messages=cfg.fairness_quiet,
                            interval_s=cfg.fairness_interval_s)
    for worker, mode, burst, read_ahead, via in _modes(session):
        session.progress(f"[fairness] {worker}, {mode}: {cfg.fairness_quiet} quiet messages"
                         + (f" behind a burst of {burst}" if burst else "")
                         + (f", both agents on the {via}" if via != CONTRACT else "") + " …")
        run_n = await run_mode(session, mode, burst, read_ahead, worker, via)
        result.runs.append(run_n)
        behind = (f", its first after {run_n.first_quiet_behind} of the burst"
                  if run_n.first_quiet_behind is not None else "")
        session.progress(f"[fairness] {mode}: quiet p50 {run_n.quiet.p50_ms} ms, max {run_n.quiet.max_ms} ms{behind}; "
                         f"drained in {run_n.drain_s:.2f}s, {run_n.cpu_us_per_event} µs CPU per event")
    return result
