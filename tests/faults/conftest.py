"""Shared plumbing of the fault-injection suite: provision, publish, wait until the workers
caught up, read the documents, read the dead letters, probe the HTTP endpoints, and run
the same events through a clean, fault-free pipeline on a second server for comparison.

Fixtures only (test modules import nothing from here): ``faults`` is the helper object.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import nats
import nats.js.errors
import pytest
import worker_forkserver
from cortex_testkit import ConfiguredNats, NotMet
from cortex_testkit import drained as consumers_drained
from nats.js.client import JetStreamContext

from shared.embedded import EmbeddedNats, free_port
from shared.kv import kv_read
from shared.names import BUCKET_CHECKPOINTS, BUCKET_LEASES, DLQ_STREAM, EVENTS_STREAM

Event = tuple[str, bytes, str]  # (subject, payload, Nats-Msg-Id)
WaitFor = Callable[..., Awaitable[Any]]

# the event-derived workers and the buckets they own (composed workers are not compared here)
DERIVED_WORKERS = ("channels", "threads", "decisions")
DERIVED_BUCKETS = ("cortex_channels", "cortex_threads", "cortex_decisions", "cortex_commitments")


class DeadLetter(msgspec.Struct, frozen=True):
    subject: str
    error: str
    original_subject: str
    stream_seq: int
    data: bytes


class Faults:
    """Helpers shared by the fault tests; every method is about one observable fact."""

    derived_workers = DERIVED_WORKERS
    derived_buckets = DERIVED_BUCKETS

    def unwritable(self, root: Path) -> UnwritableDir:
        """A switch that makes ``root`` unwritable for workers started through its ``launcher``
        (skips the test where that cannot be done); made writable again at teardown."""
        switch = UnwritableDir(root)
        switch.check(self.tmp / "unwritable-probe")
        self._switches.append(switch)
        return switch

    def server(self, name: str, body: str) -> ConfiguredNats:
        """A nats-server run from a config file (auth, permissions) under the test's tmp dir."""
        return ConfiguredNats(self.tmp / name, body)

    def __init__(self, tmp: Path, procs: Any, wait_for: WaitFor) -> None:
        self.tmp = tmp
        self.procs = procs
        self.wait_for = wait_for
        self._switches: list[UnwritableDir] = []

    # ------------------------------------------------------------------ provisioning

    @staticmethod
    def cortex(*args: str, url: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
        return worker_forkserver.run_cortex(args, env={**os.environ, "CORTEX_NATS_URL": url, **env}, timeout=timeout)

    @staticmethod
    async def cortex_async(*args: str, url: str, **env: str) -> asyncio.subprocess.Process:
        """`cortex ARGS` running beside the test (stdout and stderr piped): ``communicate()`` ends it."""
        return await asyncio.create_subprocess_exec(sys.executable, "-m", "workers", *args,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                    env={**os.environ, "CORTEX_NATS_URL": url, **env})

    def init(self, url: str, **env: str) -> None:
        result = self.cortex("init", url=url, **env)
        assert result.returncode == 0, result.stderr

    # ------------------------------------------------------------------ events

    @staticmethod
    async def publish_all(js: JetStreamContext, events: Iterable[Event], window: int = 1000) -> None:
        pending = []
        for subject, data, msg_id in events:
            pending.append(await js.publish_async(subject, data, headers={"Nats-Msg-Id": msg_id}))
            if len(pending) >= window:
                await asyncio.gather(*pending)
                pending.clear()
        await asyncio.gather(*pending)

    @staticmethod
    def agent_of(subject: str) -> str:
        return subject.split(".")[2]

    @classmethod
    def agents(cls, events: Iterable[Event]) -> list[str]:
        return sorted({cls.agent_of(s) for s, _, _ in events})

    @classmethod
    def messages_per_agent(cls, events: Iterable[Event]) -> Counter[str]:
        return Counter(cls.agent_of(s) for s, _, _ in events if s.split(".")[1] == "msg")

    # ------------------------------------------------------------------ progress

    @staticmethod
    async def checkpoint(js: JetStreamContext, consumer: str) -> int:
        raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), consumer)
        return int(raw) if raw else 0

    @classmethod
    async def caught_up(cls, js: JetStreamContext, consumers: Iterable[str], last_seq: int) -> bool:
        for name in consumers:
            info = await js.consumer_info(EVENTS_STREAM, name)
            if info.num_pending or info.num_ack_pending or await cls.checkpoint(js, name) < last_seq:
                return False
        return True

    async def wait_caught_up(self, js: JetStreamContext, consumers: Iterable[str], within: float = 120) -> int:
        last = int((await js.stream_info(EVENTS_STREAM)).state.last_seq)
        names = tuple(consumers)
        try:
            await self.wait_for(lambda: self.caught_up(js, names, last), within=within)
        except NotMet as exc:
            behind = [name for name in names if not await self.caught_up(js, (name,), last)]
            raise NotMet(f"not caught up with stream last_seq={last} within {within:.0f} s: {behind}; "
                         f"{exc}\n{await self.diagnosis(js, behind)}") from None
        return last

    @classmethod
    async def progress(cls, js: JetStreamContext, consumers: Iterable[str]) -> dict[str, str]:
        """Each consumer's state, for failure messages."""
        out = {}
        for name in consumers:
            info = await js.consumer_info(EVENTS_STREAM, name)
            out[name] = (f"pending={info.num_pending} ack_pending={info.num_ack_pending} "
                         f"redelivered={info.num_redelivered} delivered={info.delivered.stream_seq} "
                         f"ack_floor={info.ack_floor.stream_seq} checkpoint={await cls.checkpoint(js, name)}")
        return out

    async def diagnosis(self, js: JetStreamContext, consumers: Iterable[str]) -> str:
        """For a failure message: each consumer's progress, who holds its lease, and every
        process started for it (running or its exit code, the tail of its log)."""
        out = []
        for name in consumers:
            progress = (await self.progress(js, (name,)))[name]
            raw, _ = await kv_read(await js.key_value(BUCKET_LEASES), name)
            holder = raw.decode(errors="replace") if raw is not None else None
            out.append(f"=== {name}: {progress} lease={holder}\n{self.procs.report(name)}")
        return "\n".join(out)

    drained = staticmethod(consumers_drained)  # no pending, no unacked message left for these consumers

    async def wait_drained(self, js: JetStreamContext, consumers: Iterable[str], within: float = 120) -> None:
        names = tuple(consumers)
        try:
            await self.wait_for(lambda: self.drained(js, names), within=within)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; {await self.progress(js, names)}") from None

    async def wait_checkpoint_above(self, js: JetStreamContext, consumer: str, floor: int, within: float = 60) -> int:
        async def above() -> int:
            value = await self.checkpoint(js, consumer)
            return value if value > floor else 0

        try:
            return int(await self.wait_for(above, within=within, interval=0.005))
        except NotMet:
            raise NotMet(f"{consumer}'s checkpoint did not pass {floor} within {within:.0f} s\n"
                         f"{await self.diagnosis(js, (consumer,))}") from None

    async def wait_active(self, js: JetStreamContext, consumer: str, proc: subprocess.Popen[bytes],
                          within: float = 60) -> None:
        """Until ``proc`` holds the consumer's lease (its signal handlers are installed by then)."""

        async def holds() -> bool:
            raw, _ = await kv_read(await js.key_value(BUCKET_LEASES), consumer)
            return raw is not None and f"-{proc.pid}-" in raw.decode()

        try:
            await self.wait_for(holds, within=within, interval=0.05)
        except NotMet:
            raise NotMet(f"{consumer} pid {proc.pid} did not hold the lease within {within:.0f} s\n"
                         f"{await self.diagnosis(js, (consumer,))}") from None

    async def wait_exit(self, proc: subprocess.Popen[bytes], within: float) -> int:
        async def exited() -> bool:
            return proc.poll() is not None

        try:
            await self.wait_for(exited, within=within, interval=0.05)
        except NotMet:
            name = next((w for w, p, _, _ in self.procs.started if p is proc), "?")
            raise NotMet(f"{name} pid {proc.pid} did not exit within {within:.0f} s\n"
                         f"{self.procs.report(name)}") from None
        return int(proc.returncode)

    async def stop(self, proc: subprocess.Popen[bytes], sig: signal.Signals, within: float = 40) -> int:
        proc.send_signal(sig)
        return await self.wait_exit(proc, within)

    # ------------------------------------------------------------------ documents

    @staticmethod
    async def documents(js: JetStreamContext, buckets: Iterable[str], agents: Iterable[str]) -> dict[str, bytes | None]:
        out: dict[str, bytes | None] = {}
        for bucket in buckets:
            kv = await js.key_value(bucket)
            for agent in agents:
                raw, _ = await kv_read(kv, agent)
                out[f"{bucket}/{agent}"] = raw
        return out

    @staticmethod
    def differences(got: dict[str, bytes | None], want: dict[str, bytes | None]) -> list[str]:
        """The keys whose documents differ, for a readable assertion message."""
        return sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))

    # ------------------------------------------------------------------ dead letters

    @staticmethod
    async def dead_letters(js: JetStreamContext) -> list[DeadLetter]:
        info = await js.stream_info(DLQ_STREAM)
        out = []
        for seq in range(int(info.state.first_seq or 1), int(info.state.last_seq or 0) + 1):
            try:
                msg = await js.get_msg(DLQ_STREAM, seq)
            except nats.js.errors.NotFoundError:
                continue
            headers = msg.headers or {}
            out.append(DeadLetter(subject=msg.subject, error=headers.get("Cortex-Error", ""),
                                  original_subject=headers.get("Cortex-Original-Subject", ""),
                                  stream_seq=int(headers.get("Cortex-Stream-Seq", "0")), data=msg.data or b""))
        return out

    # ------------------------------------------------------------------ HTTP endpoints

    @staticmethod
    def http_port() -> int:
        return free_port()

    @staticmethod
    def http_get(port: int, path: str) -> tuple[int, str]:
        """(status, body) of a GET on the worker's metrics server; (0, error) when it is not up."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
                return int(resp.status), resp.read().decode()
        except urllib.error.HTTPError as exc:
            return int(exc.code), exc.read().decode()
        except (urllib.error.URLError, OSError) as exc:
            return 0, repr(exc)

    async def wait_http(self, port: int, path: str, status: int, contains: str = "", within: float = 60) -> str:
        async def probe() -> str | None:
            code, body = await asyncio.to_thread(self.http_get, port, path)
            return body if code == status and contains in body else None

        return str(await self.wait_for(probe, within=within, interval=0.1))

    # ------------------------------------------------------------------ the clean run

    async def clean_documents(self, events: list[Event], workers: Iterable[str], buckets: Iterable[str],
                              live: bool = False, within: float = 120, **env: str) -> dict[str, bytes | None]:
        """The documents a fault-free run makes of ``events`` on a fresh server.

        ``live``: start the workers first and publish while they consume; otherwise publish
        everything, then start the workers (a catch-up run). ``within``: how long the workers
        may take to catch up.
        """
        names = tuple(workers)
        with EmbeddedNats(str(self.tmp / f"clean-{time.monotonic_ns()}")) as server:
            self.init(server.url)
            nc = await nats.connect(server.url)
            js = nc.jetstream()
            if not live:
                await self.publish_all(js, events)
            started = [self.procs.start(name, server.url, **env) for name in names]
            if live:
                await self.publish_all(js, events)
            await self.wait_caught_up(js, names, within=within)
            docs = await self.documents(js, buckets, self.agents(events))
            await nc.close()
            for proc in started:
                assert await self.stop(proc, signal.SIGTERM) == 0
            return docs


# Drops CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER (linux/capability.h: 1, 2, 3)
# from the bounding set with prctl(PR_CAPBSET_DROP = 24), then execs its arguments.
_DROP_OVERRIDES = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for cap in (1, 2, 3):
    if libc.prctl(24, cap, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl(PR_CAPBSET_DROP, {cap})")
os.execv(sys.argv[1], sys.argv[1:])
"""


class UnwritableDir:
    """Takes write permission on a directory tree away from a worker process, and gives it back.

    Permission bits bind an ordinary user. Root passes them by CAP_DAC_OVERRIDE (and
    CAP_DAC_READ_SEARCH, CAP_FOWNER), so when the tests run as root the worker is started
    through :attr:`launcher`, which drops those capabilities from the bounding set before
    it execs the worker: the worker runs as uid 0 without them, bound by the bits like any
    owner (and it can still read the root-only interpreter, which another uid could not).
    ``chattr +i`` is no substitute: the engine's memory-mapped files then die with SIGBUS
    instead of failing a write.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._modes: dict[Path, int] = {}

    @property
    def launcher(self) -> tuple[str, ...]:
        return (sys.executable, "-c", _DROP_OVERRIDES) if os.geteuid() == 0 else ()

    def check(self, scratch: Path) -> None:
        """Skip the test unless a process started like the worker really cannot write here."""
        scratch.mkdir(parents=True, exist_ok=True)
        scratch.chmod(0o555)
        try:
            probe = subprocess.run([*self.launcher, sys.executable, "-c",
                                    "import sys; open(sys.argv[1] + '/probe', 'w')", str(scratch)],
                                   capture_output=True, text=True, timeout=60)
        finally:
            scratch.chmod(0o755)
        if probe.returncode == 0:
            pytest.skip("a directory cannot be made unwritable for the worker here: running as root, and "
                        "dropping CAP_DAC_OVERRIDE from the bounding set does not take it away")
        if "PermissionError" not in probe.stderr:
            pytest.skip(f"cannot start a worker without permission overrides here: {probe.stderr.strip()[-300:]}")

    def lock(self) -> None:
        """Every directory r-x, every file r--: nothing can be created, renamed, removed or opened
        for writing. A directory is locked before it is listed, so its entries cannot change."""
        self._lock(self.root)

    def _lock(self, directory: Path) -> None:
        self._chmod(directory, 0o555)
        for path in sorted(directory.iterdir()):
            if path.is_dir() and not path.is_symlink():
                self._lock(path)
            elif path.is_file() and not path.is_symlink():
                self._chmod(path, None)

    def _chmod(self, path: Path, mode: int | None) -> None:
        old = path.stat().st_mode & 0o7777
        self._modes[path] = old
        path.chmod(old & 0o444 if mode is None else mode)

    def unlock(self) -> None:
        for path, mode in sorted(self._modes.items(), key=lambda item: len(item[0].parts)):
            path.chmod(mode)
        self._modes.clear()


@pytest.fixture
def faults(tmp_path: Path, workers_procs: Any, wait_for: WaitFor) -> Iterator[Faults]:
    helper = Faults(tmp_path, workers_procs, wait_for)
    yield helper
    for switch in helper._switches:  # pytest must be able to remove tmp_path
        switch.unlock()
