"""The `cortex` command line as a user runs it: real processes, a real nats-server."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import nats
import nats.errors
import pytest
import worker_forkserver
from nats.js import api

from workers.cli.ops import replication


def cortex(*args: str, env: dict[str, str] | None = None, stdin: str | None = None,
           timeout: float = 60) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "CORTEX_DATA_DIR": os.environ.get("CORTEX_DATA_DIR", "/nonexistent"), **(env or {})}
    return worker_forkserver.run_cortex(args, env=full_env, input=stdin, timeout=timeout)


def event(i: int, **over: object) -> str:
    base = {"type": "msg.received", "id": f"e{i}", "agent": "main", "session": "s",
            "ts": "2026-02-17T10:00:00Z", "role": "user", "content": f"hello {i}"}
    return json.dumps({**base, **over})


def test_init_twice_is_a_no_op(nats_url: str) -> None:
    first = cortex("init", env={"CORTEX_NATS_URL": nats_url})
    assert first.returncode == 0, first.stderr
    assert "created   stream CORTEX_EVENTS" in first.stdout
    assert "created   bucket cortex_threads" in first.stdout
    second = cortex("init", env={"CORTEX_NATS_URL": nats_url})
    assert second.returncode == 0, second.stderr
    lines = second.stdout.strip().splitlines()
    assert lines and all(line.startswith("unchanged") for line in lines), second.stdout


def test_publish_reports_exactly_the_bad_line_numbers(nats_url: str, tmp_path: Path) -> None:
    assert cortex("init", env={"CORTEX_NATS_URL": nats_url}).returncode == 0
    lines = [
        event(1),
        "{not json",
        event(2),
        event(3, agent="bad.agent"),
        "",
        event(4, content=5),
        event(1),  # duplicate id: deduplicated by the stream
        json.dumps({"agent": "main", "id": "x"}),  # no subject can be derived
        event(5, type="session.start"),
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = cortex("publish", str(path), env={"CORTEX_NATS_URL": nats_url})
    assert result.returncode == 1
    assert "published 3, duplicates 1, rejected 4 (lines 2, 4, 6, 8)" in result.stdout
    assert "line 2: rejected: malformed JSON" in result.stderr
    assert "line 6: rejected: invalid msg event: Expected `str`" in result.stderr
    assert "Traceback" not in result.stderr


def test_publish_keeps_the_good_lines_of_a_file_with_poison_lines(nats_url: str, tmp_path: Path) -> None:
    """Issue 15 item 2: a line nested 1000 deep or with invalid UTF-8 aborted the whole file
    with a traceback; now each is reported and every good line is published."""
    assert cortex("init", env={"CORTEX_NATS_URL": nats_url}).returncode == 0
    deep = event(2)[:-1].encode() + b', "extra": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    lines = [
        event(1).encode(),
        deep,
        event(3, content="bad \udcff").encode().replace(b"\\udcff", b"\xff\xfe"),
        event(4, channel="c" * 60000).encode(),
        event(5, ts="9999-12-31T23:59:59-12:00").encode(),
        event(6).encode(),
    ]
    path = tmp_path / "poison.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = cortex("publish", str(path), env={"CORTEX_NATS_URL": nats_url})
    assert result.returncode == 1
    assert "published 2, duplicates 0, rejected 4 (lines 2, 3, 4, 5)" in result.stdout
    assert "line 2: rejected: JSON nested too deeply: 1001 levels > 64" in result.stderr
    assert "line 3: rejected: invalid UTF-8" in result.stderr
    assert "line 4: rejected: channel too long: 60000 characters > 256" in result.stderr
    assert "line 5: rejected: ts 9999-12-31T23:59:59-12:00 out of range" in result.stderr
    assert "Traceback" not in result.stderr


def test_publish_reads_standard_input(nats_url: str) -> None:
    assert cortex("init", env={"CORTEX_NATS_URL": nats_url}).returncode == 0
    result = cortex("publish", "-", env={"CORTEX_NATS_URL": nats_url}, stdin=event(1) + "\n" + event(2) + "\n")
    assert result.returncode == 0, result.stderr
    assert "published 2, duplicates 0, rejected 0" in result.stdout


def test_publish_stores_tool_and_run_events_on_their_subjects(nats_url: str) -> None:
    """ToolEvent and RunEvent are contract events: `cortex publish` derives their subjects."""
    assert cortex("init", env={"CORTEX_NATS_URL": nats_url}).returncode == 0
    common = {"agent": "main", "session": "s", "ts": "2026-02-17T10:00:00Z"}
    lines = [json.dumps({**common, "id": "r1", "run_id": "run-1", "prompt": "list files"}),
             json.dumps({**common, "id": "t1", "tool": "exec", "params": {"command": "ls"}}),
             json.dumps({**common, "id": "t2", "tool": "exec", "result": "a.md", "duration_ms": 4}),
             json.dumps({**common, "id": "r2", "type": "run.error", "run_id": "run-1", "error": "timeout"})]
    result = cortex("publish", "-", env={"CORTEX_NATS_URL": nats_url}, stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    assert "published 4, duplicates 0, rejected 0" in result.stdout

    async def stored() -> list[str]:
        nc = await nats.connect(nats_url)
        try:
            js = nc.jetstream()
            return [(await js.get_msg("CORTEX_EVENTS", seq)).subject or "" for seq in range(1, 5)]
        finally:
            await nc.close()

    assert asyncio.run(stored()) == ["cortex.run.8.main.start", "cortex.tool.8.main.call",  # slot 8: main
                                     "cortex.tool.8.main.result", "cortex.run.8.main.error"]


def test_status_lists_streams_consumers_and_buckets(nats_url: str) -> None:
    assert cortex("init", env={"CORTEX_NATS_URL": nats_url}).returncode == 0
    result = cortex("status", env={"CORTEX_NATS_URL": nats_url})
    assert result.returncode == 0, result.stderr
    assert "CORTEX_EVENTS" in result.stdout and "CORTEX_DLQ" in result.stdout
    assert "cortex_checkpoints" in result.stdout and "pending=" in result.stdout


async def test_status_counts_the_keys_that_hold_a_value_and_leaves_no_consumer_behind(nats_url: str) -> None:
    """A deleted or purged document is not counted; the count is asked of the server without a
    watcher, which left a consumer on each bucket's stream for five minutes per status."""
    assert (await asyncio.to_thread(cortex, "init", env={"CORTEX_NATS_URL": nats_url})).returncode == 0
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        kv = await js.key_value("cortex_threads")
        for agent in ("alice", "bob", "carol", "dave"):
            await kv.put(agent, b"{}")
        await kv.delete("bob")
        await kv.purge("carol")
        result = await asyncio.to_thread(cortex, "status", env={"CORTEX_NATS_URL": nats_url})
        assert result.returncode == 0, result.stderr
        [threads] = [line for line in result.stdout.splitlines() if line.strip().startswith("cortex_threads ")]
        assert " keys=2 " in threads, threads
        left = {s.config.name: s.state.consumer_count for s in await js.streams_info()
                if (s.config.name or "").startswith("KV_") and s.state.consumer_count}
        assert not left, left
    finally:
        await nc.close()


def test_replication_names_the_copies_the_leader_and_each_peer_behind() -> None:
    """The quick guard of what status prints on a cluster (the real cluster: the slow test below)."""
    peers = [api.PeerInfo(name="n1", current=True, lag=0), api.PeerInfo(name="n2", current=False, lag=40),
             api.PeerInfo(name="n3", current=False, offline=True)]
    lagging = replication(3, api.ClusterInfo(leader="n0", replicas=peers))
    assert lagging == "replicas=3 leader=n0 lagging=n2(lag 40),n3(offline)"
    assert replication(3, api.ClusterInfo(leader=None, replicas=peers[:1])) == "replicas=3 leader=none lagging=-"
    assert replication(1, api.ClusterInfo(leader="solo")) == "replicas=1 leader=solo lagging=-"
    assert replication(1, None) == "replicas=1 leader=- lagging=-"


@pytest.mark.slow
async def test_status_on_a_cluster_shows_replicas_leaders_and_the_lagging_peer(nats_cluster: Any,
                                                                                wait_for: Any) -> None:
    """`cortex init` with CORTEX_REPLICAS=3 against the cluster, one node of CORTEX_EVENTS's
    followers killed: status names each stream's and consumer's copies, leader and the
    peer that is behind."""
    env = {"CORTEX_NATS_URL": nats_cluster.url, "CORTEX_REPLICAS": "3"}
    init = await asyncio.to_thread(cortex, "init", env=env)
    assert init.returncode == 0, init.stderr
    nc = await nats.connect(nats_cluster.servers)
    try:
        js = nc.jetstream()
        leader = (await js.stream_info("CORTEX_EVENTS")).cluster.leader
        follower = next(n for n in nats_cluster.names if n != leader)
        nats_cluster.kill(nats_cluster.index(follower))

        async def behind() -> bool:
            try:  # this client may have been on the killed node: it reconnects meanwhile
                peers = (await js.stream_info("CORTEX_EVENTS")).cluster.replicas or []
            except nats.errors.Error:
                return False
            return any(p.name == follower and (p.offline or not p.current) for p in peers)

        await wait_for(behind, within=30)
    finally:
        await nc.close()
    alive = ",".join(nats_cluster.node_url(i) for i in nats_cluster.running())
    result = await asyncio.to_thread(cortex, "status", env={"CORTEX_NATS_URL": alive})
    assert result.returncode == 0, result.stderr
    [events] = [line for line in result.stdout.splitlines() if line.strip().startswith("CORTEX_EVENTS")]
    assert f"replicas=3 leader={leader} lagging={follower}(" in events, events
    [threads] = [line for line in result.stdout.splitlines() if line.strip().startswith("threads ")]
    assert "replicas=3 leader=n" in threads, threads
    [checkpoints] = [line for line in result.stdout.splitlines() if line.strip().startswith("cortex_checkpoints")]
    assert "replicas=3 leader=n" in checkpoints, checkpoints


def test_status_on_a_single_server_says_one_replica(nats_url: str) -> None:
    assert cortex("init", env={"CORTEX_NATS_URL": nats_url}).returncode == 0
    result = cortex("status", env={"CORTEX_NATS_URL": nats_url})
    [events] = [line for line in result.stdout.splitlines() if line.strip().startswith("CORTEX_EVENTS")]
    assert events.endswith(" replicas=1 leader=cortex-embedded lagging=-"), events
    [threads] = [line for line in result.stdout.splitlines() if line.strip().startswith("threads ")]
    assert threads.endswith(" replicas=1 leader=- lagging=-"), threads


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (("worker", "nonsense"), {}, "unknown worker(s) nonsense"),
        (("status",), {"CORTEX_NATS_URL": "nats://127.0.0.1:1"}, "cannot connect to NATS at nats://127.0.0.1:1"),
        (("publish", "/no/such/file.jsonl"), {"CORTEX_NATS_URL": "nats://127.0.0.1:1"}, "cannot read /no/such/file"),
        (("status",), {"CORTEX_THREADS_PRUNE_DAYS": "500"},
         "CORTEX_THREADS_PRUNE_DAYS='500': expected an integer between 1 and 90"),
        # the scheme is named, not looked up as a host name ("Name or service not known")
        (("status",), {"CORTEX_NATS_URL": "http://127.0.0.1:4222"},
         "cannot connect to NATS: http://127.0.0.1:4222: unsupported URL scheme 'http://' (use nats:// or "
         "tls://)"),  # ws:// only where nats-py can speak it (aiohttp installed: not a Cortex dependency)
        (("status",), {"CORTEX_NATS_URL": "ws://127.0.0.1:8080"},
         "cannot connect to NATS: ws://127.0.0.1:8080: a ws:// URL needs the aiohttp package, which is not installed "
         "(pip install aiohttp), or use nats:// or tls://"),
        (("worker", "threads"), {"CORTEX_NATS_URL": "https://alice:pw@nats.example:443"},
         "https://nats.example:443: unsupported URL scheme 'https://'"),
        # refused before connecting (the server named is unreachable): nothing is published
        (("memory", "forget", "alice", "nonexistent"), {"CORTEX_NATS_URL": "nats://127.0.0.1:1"},
         "'nonexistent' is not a memory id (a whole UUID such as 1b4e28ba-2fa1-11d2-883f-0016d3cca427; "
         "`cortex recall AGENT QUERY --full-ids` prints them): nothing was published"),
        (("memory", "pin", "alice", "1b4e28ba"), {"CORTEX_NATS_URL": "nats://127.0.0.1:1"},
         "'1b4e28ba' is not a memory id"),
    ],
)
def test_user_errors_are_one_clear_line_and_a_non_zero_exit(args: tuple[str, ...], env: dict[str, str],
                                                            message: str) -> None:
    result = cortex(*args, env=env)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_credentials_never_reach_the_error_output() -> None:
    result = cortex("status", env={"CORTEX_NATS_URL": "nats://alice:s3cret-pw@127.0.0.1:1"})
    assert result.returncode != 0
    assert "s3cret-pw" not in result.stderr + result.stdout


@pytest.mark.parametrize("command", [("status",), ("threads", "alice"), ("forget", "alice", "--status")])
def test_a_server_that_accepts_and_drops_every_connection_ends_a_command_with_one_line(
    nats_url: str, command: tuple[str, ...]
) -> None:
    """Every connection completes the NATS handshake and is dropped at once (a server, or a
    load balancer in front of one, that accepts and drops). Before: the command reconnected
    for ever (`cortex status` still retrying at 100 s) or died in a traceback. Now a
    command's connection gives up after a few reconnects and the command says so in one line."""
    from cortex_testkit import TcpProxy

    assert cortex("init", "--nats-url", nats_url).returncode == 0
    port = int(nats_url.rsplit(":", 1)[1])
    with TcpProxy(port, drop_after_pong=True) as proxy:
        url = f"nats://127.0.0.1:{proxy.port}"
        result = subprocess.run([sys.executable, "-m", "workers", *command, "--nats-url", url],
                                capture_output=True, text=True, timeout=60,
                                env={k: v for k, v in os.environ.items() if k != "CORTEX_NATS_URL"})
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    [line] = lines
    assert line.startswith(f"cortex: lost the connection to NATS at {url} ("), line
    assert line.endswith("is the server up and reachable?")
    assert proxy.accepted >= 3  # it did reconnect, a bounded number of times


def test_version_comes_from_the_package_metadata() -> None:
    from importlib.metadata import version

    result = cortex("--version")
    assert result.returncode == 0
    # and whether the regex cores run compiled (mypyc) or as pure Python (workers/compiled.py)
    assert re.fullmatch(rf"cortex {re.escape(version('cortex-intel'))}; regex cores: (pure Python|compiled \(mypyc, "
                        r"(\d+) of \2 core modules\)|partly compiled \(mypyc, .+\))\n", result.stdout), result.stdout


def _into_a_closed_pipe(*args: str, env: dict[str, str]) -> tuple[int, str]:
    """Run the CLI with stdout a pipe whose reader has already gone (as `| head -1` leaves it)."""
    proc = subprocess.Popen([sys.executable, "-m", "workers", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **env}, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    return proc.wait(60), err


def test_a_reader_that_goes_away_ends_the_command_quietly(nats_url: str) -> None:
    """`cortex status | head -1`, `cortex facts bob | head -1`: no BrokenPipe traceback;
    the exit status a shell gives a command ended by SIGPIPE."""
    assert cortex("init", env={"CORTEX_NATS_URL": nats_url}).returncode == 0
    assert cortex("publish", "-", env={"CORTEX_NATS_URL": nats_url},
                  stdin=event(1, agent="bob", type="msg.received")).returncode == 0
    for args in (("status",), ("facts", "bob")):
        code, err = _into_a_closed_pipe(*args, env={"CORTEX_NATS_URL": nats_url})
        assert (code, err) == (141, ""), err


NO_GHOST = ("cortex: no data for agent ghost: none of its events is in the stream (is its gateway publishing to "
            "cortex.msg.ghost.*? was it forgotten?)\n")


async def test_an_agent_cortex_knows_nothing_of_is_exit_1_with_one_line_everywhere(
    nats_url: str, workers_procs: Any, wait_for: Any, tmp_path: Path
) -> None:
    """Before: `boot` exited 1 for a missing agent but `threads`/`facts` 0, and `boot --fresh`
    printed a document dated 1970. Now every reading command says the same line and exits 1
    for an agent with no event at all, and 0 with an empty table for one that has events."""
    env = {"CORTEX_NATS_URL": nats_url}
    assert cortex("init", env=env).returncode == 0
    for name in ("api", "boot"):
        workers_procs.start(name, nats_url)
    workers_procs.start("recall", nats_url, CORTEX_EMBEDDER="hashing")
    assert cortex("publish", "-", env=env, stdin=event(1, agent="quiet", content="hi")).returncode == 0
    nc = await nats.connect(nats_url)
    try:
        async def serving() -> bool:
            for service in ("threads", "boot", "recall"):
                try:
                    await nc.request(f"cortex.api.{service}.quiet", b'{"query": "x"}', timeout=2)
                except Exception:
                    return False
            return True

        await wait_for(serving, within=60, interval=0.2)
    finally:
        await nc.close()
    reading = [("threads",), ("decisions",), ("commitments",), ("facts",), ("recall", "x"), ("boot",),
               ("boot", "--fresh"), ("threads", "--json"), ("facts", "--json"), ("boot", "--json")]
    for args in reading:
        result = cortex(args[0], "ghost", *args[1:], env=env)
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert result.stdout == ""
        assert result.stderr == NO_GHOST, (args, result.stderr)
    for args in [("decisions",), ("commitments",), ("facts",)]:
        result = cortex(args[0], "quiet", env=env)
        assert result.returncode == 0, (args, result.stderr)
        assert result.stdout.startswith("(no "), result.stdout


async def test_no_server_named_and_none_running_says_how_to_start_one(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer after `cortex demo` (its server gone) runs `cortex boot main`: the guess at the
    default port fails, and the one line says how to get a server instead of only that it failed."""
    from shared.config import load_settings
    from shared.connection import ConnectError
    from workers.cli import common

    monkeypatch.setattr(common, "DEFAULT_URL", "nats://127.0.0.1:1")  # nothing listens there
    settings = load_settings({"CORTEX_DATA_DIR": str(tmp_path)})
    with pytest.raises(ConnectError) as guessed:
        async with common.connected(settings):
            pass
    said = str(guessed.value)
    assert said.startswith("cannot connect to NATS at nats://127.0.0.1:1: "), said
    assert f"no Cortex running with an embedded one under {tmp_path}: start one with `cortex up`" in said
    named = load_settings({"CORTEX_DATA_DIR": str(tmp_path), "CORTEX_NATS_URL": "nats://127.0.0.1:1"})
    with pytest.raises(ConnectError) as refused:  # a server the user named: its failure alone
        async with common.connected(named):
            pass
    assert "cortex up" not in str(refused.value)


def test_commands_follow_nats_url_and_the_nats_cli_context(nats_url: str, tmp_path: Path) -> None:
    """Issue 44 item 1: with CORTEX_NATS_URL unset a command reads NATS_URL, else the nats
    CLI's selected context (its URL and credentials) — and a failure names where the URL came from."""
    env = {"CORTEX_NATS_URL": "", "CORTEX_DATA_DIR": str(tmp_path / "nothing-here")}
    assert cortex("init", env={**env, "NATS_URL": nats_url}).returncode == 0
    assert "CORTEX_EVENTS" in cortex("status", env={**env, "NATS_URL": nats_url}).stdout

    config = tmp_path / "xdg"
    (config / "nats" / "context").mkdir(parents=True)
    (config / "nats" / "context" / "local.json").write_text(json.dumps({"url": nats_url, "description": "here"}))
    (config / "nats" / "context" / "gone.json").write_text(json.dumps({"url": "nats://127.0.0.1:1"}))
    (config / "nats" / "context.txt").write_text("local")
    status = cortex("status", env={**env, "XDG_CONFIG_HOME": str(config)})
    assert status.returncode == 0 and "CORTEX_EVENTS" in status.stdout, status.stderr
    failed = cortex("status", env={**env, "XDG_CONFIG_HOME": str(config), "NATS_CONTEXT": "gone"})
    assert failed.returncode == 1
    assert failed.stderr.startswith("cortex: cannot connect to NATS at nats://127.0.0.1:1")
    assert "the nats CLI's context 'gone'" in failed.stderr and failed.stderr.count("\n") == 1, failed.stderr
