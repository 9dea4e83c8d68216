"""CORTEX_WORKSPACE: each agent's BOOTSTRAP.md written atomically; an unwritable workspace
is logged once and never stops the boot worker."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from cortex_testkit import cortex, demo_file

from schemas.docs import BootDoc
from shared.config import load_settings
from shared.kv import kv_read
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs


async def run_with_workspace(nats_url: str, tmp_path: Path, workspace: Path, wait_for: Any) -> BootDoc:
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_WORKSPACE": str(workspace), "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    names = ("threads", "decisions", "knowledge", "channels", "snapshot", "narrative", "boot")
    host = WorkerHost(settings, [all_specs()[n] for n in names], __version__)
    task = asyncio.create_task(host.run())
    try:
        assert cortex("publish", str(demo_file(tmp_path)), url=nats_url).returncode == 0
        await wait_for(lambda: _names_drained(js, names), within=60)
        raw, _ = await kv_read(await js.key_value("cortex_boot"), "main")
        return msgspec.json.decode(raw, type=BootDoc)
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()


async def _names_drained(js: Any, names: tuple[str, ...]) -> bool:
    for n in names:
        info = await js.consumer_info("CORTEX_EVENTS", n)
        if info.num_pending or info.num_ack_pending:
            return False
    return True


async def test_bootstrap_md_is_written_for_each_agent(nats_url: str, tmp_path: Path, wait_for: Any) -> None:
    workspace = tmp_path / "ws"
    doc = await run_with_workspace(nats_url, tmp_path, workspace, wait_for)
    written = (workspace / "main" / "BOOTSTRAP.md").read_text(encoding="utf-8")
    assert written == doc.markdown
    assert not list((workspace / "main").glob(".BOOTSTRAP.*")), "no temp file left behind"


async def test_an_unwritable_workspace_is_logged_once_and_boot_goes_on(
    nats_url: str, tmp_path: Path, wait_for: Any, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the workspace should be")
    caplog.set_level(logging.WARNING, logger="workers.boot.worker")
    doc = await run_with_workspace(nats_url, tmp_path, blocker / "ws", wait_for)
    assert doc.trigger == "session_start"  # the boot documents were still made
    warnings = [r for r in caplog.records if r.getMessage() == "workspace_not_writable"]
    assert len(warnings) == 1


