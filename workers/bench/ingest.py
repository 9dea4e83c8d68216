"""Ingest from the OpenClaw event store: the threads worker draining the backlog when it
arrives through the store (the plugin's envelope, sourced by the server into
``<prefix>.openclaw.<agent>.<type>``, decoded by the envelope-aware decoder) against the
same events published on the contract's subjects.

The two sides run at the same time, each on a nats-server of its own (the run's server for
the contract side, an embedded one beside it for the store side), so that whatever else
loads the machine loads both alike: measured one after the other, single runs on this
shared 2-core machine moved between 54 % and 197 %. ``--limit-runs`` pairs; the median
pair's ratio of events per second is the row, the workers' CPU time per event is shown
beside it. The store side is a backfill: the store holds every event when ``cortex init``
wires it, the server's copy is timed on its own (``copy_msgs_per_s``), then the worker
drains the copied events exactly as the other drains the contract events.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import msgspec
import nats
import nats.js.errors
from nats.js import api

from shared.embedded import EmbeddedNats
from shared.names import EVENTS_STREAM
from shared.provision import provision
from workers.bench.events import BenchEvent
from workers.bench.procs import Processes
from workers.bench.results import IngestResult, WorkerResult
from workers.bench.session import BenchError, Session
from workers.bench.throughput import drain_worker
from workers.registry import consumer_specs

STORE = "cortex-bench-openclaw"  # never the name of a real store
STORE_PREFIX = "bench.openclaw.events"
WORKER = "threads"


def store_event(event: BenchEvent) -> tuple[str, bytes] | None:
    """The event as `@vainplex/nats-eventstore` 0.2.1 publishes it (subject, payload), or None."""
    e: dict[str, Any] = msgspec.json.decode(event.data)
    ms = int(datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp() * 1000)
    head = {"id": e["id"], "ts": ms, "agent": e["agent"], "session": e["session"]}
    if event.kind == "msg":
        if e["role"] == "assistant":
            kind, payload = "msg.out", {"to": "user", "content": e["content"], "success": True,
                                        "channel": e.get("channel")}
        else:
            kind, payload = "msg.in", {"from": e.get("sender"), "content": e["content"],
                                       "channel": e.get("channel"), "metadata": {}}
    elif event.kind in ("session.start", "session.end"):
        kind, payload = event.kind, {"sessionId": e["session"]}
    else:
        return None
    envelope = {**head, "type": kind, "payload": payload}
    return f"{STORE_PREFIX}.{e['agent']}.{kind.replace('.', '_')}", msgspec.json.encode(envelope)


async def _publish_store(session: Session, events: list[BenchEvent]) -> int:
    """Publish to the store like the plugin (no Nats-Msg-Id), pipelined; how many."""
    js = session.js
    with contextlib.suppress(nats.js.errors.NotFoundError):
        await js.delete_stream(STORE)
    await js.add_stream(api.StreamConfig(name=STORE, subjects=[f"{STORE_PREFIX}.>"], storage=api.StorageType.FILE))
    pending: list[asyncio.Future[Any]] = []
    count = 0
    for event in events:
        item = store_event(event)
        if item is None:
            continue
        pending.append(await js.publish_async(*item))
        count += 1
        if len(pending) >= 2000:
            await asyncio.gather(*pending)
            pending.clear()
    await asyncio.gather(*pending)
    return count


async def _copied(session: Session, count: int, limit_s: float) -> float:
    """Seconds until the server has copied ``count`` store events into CORTEX_EVENTS."""
    started = time.perf_counter()
    while (await session.js.stream_info(EVENTS_STREAM)).state.messages < count:
        if time.perf_counter() - started > limit_s:
            raise BenchError(f"the server did not copy {count} store events within {limit_s:.0f}s")
        await asyncio.sleep(0.02)
    return time.perf_counter() - started


@contextlib.asynccontextmanager
async def _store_side(main: Session) -> AsyncIterator[Session]:
    """A second nats-server and a session on it, for the store side."""
    workdir = main.workdir / "ingest-store"
    workdir.mkdir(parents=True, exist_ok=True)
    with EmbeddedNats(str(workdir / "nats")) as server:
        procs = Processes(workdir, server.url)
        side_nc = await nats.connect(server.url, name="cortex-bench-ingest")
        side = Session(main.config, main.settings, server.url, side_nc, procs, workdir, main.progress)
        try:
            yield side
        finally:
            procs.stop_all()
            with contextlib.suppress(Exception):
                await side_nc.close()


class Pair(msgspec.Struct, frozen=True):
    contract: WorkerResult
    store: WorkerResult
    copy_s: float

    @property
    def ratio(self) -> float:
        c, s = self.contract.msgs_per_s, self.store.msgs_per_s
        return s / c if c and s else 0.0


def _cpu_us(result: WorkerResult) -> float | None:
    return result.cpu_s * 1e6 / result.events if result.cpu_s and result.events else None


async def _pair(main: Session, side: Session, events: list[BenchEvent], limit_s: float) -> Pair:
    await main.reset()
    last_seq = await main.publish_all(events)
    await side.reset()
    count = await _publish_store(side, events)
    wired = msgspec.structs.replace(side.settings, openclaw=msgspec.structs.replace(
        side.settings.openclaw, stream=STORE, prefix=STORE_PREFIX))
    await provision(side.js, wired, consumer_specs())
    copy_s = await _copied(side, count, limit_s)
    contract, store = await asyncio.gather(drain_worker(main, WORKER, len(events), last_seq, None),
                                           drain_worker(side, WORKER, count, count, None))
    contract.proc.stop()
    store.proc.stop()
    return Pair(contract=contract.result, store=store.result, copy_s=copy_s)


async def run(session: Session, events: list[BenchEvent]) -> IngestResult:
    limit_s = max(120.0, len(events) / 50)
    pairs: list[Pair] = []
    async with _store_side(session) as side:
        for i in range(max(1, session.config.limit_runs)):
            session.progress(f"[ingest] pair {i + 1}: {WORKER} on {len(events)} events on contract subjects and, "
                             f"at the same time, on the same events through an OpenClaw store …")
            pair = await _pair(session, side, events, limit_s)
            pairs.append(pair)
            session.progress(
                f"[ingest] pair {i + 1}: contract {pair.contract.msgs_per_s or 0:,.0f} msgs/s, OpenClaw store "
                f"{pair.store.msgs_per_s or 0:,.0f} msgs/s = {pair.ratio:.0%} (CPU per event "
                f"{_cpu_us(pair.contract) or 0:.0f} / {_cpu_us(pair.store) or 0:.0f} µs); the server copied "
                f"{pair.store.events} events in {pair.copy_s:.2f}s")
        await session.reset()
    pairs.sort(key=lambda p: p.ratio)
    mid = pairs[len(pairs) // 2]
    cpu_c, cpu_s = _cpu_us(mid.contract), _cpu_us(mid.store)
    return IngestResult(
        events=mid.store.events, contract_msgs_per_s=mid.contract.msgs_per_s, openclaw_msgs_per_s=mid.store.msgs_per_s,
        ratio=round(mid.ratio, 3), runs_ratio=[round(p.ratio, 3) for p in pairs],
        contract_cpu_us=round(cpu_c, 1) if cpu_c else None, openclaw_cpu_us=round(cpu_s, 1) if cpu_s else None,
        copy_seconds=round(mid.copy_s, 3), copy_msgs_per_s=round(mid.store.events / max(mid.copy_s, 1e-6), 1))
