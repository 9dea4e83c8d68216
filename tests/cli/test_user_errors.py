"""Issue 44 item 5: what a new user met as a traceback or a silent success — each now one
line and a non-zero exit where something went wrong, and what was asked for where it did not.
Real processes against a real nats-server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import nats
from cortex_testkit import cortex, demo_file, subject_count, wait_until

from shared.kv import kv_read


def one_line(done: subprocess.CompletedProcess[str], starts: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stderr.startswith(f"cortex: {starts}") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_a_backup_that_cannot_be_written_is_one_line(nats_url: str, tmp_path: Path) -> None:
    """Before: FileNotFoundError / IsADirectoryError tracebacks."""
    assert cortex("init", url=nats_url).returncode == 0
    one_line(cortex("backup", str(tmp_path / "no" / "such" / "dir.jsonl"), url=nats_url),
             f"cannot write the backup to {tmp_path}/no/such/dir.jsonl: No such file or directory")
    one_line(cortex("backup", str(tmp_path), url=nats_url), f"cannot write the backup to {tmp_path}: Is a directory")
    bad = tmp_path / "not-a-backup.jsonl"
    bad.write_text("{not json\n")
    one_line(cortex("restore", str(bad), url=nats_url), f"{bad} is not a `cortex backup` file")


async def test_backup_dash_writes_to_stdout_and_restore_dash_reads_stdin(
    nats_url: str, tmp_path: Path, workers_procs: Any, wait_for: Any, monkeypatch: Any
) -> None:
    """Before: `cortex backup -` wrote a file named `-` (publish's `-` is stdin)."""
    assert cortex("init", url=nats_url).returncode == 0
    workers_procs.start("threads", nats_url)
    assert cortex("publish", str(demo_file(tmp_path, "alice")), url=nats_url).returncode == 0
    nc = await nats.connect(nats_url)
    try:
        kv = await nc.jetstream().key_value("cortex_threads")

        async def derived() -> bool:
            return (await kv_read(kv, "alice"))[0] is not None

        await wait_for(derived, within=60)
    finally:
        await nc.close()
    monkeypatch.chdir(tmp_path)  # where a file named `-` was written
    backup = cortex("backup", "-", url=nats_url)
    assert backup.returncode == 0, backup.stderr
    assert not (tmp_path / "-").exists()
    records = [json.loads(line) for line in backup.stdout.splitlines()]
    assert any(r["bucket"] == "cortex_threads" and r["key"] == "alice" for r in records)
    assert backup.stderr.strip() == f"backed up {len(records)} documents to stdout"
    restored = subprocess.run([sys.executable, "-m", "workers", "restore", "-"], input=backup.stdout, text=True,
                              capture_output=True, env={**os.environ, "CORTEX_NATS_URL": nats_url}, timeout=60)
    assert restored.returncode == 0 and restored.stdout.strip() == f"restored {len(records)} documents from stdin"


async def test_a_correction_naming_no_thread_or_commitment_publishes_nothing_and_says_so(
    nats_url: str, tmp_path: Path, workers_procs: Any, wait_for: Any
) -> None:
    """Before: `thread close alice nosuchid` and `commitment done alice nosuchid` exited 0 and
    the worker dropped the id without a word."""
    assert cortex("init", url=nats_url).returncode == 0
    for worker in ("threads", "decisions"):
        workers_procs.start(worker, nats_url)
    assert cortex("publish", str(demo_file(tmp_path, "alice")), url=nats_url).returncode == 0
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()

        async def derived() -> bool:
            for bucket in ("cortex_threads", "cortex_commitments"):
                try:
                    await (await js.key_value(bucket)).get("alice")
                except Exception:
                    return False
            return True

        await wait_for(derived, within=60)
        one_line(cortex("thread", "close", "alice", "nosuchid", url=nats_url),
                 "alice has no thread 'nosuchid': nothing was published (`cortex threads alice` lists the ids)")
        one_line(cortex("thread", "priority", "alice", "nosuchid", "high", url=nats_url), "alice has no thread")
        one_line(cortex("commitment", "done", "alice", "nosuchid", url=nats_url),
                 "alice has no commitment 'nosuchid': nothing was published (`cortex commitments alice` lists the ids)")
        one_line(cortex("thread", "close", "ghost", "nosuchid", url=nats_url), "no data for agent ghost")
        assert await subject_count(js, "cortex.feedback.>") == 0
        raw, _ = await kv_read(await js.key_value("cortex_threads"), "alice")
        assert raw is not None
        done = cortex("thread", "close", "alice", json.loads(raw)["threads"][0]["id"], url=nats_url)
        assert done.returncode == 0, done.stderr
        assert await subject_count(js, "cortex.feedback.>") == 1
    finally:
        await nc.close()


def test_consolidate_needs_no_dry_run_flag() -> None:
    """Before: `--dry-run` was a required flag of a command that only ever reports."""
    done = cortex("memory", "consolidate", "alice", url="nats://127.0.0.1:1")
    assert "required" not in done.stderr
    assert done.stderr.startswith("cortex: cannot connect to NATS at nats://127.0.0.1:1"), done.stderr


def test_a_worker_without_a_url_finds_the_running_cortex_up_and_up_says_stopping_and_stopped(tmp_path: Path) -> None:
    """Before: `cortex worker NAME` without a URL tried 4222 only, though the README said it finds
    the embedded server of `cortex up`; and `cortex up` stopped without a word in its log."""
    data = tmp_path / "home"
    env = {**os.environ, "CORTEX_DATA_DIR": str(data), "CORTEX_LOG_LEVEL": "INFO", "CORTEX_NATS_PORT": "0"}
    env.pop("CORTEX_NATS_URL", None)
    log = tmp_path / "up.log"
    with open(log, "wb") as out:
        up = subprocess.Popen([sys.executable, "-m", "workers", "up", "--workers", "threads"], env=env, stdout=out,
                              stderr=subprocess.STDOUT, start_new_session=True)
    worker_log = tmp_path / "worker.log"
    worker = None
    try:
        wait_until(lambda: "cortex: running threads" in log.read_text(), within=60)
        with open(worker_log, "wb") as out:
            worker = subprocess.Popen([sys.executable, "-m", "workers", "worker", "api"], env=env, stdout=out,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        url = next(line.split()[3].rstrip(":") for line in log.read_text().splitlines()
                   if line.startswith("cortex: NATS at "))
        wait_until(lambda: "nats_connected" in worker_log.read_text(), within=60)
        assert f"url={url}" in worker_log.read_text()
    finally:
        if worker is not None:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=40)
        up.send_signal(signal.SIGTERM)
        up.wait(timeout=40)
    text = log.read_text()
    assert up.returncode == 0, text
    stopping = [line for line in text.splitlines() if " stopping " in line]
    assert len(stopping) == 1 and "signal=SIGTERM" in stopping[0] and "workers=threads" in stopping[0], text
    assert text.rstrip().splitlines()[-1].split()[2:4] == ["workers.cli.run", "stopped"], text
    assert worker.returncode == 0 and " stopped workers=api" in worker_log.read_text()
