"""Rebuild derived state from the stream (``cortex replay``).

The replay becomes the active instance of each worker it replays: it takes the
consumer's lease (a running instance loses it, stops writing at its next fence and waits
as a standby), waits out the lease TTL so no late write of the old instance can land,
deletes the affected documents, resets the checkpoint and consumes the stream from the
start to its end. Live events published meanwhile are consumed too — the consumer is the
same — so nothing is lost; releasing the lease hands the worker back to its standby,
which resumes from the new checkpoint.

With ``agent`` only that agent's documents are deleted: other agents' events are skipped
by their documents' watermarks, so their documents stay as they are.

Partitions: every consumer ``<worker>-<k>`` is replayed (each takes its own lease), and
with ``agent`` only the consumers of that agent's partition.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import msgspec
from nats.js.client import JetStreamContext

from shared.backoff import backoff_delay
from shared.errors import LeaseLost, RebuildRequired, is_transient
from shared.forget import start_forgotten
from shared.health import Health
from shared.inputs import Inputs
from shared.kv import kv_keys, kv_read
from shared.lease import ONE_OFF_MIN_TTL_S, Lease, LeaseRefused, holdable_ttl
from shared.names import (
    BUCKET_CHECKPOINTS,
    EVENTS_STREAM,
    consumer_name,
    partition_ids,
    partition_of,
)
from shared.natsio import connection
from shared.runtime import WorkerContext, WorkerHost, WorkerSpec, derivation, make_loop, producer_id
from shared.tasks import cancel_and_wait

log = logging.getLogger(__name__)


# A replay holds its leases at least this long between renewals (up to what cortex_leases
# allows, ``holdable_ttl``; ``cortex init`` makes it allow this much: shared.lease).
REPLAY_MIN_TTL_S = ONE_OFF_MIN_TTL_S


class ReplayError(Exception):
    """The replay cannot run as asked; the message says what is missing."""


class _Abandoned(ReplayError):
    """This worker's replay stopped because another one of the same replay failed: not the
    cause, so left out of the message when the cause is in it."""


@dataclass(frozen=True)
class _Together:
    """What the workers of one replay share: every lease is taken before any worker deletes
    anything (``leased``), every worker is reset before any consumes (``ready``), and one
    that fails stops the others (``stop``, the barriers broken) instead of leaving them
    waiting for it for ever."""

    leased: asyncio.Barrier
    ready: asyncio.Barrier
    stop: asyncio.Event

    async def fail(self) -> None:
        self.stop.set()
        await self.leased.abort()
        await self.ready.abort()


@dataclass
class ReplayProgress:
    worker: str
    applied: int = 0  # the consumer's checkpoint: the stream sequence applied up to
    target: int = 0  # the stream's last sequence when the replay started
    done: bool = False
    extra: dict[str, int] = field(default_factory=dict)
    phase: str = "starting"  # what it is doing now, for a person watching
    replay_started: float | None = None  # time.monotonic() when it began consuming

    def rate(self, now: float) -> float | None:
        """Stream sequences applied per second since consuming began (None: too early to say)."""
        if self.replay_started is None or now - self.replay_started < 1.0 or self.applied <= 0:
            return None
        return self.applied / (now - self.replay_started)

    def describe(self, now: float) -> str:
        """``threads 1200/5000 610/s ETA 7s``, or the phase while there is nothing to count."""
        if self.done:
            return f"{self.worker} done"
        if self.replay_started is None:
            return f"{self.worker} {self.phase}"
        line = f"{self.worker} {self.applied}/{self.target}"
        rate = self.rate(now)
        if rate:
            line += f" {rate:.0f}/s ETA {_duration(max(0, self.target - self.applied) / rate)}"
        return line


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


async def check_history(js: JetStreamContext, force: bool) -> int:
    """The stream's last sequence; refuses when the stream no longer starts at 1 — unless only
    forgets moved its start (every event below was a forgotten agent's: nothing to rebuild)."""
    info = await js.stream_info(EVENTS_STREAM)
    first, last = info.state.first_seq, info.state.last_seq
    if first > 1 and info.state.messages and await start_forgotten(js, first):
        return int(last)
    if first > 1 and not force:  # an emptied stream too: a replay of nothing would delete every document
        left = (f"sequences {first}..{last} are left" if info.state.messages
                else "none is left, so a replay would only delete the documents")
        raise ReplayError(
            f"CORTEX_EVENTS starts at sequence {first}: events 1..{first - 1} are gone (retention or purge) and "
            f"{left}; a replay cannot rebuild the documents the gone ones made. Use --force to replay what is left"
        )
    return int(last)


def _refuse(holder: str) -> str | None:
    if holder.startswith("forget-"):
        return f"a `cortex forget` is running ({holder}); replay when it is done"
    if holder.startswith("replay-"):
        return f"another replay is running ({holder})"
    return None


async def steal_lease(js: JetStreamContext, lease: Lease, say: Callable[[str], None] | None = None) -> int:
    """Take the consumer's lease from its running instance (never from a running forget or
    another running replay); returns how long that instance may still write (0: nobody held it)."""
    try:
        return (await lease.take_over(_refuse, say)).ttl_s
    except LeaseRefused as exc:
        raise ReplayError(f"{lease.consumer}: {exc}") from exc


async def _doc_keys(js: JetStreamContext, bucket: str, agent: str | None) -> list[str]:
    return await kv_keys(js, bucket, agent)


async def reset_state(ctx: WorkerContext, buckets: list[str], agent: str | None) -> int:
    """Delete the consumer's documents (its partition's, or one agent's) and its checkpoint."""
    deleted = 0
    n = ctx.settings.partitions
    for bucket in buckets:
        kv = await ctx.js.key_value(ctx.bucket(bucket))
        for key in await _doc_keys(ctx.js, ctx.bucket(bucket), agent):
            if ctx.partition is not None and partition_of(key.split(".", 1)[0], n) != ctx.partition:
                continue  # another partition's agent: its own consumer's replay resets it
            raw, _ = await kv_read(kv, key)
            if raw is not None:
                await kv.delete(key)
                deleted += 1
    ckpt = await ctx.js.key_value(BUCKET_CHECKPOINTS)
    await ckpt.put(ctx.consumer, b"0")
    # rewind now, not when the loop starts: composed workers replayed alongside must see
    # this worker as behind (pending > 0) from the first moment
    await ctx.js.reset_consumer(EVENTS_STREAM, ctx.consumer, seq=1)
    return deleted


async def drained(js: JetStreamContext, consumer: str) -> bool:
    info = await js.consumer_info(EVENTS_STREAM, consumer)
    return not info.num_pending and not info.num_ack_pending


PATIENCE_S = 60.0  # how long a replay asks NATS again while it cannot answer (a leader election, a reconnect)
T = TypeVar("T")


async def patiently(what: str, call: Callable[[], Awaitable[T]], patience_s: float = PATIENCE_S) -> T:
    """``call()``, asked again with backoff while NATS cannot answer (a cluster electing a new
    leader for the stream answers nothing for seconds: a killed leader gave the replay a
    traceback); past ``patience_s``, a ``ReplayError`` naming ``what`` and the last error.
    Only for calls that may be repeated: each is idempotent (a read, or a reset to a fixed state)."""
    deadline = time.monotonic() + patience_s
    attempt = 0
    while True:
        try:
            return await call()
        except Exception as exc:
            if not is_transient(exc):
                raise
            attempt += 1
            if time.monotonic() >= deadline:
                raise ReplayError(f"{what}: NATS did not answer for {patience_s:.0f} s ({type(exc).__name__}: "
                                  f"{exc}); run the replay again") from exc
            log.info("replay_retrying", extra={"what": what, "error": f"{type(exc).__name__}: {exc}"[:200]})
            await asyncio.sleep(backoff_delay(attempt, 0.2, 2.0))


async def replay_worker(host: WorkerHost, ctx: WorkerContext, spec: WorkerSpec, buckets: list[str],
                        agent: str | None, progress: ReplayProgress, together: _Together) -> None:
    """Replay one worker to the end of the stream (see the module docstring); if it fails,
    the replay's other workers stop too (they would wait for it for ever)."""
    try:
        await _replay_worker(host, ctx, spec, buckets, agent, progress, together)
    except BaseException:
        await together.fail()
        raise


async def _replay_worker(host: WorkerHost, ctx: WorkerContext, spec: WorkerSpec, buckets: list[str],
                         agent: str | None, progress: ReplayProgress, together: _Together) -> None:
    assert spec.build is not None
    stop = together.stop
    ttl_s = await holdable_ttl(ctx.js, max(host.settings.runtime.lease_ttl_s, REPLAY_MIN_TTL_S))
    lease = Lease(ctx.js, ctx.consumer, f"replay-{host.instance}", ttl_s)
    ctx.fence = lease.check  # what the worker writes beside its loop is fenced by the replay's lease too
    progress.phase = "taking over the lease"
    fence_s = await steal_lease(ctx.js, lease, lambda why: setattr(progress, "phase", why))
    keeper = asyncio.create_task(lease.keep_alive(stop.set))
    try:
        progress.phase = "waiting for the other workers' leases"
        try:
            await together.leased.wait()  # nothing is deleted until every lease of the replay is held
        except asyncio.BrokenBarrierError:
            progress.phase = "not replayed"
            raise _Abandoned(f"{ctx.consumer}: not replayed, nothing of it changed: another worker of the "
                             "replay could not take its lease") from None
        if fence_s:  # a deposed instance may still be inside a commit: let its fence close first
            progress.phase = f"waiting {fence_s}s for its running instance to stop writing"
            await asyncio.sleep(fence_s)
        progress.phase = "deleting its documents"
        progress.extra["deleted"] = await patiently(f"{ctx.consumer}: deleting its documents",
                                                    lambda: reset_state(ctx, buckets, agent))
        progress.phase = "waiting for the other workers to reset"
        try:
            await together.ready.wait()  # every replayed worker is reset before any starts consuming
        except asyncio.BrokenBarrierError:
            progress.phase = "stopped"
            raise _Abandoned(f"{ctx.consumer}: reset, not replayed: another worker of the replay failed; "
                             "run the replay again") from None
        progress.phase = "starting"
        while not await _consume_to_end(ctx, spec, lease, progress, stop):
            log.warning("replay_rebuilding", extra={"consumer": ctx.consumer})
        if not lease.held:
            raise LeaseLost(ctx.consumer)
        if stop.is_set() and not await patiently(ctx.consumer, lambda: drained(ctx.js, ctx.consumer)):
            # another worker failed or lost its lease: this one stopped short of the end, it is not done
            progress.phase = "stopped"
            raise _Abandoned(f"{ctx.consumer}: stopped at sequence {progress.applied} of {progress.target} "
                             "because another worker of the replay failed or lost its lease")
        progress.done = True
    except LeaseLost as exc:
        progress.phase = "lost the lease"
        raise ReplayError(f"{ctx.consumer}: lost the lease at sequence {progress.applied} of {progress.target} "
                          f"(not renewed within {lease.ttl_s} s, or taken by another instance); its documents "
                          "are rebuilt up to there and a running worker goes on from its checkpoint; run the "
                          "replay again for a complete one") from exc
    finally:
        await cancel_and_wait(keeper)
        await lease.release()


async def _consume_to_end(ctx: WorkerContext, spec: WorkerSpec, lease: Lease, progress: ReplayProgress,
                          stop: asyncio.Event) -> bool:
    """Run the worker's loop until its consumer is drained; False when it stopped to
    rebuild (an unreadable document was deleted: the loop rewound, start it again)."""
    assert spec.build is not None
    handler = await spec.build(ctx)
    loop = make_loop(ctx, spec, handler, lease.check)
    task = asyncio.create_task(loop.run())
    if progress.replay_started is None:
        progress.phase, progress.replay_started = "replaying", time.monotonic()
    try:
        while not stop.is_set():
            progress.applied = loop.checkpoint
            if task.done() or await patiently(ctx.consumer, lambda: drained(ctx.js, ctx.consumer)):
                break  # everything in this worker's filter up to now is applied and acked
            await asyncio.sleep(0.1)
    finally:
        loop.stop()
        try:
            await task
        except RebuildRequired:
            return False
        finally:
            await handler.aclose()
    progress.applied = loop.checkpoint
    return True


async def run_replay(host: WorkerHost, js: JetStreamContext, specs: list[WorkerSpec], agent: str | None,
                     force: bool, report: Callable[[list[ReplayProgress]], None]) -> None:
    last = await patiently("reading CORTEX_EVENTS", lambda: check_history(js, force))
    # During a replay every source starts far behind: composed workers wait for them as long
    # as the setting allows, so a replayed BootDoc is the live one, not a "lagging" stand-in.
    boot = msgspec.structs.replace(host.settings.boot, wait_ms=60000)
    host.settings = msgspec.structs.replace(host.settings, boot=boot)
    nc = connection(js)
    n = host.settings.partitions
    partitions = partition_ids(n) if agent is None or n <= 1 else [partition_of(agent, n)]
    consumers = [(spec, k, consumer_name(spec.name, k)) for spec in specs for k in partitions]
    together = _Together(asyncio.Barrier(len(consumers)), asyncio.Barrier(len(consumers)), asyncio.Event())
    progress = [ReplayProgress(worker=name, target=last) for _, _, name in consumers]
    tasks = []
    # one composed-input reader for every replayed worker
    inputs = Inputs(js, host.settings, derivation(js, host.settings, host.catalog.values(), host.version))
    for (spec, k, name), prog in zip(consumers, progress, strict=True):
        ctx = WorkerContext(nc=nc, js=js, settings=host.settings, worker=spec.name, consumer=name,
                            producer=producer_id(spec, host.settings, host.version), health=Health(name),
                            extras=host.extras, partition=k, catalog=host.catalog, shared_inputs=inputs)
        tasks.append(asyncio.create_task(
            replay_worker(host, ctx, spec, list(spec.buckets), agent, prog, together)))
    started = time.monotonic()
    try:
        while not all(t.done() for t in tasks):
            report(progress)
            await asyncio.wait(tasks, timeout=1.0)
    finally:
        await inputs.stop()
    report(progress)
    failed = [task.exception() for task in tasks]  # every one retrieved: no "never retrieved" traceback
    errors = [exc for exc in failed if exc is not None]
    errors = [exc for exc in errors if not isinstance(exc, _Abandoned)] or errors  # the cause, not its echoes
    if len(errors) == 1:
        raise errors[0]
    if errors:
        if not all(isinstance(exc, ReplayError) for exc in errors):
            raise next(exc for exc in errors if not isinstance(exc, ReplayError))
        raise ReplayError("; ".join(str(exc) for exc in errors))
    log.info("replay_done", extra={"seconds": round(time.monotonic() - started, 1)})
