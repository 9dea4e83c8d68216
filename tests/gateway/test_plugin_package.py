"""The gateway plugin's own tests (deploy/openclaw-plugin/test, Node's built-in test runner)
against a real nats-server, run by the Node 24 the gateway runs on (else the machine's node)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from gateway_testkit import PLUGIN_DIR, node24, npm_ci

from shared.embedded import nats_server_binary

NODE = node24() or (Path(found) if (found := shutil.which("node")) else None)
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def test_the_plugins_own_tests_pass() -> None:
    assert NODE is not None
    if not (PLUGIN_DIR / "node_modules" / "nats").is_dir():
        npm_ci(PLUGIN_DIR, NODE)
    tests = sorted(str(p.relative_to(PLUGIN_DIR)) for p in (PLUGIN_DIR / "test").glob("*.test.js"))
    assert tests, "no test files found"
    done = subprocess.run([str(NODE), "--test", "--test-reporter=tap", *tests], cwd=PLUGIN_DIR, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "NATS_SERVER_BIN": nats_server_binary()})
    summary = [line for line in done.stdout.splitlines() if line.startswith(("# pass", "# fail", "not ok"))]
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "# fail 0" in summary and any(line.startswith("# pass") and line != "# pass 0" for line in summary), summary
