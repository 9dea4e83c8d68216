"""The test-only fork server behind ``WorkerProcs.start`` (tests/support/worker_forkserver.py):
a worker it starts is the process ``python -m workers worker NAME`` would be — its own pid and
session, the environment it was given (a setting only the request carries decides the outcome),
the same exit code and output as a fresh interpreter."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import worker_forkserver

pytestmark = pytest.mark.skipif(not worker_forkserver.enabled(), reason="no fork server (CORTEX_TEST_FORKSERVER=0)")


def test_a_worker_that_cannot_start_fails_as_a_fresh_interpreter_does(tmp_path: Path, nats_url: str,
                                                                     _forkserver_dir: Path) -> None:
    env = {**os.environ, "CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
           "CORTEX_RUNTIME_LEASE_TTL_S": "soon"}
    forked = worker_forkserver.server(_forkserver_dir).start(["worker", "threads"], env, tmp_path / "forked.log")
    code = forked.wait(60)
    fresh = subprocess.run([sys.executable, "-m", "workers", "worker", "threads"], env=env, capture_output=True,
                           timeout=60)
    assert code == fresh.returncode != 0
    assert (tmp_path / "forked.log").read_bytes() == fresh.stdout + fresh.stderr
    assert b"CORTEX_RUNTIME_LEASE_TTL_S" in fresh.stderr


async def test_a_forked_worker_is_its_own_process_with_its_environment(workers_procs: Any, nats_url: str,
                                                                        _forkserver_dir: Path) -> None:
    proc = workers_procs.start("threads", nats_url)
    server = worker_forkserver.server(_forkserver_dir)
    assert isinstance(proc, worker_forkserver.ForkedProcess)
    assert proc.pid not in (os.getpid(), server.proc.pid) and os.getsid(proc.pid) == proc.pid
    assert proc.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(0.01)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(30) == -signal.SIGKILL and proc.poll() == -signal.SIGKILL
