"""SIGTERM while events pour in: each worker finishes or gives back its batch within the drain
limit, exits 0 well inside the pod's grace period, and has acked nothing it did not apply.
Restarted, the workers end with the documents of a clean run."""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from typing import Any

import msgspec
import nats
import pytest
from cortex_testkit import held_back

from shared.kv import kv_read
from shared.names import EVENTS_STREAM

pytestmark = pytest.mark.faults

N_EVENTS = 6000
HELD = 1000  # published after the workers stopped (the restart below applies them)
AGENTS = 6
DRAIN_S = 3
GRACE_S = DRAIN_S + 10  # k8s: terminationGracePeriodSeconds = CORTEX_RUNTIME_DRAIN_TIMEOUT_S + 10 s
ENV = {"CORTEX_RUNTIME_DRAIN_TIMEOUT_S": str(DRAIN_S), "CORTEX_RUNTIME_BATCH_SIZE": "200"}
OWNED = {"channels": ("cortex_channels",), "threads": ("cortex_threads",),
         "decisions": ("cortex_decisions", "cortex_commitments")}


class Stamp(msgspec.Struct):
    """Just the watermark of any document."""

    class Integrity(msgspec.Struct):
        last_seq: int
        events: int

    integrity: Integrity


async def test_sigterm_under_load_drains_in_time_exits_0_and_acks_nothing_unapplied(
    nats_url: str, faults: Any, make_chat_events: Any
) -> None:
    events = make_chat_events(N_EVENTS, AGENTS, seed=41)
    expected = await faults.clean_documents(events, faults.derived_workers, faults.derived_buckets)

    faults.init(nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    procs = {name: faults.procs.start(name, nats_url, **ENV) for name in faults.derived_workers}
    # the last HELD events go out only once every worker has stopped: however fast the workers start
    # and catch up (a forked test worker is up in milliseconds), SIGTERM lands with the stream ahead
    # of them — the first part still pours in while they start, consume and are told to stop
    stopped = asyncio.Event()

    async def publish() -> None:
        await faults.publish_all(js, events[:-HELD])
        await stopped.wait()
        await faults.publish_all(js, events[-HELD:])

    publisher = asyncio.create_task(publish())
    for name, proc in procs.items():  # every worker consuming (its signal handlers installed)
        await faults.wait_active(js, name, proc)
        await faults.wait_checkpoint_above(js, name, 500)

    async def terminate(name: str) -> tuple[str, int, float]:
        started = time.monotonic()
        code = await faults.stop(procs[name], signal.SIGTERM, within=GRACE_S + 20)
        return name, code, time.monotonic() - started

    results = await asyncio.gather(*(terminate(name) for name in procs))
    stopped.set()
    for name, code, seconds in results:
        print(f"{name}: exit {code} after {seconds:.1f}s")
        assert code == 0, f"{name} exited {code}"
        assert seconds < GRACE_S, f"{name} took {seconds:.1f}s to stop (grace {GRACE_S}s)"
    await publisher

    stopped_mid_stream = False
    for name, buckets in OWNED.items():
        ckpt = await faults.checkpoint(js, name)
        info = await js.consumer_info(EVENTS_STREAM, name)
        stopped_mid_stream |= ckpt < N_EVENTS
        assert info.ack_floor.stream_seq <= ckpt, f"{name} acked past what it applied"
        held = await held_back(js, name)  # nak'd messages come back at once, kept ones after ack_wait
        assert not held, f"{name} left {held} of {info.num_ack_pending} unacked messages held (not given back)"
        applied = Counter(faults.agent_of(s) for s, _, _ in events[:ckpt])
        for bucket in buckets:
            kv = await js.key_value(bucket)
            for agent in faults.agents(events):
                raw, _ = await kv_read(kv, agent)
                seen = msgspec.json.decode(raw, type=Stamp).integrity if raw else Stamp.Integrity(0, 0)
                # agents take turns (issue 44): a document may be ahead of the checkpoint, which
                # stays below the oldest message still held; what it says it applied it applied,
                # each event once, and nothing at or below the checkpoint is missing from it
                upto = Counter(faults.agent_of(s) for s, _, _ in events[:seen.last_seq])
                assert seen.events == upto[agent] >= applied[agent], (bucket, agent, ckpt, seen)
    assert stopped_mid_stream, "SIGTERM should land before every worker caught up"
    assert max([await faults.checkpoint(js, name) for name in OWNED]) <= N_EVENTS - HELD  # none read the held

    for name in faults.derived_workers:
        faults.procs.start(name, nats_url, **ENV)
    await faults.wait_caught_up(js, faults.derived_workers)
    got = await faults.documents(js, faults.derived_buckets, faults.agents(events))
    assert got == expected, faults.differences(got, expected)
    await nc.close()


async def test_sigterm_while_nats_is_unreachable_exits_0_within_the_drain_limit(faults: Any) -> None:
    from shared.embedded import free_port

    proc = faults.procs.start("channels", f"nats://127.0.0.1:{free_port()}", **ENV)  # nothing listens there
    log = faults.tmp / "channels-0.log"

    async def retrying() -> bool:
        return log.exists() and "nats_connect_failed" in log.read_text()

    await faults.wait_for(retrying, within=30)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        code = await faults.wait_exit(proc, within=GRACE_S)
    finally:
        proc.kill()
    assert code == 0 and time.monotonic() - started < GRACE_S
