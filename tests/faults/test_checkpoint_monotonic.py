"""A redelivery of events that were applied and checkpointed must not move the checkpoint back.

The server redelivers a message whose ack it never got (the ack was lost with a crashed
server, a dropped connection, or — here, deterministically — a permission that denies the
worker's acks). The loop rightly skips such a message as a duplicate, but the checkpoint is
"the consumer's highest contiguous applied sequence": it must never go down, because the
composed workers (snapshot, narrative, boot) wait on it (shared/watermarks.py) and
``cortex status`` reports it.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import nats
import pytest

from shared.names import BUCKET_CHECKPOINTS, EVENTS_STREAM

pytestmark = pytest.mark.faults

N_EVENTS = 300
SERVER = """
authorization {
  users = [
    { user: admin, password: admin }
    # the channels worker may do everything except ack: every delivery comes back after ack_wait
    { user: worker, password: worker,
      permissions: { publish: { allow: [">"], deny: ["$JS.ACK.CORTEX_EVENTS.channels.>"] },
                     subscribe: { allow: [">"] } } }
  ]
}
"""


async def test_redelivered_duplicates_never_move_the_checkpoint_back(
    tmp_path: Path, faults: Any, make_chat_events: Any
) -> None:
    events = make_chat_events(N_EVENTS, 3, seed=51)
    with faults.server("acks-denied", SERVER) as server:
        admin = server.url("admin:admin")
        faults.init(admin)
        nc = await nats.connect(admin)
        js = nc.jetstream()
        await faults.publish_all(js, events)
        port = faults.http_port()
        faults.procs.start("channels", server.url(), CORTEX_NATS_USER="worker", CORTEX_NATS_PASSWORD="worker",
                           CORTEX_RUNTIME_BATCH_SIZE="100", CORTEX_RUNTIME_ACK_WAIT_S="1",
                           CORTEX_METRICS_PORT=str(port))
        await faults.wait_checkpoint_above(js, "channels", N_EVENTS - 1)

        kv = await js.key_value(BUCKET_CHECKPOINTS)
        watcher = await kv.watch("channels", include_history=False)
        written: list[int] = []

        async def follow() -> None:
            async for entry in watcher:
                if entry is not None and entry.value:
                    written.append(int(entry.value))

        follower = asyncio.create_task(follow())

        async def duplicates_handled() -> bool:  # every event came back once and was skipped
            _, text = await asyncio.to_thread(faults.http_get, port, "/metrics")
            found = re.search(r'cortex_events_total\{outcome="duplicate",worker="channels"\} (\d+)', text)
            return bool(found) and float(found.group(1)) >= N_EVENTS

        await faults.wait_for(duplicates_handled, within=60, interval=0.1)
        info = await js.consumer_info(EVENTS_STREAM, "channels")
        follower.cancel()
        await watcher.stop()
        await nc.close()
    # delivered more often than there are events: redelivered (the consumer's delivery count; the
    # server's num_redelivered counts only those pending at the moment it is asked)
    assert info.delivered.consumer_seq > N_EVENTS, info.delivered
    assert written and min(written) == N_EVENTS, f"checkpoints written after catching up: {written[:20]}"
