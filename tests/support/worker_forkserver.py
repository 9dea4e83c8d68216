"""A test-only fork server for ``WorkerProcs.start`` (tests/conftest.py): ``cortex worker NAME``
without paying the ~0.6 s of CPU its imports cost every time.

One server process per pytest process (started on first use) imports ``workers.cli`` and
``workers.registry`` — every worker's module — once, then waits. A worker start sends it the
command, the full environment, the working directory and the log file (its descriptor, over a
Unix socket); the server forks, and the child becomes what ``python -m workers worker NAME``
would be: a new session, stdout and stderr to the log, the environment replaced, ``workers.cli``'s
``main`` run and its exit code the process's. The workers stay separate OS processes on a real
nats-server — only the interpreter start and the imports are shared.

Why that is safe here: the command line reads the environment only at its entry point
(``shared.config.load_settings``; no module reads settings at import — checked module by module
for this round: ``os.environ`` is read in workers/cli, shared/config.py, shared/natscontext.py at
call time, and by the recall embedders and the embedded server when they run); the server forks
before any thread or event loop exists (it checks ``threading.active_count() == 1`` every time and
refuses otherwise); ``random`` reseeds itself in a forked child (``os.register_at_fork``).

A start falls back to ``subprocess.Popen`` when the server cannot do it the same way: a
``launcher`` command around the worker, an environment whose ``PYTHON*``/``LD_*`` variables differ
from the server's (they act at interpreter start), no ``os.pidfd_open``, or
``CORTEX_TEST_FORKSERVER=0``.

The handle returned is a ``subprocess.Popen`` whose ``poll``/``wait`` read the exit status the
server writes to a pipe when it reaps the child (the child is the server's, not pytest's);
``send_signal``/``kill``/``terminate`` are Popen's own (``os.kill`` on the pid).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

# The server: run as ``python -c SERVER FD`` from the same working directory as a worker would
# be (``sys.path[0]`` is the working directory, as with ``python -m workers``).
# (``import workers.__main__`` would run the command line: sys.argv[0] is its path, not imported.)
SERVER = r"""
import json, os, select, socket, sys, threading

if sys.path[0] == "":  # as `python -m workers`: the working directory, absolute
    sys.path[0] = os.getcwd()
sock = socket.socket(fileno=int(sys.argv[1]))
import workers
import workers.cli
import workers.registry  # every worker's module
# (not workers.recall.worker: its native embedder library starts a thread at import)
import shared.priority, shared.replay  # noqa: E401
workers.cli.build_parser()  # imports every subcommand's module


def threads():  # native ones too: a fork copies only the forking thread
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))

MAIN = os.path.join(os.path.dirname(workers.__file__), "__main__.py")
children = {}  # pidfd -> (pid, status pipe's write end)


def run_child(request, out, own_status, set_up):
    # what `python -m workers ARGS` is, from here on
    sock.close()
    os.close(own_status)
    for pidfd, (_, status) in children.items():
        os.close(pidfd)
        os.close(status)
    os.setsid()
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [MAIN, *request["argv"]]
    os.write(set_up, b"1")  # its session, output and environment are in place before its pid is answered
    os.close(set_up)
    sys.exit(workers.cli.main(request["argv"]))


sock.send(b"ready")
while True:
    ready, _, _ = select.select([sock.fileno(), *children], [], [])
    for fd in ready:
        if fd != sock.fileno():
            pid, status = children.pop(fd)
            _, code = os.waitpid(pid, 0)
            os.write(status, str(os.waitstatus_to_exitcode(code)).encode())
            os.close(status)
            os.close(fd)
            continue
        message, fds, _, _ = socket.recv_fds(sock, 1 << 22, 2)
        if not message:  # pytest's end of the socket closed: it is gone
            sys.exit(0)
        out, status = fds
        if threading.active_count() != 1 or threads() != 1:
            os.close(out)
            os.close(status)
            sock.send(json.dumps({"error": f"{threads()} threads: not forking"}).encode())
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        set_up_r, set_up = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(set_up_r)
            run_child(json.loads(message), out, status, set_up)
        os.close(set_up)
        os.read(set_up_r, 1)  # b"" if the child ended before
        os.close(set_up_r)
        os.close(out)
        children[os.pidfd_open(pid)] = (pid, status)
        sock.send(json.dumps({"pid": pid}).encode())
"""


class ServerGone(RuntimeError):
    pass


class ForkedProcess(subprocess.Popen[bytes]):
    """A worker the fork server started: Popen's interface, its exit status from the server."""

    def __init__(self, pid: int, status: int, args: Sequence[str]) -> None:  # no super(): nothing to spawn
        self.args = list(args)
        self.pid = pid
        self.returncode: int | None = None  # type: ignore[assignment]
        self.stdin = self.stdout = self.stderr = None
        self._child_created = False  # Popen.__del__: nothing of ours to reap
        self._status = status

    def _status_within(self, timeout: float | None) -> int | None:
        if self.returncode is not None:
            return self.returncode
        ready, _, _ = select.select([self._status], [], [], timeout)
        if not ready:
            return None
        data = os.read(self._status, 32)
        os.close(self._status)
        if not data:
            raise ServerGone(f"the fork server ended before it reported worker pid {self.pid}'s exit")
        self.returncode = int(data)
        return self.returncode

    def poll(self) -> int | None:
        return self._status_within(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._status_within(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code

    def __del__(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(OSError):
                os.close(self._status)


def _startup_vars(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(("PYTHON", "LD_"))}


class ForkServer:
    def __init__(self, log: Path) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.env = dict(os.environ)
        with open(log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-c", SERVER, str(theirs.fileno())],
                                         pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        self.log = log
        ours.settimeout(120)
        try:
            ready = ours.recv(16)
        except TimeoutError:
            ready = b""
        if ready != b"ready":
            self.proc.kill()
            raise ServerGone(f"the fork server did not start: {log.read_text(errors='replace')[-2000:]}")

    def can_run(self, env: Mapping[str, str], launcher: Sequence[str]) -> bool:
        return not launcher and self.proc.poll() is None and _startup_vars(env) == _startup_vars(self.env)

    def start(self, argv: Sequence[str], env: Mapping[str, str], log: Path) -> ForkedProcess:
        request = json.dumps({"argv": list(argv), "env": dict(env), "cwd": os.getcwd()}).encode()
        status_r, status_w = os.pipe()
        try:
            with open(log, "wb") as out, self.lock:
                socket.send_fds(self.sock, [request], [out.fileno(), status_w])
                answer = json.loads(self.sock.recv(1 << 16))
        finally:
            os.close(status_w)
        if "pid" not in answer:
            os.close(status_r)
            raise ServerGone(f"the fork server refused: {answer}")
        return ForkedProcess(int(answer["pid"]), status_r, [sys.executable, "-m", "workers", *argv])

    def stop(self) -> None:
        self.sock.close()  # the server exits on its end closing
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class _Current:
    server: ForkServer | None = None


def enabled() -> bool:
    return os.environ.get("CORTEX_TEST_FORKSERVER", "1") != "0" and hasattr(os, "pidfd_open") and hasattr(os, "fork")


def server(log_dir: Path) -> ForkServer:
    """This pytest process's fork server (started on first use)."""
    if _Current.server is None or _Current.server.proc.poll() is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        _Current.server = ForkServer(log_dir / f"forkserver-{os.getpid()}.log")
    return _Current.server


def stop() -> None:
    if _Current.server is not None:
        _Current.server.stop()
        _Current.server = None
