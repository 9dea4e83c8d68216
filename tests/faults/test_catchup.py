"""Late starts and changed consumer settings.

* Catch-up: every event is in the stream long before the workers start; the documents
  equal those of a run whose workers consumed the events live, as they were published.
* Changed consumer config: a worker killed mid-stream comes back with another ack wait
  batch size and read-ahead (so ``max_ack_pending`` changes too); its durable consumer is updated in
  place and the documents still equal a clean run.
"""

from __future__ import annotations

import signal
from typing import Any

import nats
import pytest

from shared.names import EVENTS_STREAM

pytestmark = pytest.mark.faults

N_EVENTS = 3000
AGENTS = 5


async def test_workers_started_after_every_event_was_published_equal_a_live_run(
    nats_url: str, faults: Any, make_chat_events: Any
) -> None:
    events = make_chat_events(N_EVENTS, AGENTS, seed=21)
    live = await faults.clean_documents(events, faults.derived_workers, faults.derived_buckets, live=True)

    faults.init(nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await faults.publish_all(js, events)
    for name in faults.derived_workers:  # the durables exist and hold the whole backlog
        info = await js.consumer_info(EVENTS_STREAM, name)
        assert info.num_pending == N_EVENTS and await faults.checkpoint(js, name) == 0
    for name in faults.derived_workers:
        faults.procs.start(name, nats_url)
    await faults.wait_caught_up(js, faults.derived_workers)
    got = await faults.documents(js, faults.derived_buckets, faults.agents(events))
    assert got == live, faults.differences(got, live)
    await nc.close()


async def test_worker_restarted_with_another_ack_wait_and_batch_size_resumes_exactly(
    nats_url: str, faults: Any, make_chat_events: Any
) -> None:
    events = make_chat_events(N_EVENTS, AGENTS, seed=22)
    expected = await faults.clean_documents(events, faults.derived_workers, faults.derived_buckets)

    faults.init(nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    before = {"CORTEX_RUNTIME_BATCH_SIZE": "50", "CORTEX_RUNTIME_ACK_WAIT_S": "30"}
    procs = {name: faults.procs.start(name, nats_url, **before) for name in faults.derived_workers}
    await faults.publish_all(js, events[: N_EVENTS // 2])
    for name, proc in procs.items():
        await faults.wait_checkpoint_above(js, name, 200)
        assert await faults.stop(proc, signal.SIGKILL) == -signal.SIGKILL
    assert (await js.consumer_info(EVENTS_STREAM, "channels")).config.ack_wait == 30

    # a read-ahead below the batch is a batch: max_ack_pending is 2 batches
    after = {"CORTEX_RUNTIME_BATCH_SIZE": "1200", "CORTEX_RUNTIME_ACK_WAIT_S": "7", "CORTEX_RUNTIME_READ_AHEAD": "600"}
    for name in faults.derived_workers:
        faults.procs.start(name, nats_url, **after)
    await faults.publish_all(js, events[N_EVENTS // 2:])
    await faults.wait_caught_up(js, faults.derived_workers)
    for name in faults.derived_workers:
        config = (await js.consumer_info(EVENTS_STREAM, name)).config
        assert (config.ack_wait, config.max_ack_pending) == (7, 2400), name
    got = await faults.documents(js, faults.derived_buckets, faults.agents(events))
    assert got == expected, faults.differences(got, expected)
    assert await faults.dead_letters(js) == []
    await nc.close()
