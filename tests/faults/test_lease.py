"""Two instances of one worker: one active, one standby; SIGKILL the active one and the standby
takes over within the lease TTL with no lost update and no double apply."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

import nats
import pytest

from shared.kv import kv_read
from shared.names import BUCKET_LEASES

pytestmark = pytest.mark.faults


async def lease_holder(js: Any) -> str | None:
    raw, _ = await kv_read(await js.key_value(BUCKET_LEASES), "channels")
    return raw.decode() if raw else None


async def test_standby_takes_over_after_the_active_instance_is_killed(
    nats_url: str, workers_procs: Any, make_chat_events: Any, wait_for: Any
) -> None:
    result = subprocess.run([sys.executable, "-m", "workers", "init"], capture_output=True, text=True,
                            env={**os.environ, "CORTEX_NATS_URL": nats_url}, timeout=60)
    assert result.returncode == 0, result.stderr
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    events = make_chat_events(3000, 4)
    first_half, second_half = events[:1500], events[1500:]
    for s, d, i in first_half:
        await js.publish(s, d, headers={"Nats-Msg-Id": i})

    a = workers_procs.start("channels", nats_url)
    holder = await wait_for(lambda: lease_holder(js), within=30)
    b = workers_procs.start("channels", nats_url)
    active, standby = (a, b) if f"-{a.pid}-" in holder else (b, a)
    assert f"-{active.pid}-" in holder

    await wait_for(lambda: _checkpoint_at_least(js, 1500), within=60)
    assert f"-{active.pid}-" in (await lease_holder(js) or ""), "the standby must not take the lease"
    active.send_signal(signal.SIGKILL)
    active.wait(10)
    for s, d, i in second_half:
        await js.publish(s, d, headers={"Nats-Msg-Id": i})
    new_holder = await wait_for(lambda: _held_by(js, standby.pid), within=15)  # TTL is 2 s in tests
    assert f"-{standby.pid}-" in new_holder
    await wait_for(lambda: _checkpoint_at_least(js, 3000), within=60)

    counts: dict[str, int] = {}
    for subject, _, _ in events:
        agent = subject.split(".")[2]
        counts[agent] = counts.get(agent, 0) + 1
    kv = await js.key_value("cortex_channels")
    for agent, n in counts.items():
        raw, _ = await kv_read(kv, agent)
        import msgspec

        from schemas.docs import ChannelsDoc

        doc = msgspec.json.decode(raw, type=ChannelsDoc)
        assert sum(c.messages for c in doc.channels) == n  # nothing lost, nothing doubled
        assert doc.integrity.events == n
    await nc.close()


async def _checkpoint_at_least(js: Any, seq: int) -> bool:
    raw, _ = await kv_read(await js.key_value("cortex_checkpoints"), "channels")
    return bool(raw) and int(raw) >= seq


async def _held_by(js: Any, pid: int) -> str | None:
    holder = await lease_holder(js)
    return holder if holder and f"-{pid}-" in holder else None


