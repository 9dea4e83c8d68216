"""What `cortex replay` shows while it works: the phase until it consumes, then the sequence,
the rate and the time left (issue 15, item 16: it printed identical "0/18" lines while it
waited for a lease)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from typing import Any

from cortex_testkit import drained

from shared.replay import ReplayProgress


def test_a_worker_that_has_not_started_consuming_shows_its_phase() -> None:
    progress = ReplayProgress(worker="threads", target=18, phase="waiting 10s for its running instance to stop writing")
    assert progress.describe(now=100.0) == "threads waiting 10s for its running instance to stop writing"


def test_a_consuming_worker_shows_sequence_rate_and_eta() -> None:
    progress = ReplayProgress(worker="threads", target=5000, applied=1200, phase="replaying", replay_started=100.0)
    assert progress.describe(now=102.0) == "threads 1200/5000 600/s ETA 6s"
    progress.target = 1_000_000
    assert progress.describe(now=102.0) == "threads 1200/1000000 600/s ETA 27m45s"


def test_no_rate_before_a_second_has_passed_or_anything_was_applied() -> None:
    progress = ReplayProgress(worker="boot", target=50, applied=0, phase="replaying", replay_started=100.0)
    assert progress.describe(now=105.0) == "boot 0/50"
    progress.applied = 10
    assert progress.describe(now=100.5) == "boot 10/50"
    progress.done = True
    assert progress.describe(now=200.0) == "boot done"


async def test_the_cli_names_the_wait_for_the_running_instance_and_prints_no_repeated_lines(
    nats_url: str, workers_procs: Any, wait_for: Any, make_chat_events: Any
) -> None:
    import nats

    assert subprocess.run([sys.executable, "-m", "workers", "init", "--nats-url", nats_url]).returncode == 0
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        for subject, data, msg_id in make_chat_events(200, 3):
            await js.publish(subject, data, headers={"Nats-Msg-Id": msg_id})
        workers_procs.start("threads", nats_url)  # it holds the lease (TTL 2 s)
        await wait_for(lambda: drained(js, ["threads"]), within=60)
    finally:
        await nc.close()
    result = subprocess.run([sys.executable, "-m", "workers", "replay", "--worker", "threads", "--nats-url", nats_url],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "replay: threads waiting 2s for its running instance to stop writing" in lines, lines
    assert all(a != b for a, b in itertools.pairwise(lines)), lines  # a log, not a wall
    assert lines[-1] == "replay: threads done"
    assert result.stdout.startswith("replayed threads for all agents in ")
