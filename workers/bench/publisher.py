"""The paced publisher of the freshness and capacity phases: the rate asked, delivered.

Until the eleventh round of issue 39 the harness published one event at a time and awaited
each JetStream acknowledgement before the next, in the process that also follows the
documents' KV watches: one socket write and one round trip an event. On the two shared cores,
with the fleet busy, that publisher delivered 244 and 314 msg/s of the 500 and 1 000 asked
(a py-spy profile of the harness at 1 000 asked: 38 % of its samples in the socket write of
nats-py's flusher, one per publish, and 35 % waiting for the acknowledgement).

Now:

* the events are planned and encoded before the window (the harness plans them as before);
* publishing is paced on absolute times (event ``i`` due at ``start + i / rate``): each tick
  sends every event due by now — after a late wake-up the lag is caught up in one burst
  rather than by a sleep per message — and sleeps until the next one is due (at least
  ``MIN_TICK_S``);
* publishes are pipelined (JetStream's asynchronous publish): a burst goes out in one write,
  the acknowledgements are gathered as they come (each gives the event's stream sequence), at
  most ``publish_async_max_pending`` outstanding;
* it runs in a helper process of its own (``python -m workers.bench.publisher``), so the
  harness's watches do not hold up its ticks, and its CPU is reported on its own line.

The events and their order are those of the old publisher: the same subjects, payloads and
``Nats-Msg-Id`` headers, in plan order on one connection (so per agent too). An event's
``t0`` is the clock just before its burst is handed to the client (the old publisher's was
just before its publish). The clock is ``time.perf_counter`` — ``CLOCK_MONOTONIC`` on Linux,
one clock for every process on the machine — so the harness compares it with its watches'
arrival times.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import msgspec
from nats.js.client import JetStreamContext

from workers.bench.events import BenchEvent
from workers.bench.procs import Processes, WorkerProc

MIN_TICK_S: Final = 0.002  # a tick sends every event due; at 1 000 msg/s about two
ACK_LIMIT_S: Final = 60.0  # every acknowledgement within this after the last send, or the run fails
SHORTFALL: Final = 0.05  # a rate is reported *not reached* when delivered below (1 - SHORTFALL) of it


class Outgoing(msgspec.Struct, array_like=True, frozen=True):
    """An event as the publisher sends it."""

    subject: str
    data: bytes
    id: str


class Job(msgspec.Struct, frozen=True):
    """One paced run, as the harness asks the helper for it (a line on its stdin)."""

    events: str  # path of a msgpack list of ``Outgoing``
    rate: float


class Delivered(msgspec.Struct, frozen=True):
    """What a paced run delivered: each event's stream sequence and send time, in plan order,
    and the seconds from the first send to the last acknowledgement."""

    seqs: list[int]
    t0: list[float]
    elapsed: float
    sent_s: float = 0.0  # first send → last send (the rest of ``elapsed`` waited for acknowledgements)
    max_lag_ms: float = 0.0  # the most an event was sent after it was due (the loop woke up late)

    @property
    def rate(self) -> float:
        return len(self.seqs) / self.elapsed if self.elapsed > 0 else 0.0


def reached(asked: float, delivered: float) -> bool:
    """Whether the publisher delivered the rate asked (within ``SHORTFALL``)."""
    return delivered >= (1.0 - SHORTFALL) * asked


async def publish_paced(js: JetStreamContext, events: Sequence[Outgoing], rate: float,
                        clock: Callable[[], float] = time.perf_counter) -> Delivered:
    """Publish ``events`` at ``rate`` msg/s on absolute times, pipelined (see the module docstring)."""
    started = clock()
    futures = []
    t0: list[float] = []
    count = len(events)
    i = 0
    while i < count:
        now = clock()
        due = min(count, int((now - started) * rate) + 1)
        while i < due:
            event = events[i]
            futures.append(await js.publish_async(event.subject, event.data, headers={"Nats-Msg-Id": event.id}))
            t0.append(now)
            i += 1
        if i < count:
            await asyncio.sleep(max(MIN_TICK_S, started + i / rate - clock()))
    sent_s = clock() - started
    acks = await asyncio.wait_for(asyncio.gather(*futures), ACK_LIMIT_S)
    lag = max((t - started - k / rate for k, t in enumerate(t0)), default=0.0)
    return Delivered(seqs=[ack.seq for ack in acks], t0=t0, elapsed=clock() - started, sent_s=sent_s,
                     max_lag_ms=round(1000 * lag, 1))


def write_events(path: Path, events: Sequence[Outgoing]) -> None:
    path.write_bytes(msgspec.msgpack.encode(list(events)))


def read_events(path: Path) -> list[Outgoing]:
    return msgspec.msgpack.decode(path.read_bytes(), type=list[Outgoing])


class PublisherError(Exception):
    """The helper process failed; the message says how, with its log's tail."""


class Publisher:
    """The harness's end of the helper process: hands it a rate's events, reads back what it
    delivered. Started once a phase (``start``), stopped after it (``stop``)."""

    def __init__(self, proc: WorkerProc, workdir: Path) -> None:
        self.proc = proc
        self._workdir = workdir
        self._runs = 0

    @classmethod
    async def start(cls, procs: Processes, workdir: Path) -> Publisher:
        proc = procs.start_module("bench-publisher", "workers.bench.publisher")
        publisher = cls(proc, workdir)
        line = await publisher._read_line()
        if line.strip() != b"ready":
            publisher.stop()
            raise PublisherError(f"the publisher did not start (exit {proc.proc.poll()}):\n{proc.log_tail()}")
        return publisher

    async def _read_line(self) -> bytes:
        assert self.proc.proc.stdout is not None
        return await asyncio.to_thread(self.proc.proc.stdout.readline)

    async def publish(self, events: Sequence[BenchEvent], rate: float) -> Delivered:
        """Publish ``events`` at ``rate`` from the helper process; what it delivered."""
        self._runs += 1
        path = self._workdir / f"publish-{self._runs}.msgpack"
        write_events(path, [Outgoing(e.subject, e.data, e.id) for e in events])
        try:
            stdin = self.proc.proc.stdin
            assert stdin is not None
            stdin.write(msgspec.json.encode(Job(events=str(path), rate=rate)) + b"\n")
            stdin.flush()
            line = await self._read_line()
        finally:
            path.unlink(missing_ok=True)
        if not line:
            raise PublisherError(f"the publisher exited (code {self.proc.proc.poll()}):\n{self.proc.log_tail()}")
        delivered = msgspec.json.decode(line, type=Delivered)
        if len(delivered.seqs) != len(events):
            raise PublisherError(f"the publisher delivered {len(delivered.seqs)} of {len(events)} events")
        return delivered

    def cpu_seconds(self) -> float | None:
        return self.proc.cpu_seconds()

    def stop(self) -> None:
        """End of stdin: the helper closes its connection and exits (SIGTERM after the grace)."""
        with contextlib.suppress(OSError, ValueError):
            if self.proc.proc.stdin is not None:
                self.proc.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.proc.wait(5)
        self.proc.stop()


async def _helper() -> int:
    """Helper-process mode: connect, say ``ready``; then for each ``Job`` line on stdin, load its
    events, publish them paced and answer one ``Delivered`` line; stop at the end of stdin."""
    from shared.config import load_settings
    from shared.connection import connect

    nc = await connect(load_settings(), "cortex-bench-publisher")
    js = nc.jetstream()
    out = sys.stdout.buffer
    try:
        out.write(b"ready\n")
        out.flush()
        while line := await asyncio.to_thread(sys.stdin.buffer.readline):
            job = msgspec.json.decode(line, type=Job)
            events = read_events(Path(job.events))
            delivered = await publish_paced(js, events, job.rate)
            out.write(msgspec.json.encode(delivered) + b"\n")
            out.flush()
    finally:
        with contextlib.suppress(Exception):
            await nc.close()
    return 0


def main() -> int:
    return asyncio.run(_helper())


if __name__ == "__main__":
    sys.exit(main())
