"""`cortex up` with no URL: its own nats-server under the data dir, started and stopped cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import nats
import pytest
from cortex_testkit import wait_until


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


async def test_up_without_url_runs_its_own_server_and_leaves_nothing_behind(data_dir: Path, wait_for: Any) -> None:
    proc = start_up(data_dir)
    try:
        url = wait_until(lambda: lock_url(data_dir), within=20)
        # the lock names the URL before the server process is spawned: wait for it to run
        assert wait_until(lambda: processes_mentioning(str(data_dir)), within=20), "embedded nats-server should run"
        nc = await nats.connect(url)
        js = nc.jetstream()

        async def events_stream() -> Any:
            try:
                return await js.stream_info("CORTEX_EVENTS")
            except Exception:  # not created yet
                return None

        info = await wait_for(events_stream, within=20, interval=0.1)
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
