"""Issue 39, eleventh round: priority classes. A `cortex worker` process running only throughput
workers (recall, knowledge, narrative, traces, channels, snapshot, extraction) lowers its own
priority, every thread of it, so the latency workers a session start waits for (threads,
decisions, boot, api) get the cores first; CORTEX_RUNTIME_THROUGHPUT_NICENESS=0 turns it off.
Real `cortex worker` processes; their niceness read from /proc as the kernel schedules them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cortex_testkit import wait_until

from shared.config import load_settings
from shared.embedded import free_port
from shared.priority import process_niceness
from workers.registry import all_specs

LATENCY = {"threads", "decisions", "boot", "api"}
_ENABLED = Path("/proc/sys/kernel/sched_autogroup_enabled")
AUTOGROUPS = _ENABLED.exists() and _ENABLED.read_text().strip() == "1"


def test_the_latency_workers_are_the_ones_a_session_start_or_a_turn_waits_for() -> None:
    specs = all_specs()
    assert {name for name, spec in specs.items() if spec.priority == "latency"} == LATENCY
    settings = load_settings({})
    assert process_niceness([specs["recall"]], settings) == 10
    assert process_niceness([specs["knowledge"], specs["channels"]], settings) == 10
    assert process_niceness([specs["threads"]], settings) == 0
    # one process running both classes (`cortex up`, `cortex demo`): its most urgent worker decides
    assert process_niceness(list(specs.values()), settings) == 0
    assert process_niceness([specs["recall"]], load_settings({"CORTEX_RUNTIME_THROUGHPUT_NICENESS": "0"})) == 0
    assert process_niceness([specs["recall"]], load_settings({"CORTEX_RUNTIME_THROUGHPUT_NICENESS": "15"})) == 15


def _niceness_of_threads(pid: int) -> set[int]:
    """The niceness of every thread of ``pid`` (/proc/<pid>/task/<tid>/stat, field 19)."""
    out = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        out.add(int(fields[16]))
    return out


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads each thread's niceness from /proc")
def test_a_throughput_worker_process_yields_the_cores_and_a_latency_one_does_not(tmp_path: Path) -> None:
    own = os.getpriority(os.PRIO_PROCESS, 0)  # a test run under `nice` starts every child there
    url = f"nats://127.0.0.1:{free_port()}"  # nothing listens: the niceness is taken before connecting
    cases = {"knowledge": ({}, max(own, 10)), "threads": ({}, own),
             "recall": ({"CORTEX_RUNTIME_THROUGHPUT_NICENESS": "0"}, own)}
    procs = {}
    for name, (extra, _) in cases.items():
        log = tmp_path / f"{name}.log"
        env = {**os.environ, "CORTEX_LOG_FORMAT": "json", "CORTEX_LOG_LEVEL": "DEBUG",  # a latency one: DEBUG
               "CORTEX_DATA_DIR": str(tmp_path / name), **extra}
        with open(log, "wb") as out:
            procs[name] = (subprocess.Popen([sys.executable, "-m", "workers", "worker", name, "--nats-url", url],
                                            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True),
                           log)
    try:
        for name, (_, expected) in cases.items():
            proc, log = procs[name]

            def said(log: Path = log) -> dict[str, object] | None:
                # the process has set its niceness once it says so; it then retries its connect
                records = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
                mine = [r for r in records if r.get("event") == "process_priority"]
                return mine[0] if mine and any(r.get("event") == "nats_connect_failed" for r in records) else None

            record = wait_until(said, within=60)
            assert record["niceness"] == expected and record["workers"] == name
            assert _niceness_of_threads(proc.pid) == {expected}, name  # every thread, started before or after
            if AUTOGROUPS:  # its session's group too (it leads the session): else it competes as an equal
                group = int(Path(f"/proc/{proc.pid}/autogroup").read_text().split("nice")[1])
                assert group == (10 if name == "knowledge" else 0) == record["autogroup"], name
    finally:
        for proc, _ in procs.values():
            proc.send_signal(signal.SIGTERM)
        for proc, _ in procs.values():
            proc.wait(timeout=30)
