"""Helpers shared by the tests (importable as ``cortex_testkit``: pytest puts tests/support
on the path; nothing here shadows the project's own packages).

Tests never sleep to synchronise: they wait on a condition with a timeout, through
``wait_for`` (async; also the ``wait_for`` fixture) or ``wait_until`` (sync, for code
that drives processes): their poll intervals are the only sleeps that wait for something."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import nats
import nats.errors
import nats.js.api
import nats.js.errors
import worker_forkserver
from nats.js.client import JetStreamContext

from schemas.docs import BootDoc
from shared.codec import Envelope, decode_event, event_limits
from shared.config import Settings
from shared.embedded import free_port, nats_server_binary
from shared.kv import kv_read
from shared.names import EVENTS_STREAM, agent_filter
from shared.projection import ProjectionHandler, is_trigger
from workers.registry import all_specs, doc_buckets

CONSUMING = [name for name, spec in all_specs().items() if spec.build is not None]
OWNED_BUCKETS = [b for spec in all_specs().values() for b in spec.buckets]
ALL = list(all_specs())

T = TypeVar("T")


class NotMet(AssertionError):
    """The condition ``wait_for`` or ``wait_until`` polled did not hold in time (a failure raised
    by the predicate itself passes through as it is)."""


def stop_process(proc: subprocess.Popen[bytes], grace_s: float = 40) -> None:
    """SIGTERM (a `cortex up` drains and exits), then SIGKILL if it has not within ``grace_s``."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


async def wait_for(predicate: Callable[[], Awaitable[Any]], within: float = 10.0, interval: float = 0.02) -> Any:
    """Poll an async predicate until it returns something truthy (returned); ``NotMet`` after ``within`` s."""
    deadline = time.monotonic() + within
    last: Any = None
    while time.monotonic() < deadline:
        last = await predicate()
        if last:
            return last
        await asyncio.sleep(interval)
    raise NotMet(f"condition not met within {within}s (last value: {last!r})")


async def kv_history(js: JetStreamContext, bucket: str, key: str) -> list[bytes]:
    """Every value the bucket still holds for ``key``, oldest first, read message by message
    from its stream. Not nats-py's ``KeyValue.history``: its watcher can signal "no more" before
    the messages the server already delivered are read (consumer info says none pending while
    they sit unread in the client), and then returns nothing on a loaded machine."""
    stream = f"KV_{bucket}"
    subject = f"$KV.{bucket}.{key}"
    state = (await js.stream_info(stream, subjects_filter=subject)).state
    values = []
    for seq in range(state.first_seq, state.last_seq + 1):
        with contextlib.suppress(nats.js.errors.NotFoundError):
            raw = await js.get_msg(stream, seq)
            if raw.subject == subject and raw.data is not None:
                values.append(raw.data)
    return values


async def apply_one_per_batch(js: JetStreamContext, settings: Settings, handler: ProjectionHandler, bucket: str,
                              agent: str, last: int) -> dict[int, bytes | None]:
    """``handler`` over the stream's events 1..``last``, one event per batch (paced load): the
    agent's stored document in ``bucket`` just before each of its triggers, by sequence."""
    kv = await js.key_value(bucket)
    before: dict[int, bytes | None] = {}
    for seq in range(1, last + 1):
        msg = await js.get_msg(EVENTS_STREAM, seq)
        env = decode_event(settings.prefix, msg.subject or "", seq, msg.data or b"", event_limits(settings))
        assert isinstance(env, Envelope)
        if env.agent == agent and is_trigger(env):
            before[seq] = (await kv_read(kv, agent))[0]
        await handler.apply(env)
        await handler.commit()
    return before


def nats_servers_under(base: Path | str) -> dict[int, str]:
    """nats-server processes whose command line names a path under ``base`` (Linux: /proc),
    with that command line."""
    found = {}
    for entry in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = entry.read_bytes().split(b"\0")
        except OSError:
            continue
        if Path(args[0].decode(errors="replace")).name == "nats-server" and any(str(base).encode() in a for a in args):
            found[int(entry.parent.name)] = b" ".join(args).decode(errors="replace")
    return found


def wait_until(predicate: Callable[[], T], within: float = 10.0, interval: float = 0.05) -> T:
    """``wait_for`` for a plain predicate, blocking the thread (no event loop involved)."""
    deadline = time.monotonic() + within
    last: T | None = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise NotMet(f"condition not met within {within}s (last value: {last!r})")


def wait_listening(proc: subprocess.Popen[bytes], port: int, log: Path, within: float = 15.0) -> None:
    """Until ``proc``, a server just started, accepts connections on ``port``. Fails at once with
    the tail of ``log`` if it exits; killed if it does not listen in time."""

    def accepting() -> bool:
        assert proc.poll() is None, log.read_text()[-2000:] if log.exists() else f"{proc.args!r} exited at start"
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        return False

    try:
        wait_until(accepting, within=within)
    except NotMet:
        proc.kill()
        proc.wait(5)
        raise NotMet(f"nats-server did not listen on {port} within {within}s") from None


class ConfiguredNats:
    """``nats-server -c <file>``: JetStream plus whatever the test writes in the file. ``start()``
    and ``stop()``, or a ``with`` block."""

    def __init__(self, directory: Path, body: str) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.conf = self.dir / "server.conf"
        self.conf.write_text(f'listen: "127.0.0.1:{self.port}"\n'
                             f'jetstream {{ store_dir: "{self.dir / "jetstream"}" }}\n{body}\n')
        self._proc: subprocess.Popen[bytes] | None = None

    def url(self, userinfo: str = "") -> str:
        return f"nats://{userinfo + '@' if userinfo else ''}127.0.0.1:{self.port}"

    def start(self) -> ConfiguredNats:
        log = self.dir / "nats-server.log"
        with open(log, "ab") as out:
            self._proc = subprocess.Popen([nats_server_binary(), "-c", str(self.conf)], stdout=out,
                                          stderr=subprocess.STDOUT, start_new_session=True)
        wait_listening(self._proc, self.port, log)
        return self

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(5)

    def __enter__(self) -> ConfiguredNats:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class NatsCluster:
    """Three (``size``) ``nats-server -js`` processes routed to each other on loopback: one
    cluster name, a client port, a route port and a file store each (random ports). Nodes can
    be SIGKILLed, stopped and restarted on the same ports and stores.

    ``start()`` returns when every node accepts connections; ``await ready()`` when every
    node answers a JetStream request and the meta leader counts every node as a current
    peer (seen on each node's monitoring port, ``/jsz``): three replicas can be placed."""

    def __init__(self, directory: Path, size: int = 3, name: str = "cortex-test") -> None:
        self.dir = directory
        self.name = name
        self.ports = [free_port() for _ in range(size)]
        self.route_ports = [free_port() for _ in range(size)]
        self.monitor_ports = [free_port() for _ in range(size)]
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * size
        self.names = [f"n{i}" for i in range(size)]

    @property
    def url(self) -> str:
        """Every node, comma-separated (``CORTEX_NATS_URL`` as an operator writes it)."""
        return ",".join(self.node_url(i) for i in range(len(self.ports)))

    @property
    def servers(self) -> list[str]:
        """Every node's URL (for ``nats.connect``, which takes a list, not a comma-separated string)."""
        return [self.node_url(i) for i in range(len(self.ports))]

    def node_url(self, i: int) -> str:
        return f"nats://127.0.0.1:{self.ports[i]}"

    def index(self, server_name: str | None) -> int:
        """The node of a server name (a stream's ``cluster.leader``)."""
        assert server_name in self.names, f"{server_name!r} is not a node of the cluster ({self.names})"
        return self.names.index(server_name)

    def node_of_port(self, port: int) -> int:
        return self.ports.index(port)

    def start(self, attempts: int = 3) -> NatsCluster:
        """A node that finds one of its ports taken (``free_port`` hands out an ephemeral port,
        and until the node binds it any outbound connection on the machine can get it: another
        test's client, another cluster's routes; seen 2 in 64 runs beside two CPU burners)
        exits at once: the cluster starts again, afresh, on new ports."""
        for attempt in range(1, attempts + 1):
            for i in range(len(self.ports)):
                self.start_node(i, wait=False)
            try:
                for i in range(len(self.ports)):
                    self._wait_listening(i)
                return self
            except AssertionError as exc:
                if attempt == attempts or "address already in use" not in str(exc):
                    raise
                self.stop()
                shutil.rmtree(self.dir)
                n = len(self.ports)
                self.ports, self.route_ports, self.monitor_ports = ([free_port() for _ in range(n)] for _ in range(3))
        return self

    def start_node(self, i: int, wait: bool = True) -> None:
        store = self.dir / self.names[i]
        store.mkdir(parents=True, exist_ok=True)
        routes = ",".join(f"nats://127.0.0.1:{p}" for j, p in enumerate(self.route_ports) if j != i)
        with open(store / "nats-server.log", "ab") as out:
            self.procs[i] = subprocess.Popen(
                [nats_server_binary(), "-js", "-a", "127.0.0.1", "-p", str(self.ports[i]), "-sd", str(store / "js"),
                 "-m", str(self.monitor_ports[i]), "--server_name", self.names[i], "--cluster_name", self.name,
                 "--cluster", f"nats://127.0.0.1:{self.route_ports[i]}", "--routes", routes],
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        if wait:
            self._wait_listening(i)

    def _wait_listening(self, i: int) -> None:
        proc = self.procs[i]
        assert proc is not None
        wait_listening(proc, self.ports[i], self.dir / self.names[i] / "nats-server.log")

    def pid(self, i: int) -> int:
        proc = self.procs[i]
        assert proc is not None and proc.poll() is None, f"node {self.names[i]} is not running"
        return proc.pid

    def kill(self, i: int) -> None:
        """SIGKILL: the node dies mid-write, as a crashed machine's would (the OS keeps what it wrote)."""
        proc = self.procs[i]
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)

    def stop(self) -> None:
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)

    def clients(self, i: int) -> list[str]:
        """The names of the client connections node ``i`` holds now (its monitoring ``/connz``)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_ports[i]}/connz?limit=1024", timeout=5) as resp:
            return [str(c.get("name", "")) for c in json.loads(resp.read()).get("connections") or []]

    def node_holding(self, client_name: str) -> int | None:
        """The running node a client named ``client_name`` is connected to, if any."""
        for i in self.running():
            with contextlib.suppress(OSError):
                if client_name in self.clients(i):
                    return i
        return None

    def running(self) -> list[int]:
        return [i for i, proc in enumerate(self.procs) if proc is not None and proc.poll() is None]

    async def node_ready(self, i: int, within: float = 30.0) -> None:
        """Until node ``i`` answers a JetStream request (it knows the meta leader)."""
        import nats
        import nats.errors

        async def answers() -> bool:
            try:
                nc = await nats.connect(self.node_url(i), allow_reconnect=False, connect_timeout=1)
            except (OSError, nats.errors.Error):
                return False
            try:
                reply = await nc.request("$JS.API.INFO", b"", timeout=1)
                return b'"error"' not in reply.data
            except nats.errors.Error:
                return False
            finally:
                await nc.close()

        await wait_for(answers, within=within, interval=0.1)

    def _jsz_meta(self, i: int) -> dict[str, Any]:
        """Node ``i``'s view of the JetStream meta group (monitoring ``/jsz``); {} when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_ports[i]}/jsz", timeout=2) as resp:
                meta = json.loads(resp.read()).get("meta_cluster")
        except (OSError, ValueError):
            return {}
        return meta if isinstance(meta, dict) else {}

    def meta_formed(self) -> bool:
        """Every running node knows the same meta leader, and the leader counts every other
        running node as a current peer. Before that, placing three replicas can fail with
        "no suitable peers for placement" although all three nodes answer JetStream requests
        (the leader elected before the third node caught up)."""
        running = self.running()
        leaders = {self._jsz_meta(i).get("leader") for i in running}
        if len(leaders) != 1 or not (leader := leaders.pop()) or leader not in self.names:
            return False
        peers = {str(r.get("name")): r for r in self._jsz_meta(self.index(leader)).get("replicas") or []}
        return all(peers.get(self.names[i], {}).get("current") for i in running if self.names[i] != leader)

    async def ready(self, within: float = 30.0) -> None:
        for i in self.running():
            await self.node_ready(i, within)

        async def formed() -> bool:
            return await asyncio.to_thread(self.meta_formed)

        await wait_for(formed, within=within, interval=0.05)
        if len(self.running()) == len(self.names):
            await self._placeable(within)

    async def _placeable(self, within: float) -> None:
        """A stream of every node's copy can be placed: made and deleted again. The meta group
        can count every peer current while the leader still holds one as offline (its first
        state report not yet in), and a three-replica stream is refused meanwhile ("no
        suitable peers for placement, peer offline"; seen on a loaded machine)."""
        nc = await nats.connect(self.servers)
        try:
            js = nc.jetstream()
            config = nats.js.api.StreamConfig(name="CLUSTER_PROBE", subjects=["cluster-probe"],
                                              num_replicas=len(self.names), storage=nats.js.api.StorageType.MEMORY)

            async def placed() -> bool:
                try:
                    await js.add_stream(config)
                except nats.js.errors.APIError:
                    return False
                await js.delete_stream("CLUSTER_PROBE")
                return True

            await wait_for(placed, within=within, interval=0.1)
        finally:
            await nc.close()

    def __enter__(self) -> NatsCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


CORTEX_LIMIT_S = 90.0  # under pytest's own 120 s, so a command that hangs fails with what it said


def cortex(*args: str, url: str, **env: str) -> subprocess.CompletedProcess[str]:
    try:
        return worker_forkserver.run_cortex(args, timeout=CORTEX_LIMIT_S,
                                            env={**os.environ, "CORTEX_NATS_URL": url, **env})
    except subprocess.TimeoutExpired as exc:
        said = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        raise AssertionError(f"`cortex {' '.join(args)}` did not finish within {CORTEX_LIMIT_S:g} s; its stderr "
                             f"ends:\n{said[-4000:]}") from None


def demo_file(tmp: Path, agent: str = "main") -> Path:
    text = resources.files("workers.demo").joinpath("conversation.jsonl").read_text()
    lines = []
    for line in text.splitlines():
        event = json.loads(line)
        event["agent"] = agent
        event["id"] = f"{agent}-{event['id']}"
        lines.append(json.dumps(event))
    path = tmp / f"{agent}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


async def drained(js: JetStreamContext, consumers: Iterable[str] = CONSUMING) -> bool:
    """The server has nothing left for these consumers: no pending, no unacked message. A consumer
    the server does not hold (yet: one kept in memory by a server that restarted, before its worker
    created it again) is not drained."""
    for name in consumers:
        try:
            info = await js.consumer_info(EVENTS_STREAM, name)
        except nats.js.errors.NotFoundError:
            return False
        if info.num_pending or info.num_ack_pending:
            return False
    return True


async def briefed(js: JetStreamContext, agent: str, session: str, consumers: Iterable[str]) -> BootDoc | None:
    """The agent's stored BOOTSTRAP once it is the one of ``session`` and ``consumers`` are drained."""
    raw, _ = await kv_read(await js.key_value("cortex_boot"), agent)
    boot = msgspec.json.decode(raw, type=BootDoc) if raw else None
    return boot if boot is not None and boot.session == session and await drained(js, consumers) else None


async def subject_count(js: JetStreamContext, pattern: str, stream: str = EVENTS_STREAM) -> int:
    """How many messages of ``stream`` match the subject ``pattern``."""
    info = await js.stream_info(stream, subjects_filter=pattern)
    return sum((info.state.subjects or {}).values())


async def agent_events(js: JetStreamContext, agent: str) -> int:
    """The agent's stored events, of every family."""
    return await subject_count(js, agent_filter("cortex", agent))


async def docs_of(js: JetStreamContext, agent: str) -> dict[str, bytes]:
    """The agent's documents in the contract's buckets that hold one, by bucket."""
    out = {}
    for bucket in doc_buckets():
        raw, _ = await kv_read(await js.key_value(bucket), agent)
        if raw is not None:
            out[bucket] = raw
    return out


async def demo_applied(js: JetStreamContext, url: str, tmp: Path, agent: str = "alice") -> tuple[int, dict[str, bytes]]:
    """The demo conversation published for ``agent`` and applied by the threads worker (which
    the caller runs): the agent's event count and documents — what a forget must remove."""
    assert cortex("publish", str(demo_file(tmp, agent)), url=url).returncode == 0
    await wait_for(lambda: drained(js, ["threads"]), within=30)
    events, docs = await agent_events(js, agent), await docs_of(js, agent)
    assert events == 17 and "cortex_threads" in docs
    return events, docs


async def snapshot_docs(js: JetStreamContext, agents: list[str]) -> dict[str, bytes | None]:
    out = {}
    for bucket in OWNED_BUCKETS:
        kv = await js.key_value(bucket)
        for agent in agents:
            raw, _ = await kv_read(kv, agent)
            out[f"{bucket}/{agent}"] = raw
    return out


async def held_back(js: JetStreamContext, consumer: str, within: float = 5.0) -> int:
    """How many of ``consumer``'s unacknowledged messages a stopped worker kept instead of
    giving them back. A nak'd message stays in ``num_ack_pending`` until it is acked, but
    the next pull request gets it at once; one never nak'd comes back only after ``ack_wait``.
    A probe pulls for ``within`` seconds (well inside ``ack_wait``) and counts what did not
    come back and is still unacknowledged then (an ack the worker sent as it stopped is applied
    by the server's consumer on its own queue, moments later: counted at the first look, it
    was taken for held); it gives everything back itself before returning."""
    from shared.pull import fetcher_for

    info = await js.consumer_info(EVENTS_STREAM, consumer)
    unacked = info.num_ack_pending or 0
    if not unacked:
        return 0
    assert info.config.ack_wait is not None and within < info.config.ack_wait / 2, "probe must end well inside ack_wait"
    probe = fetcher_for(js, EVENTS_STREAM, consumer)
    await probe.start()
    floor = info.ack_floor.stream_seq if info.ack_floor else 0
    last = info.delivered.stream_seq if info.delivered else 0
    back: set[int] = set()
    taken = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    try:
        while len(back) < unacked and (remaining := deadline - loop.time()) > 0:
            for msg in await probe.fetch(unacked + (info.num_pending or 0), wait_s=min(1.0, remaining)):
                taken.append(msg)
                if floor < msg.metadata.sequence.stream <= last:
                    back.add(msg.metadata.sequence.stream)
        if len(back) == unacked:
            return 0
        # what the probe holds is unacknowledged too: the rest is held by the stopped worker
        now = (await js.consumer_info(EVENTS_STREAM, consumer)).num_ack_pending or 0
        return now - len({msg.metadata.sequence.stream for msg in taken})
    finally:
        for msg in taken:
            await msg.nak()
        await probe.stop()


def differences(before: dict[str, bytes | None], after: dict[str, bytes | None]) -> str:
    """What differs between two ``snapshot_docs``: per document, each field, markdown as a diff."""
    out = []
    for key in sorted(k for k in before if before[k] != after.get(k)):
        old, new = (msgspec.json.decode(v) if v else {} for v in (before[key], after.get(key)))
        for field in sorted(set(old) | set(new)):
            if old.get(field) != new.get(field):
                if isinstance(old.get(field), str) and isinstance(new.get(field), str):
                    lines = difflib.unified_diff(old[field].splitlines(), new[field].splitlines(), lineterm="", n=1)
                    out.append(f"{key} {field}:\n" + "\n".join(lines))
                else:
                    out.append(f"{key} {field}: {old.get(field)!r} != {new.get(field)!r}")
    return "\n".join(out)


async def bucket_keys(kv: Any) -> list[str]:
    """The bucket's keys with a value, sorted — asked of the server (``shared.kv.kv_keys``),
    never ``KeyValue.keys()``, whose watcher misses keys after purges."""
    from shared.kv import kv_keys
    from shared.natsio import kv_location

    return await kv_keys(*kv_location(kv))


class TcpProxy:
    """A real TCP relay in front of a real server, for network faults: it records what
    clients sent, and with ``drop_after_s`` closes every connection that long after accepting
    it, with ``drop_after_pong`` as soon as the NATS handshake is complete (a server, or a
    load balancer, that accepts and then drops). Runs in its own thread,
    so a test may block on a subprocess meanwhile. ``with TcpProxy(port) as proxy: proxy.port``."""

    def __init__(self, target_port: int, drop_after_s: float | None = None, drop_after_pong: bool = False) -> None:
        import threading

        self.target_port = target_port
        self.drop_after_s = drop_after_s
        self.drop_after_pong = drop_after_pong  # drop once the server's first PONG (the handshake's end) is relayed
        self.port = 0
        self.sent = bytearray()  # everything clients sent, in order
        self.accepted = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TcpProxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._relay, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, record: bool) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await reader.read(65536):
                if record:
                    self.sent.extend(data)
                writer.write(data)
                await writer.drain()
                if not record and self.drop_after_pong and b"PONG" in data:
                    break
        writer.close()

    async def _relay(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.accepted += 1
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_w.close()
            return
        pipes = [asyncio.ensure_future(self._pipe(client_r, server_w, True)),
                 asyncio.ensure_future(self._pipe(server_r, client_w, False))]
        await asyncio.wait(pipes, timeout=self.drop_after_s, return_when=asyncio.FIRST_COMPLETED)
        for pipe in pipes:
            pipe.cancel()
        for writer in (client_w, server_w):
            writer.close()


async def caught_up(js: JetStreamContext, consumer: str, stream: str = EVENTS_STREAM) -> bool:
    """``consumer`` has applied and acked every message of its filter the stream holds now.

    Its pending count alone is not enough: the server counts a stored message for a consumer
    a moment after the publish is acknowledged (measured: 1 consumer info in 300 taken right
    after a publish ack still missed it, on an idle machine), so "nothing pending" can come
    just before a new event counts. The stream itself is asked whether a message of the
    consumer's filter lies past its ack floor."""
    info = await js.consumer_info(stream, consumer)
    if info.num_pending or info.num_ack_pending:
        return False
    floor = info.ack_floor.stream_seq or 0
    config = info.config
    filters = config.filter_subjects or ([config.filter_subject] if config.filter_subject else [">"])
    for subject in filters:
        try:
            await js.get_msg(stream, seq=floor + 1, subject=subject, next=True)
        except nats.js.errors.NotFoundError:
            continue
        return False  # stored, in its filter, past its ack floor: not applied yet
    return True


async def apis_answer(nc: Any, agent: str, calls: Iterable[tuple[str, bytes]]) -> bool:
    """Each ``(service, body)`` request of ``agent``'s APIs is answered without an error: the
    workers behind them serve."""
    try:
        for service, body in calls:
            reply = await nc.request(f"cortex.api.{service}.{agent}", body, timeout=2)
            if reply.headers and reply.headers.get("Nats-Service-Error"):
                return False
        return True
    except (nats.errors.TimeoutError, nats.errors.NoRespondersError):
        return False


def locomo_corpus(tmp_path: Path, sample: Callable[[int], dict[str, Any]],
                  labels: dict[str, Any]) -> tuple[Path, Path]:
    """``locomo10.json`` of ``sample(0)`` … ``sample(9)``, and a labels directory with ``labels``
    as dev conversation locomo-0."""
    locomo = tmp_path / "locomo10.json"
    locomo.write_text(json.dumps([sample(i) for i in range(10)]))
    root = tmp_path / "labels"
    (root / "dev").mkdir(parents=True)
    (root / "dev" / "locomo-0.json").write_text(json.dumps(labels))
    return locomo, root


def two_sessions(sample_id: str, first: Sequence[tuple[str, str]],
                 second: Sequence[tuple[str, str]]) -> Callable[[int], dict[str, Any]]:
    """A ``sample`` for ``locomo_corpus``: Ana and Ben's two sessions a week apart, ``first`` and
    ``second`` as (speaker, text) turns, the conversation's id ``<sample_id>-<i>``."""
    def sample(i: int) -> dict[str, Any]:
        conv: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben",
                                "session_1_date_time": "6:05 pm on 3 May, 2024",
                                "session_2_date_time": "9:30 am on 10 May, 2024"}
        for n, turns in ((1, first), (2, second)):
            conv[f"session_{n}"] = [{"speaker": s, "dia_id": f"D{n}:{k}", "text": t}
                                    for k, (s, t) in enumerate(turns, 1)]
        return {"sample_id": f"{sample_id}-{i}", "conversation": conv, "qa": []}
    return sample


# Ana's plan and Ben's chatter over two sessions (written here, no corpus text): the threads evals' chat
PLAN_FIRST = (
    ("Ana", "Guess what, I'm applying to the study abroad program in Galway!"),
    ("Ben", "Wow, the study abroad program sounds amazing. Ice cream later?"),
    ("Ana", "Sure, ice cream is always good."),
)
PLAN_SECOND = (
    ("Ben", "Hey Ana! How's the study abroad program going?"),
    ("Ana", "I'm still waiting to hear back about the study abroad program."),
    ("Ben", "Fingers crossed. I had ice cream yesterday."),
)
PLAN_LABELS: dict[str, Any] = {
    "source": "locomo", "conversation": "0", "split": "dev",
    "threads": [{"title": "Ana's study abroad program", "refs": ["D1:1", "D2:2"]}],
    "decisions": [], "commitments": [], "facts": [], "rules": [],
}
