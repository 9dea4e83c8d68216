"""Helpers of the MCP tests (importable as ``mcp_testkit``): the SDK's own client held open on a
server (``cortex mcp`` as a subprocess over stdio, or over streamable HTTP), and ``cortex mcp
--http`` processes. The SDK is imported when first used, not by every test that imports this."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from cortex_testkit import wait_listening

from shared.embedded import free_port


class McpSession:
    """An MCP client session held open by a task of its own (anyio's scopes must be left by the
    task that entered them), so one server can serve several tests. ``start()`` → the client."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self._task: asyncio.Task[None] | None = None
        self._close = asyncio.Event()

    async def start(self) -> Any:
        opened: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._hold(opened))
        return await asyncio.wait_for(opened, timeout=90)

    async def _hold(self, opened: asyncio.Future[Any]) -> None:
        from mcp import Client

        try:
            async with Client(self.target, read_timeout_seconds=60) as client:
                opened.set_result(client)
                await self._close.wait()
        except BaseException as exc:
            if not opened.done():
                opened.set_exception(exc)
            raise

    async def stop(self) -> None:
        self._close.set()
        if self._task is not None:
            await asyncio.wait_for(self._task, timeout=30)


def mcp_env(url: str, tmp: Path, **env: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
    return {**base, "CORTEX_NATS_URL": url, "CORTEX_DATA_DIR": str(tmp / "mcp-data"), **env}


def stdio_server(agent: str, env: dict[str, str], *extra: str) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(command=sys.executable, args=["-m", "workers", "mcp", "--agent", agent, *extra],
                                 env=env)


class HttpServers:
    """``cortex mcp --http`` processes; every one is stopped at teardown."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, agent: str, env: dict[str, str], *extra: str) -> str:
        return self._start(agent, env, "--agent", agent, *extra)

    def start_tokens(self, tokens: Path, env: dict[str, str], *extra: str) -> str:
        """``cortex mcp --http --tokens``: every agent of the token file on one server."""
        return self._start("tokens", env, "--tokens", str(tokens), *extra)

    def _start(self, name: str, env: dict[str, str], *args: str) -> str:
        port = free_port()
        log = self.tmp / f"mcp-http-{name}-{port}.log"
        proc = spawn_cortex(log, "mcp", "--http", f"127.0.0.1:{port}", *args, env=env)
        self.procs.append(proc)
        wait_listening(proc, port, log, within=60)
        return f"http://127.0.0.1:{port}/mcp"

    def stop_all(self) -> None:
        for proc in self.procs:
            stop(proc)


def with_token(url: str, token: str) -> Any:
    """The SDK's streamable HTTP transport to ``url`` sending ``Authorization: Bearer <token>``."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    return streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))


def initialize_status(url: str, token: str | None) -> tuple[int, str]:
    """A bare ``initialize`` POST (no SDK): its HTTP status and body, for what the server says
    before any MCP is spoken."""
    import json
    import urllib.error
    import urllib.request

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}})
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as res:
            return res.status, res.read(2000).decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def spawn_cortex(log: Path, *args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``cortex ARGS`` in the background, its output in ``log``; stop it with ``stop``."""
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "workers", *args], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, env=env)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
