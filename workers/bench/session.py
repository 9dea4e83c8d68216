"""One benchmark run's connection to the server, its processes and shared helpers."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec
import nats.js.errors
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from shared.config import Settings
from shared.connection import connect
from shared.names import BUCKET_LEASES, DLQ_STREAM, EVENTS_STREAM
from shared.provision import buckets_for, provision
from workers.bench.config import BenchConfig
from workers.bench.events import BenchEvent
from workers.bench.procs import Processes, WorkerProc, cpu_seconds
from workers.bench.publisher import Publisher
from workers.registry import all_specs, consumer_specs, doc_buckets

Progress = Callable[[str], None]


class BenchError(Exception):
    """The benchmark cannot go on; the message says why in one line."""


class Session:
    def __init__(self, config: BenchConfig, settings: Settings, url: str, nc: Client, procs: Processes,
                 workdir: Path, progress: Progress) -> None:
        self.config = config
        self.settings = settings
        self.url = url
        self.nc = nc
        self.js: JetStreamContext = nc.jetstream()
        self.procs = procs
        self.workdir = workdir
        self.progress = progress
        self.pipeline: list[WorkerProc] = []  # every worker, one process each (freshness, api)
        self.pipeline_consumers: list[str] = []  # the pipeline's consuming workers
        self.server_pid: int | None = None  # the embedded nats-server's (None for a server given by URL)
        self.publisher: Publisher | None = None  # the paced phases' publishing helper (freshness.publishing)

    def cpu_seconds(self) -> dict[str, float]:
        """CPU used so far by each pipeline process, the embedded server, the publisher and this harness."""
        out = {p.name: cpu for p in self.pipeline if (cpu := p.cpu_seconds()) is not None}
        if self.server_pid is not None and (server := cpu_seconds(self.server_pid)) is not None:
            out["nats-server"] = server
        if self.publisher is not None and (publisher := self.publisher.cpu_seconds()) is not None:
            out["publisher"] = publisher
        out["bench"] = time.process_time()
        return out

    async def connect(self, name: str) -> Client:
        """Another connection to the same server (same credentials)."""
        return await connect(msgspec.structs.replace(self.settings, nats_url=self.url), name)

    @property
    def prefix(self) -> str:
        return self.settings.prefix

    def filters(self, worker: str) -> list[str]:
        """The filter subjects of a worker's consumer (what its bare equivalent must read)."""
        return all_specs()[worker].consumer(worker).filter_subjects(self.prefix)

    # ------------------------------------------------------------------ server state

    async def holds_cortex_data(self) -> str | None:
        """A description of existing Cortex data on the server, or None when there is none."""
        try:
            info = await self.js.stream_info(EVENTS_STREAM)
        except nats.js.errors.NotFoundError:
            return None
        return f"stream {EVENTS_STREAM} with {info.state.messages} messages"

    async def reset(self) -> None:
        """Delete Cortex's streams and buckets and the workers' data dir (the embedded memory
        store), then provision afresh. Only between phases: no worker may be running."""
        shutil.rmtree(self.workdir / "data", ignore_errors=True)
        for stream in (EVENTS_STREAM, DLQ_STREAM):
            with contextlib.suppress(nats.js.errors.NotFoundError):
                await self.js.delete_stream(stream)
        for bucket, _, _ in buckets_for(self.settings, doc_buckets()):
            with contextlib.suppress(nats.js.errors.NotFoundError, nats.js.errors.BucketNotFoundError):
                await self.js.delete_key_value(bucket)
        await provision(self.js, self.settings, consumer_specs())

    async def publish_all(self, events: Iterable[BenchEvent], window: int = 2000) -> int:
        """Publish pipelined (a window of unacknowledged publishes); the last stream sequence."""
        pending: list[asyncio.Future[Any]] = []
        last = 0
        for event in events:
            pending.append(await self.js.publish_async(event.subject, event.data,
                                                       headers={"Nats-Msg-Id": event.id}))
            if len(pending) >= window:
                last = max(last, *[(await f).seq for f in pending])
                pending.clear()
        for fut in pending:
            last = max(last, (await fut).seq)
        return last

    # ------------------------------------------------------------------ consumers

    async def drained(self, consumers: Iterable[str]) -> bool:
        for name in consumers:
            info = await self.js.consumer_info(EVENTS_STREAM, name)
            if info.num_pending or info.num_ack_pending:
                return False
        return True

    async def pending(self, consumers: Iterable[str]) -> dict[str, int]:
        """Consumers with messages still pending or unacked, and how many."""
        out: dict[str, int] = {}
        for name in consumers:
            info = await self.js.consumer_info(EVENTS_STREAM, name)
            left = int(info.num_pending or 0) + int(info.num_ack_pending or 0)
            if left:
                out[name] = left
        return out

    async def drain_bounded(self, consumers: list[str], limit_s: float,
                            procs: Iterable[WorkerProc] = ()) -> tuple[float | None, dict[str, int]]:
        """(seconds until drained, {}) or (None, what is still pending) after ``limit_s``."""
        started = time.perf_counter()
        watched = list(procs)
        while True:
            left = await self.pending(consumers)
            if not left:
                return time.perf_counter() - started, {}
            self.check_alive(watched)
            if time.perf_counter() - started > limit_s:
                return None, left
            await asyncio.sleep(0.02)

    async def wait_drained(self, consumers: list[str], limit_s: float, procs: Iterable[WorkerProc] = ()) -> float:
        """Seconds until every consumer has nothing pending or unacked."""
        started = time.perf_counter()
        watched = list(procs)
        while not await self.drained(consumers):
            self.check_alive(watched)
            if time.perf_counter() - started > limit_s:
                raise BenchError(f"consumers {', '.join(consumers)} not drained within {limit_s:.0f}s")
            await asyncio.sleep(0.02)
        return time.perf_counter() - started

    async def wait_leases(self, consumers: list[str], procs: Iterable[WorkerProc], limit_s: float = 60.0) -> None:
        """Wait until every consumer has an active instance (its lease key exists)."""
        kv = await self.js.key_value(BUCKET_LEASES)
        deadline = time.monotonic() + limit_s
        watched = list(procs)
        missing = list(consumers)
        while missing:
            self.check_alive(watched)
            still = []
            for name in missing:
                try:
                    entry = await kv.get(name)
                    if entry.value is None:
                        still.append(name)
                except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
                    still.append(name)
            missing = still
            if missing and time.monotonic() > deadline:
                raise BenchError(f"no active instance for {', '.join(missing)} within {limit_s:.0f}s")
            if missing:
                await asyncio.sleep(0.05)

    @staticmethod
    def check_alive(procs: Iterable[WorkerProc]) -> None:
        for proc in procs:
            if not proc.alive():
                raise BenchError(f"worker {proc.name} exited with code {proc.proc.returncode}; "
                                 f"log {proc.log}:\n{proc.log_tail()}")
