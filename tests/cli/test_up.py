"""`cortex up` with no URL: its own nats-server under the data dir, started and stopped cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nats
import pytest


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and "nats-server" in cmdline:
            found.append(int(entry.name))
    return found


def wait_until(predicate, within: float = 20.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def lock_url(data_dir: Path) -> str | None:
    try:
        text = (data_dir / "cortex.lock").read_text()
    except OSError:
        return None
    return next((p.strip() for p in text.split(",") if p.strip().startswith("nats://")), None)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "cortex-data"


def start_up(data_dir: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "CORTEX_DATA_DIR": str(data_dir)}
    env.pop("CORTEX_NATS_URL", None)
    return subprocess.Popen([sys.executable, "-m", "workers", "up"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


async def test_up_without_url_runs_its_own_server_and_leaves_nothing_behind(data_dir: Path) -> None:
    proc = start_up(data_dir)
    try:
        url = wait_until(lambda: lock_url(data_dir))
        assert processes_mentioning(str(data_dir)), "embedded nats-server should be running"
        nc = await nats.connect(url)
        js = nc.jetstream()
        info = await wait_until_async(lambda: js.stream_info("CORTEX_EVENTS"))
        assert info.config.name == "CORTEX_EVENTS"
        await nc.close()

        second = subprocess.run([sys.executable, "-m", "workers", "up"], capture_output=True, text=True,
                                env={**os.environ, "CORTEX_DATA_DIR": str(data_dir)}, timeout=30)
        assert second.returncode != 0
        assert "already running" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=40)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    wait_until(lambda: not processes_mentioning(str(data_dir)), within=10)


async def wait_until_async(make, within: float = 20.0):  # type: ignore[no-untyped-def]
    import asyncio

    deadline = time.monotonic() + within
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            return await make()
        except Exception as exc:
            last = exc
            await asyncio.sleep(0.1)
    raise AssertionError(f"not ready in time: {last!r}")
