"""Fixtures: a real nats-server with JetStream per test (random port, fresh store), and
`wait_for` — poll a condition with a timeout (tests never sleep to synchronise)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import cortex_testkit
import nats
import pytest
import suite_order
from nats.aio.client import Client

from shared.embedded import EmbeddedNats


def pytest_configure(config: pytest.Config) -> None:
    # xdist hands the files out in the collection's order (below), not by number of tests
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Longest files first (tests/support/suite_order.py): the order xdist hands them out in."""
    items[:] = suite_order.order(items)


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `cortex` command or worker a test starts without its own CORTEX_DATA_DIR gets a
    fresh one, never ~/.cortex: an embedded store left there by an earlier test (same agent
    ids, so the same point ids) would leak into this one."""
    if "CORTEX_DATA_DIR" not in os.environ:
        monkeypatch.setenv("CORTEX_DATA_DIR", str(tmp_path / "cortex-data"))
    # Nor the machine's NATS: a `cortex up` of a test listens on a free port, not on 4222 (where
    # the developer's own server, or another test's, may be), and a command without a URL never
    # follows the developer's NATS_URL or nats CLI context (a test that means to sets them).
    monkeypatch.setenv("CORTEX_NATS_PORT", "0")
    monkeypatch.delenv("NATS_URL", raising=False)
    monkeypatch.delenv("NATS_CONTEXT", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[EmbeddedNats]:
    server = EmbeddedNats(str(tmp_path / "nats"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def nats_cluster(tmp_path: Path) -> AsyncIterator[cortex_testkit.NatsCluster]:
    """Three routed ``nats-server -js`` nodes on loopback (random ports, a store each), ready
    when every node answers a JetStream request and the meta group has all three current;
    ``.url`` lists all three, comma-separated."""
    cluster = cortex_testkit.NatsCluster(tmp_path / "cluster")
    cluster.start()
    try:
        await cluster.ready()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def nats_url(nats_server: EmbeddedNats) -> str:
    return nats_server.url


@pytest.fixture
async def nc(nats_url: str) -> AsyncIterator[Client]:
    client = await nats.connect(nats_url)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
def wait_for() -> Callable[..., Awaitable[Any]]:
    """``cortex_testkit.wait_for``: ``await wait_for(async_predicate, within=…, interval=…)``."""
    return cortex_testkit.wait_for


# --------------------------------------------------------------------------- processes

import subprocess  # noqa: E402
import sys  # noqa: E402

import msgspec  # noqa: E402
import worker_forkserver  # noqa: E402


class WorkerProcs:
    """Start `cortex worker NAME` processes; every one is killed at teardown."""

    def __init__(self, tmp: Path, forkserver_dir: Path | None = None) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.tmp = tmp
        self.forkserver_dir = forkserver_dir or tmp
        self.started: list[tuple[str, subprocess.Popen[bytes], Path, str]] = []  # (worker, process, log, url)

    def start(self, name: str, url: str, *, launcher: Sequence[str] = (), args: Sequence[str] = (),
              **env: str) -> subprocess.Popen[bytes]:
        """``launcher``: a command that runs the worker command given as its arguments;
        ``args``: after ``cortex worker NAME`` (``--partition 2``)."""
        full = {**os.environ, "CORTEX_NATS_URL": url, "CORTEX_DATA_DIR": str(self.tmp / "data"),
                "CORTEX_RUNTIME_LEASE_TTL_S": "2", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100",
                "CORTEX_LOG_LEVEL": "WARNING", **env}
        path = self.tmp / f"{name}-{len(self.procs)}.log"
        argv = ["worker", name, *args]
        forks = worker_forkserver.server(self.forkserver_dir) if worker_forkserver.enabled() else None
        if forks is not None and forks.can_run(full, launcher):  # see tests/support/worker_forkserver.py
            proc: subprocess.Popen[bytes] = forks.start(argv, full, path)
        else:
            log = open(path, "wb")  # noqa: SIM115 - child owns it
            proc = subprocess.Popen([*launcher, sys.executable, "-m", "workers", *argv],
                                    env=full, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            log.close()
        self.procs.append(proc)
        self.started.append((name, proc, path, url))
        return proc

    def report(self, name: str, lines: int = 12) -> str:
        """Every process started for worker ``name``: pid, running or its exit code, and the
        tail of its log — for failure messages."""
        out = []
        for worker, proc, path, url in self.started:
            if worker != name:
                continue
            code = proc.poll()
            tail = path.read_text(errors="replace").splitlines()[-lines:] if path.exists() else []
            out.append(f"--- {path} pid={proc.pid} {'running' if code is None else f'exited {code}'} on {url}\n"
                       + "\n".join(line[:300] for line in tail))
        return "\n".join(out) or f"(no {name} process started)"

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


@pytest.fixture(scope="session", autouse=True)
def _forkserver_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where this pytest process's worker fork server logs (the commands of
    ``worker_forkserver.run_cortex`` use it too); the server ends with the session."""
    log_dir = tmp_path_factory.getbasetemp() / "forkserver"
    worker_forkserver.use_log_dir(log_dir)
    yield log_dir
    worker_forkserver.stop()


@pytest.fixture
def workers_procs(tmp_path: Path, _forkserver_dir: Path) -> Iterator[WorkerProcs]:
    procs = WorkerProcs(tmp_path, _forkserver_dir)
    try:
        yield procs
    finally:
        procs.stop_all()


def chat_events(n: int, agents: int, seed: int = 7, triggers_every: int = 0) -> list[tuple[str, bytes, str]]:
    """Deterministic realistic-ish chat events: (subject, payload, id). ``triggers_every`` k > 0:
    after every k-th message, a session end then start of its agent (the triggers composed
    documents are made at: the channel summaries), the messages themselves unchanged."""
    import random

    rng = random.Random(seed)
    lines = [
        "Let's get back to the auth migration, the token rotation is still open.",
        "We decided to use Redis for the dashboard cache because the database is overloaded.",
        "Jetzt zu dem Performance-Bug im Dashboard, die Ladezeit ist schon wieder zu hoch.",
        "I'll fix the build tomorrow, promise.",
        "Waiting for the profiling data from Maria before we touch the queries.",
        "The login bug is fixed ✅",
        "Regarding the kubernetes cluster upgrade: we need the node pool first.",
        "Wir haben beschlossen, die Migration auf nächste Woche zu verschieben.",
        "awesome, that works now 🚀",
        "What if we tried a different approach for the search index?",
    ]
    channels = ["webchat", "telegram", "whatsapp"]
    out = []
    for i in range(n):
        agent = f"agent-{rng.randrange(agents)}"
        minute = i // 10
        payload = {"id": f"ev-{i}", "agent": agent, "session": f"s-{agent}",
                   "ts": f"2026-02-{17 + minute // 1440:02d}T{(minute // 60) % 24:02d}:{minute % 60:02d}:{i % 60:02d}Z",
                   "role": rng.choice(["user", "assistant"]), "sender": rng.choice(["albert", "claudia"]),
                   "channel": rng.choice(channels), "content": rng.choice(lines)}
        kind = "sent" if payload["role"] == "assistant" else "received"
        out.append((f"cortex.msg.{agent}.{kind}", msgspec.json.encode(payload), str(payload["id"])))
        if triggers_every and i % triggers_every == triggers_every - 1:
            for phase in ("end", "start"):
                session = {"id": f"ev-{i}-{phase}", "agent": agent, "session": f"s-{agent}", "ts": payload["ts"]}
                out.append((f"cortex.session.{agent}.{phase}", msgspec.json.encode(session), str(session["id"])))
    return out


@pytest.fixture
def make_chat_events() -> Any:
    return chat_events


# --------------------------------------------------------------------------- no server left behind


@pytest.fixture(scope="session", autouse=True)
def _no_server_left_behind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The suite leaves no nats-server running (issue 44: each CI run left two behind). After a
    test process's last test, every server it started under its temporary directory must be
    gone (one whose owner was just killed is given a few seconds to shut down); any other is
    killed and reported as an error."""
    yield
    if not Path("/proc/self/cmdline").exists():
        return
    base = tmp_path_factory.getbasetemp()
    try:
        cortex_testkit.wait_until(lambda: not cortex_testkit.nats_servers_under(base), within=15, interval=0.1)
    except cortex_testkit.NotMet:
        left = cortex_testkit.nats_servers_under(base)
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        pytest.fail(f"nats-server processes left running by the tests (killed now): {left}")
