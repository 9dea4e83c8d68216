"""The freshness phase's paced publisher (issue 39, eleventh round): the same stream as the old
awaited publisher, delivered from a helper process, pipelined and caught up in bursts."""

from __future__ import annotations

import asyncio
import contextlib
import random
from itertools import count
from pathlib import Path

import msgspec
import nats.js.errors
import pytest
from nats.aio.client import Client

from shared.config import load_settings
from shared.names import EVENTS_STREAM, stored_form
from shared.provision import provision
from workers.bench import budget
from workers.bench.events import BenchEvent, EventSource
from workers.bench.freshness import plan
from workers.bench.procs import Processes
from workers.bench.publisher import Outgoing, Publisher, PublisherError, publish_paced, reached
from workers.bench.results import Latency, RateResult, Report

Stored = tuple[str, bytes, str | None]


async def old_publish(nc: Client, events: list[BenchEvent], rate: int) -> list[int]:
    """The publisher before the eleventh round, verbatim but for the bookkeeping: paced on
    absolute times, each publish awaited for its sequence."""
    js = nc.jetstream()
    seqs = []
    started = asyncio.get_running_loop().time()
    for i, event in enumerate(events):
        delay = started + i / rate - asyncio.get_running_loop().time()
        if delay > 0:
            await asyncio.sleep(delay)
        ack = await js.publish(event.subject, event.data, headers={"Nats-Msg-Id": event.id})
        seqs.append(ack.seq)
    return seqs


async def fresh_stream(nc: Client) -> None:
    js = nc.jetstream()
    with contextlib.suppress(nats.js.errors.NotFoundError):
        await js.delete_stream(EVENTS_STREAM)
    await provision(js, load_settings({}), [])


async def stored(nc: Client, last: int) -> list[Stored]:
    js = nc.jetstream()
    out = []
    for seq in range(1, last + 1):
        msg = await js.get_msg(EVENTS_STREAM, seq)
        out.append((msg.subject or "", msg.data or b"", (msg.headers or {}).get("Nats-Msg-Id")))
    return out


def planned(seed: int, n: int, id_prefix: str = "fresh") -> list[BenchEvent]:
    """A freshness rate's events as the harness plans them (every 10th a session start)."""
    return plan(EventSource(6, seed, "cortex", id_prefix=id_prefix), random.Random(seed + 2), n, 10)


async def test_the_helper_publishes_the_stream_the_old_publisher_published(nc: Client, nats_url: str,
                                                                           tmp_path: Path) -> None:
    """Same subjects, payloads, message ids and order (so per agent, and session starts at the same
    points) as the awaited publisher sent for the same seed; each delivered sequence is its event's."""
    events = planned(11, 120)
    assert sum(e.kind == "session.start" for e in events) == 12
    await fresh_stream(nc)
    old_seqs = await old_publish(nc, events, 400)
    before = await stored(nc, len(events))

    await fresh_stream(nc)
    procs = Processes(tmp_path, nats_url)
    publisher = await Publisher.start(procs, tmp_path)
    try:
        delivered = await publisher.publish(events, 400)
        again = await publisher.publish(planned(12, 30, "next"), 1000)  # the helper takes one rate after another
    finally:
        publisher.stop()
    assert publisher.proc.proc.returncode == 0  # end of stdin: it closed its connection and exited
    after = await stored(nc, len(events))

    assert after == before == [(stored_form("cortex", e.subject), e.data, e.id) for e in events]
    assert delivered.seqs == old_seqs == list(range(1, len(events) + 1))
    assert again.seqs == list(range(len(events) + 1, len(events) + 31))
    assert delivered.t0 == sorted(delivered.t0) and delivered.elapsed > 0
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".msgpack"]  # noqa: ASYNC240  # each rate's file removed


async def test_a_late_tick_sends_every_event_due_in_one_burst_and_none_early(nc: Client) -> None:
    """Paced on absolute times: a tick sends every event due by its clock reading (a late wake-up
    is caught up at once, not a sleep per message) and never one before its time."""
    await fresh_stream(nc)
    events = [Outgoing(e.subject, e.data, e.id) for e in planned(13, 200)]
    ticks = count()
    rate = 1000

    def clock() -> float:  # every reading 7 ms after the last: the loop always wakes up late
        return 0.007 * next(ticks)

    delivered = await publish_paced(nc.jetstream(), events, rate, clock=clock)
    assert delivered.seqs == list(range(1, 201))
    for i, t0 in enumerate(delivered.t0):
        assert t0 >= i / rate  # not before it is due
        assert t0 - i / rate < 2 * 0.007  # sent at the first tick after it is due
    bursts = len(set(delivered.t0))
    assert bursts < len(events) / 3  # several events a tick


def test_a_rate_the_publisher_did_not_reach_is_flagged_in_the_table() -> None:
    assert reached(1000, 951) and not reached(1000, 949)
    fast = Latency(n=10, p50_ms=1.0, p95_ms=2.0, p99_ms=3.0)
    report = Report()
    report.freshness.rates = [
        RateResult(rate=500, duration_s=1.0, achieved_rate=499.8, rate_reached=True, threads=fast, decisions=fast,
                   boot=fast),
        RateResult(rate=1000, duration_s=1.0, achieved_rate=314.2, rate_reached=False, threads=fast,
                   decisions=fast, boot=fast),
    ]
    rows = {r.name: r for r in budget.rows(report)}
    assert rows["publisher @500/s"].verdict == "pass"
    assert rows["publisher @1000/s"].verdict == "miss"
    assert rows["publisher @1000/s"].value == "314.2 msg/s delivered of 1,000 asked"
    assert "session start → BootDoc @1000/s (delivered 314.2)" in rows  # its latencies say at what rate
    assert "session start → BootDoc @500/s" in rows


def test_a_result_without_the_flag_decodes_and_shows_no_publisher_row() -> None:
    """A JSON written before the field (no ``rate_reached``) still reads, without a publisher row."""
    old = msgspec.json.decode(b'{"rate": 50, "duration_s": 1.0, "achieved_rate": 50.1}', type=RateResult)
    assert old.rate_reached is None
    report = Report()
    report.freshness.rates = [old]
    assert not [r for r in budget.rows(report) if r.name.startswith("publisher")]


async def test_a_publisher_that_fails_says_why_and_the_helper_is_gone(nats_url: str, tmp_path: Path) -> None:
    """No stream for the subjects (nothing acknowledges them): the helper fails the run and exits,
    and the harness gets the reason with the helper's log, not a hang or a short list."""
    procs = Processes(tmp_path, nats_url)
    publisher = await Publisher.start(procs, tmp_path)
    try:
        with pytest.raises(PublisherError, match="the publisher exited"):
            await publisher.publish(planned(14, 5), 100)
    finally:
        publisher.stop()
    assert publisher.proc.proc.returncode not in (None, 0)
