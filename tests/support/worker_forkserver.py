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
import io
import json
import locale
import os
import select
import socket
import subprocess
import sys
import threading
import time
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


def run_child(request, io, own_status, set_up):
    # what `python -m workers ARGS` is, from here on
    sock.close()
    os.close(own_status)
    for pidfd, (_, status) in children.items():
        os.close(pidfd)
        os.close(status)
    # a worker (WorkerProcs: start_new_session): its own session, one log for stdout and stderr;
    # a command (subprocess.run): the server's session, which it does not lead, and its own stdin,
    # stdout and stderr pipes
    if len(io) == 1:
        os.setsid()
    targets = (1, 2) if len(io) == 1 else (0, 1, 2)
    for n, target in enumerate(targets):
        os.dup2(io[min(n, len(io) - 1)], target)
    for fd in set(io):
        os.close(fd)
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
        message, fds, _, _ = socket.recv_fds(sock, 1 << 22, 4)
        if not message:  # pytest's end of the socket closed: it is gone
            sys.exit(0)
        status, *io = fds
        if threading.active_count() != 1 or threads() != 1:
            for fd in fds:
                os.close(fd)
            sock.send(json.dumps({"error": f"{threads()} threads: not forking"}).encode())
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        set_up_r, set_up = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(set_up_r)
            run_child(json.loads(message), io, status, set_up)
        os.close(set_up)
        os.read(set_up_r, 1)  # b"" if the child ended before
        os.close(set_up_r)
        for fd in io:
            os.close(fd)
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
    # read at interpreter start (the locale: sys.stdout's and sys.stdin's encoding)
    return {k: v for k, v in env.items() if k.startswith(("PYTHON", "LD_", "LC_")) or k == "LANG"}


def _text(data: bytes) -> str:
    """What ``text=True`` makes of a pipe's bytes: the locale's encoding, universal newlines."""
    return io.TextIOWrapper(io.BytesIO(data), encoding=locale.getpreferredencoding(False)).read()


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
        with open(log, "wb") as out:
            return self._fork(argv, env, [out.fileno()])

    def _fork(self, argv: Sequence[str], env: Mapping[str, str], io: Sequence[int]) -> ForkedProcess:
        """``io``: the log (stdout and stderr) or stdin, stdout and stderr; the caller closes them."""
        request = json.dumps({"argv": list(argv), "env": dict(env), "cwd": os.getcwd()}).encode()
        status_r, status_w = os.pipe()
        try:
            with self.lock:
                socket.send_fds(self.sock, [request], [status_w, *io])
                answer = json.loads(self.sock.recv(1 << 16))
        finally:
            os.close(status_w)
        if "pid" not in answer:
            os.close(status_r)
            raise ServerGone(f"the fork server refused: {answer}")
        return ForkedProcess(int(answer["pid"]), status_r, [sys.executable, "-m", "workers", *argv])

    def run(self, argv: Sequence[str], env: Mapping[str, str], input: str | None,
            timeout: float | None) -> subprocess.CompletedProcess[str]:
        """``subprocess.run([python, -m, workers, *argv], input=…, capture_output=True, text=True,
        timeout=…)``: stdin the input (``/dev/null`` without one), stdout and stderr pipes read
        to their end; past the timeout the command is killed and ``TimeoutExpired`` raised with
        what it wrote (bytes), as subprocess.run does."""
        (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe()
        in_r, in_w = os.pipe() if input is not None else (os.open(os.devnull, os.O_RDONLY), -1)
        try:
            proc = self._fork(argv, env, [in_r, out_w, err_w])
        except BaseException:
            for fd in (in_w, out_r, err_r):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in (in_r, out_w, err_w):
                os.close(fd)
        output: dict[int, bytes] = {}

        def drain(fd: int) -> None:
            with open(fd, "rb") as pipe:
                output[fd] = pipe.read()

        def feed(fd: int) -> None:
            with open(fd, "wb") as pipe, contextlib.suppress(BrokenPipeError):
                pipe.write((input or "").encode())

        jobs = [threading.Thread(target=drain, args=(fd,), daemon=True) for fd in (out_r, err_r)]
        jobs += [threading.Thread(target=feed, args=(in_w,), daemon=True)] if in_w >= 0 else []
        for job in jobs:
            job.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        for job in jobs:
            job.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        try:
            code = proc.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            code = None
        if code is None or any(job.is_alive() for job in jobs):
            proc.kill()
            proc.wait()
            for job in jobs:  # bounded: a process the command started may still hold a pipe
                job.join(10)
            raise subprocess.TimeoutExpired(proc.args, timeout or 0, output.get(out_r), output.get(err_r))
        return subprocess.CompletedProcess(proc.args, code, _text(output[out_r]), _text(output[err_r]))

    def stop(self) -> None:
        self.sock.close()  # the server exits on its end closing
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class _Current:
    server: ForkServer | None = None
    log_dir: Path | None = None  # tests/conftest.py's session directory for it


def enabled() -> bool:
    return os.environ.get("CORTEX_TEST_FORKSERVER", "1") != "0" and hasattr(os, "pidfd_open") and hasattr(os, "fork")


def server(log_dir: Path | None = None) -> ForkServer:
    """This pytest process's fork server (started on first use; its log in ``log_dir``, else in
    the directory tests/conftest.py set for the session)."""
    if _Current.server is None or _Current.server.proc.poll() is not None:
        log_dir = log_dir or _Current.log_dir
        if log_dir is None:
            raise ServerGone("no log directory for the fork server")
        log_dir.mkdir(parents=True, exist_ok=True)
        _Current.server = ForkServer(log_dir / f"forkserver-{os.getpid()}.log")
    return _Current.server


def run_cortex(args: Sequence[str], *, env: Mapping[str, str], input: str | None = None,
               timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([sys.executable, "-m", "workers", *args], env=env, input=input,
    capture_output=True, text=True, timeout=timeout)`` — a forked command when the fork server
    can run it (as for a worker), else that very call. The command's stdin is ``/dev/null``
    without an input (pytest's own is no terminal either)."""
    if enabled() and _Current.log_dir is not None:
        forks = server()
        if forks.can_run(env, ()):
            return forks.run(list(args), env, input, timeout)
    return subprocess.run([sys.executable, "-m", "workers", *args], env=dict(env), input=input,
                          stdin=subprocess.DEVNULL if input is None else None,
                          capture_output=True, text=True, timeout=timeout)


def use_log_dir(log_dir: Path) -> None:
    """Where this pytest process's server logs (tests/conftest.py, once a session): from then on
    ``run_cortex`` forks too."""
    _Current.log_dir = log_dir


def stop() -> None:
    _Current.log_dir = None
    if _Current.server is not None:
        _Current.server.stop()
        _Current.server = None
