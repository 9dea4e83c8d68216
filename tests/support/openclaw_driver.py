"""The REAL `@vainplex/nats-eventstore` plugin (npm, pinned by tests/node/package-lock.json)
driven through a stand-in of OpenClaw's plugin API (tests/node/driver.mjs): what the e2e
tests of OpenClaw's stream share (tests/e2e/test_openclaw.py, test_spawn.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

NODE = shutil.which("node")
DRIVER_DIR = Path(__file__).parent.parent / "node"
STORE = "openclaw-events"


def drive(url: str, hooks: list[dict[str, Any]], tmp: Path, name: str) -> dict[str, Any]:
    """Run the real plugin through the stand-in API; returns the driver's report."""
    scenario = tmp / f"{name}.json"
    scenario.write_text(json.dumps({"natsUrl": url, "hooks": hooks}))
    assert NODE is not None
    done = subprocess.run([NODE, str(DRIVER_DIR / "driver.mjs"), str(scenario)], capture_output=True, text=True,
                          timeout=60, cwd=DRIVER_DIR)
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["failed"] == 0 and report["warnings"] == [], report
    return report


def ensure_plugin() -> None:
    """The pinned plugin, installed by ``npm ci`` the first time it is missing: the README's
    test command on a fresh clone needs no step by hand."""
    if (DRIVER_DIR / "node_modules" / "@vainplex" / "nats-eventstore").is_dir():
        return
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("the plugin is not installed and npm is missing: install npm, or run `npm ci` in tests/node")
    done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=DRIVER_DIR,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        pytest.fail(f"`npm ci` in tests/node failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
