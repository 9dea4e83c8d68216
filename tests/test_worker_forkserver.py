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


def _fresh(args: list[str], env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workers", *args], env=env, input=stdin,
                          stdin=subprocess.DEVNULL if stdin is None else None, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize(("args", "stdin", "url"), [
    # a user's error on start: one line, exit 1 — a process that led its own session (as a forked
    # worker does) logged its priority before it, at INFO: the command must not lead one
    (["worker", "threads"], None, "https://nats.example:443"),
    # stdin read to its end, lines numbered on stderr, stdout and the exit code
    (["publish", "-"], '{"type": "msg.received"}\nnot json\n', "server"),
    (["threads", "ghost"], None, "server"),
    (["no-such-command"], None, "server"),
])
def test_a_forked_command_says_and_exits_what_a_fresh_interpreter_does(
    tmp_path: Path, nats_url: str, args: list[str], stdin: str | None, url: str
) -> None:
    env = {**os.environ, "CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data")}
    assert _fresh(["init"], env).returncode == 0
    env["CORTEX_NATS_URL"] = nats_url if url == "server" else url
    forks = worker_forkserver.server()
    forked = forks.run(args, env, stdin, 60)
    fresh = _fresh(args, env, stdin)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert forked.returncode != 0 or args[0] == "publish"
    assert forked.stderr.strip(), "each case says something on stderr"


def test_a_forked_command_past_its_timeout_is_killed_with_what_it_said(tmp_path: Path, nats_url: str) -> None:
    env = {**os.environ, "CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
           "CORTEX_LOG_LEVEL": "INFO"}
    assert _fresh(["init"], env).returncode == 0
    forks = worker_forkserver.server()
    before = _children(forks.proc.pid)
    with pytest.raises(subprocess.TimeoutExpired) as timed_out:
        forks.run(["worker", "threads"], env, None, 3)  # a worker runs until stopped
    assert isinstance(timed_out.value.stderr, bytes) and b"threads" in timed_out.value.stderr
    assert _children(forks.proc.pid) <= before  # killed and reaped


def _children(pid: int) -> set[str]:
    return set((Path(f"/proc/{pid}/task/{pid}/children")).read_text().split())


def test_run_cortex_without_the_server_is_subprocess_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORTEX_TEST_FORKSERVER", "0")
    env = {**os.environ, "CORTEX_DATA_DIR": str(tmp_path / "data")}
    result = worker_forkserver.run_cortex(["no-such-command"], env=env, timeout=60)
    assert result.args[:3] == [sys.executable, "-m", "workers"] and result.returncode == 2
    assert "invalid choice" in result.stderr
