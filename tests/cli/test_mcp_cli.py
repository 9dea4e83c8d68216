"""``cortex mcp``'s own command line: where it listens, and failures before it serves."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shared.embedded import free_port
from workers.cli.base import CliError
from workers.cli.mcp import parse_listen
from workers.mcp.tools import TOOLS


@pytest.mark.parametrize(("text", "listen"), [("127.0.0.1:8765", ("127.0.0.1", 8765)),
                                             ("0.0.0.0:80", ("0.0.0.0", 80)), ("[::1]:9000", ("::1", 9000)),
                                             ("localhost:65535", ("localhost", 65535))])
def test_http_takes_host_and_port(text: str, listen: tuple[str, int]) -> None:
    assert parse_listen(text) == listen


@pytest.mark.parametrize("text", ["8765", "127.0.0.1", "127.0.0.1:", ":8765", "host:port", "127.0.0.1:0",
                                  "127.0.0.1:70000"])
def test_http_refuses_anything_but_host_and_port(text: str) -> None:
    with pytest.raises(CliError, match="expected HOST:PORT"):
        parse_listen(text)


def test_a_port_in_use_is_one_line_and_a_non_zero_exit(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "workers", "mcp", "--agent", "alice", "--http",
                                 f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=60,
                                env={**os.environ, "CORTEX_DATA_DIR": str(tmp_path)})
    assert result.returncode == 1
    assert result.stderr.strip() == f"cortex: cannot listen on 127.0.0.1:{port}: Address already in use"
    assert not result.stdout


@pytest.mark.parametrize(("args", "says"), [
    (["--tokens", "TOKENS"], "cortex: --tokens needs --http: stdio serves the one agent of --agent"),
    (["--tokens", "TOKENS", "--agent", "alice", "--http", "127.0.0.1:PORT"],
     "cortex: --tokens binds each request to the agent its token stands for: leave out --agent"),
    (["--http", "127.0.0.1:PORT"], "cortex: --agent is required (or --http with --tokens, for every agent of a "
                                   "token file)"),
    (["--tokens", "BROKEN", "--http", "127.0.0.1:PORT"],
     "cortex: --tokens BROKEN:2: the token of bob is shorter than 16 characters"),
    (["--tokens", "EMPTY", "--http", "127.0.0.1:PORT"],
     "cortex: --tokens EMPTY: no tokens in it, so no request could be served"),
])
def test_which_agents_a_server_serves_is_checked_before_it_serves(tmp_path: Path, args: list[str], says: str) -> None:
    files = {"TOKENS": "alice alice-0123456789abcdef\n", "BROKEN": "alice alice-0123456789abcdef\nbob short\n",
             "EMPTY": "# nobody yet\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    port = str(free_port())
    argv = [str(tmp_path / a) if a in files else a.replace("PORT", port) for a in args]
    result = subprocess.run([sys.executable, "-m", "workers", "mcp", *argv], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "CORTEX_DATA_DIR": str(tmp_path)})
    assert result.returncode == 1
    expected = says
    for name in files:
        expected = expected.replace(f" {name}", f" {tmp_path / name}")
    assert result.stderr.strip() == expected
    assert not result.stdout


@pytest.mark.parametrize("wire", ["pipes", "files"])
def test_every_request_sent_before_the_input_ends_is_answered(tmp_path: Path, wire: str) -> None:
    """A host hands the server pipes (read and written on the event loop); files — a scripted
    session — take the SDK's own file path: the same answers, nothing but protocol on stdout,
    and the call still running when the input ends is answered before the server exits."""
    import json

    requests = tmp_path / "requests.jsonl"
    requests.write_text("\n".join(json.dumps(m) for m in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        # a call that takes a while (no NATS server at this URL): the input ends while it runs
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "cortex_threads", "arguments": {}}},
    )) + "\n")
    command = [sys.executable, "-m", "workers", "mcp", "--agent", "alice"]
    env = {**os.environ, "CORTEX_DATA_DIR": str(tmp_path), "CORTEX_NATS_URL": f"nats://127.0.0.1:{free_port()}"}
    if wire == "pipes":
        result = subprocess.run(command, input=requests.read_bytes(), capture_output=True, timeout=60, env=env)
        output = result.stdout.decode()
    else:
        with open(requests, "rb") as stdin, open(tmp_path / "responses.jsonl", "wb") as stdout:
            result = subprocess.run(command, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=60, env=env)
        output = (tmp_path / "responses.jsonl").read_text()
    assert result.returncode == 0, result.stderr
    replies = [json.loads(line) for line in output.splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3]  # every request sent before the end is answered
    assert replies[0]["result"]["serverInfo"]["name"] == "cortex"
    assert len(replies[1]["result"]["tools"]) == len(TOOLS)
    assert replies[2]["result"]["isError"] and "NATS" in replies[2]["result"]["content"][0]["text"]


def test_a_line_that_is_not_json_rpc_is_skipped_and_the_next_answered(tmp_path: Path) -> None:
    import json

    lines = [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "t", "version": "1"}}}),
             "{not json", "\udcff".encode("utf-8", "surrogatepass").decode("latin-1"), '{"jsonrpc": "1.0", "id": 7}',
             json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})]
    result = subprocess.run([sys.executable, "-m", "workers", "mcp", "--agent", "alice"],
                            input="\n".join(lines).encode("latin-1") + b"\n", capture_output=True, timeout=60,
                            env={**os.environ, "CORTEX_DATA_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    replies = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [r.get("id") for r in replies if "result" in r] == [1, 2]
    assert "Traceback" not in result.stderr.decode()


def test_a_host_that_stops_reading_ends_the_server_quietly(tmp_path: Path) -> None:
    import json

    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "t", "version": "1"}}}
    proc = subprocess.Popen([sys.executable, "-m", "workers", "mcp", "--agent", "alice"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "CORTEX_DATA_DIR": str(tmp_path)})
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write((json.dumps(initialize) + "\n").encode())
        proc.stdin.flush()
        assert proc.stdout.read(1) == b"{"  # it answered; now the host goes away
        proc.stdout.close()
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}\n')  # a reply nobody reads
        proc.stdin.flush()  # stdin stays open: the failed write alone ends the server
        assert proc.wait(60) == 0
        assert "Traceback" not in proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _print_config(*args: str, **env: str) -> dict[str, Any]:
    import json

    full = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "NATS_"))}
    done = subprocess.run([sys.executable, "-m", "workers", "mcp", "--agent", "main", "--print-config", *args],
                          env={**full, **env}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    entry: dict[str, Any] = json.loads(done.stdout)["mcpServers"]["cortex"]
    return entry


def test_print_config_names_this_install_by_its_absolute_path_and_no_url_for_the_local_case(tmp_path: Path) -> None:
    """Issue 44 item 3: the documented entry said `"command": "cortex"` (on no GUI host's PATH; on
    PyPI another project) and a 4222 URL the local server did not listen on."""
    entry = _print_config(CORTEX_DATA_DIR=str(tmp_path / "home"))
    assert Path(entry["command"]).is_absolute() and os.access(entry["command"], os.X_OK)
    assert entry["args"][-3:] == ["mcp", "--agent", "main"]
    assert entry["env"] == {"CORTEX_DATA_DIR": str(tmp_path / "home")}


def test_print_config_carries_the_connection_it_was_run_with(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("")
    entry = _print_config("--timeout", "30", NATS_URL="nats://n1:4222", CORTEX_NATS_USER="mcp-main",
                          CORTEX_NATS_PASSWORD="secret", CORTEX_NATS_TLS_CA=str(ca))
    assert entry["env"] == {"CORTEX_NATS_URL": "nats://n1:4222", "CORTEX_NATS_USER": "mcp-main",
                            "CORTEX_NATS_PASSWORD": "secret", "CORTEX_NATS_TLS_CA": str(ca)}
    assert entry["args"][-2:] == ["--timeout", "30"]
    assert _print_config("--nats-url", "nats://other:4222")["env"] == {"CORTEX_NATS_URL": "nats://other:4222"}


def test_an_invalid_request_that_carries_an_id_gets_a_json_rpc_error_for_it(tmp_path: Path) -> None:
    """Issue 44 item 9: over stdio the server never answered some invalid requests that carry
    an id — params that are no object, invalid UTF-8, nesting deeper than the SDK's parser goes,
    a line over 64 MiB — and a host waits for that id for ever. Each gets a JSON-RPC error with
    its id, and the server goes on answering."""
    import json

    def request(i: int, params: object) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}).encode()

    initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
    lines = [initialize, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
             request(2, "not an object"),
             request(3, {"name": "cortex_stats", "arguments": {"x": "\udcff"}}).replace(b"\\udcff", b"\xff\xfe"),
             request(4, {"name": "cortex_stats"})[:-1] + b', "deep": ' + b"[" * 3000 + b"]" * 3000 + b"}",
             b'{"jsonrpc": "2.0", "id": "big", "method": "tools/call", "params": {"name": "cortex_remember", '
             b'"arguments": {"content": "' + b"a" * (65 * 1024 * 1024) + b'"}}}',
             b'{"jsonrpc": "2.0", "id": 6, "method": ',  # not JSON at all
             json.dumps({"jsonrpc": "2.0", "id": 7, "result": {}}).encode(),  # a response: never answered
             json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}).encode()]
    result = subprocess.run([sys.executable, "-m", "workers", "mcp", "--agent", "alice"],
                            input=b"\n".join(lines) + b"\n", capture_output=True, timeout=120,
                            env={**os.environ, "CORTEX_DATA_DIR": str(tmp_path),
                                 "CORTEX_NATS_URL": f"nats://127.0.0.1:{free_port()}"})
    assert result.returncode == 0, result.stderr[-2000:]
    replies = {r["id"]: r for r in map(json.loads, result.stdout.decode().splitlines())}
    assert sorted(replies, key=str) == sorted([1, 2, 3, 4, "big", 6, 8], key=str), replies.keys()
    errors = {i: (replies[i]["error"]["code"], replies[i]["error"]["message"]) for i in (2, 3, 4, "big", 6)}
    assert errors[2] == (-32600, "Invalid request: params: Input should be an object")
    assert errors[3][0] == -32700 and "not valid UTF-8" in errors[3][1]
    assert errors[4] == (-32700, "Parse error: JSON nested 3001 levels deep (at most 256)")
    assert errors["big"] == (-32600, "Invalid request: a message is at most 64 MiB on one line")
    assert errors[6][0] == -32700
    assert len(replies[8]["result"]["tools"]) == len(TOOLS)
    assert "Traceback" not in result.stderr.decode()
