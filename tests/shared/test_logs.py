"""Logs as operators' collectors take them (issue 44 item 7): ``CORTEX_LOG_FORMAT=json`` is one
JSON object per line — RFC 3339 time with its offset, the event, every detail a field, a
traceback inside the record — and the connect retries carry jitter."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from cortex_testkit import wait_until

from shared.backoff import jittered
from shared.embedded import free_port
from shared.logs import JsonFormatter, rfc3339

RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)")


def records(logger: logging.Logger) -> io.StringIO:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return out


def test_a_json_record_is_one_line_with_its_details_and_its_traceback_inside() -> None:
    log = logging.getLogger("cortex.test.json")
    out = records(log)
    log.info("worker_stopped", extra={"worker": "recall", "error": "line one\nline two"})
    try:
        raise ValueError("bad\ninput")
    except ValueError:
        log.exception("batch_failed", extra={"consumer": "threads"})
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["event"] == "worker_stopped" and first["level"] == "INFO" and first["logger"] == "cortex.test.json"
    assert first["worker"] == "recall" and first["error"] == "line one\nline two"
    assert RFC3339.fullmatch(first["time"]), first["time"]
    assert second["consumer"] == "threads" and second["exc"].startswith("Traceback (most recent call last):")
    assert second["exc"].endswith("ValueError: bad\ninput")


def test_the_time_carries_the_local_offset() -> None:
    import time

    before = os.environ.get("TZ")
    try:
        for zone, expected in (("Asia/Kolkata", "1970-01-01T05:30:00.000+05:30"), ("UTC", "1970-01-01T00:00:00.000Z")):
            os.environ["TZ"] = zone
            time.tzset()
            assert rfc3339(0.0) == expected
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


def test_jitter_spreads_a_delay_within_its_bounds() -> None:
    assert jittered(2.0, 0.25, 0.0) == 1.5 and jittered(2.0, 0.25, 0.5) == 2.0 and jittered(2.0, 0.25, 0.999) < 2.5


def test_a_worker_logs_json_lines_and_retries_a_connect_with_jitter(tmp_path: Path) -> None:
    """Before: key=value lines only, and every pod retried at exactly 0.5, 1, 2, 4 … s."""
    log = tmp_path / "worker.log"
    env = {**os.environ, "CORTEX_LOG_FORMAT": "json", "CORTEX_LOG_LEVEL": "INFO", "CORTEX_DATA_DIR": str(tmp_path)}
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "workers", "worker", "threads", "--nats-url",
                                 f"nats://127.0.0.1:{free_port()}"], env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        wait_until(lambda: log.read_text().count("nats_connect_failed") >= 3, within=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    entries = [json.loads(line) for line in log.read_text().splitlines()]  # every line a JSON record
    assert all(RFC3339.fullmatch(e["time"]) for e in entries)
    waits = [e["retry_in_s"] for e in entries if e["event"] == "nats_connect_failed"]
    assert waits[:3] != [0.5, 1.0, 2.0] and all(0.375 * 2**i <= w <= 0.625 * 2**i for i, w in enumerate(waits[:3]))
    assert entries[-1]["event"] == "stopped" and proc.returncode == 0
