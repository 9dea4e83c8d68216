"""The `cortex` command line as a user runs it: real processes, a real nats-server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import nats
import pytest


def cortex(*args: str, env: dict[str, str] | None = None, stdin: str | None = None,
           timeout: float = 60) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "CORTEX_DATA_DIR": os.environ.get("CORTEX_DATA_DIR", "/nonexistent"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "workers", *args], env=full_env, input=stdin,
                          capture_output=True, text=True, timeout=timeout)


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

    assert asyncio.run(stored()) == ["cortex.run.main.start", "cortex.tool.main.call",
                                     "cortex.tool.main.result", "cortex.run.main.error"]


def test_status_lists_streams_consumers_and_buckets(nats_url: str) -> None:
    assert cortex("init", env={"CORTEX_NATS_URL": nats_url}).returncode == 0
    result = cortex("status", env={"CORTEX_NATS_URL": nats_url})
    assert result.returncode == 0, result.stderr
    assert "CORTEX_EVENTS" in result.stdout and "CORTEX_DLQ" in result.stdout
    assert "cortex_checkpoints" in result.stdout and "pending=" in result.stdout


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (("worker", "nonsense"), {}, "unknown worker(s) nonsense"),
        (("status",), {"CORTEX_NATS_URL": "nats://127.0.0.1:1"}, "cannot connect to NATS at nats://127.0.0.1:1"),
        (("publish", "/no/such/file.jsonl"), {"CORTEX_NATS_URL": "nats://127.0.0.1:1"}, "cannot read /no/such/file"),
        (("status",), {"CORTEX_THREADS_PRUNE_DAYS": "500"},
         "CORTEX_THREADS_PRUNE_DAYS='500': expected an integer between 1 and 90"),
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
