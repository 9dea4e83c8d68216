"""Worker processes for the benchmark: ``cortex worker NAME`` as a user runs it.

Every process the harness starts is tracked by its pid and stopped by that pid (SIGTERM,
then SIGKILL after a grace period); nothing else is ever signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Final

# Settings a benchmark must not inherit: it chooses its own server, data dir and logging,
# runs live (never shadow), one partition unless a phase says otherwise (scaleout), no
# metrics port (several processes would collide), no workspace files, and no LLM (the
# narrative would call the API).
_NOT_INHERITED: Final = frozenset({
    "CORTEX_NATS_URL", "CORTEX_DATA_DIR", "CORTEX_LOG_LEVEL", "CORTEX_MODE", "CORTEX_PARTITIONS", "CORTEX_PARTITION",
    "CORTEX_METRICS_PORT", "CORTEX_WORKSPACE", "ANTHROPIC_API_KEY", "CORTEX_RUNTIME_DRAIN_TIMEOUT_S",
    "CORTEX_LLM_PROVIDER",  # without it (and ANTHROPIC_API_KEY) no provider is configured
})


NICENESS: Final = "CORTEX_RUNTIME_THROUGHPUT_NICENESS"


def worker_env(base: Mapping[str, str], url: str, data_dir: str) -> dict[str, str]:
    env = {k: v for k, v in base.items() if k not in _NOT_INHERITED}
    # Shutdown is not measured: a worker stopped mid-backlog gives its batch back quickly.
    env.update(CORTEX_NATS_URL=url, CORTEX_DATA_DIR=data_dir, CORTEX_LOG_LEVEL="WARNING",
               CORTEX_RUNTIME_DRAIN_TIMEOUT_S="2")
    return env


def inherited_settings(base: Mapping[str, str]) -> list[str]:
    """Names (never values) of the CORTEX_* variables the workers inherit."""
    return sorted(k for k in base if k.startswith("CORTEX_") and k not in _NOT_INHERITED)


def peak_rss_mb(pid: int) -> float | None:
    """The process's peak resident set (``VmHWM``) in MB, or None when unreadable."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU the process has used so far (``/proc/<pid>/stat``), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


def child_pid(marker: str) -> int | None:
    """The pid of this process's child whose command line contains ``marker``, or None."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
        if parent == me and marker in command:
            return int(entry.name)
    return None


class WorkerProc:
    def __init__(self, name: str, proc: subprocess.Popen[bytes], log: Path, profile: Path | None) -> None:
        self.name = name
        self.proc = proc
        self.log = log
        self.profile = profile
        self.started = time.perf_counter()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def peak_rss_mb(self) -> float | None:
        return peak_rss_mb(self.pid) if self.alive() else None

    def cpu_seconds(self) -> float | None:
        return cpu_seconds(self.pid) if self.alive() else None

    def log_tail(self, lines: int = 15) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def terminate(self) -> None:
        """SIGTERM: the worker stops fetching, gives back its batch and releases its lease."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)

    def stop(self, grace_s: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL after ``grace_s``; returns the exit code."""
        if self.proc.poll() is None:
            self.terminate()
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode


class Processes:
    """Starts worker processes and remembers them, so a failing run leaves none behind."""

    def __init__(self, workdir: Path, url: str, base_env: Mapping[str, str] | None = None) -> None:
        self.workdir = workdir
        self.env = worker_env(os.environ if base_env is None else base_env, url, str(workdir / "data"))
        self._procs: list[WorkerProc] = []

    def start(self, name: str, profile_dir: Path | None = None, args: tuple[str, ...] = (),
              env: Mapping[str, str] | None = None, pipeline: bool = False) -> WorkerProc:
        """``cortex worker NAME [args]``; ``env`` adds settings (e.g. ``CORTEX_PARTITIONS``).

        ``pipeline``: one of the fleet the freshness, capacity, API … phases run, its priority
        class as a user's (``shared.priority``: a throughput worker's process niced, unless the
        caller's CORTEX_RUNTIME_THROUGHPUT_NICENESS says otherwise); else a worker measured alone,
        at the niceness of the harness — its rate is its own, not what the machine's other load
        leaves a niced process."""
        index = len(self._procs)
        if not pipeline:
            env = {NICENESS: "0", **(env or {})}
        log = self.workdir / f"{name}-{index}.log"
        profile = None
        cmd = [sys.executable, "-m", "workers", "worker", name, *args]
        if profile_dir is not None:
            profile_dir.mkdir(parents=True, exist_ok=True)
            profile = profile_dir / f"{name}.prof"
            cmd = [sys.executable, "-m", "workers.bench.cpuprof", str(profile), "worker", name, *args]
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, env={**self.env, **(env or {})}, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        worker = WorkerProc(name, proc, log, profile)
        self._procs.append(worker)
        return worker

    def start_module(self, name: str, module: str, *args: str) -> WorkerProc:
        """A helper process of the harness itself (``python -m module args``), talked to through
        its stdin and stdout."""
        log = self.workdir / f"{name}-{len(self._procs)}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", module, *args], env=self.env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=out, start_new_session=True)
        helper = WorkerProc(name, proc, log, None)
        self._procs.append(helper)
        return helper

    def stop_all(self) -> None:
        stop_together(self._procs)


def stop_together(procs: list[WorkerProc], grace_s: float = 15.0) -> None:
    """SIGTERM to every process first, then wait for each (SIGKILL after the grace)."""
    for proc in procs:
        proc.terminate()
    deadline = time.monotonic() + grace_s
    for proc in procs:
        proc.stop(grace_s=max(0.1, deadline - time.monotonic()))
