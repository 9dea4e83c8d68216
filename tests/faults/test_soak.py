"""Soak: many events across many agents, random workers killed, terminated and taken over at
random points (seeded), some malformed events mixed in.

At the end the documents equal those of a clean run over the same events, and no event is
unaccounted for: every valid event is counted in every owning document's
``integrity.events`` of its agent, and every malformed one is in CORTEX_DLQ once per
consuming worker, with a reason.

CI size: ``SOAK_EVENTS`` (default 3000) over ``SOAK_AGENTS`` (default 10) with
``SOAK_FAULTS`` (default 6) faults. Full size (docs/reliability.md):
``.venv/bin/pytest -m slow tests/faults/test_soak.py`` — 100 000 events across 50 agents.
``SOAK_SEED`` picks another fault schedule; a failure prints the seed and the schedule.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import msgspec
import nats
import pytest
from nats.js.client import JetStreamContext

from shared.names import EVENTS_STREAM

pytestmark = pytest.mark.faults

SEED = int(os.environ.get("SOAK_SEED", "20260217"))
ENV = {"CORTEX_RUNTIME_DRAIN_TIMEOUT_S": "5", "CORTEX_LOG_LEVEL": "INFO"}  # INFO: leases and rewinds
ACTIONS = ("sigkill", "sigterm", "takeover")


class Stamp(msgspec.Struct):
    class Integrity(msgspec.Struct):
        events: int

    integrity: Integrity


def malformed_events(rng: random.Random, count: int, agents: int) -> list[tuple[str, bytes, str]]:
    """Bad input of every kind the decoder rejects, on subjects the workers consume."""
    out = []
    for i in range(count):
        agent = f"agent-{rng.randrange(agents)}"
        other = f"agent-{(int(agent.split('-')[1]) + 1) % agents}" if agents > 1 else "someone-else"
        base = {"id": f"bad-{i}", "agent": agent, "session": "s", "ts": "2026-02-17T10:00:00Z",
                "role": "user", "content": "hello"}
        variant = i % 6
        if variant == 0:
            data = b'{"id": "bad-%d", "agent": ' % i  # truncated JSON
        elif variant == 1:
            data = msgspec.json.encode({**base, "agent": other})  # payload agent != subject agent
        elif variant == 2:
            data = msgspec.json.encode({**base, "id": f"has spaces {i}"})
        elif variant == 3:
            data = msgspec.json.encode({k: v for k, v in base.items() if k != "content"})
        elif variant == 4:
            data = msgspec.json.encode({**base, "role": "overlord"})
        else:
            data = msgspec.json.encode({**base, "ts": "yesterday"})
        out.append((f"cortex.msg.{agent}.received", data, f"bad-{i}"))
    return out


def mixed_events(make_chat_events: Any, n: int, agents: int, rng: random.Random) -> tuple[list[Any], set[str]]:
    valid = make_chat_events(n, agents, seed=rng.randrange(1 << 30))
    bad = malformed_events(rng, max(6, n // 100), agents)
    events = list(valid)
    for event in bad:
        events.insert(rng.randrange(len(events) + 1), event)
    return events, {i for _, _, i in bad}


@dataclass
class Fault:
    after_chunk: int
    worker: str
    action: str
    at_checkpoint: int


class Budget:
    """The test's time: every wait may use what is left of it, so a wait that never ends
    fails with its own diagnosis (what it waited for, the worker's progress, lease and log)
    before pytest-timeout stops the test with nothing but a stack."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def left(self) -> float:
        return max(1.0, self.deadline - time.monotonic())


class Pool:
    """The live instance of each worker, restarted after every fault."""

    def __init__(self, faults: Any, url: str, budget: Budget) -> None:
        self.faults = faults
        self.url = url
        self.budget = budget
        self.active: dict[str, subprocess.Popen[bytes]] = {}

    def start_all(self) -> None:
        for name in self.faults.derived_workers:
            self.active[name] = self.faults.procs.start(name, self.url, **ENV)

    async def inject(self, js: JetStreamContext, fault: Fault) -> None:
        name, proc, left = fault.worker, self.active[fault.worker], self.budget.left
        await self.faults.wait_active(js, name, proc, within=left())  # a fault on a consuming instance
        if fault.action == "takeover":  # a standby waits; the active instance dies; the standby takes over
            standby = self.faults.procs.start(name, self.url, **ENV)
            await self.faults.wait_checkpoint_above(js, name, fault.at_checkpoint, within=left())
            await self.faults.stop(proc, signal.SIGKILL, within=left())
            self.active[name] = standby
            return
        await self.faults.wait_checkpoint_above(js, name, fault.at_checkpoint, within=left())
        sig = signal.SIGKILL if fault.action == "sigkill" else signal.SIGTERM
        code = await self.faults.stop(proc, sig, within=left())
        assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 0), f"{name} exited {code} on {sig.name}"
        self.active[name] = self.faults.procs.start(name, self.url, **ENV)


def schedule(rng: random.Random, total: int, n_faults: int, workers: tuple[str, ...]) -> tuple[list[int], list[Fault]]:
    cuts = sorted(rng.sample(range(total // 10, total), n_faults))
    bounds = [0, *cuts, total]
    faults = []
    for k in range(n_faults):
        lo, hi = bounds[k], bounds[k + 1]
        faults.append(Fault(after_chunk=k, worker=rng.choice(workers), action=rng.choice(ACTIONS),
                            at_checkpoint=rng.randrange(max(1, lo), hi)))
    return bounds, faults


async def run_soak(nats_url: str, faults: Any, make_chat_events: Any, n: int, agents: int, n_faults: int,
                   budget_s: float) -> None:
    """``budget_s``: how long the waits may take in all (less than the test's timeout)."""
    budget = Budget(budget_s)
    rng = random.Random(SEED)
    events, bad_ids = mixed_events(make_chat_events, n, agents, rng)
    bounds, plan = schedule(rng, len(events), n_faults, faults.derived_workers)
    print(f"soak seed={SEED} events={len(events)} malformed={len(bad_ids)} faults={plan}")
    expected = await faults.clean_documents(events, faults.derived_workers, faults.derived_buckets,
                                            within=budget.left())

    faults.init(nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    pool = Pool(faults, nats_url, budget)
    pool.start_all()
    for k, fault in enumerate(plan):  # publish chunk k while fault k lands inside it
        publisher = asyncio.create_task(faults.publish_all(js, events[bounds[k]:bounds[k + 1]]))
        await pool.inject(js, fault)
        await publisher
    await faults.publish_all(js, events[bounds[-2]:])
    last = await faults.wait_caught_up(js, faults.derived_workers, within=budget.left())

    # every event is in the stream exactly once
    assert last == len(events)
    got = await faults.documents(js, faults.derived_buckets, faults.agents(events))
    assert got == expected, (SEED, faults.differences(got, expected))

    # every valid event applied: counted once in each owning document of its agent
    valid = faults.messages_per_agent(e for e in events if e[2] not in bad_ids)
    for key, raw in got.items():
        agent = key.split("/", 1)[1]
        counted = msgspec.json.decode(raw, type=Stamp).integrity.events if raw else 0
        assert counted == valid[agent], (SEED, key, counted, valid[agent])

    # every malformed event dead-lettered once per consuming worker, with a reason
    bad_seqs = {i + 1 for i, e in enumerate(events) if e[2] in bad_ids}
    letters = await faults.dead_letters(js)
    by_worker: dict[str, Counter[int]] = {}
    for letter in letters:
        assert letter.error.strip(), letter
        assert letter.original_subject.startswith("cortex.msg."), letter
        by_worker.setdefault(letter.subject.rsplit(".", 1)[-1], Counter())[letter.stream_seq] += 1
    for name in faults.derived_workers:
        seen = by_worker.get(name, Counter())
        assert set(seen) == bad_seqs, (SEED, name, sorted(set(seen) ^ bad_seqs)[:10])
        assert max(seen.values()) == 1, (SEED, name, "a dead letter was published twice")
    info = await js.stream_info(EVENTS_STREAM)
    assert sum(valid.values()) + len(bad_seqs) == info.state.messages  # zero unaccounted
    await nc.close()


async def test_soak_with_random_worker_faults_ends_equal_to_a_clean_run_with_every_event_accounted_for(
    nats_url: str, faults: Any, make_chat_events: Any
) -> None:
    await run_soak(nats_url, faults, make_chat_events, n=int(os.environ.get("SOAK_EVENTS", "3000")),
                   agents=int(os.environ.get("SOAK_AGENTS", "10")), n_faults=int(os.environ.get("SOAK_FAULTS", "6")),
                   budget_s=100)  # of the default 120 s timeout; ~16 s on an idle machine


@pytest.mark.slow
@pytest.mark.timeout(3600)
async def test_soak_full_size_100k_events_50_agents(nats_url: str, faults: Any, make_chat_events: Any) -> None:
    await run_soak(nats_url, faults, make_chat_events, n=int(os.environ.get("SOAK_EVENTS", "100000")),
                   agents=int(os.environ.get("SOAK_AGENTS", "50")), n_faults=int(os.environ.get("SOAK_FAULTS", "20")),
                   budget_s=3400)
