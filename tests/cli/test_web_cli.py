"""`cortex web`'s refusals, before it listens or connects: a non-loopback address without
tokens, a token file it cannot use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def web(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workers", "web", *args], capture_output=True, text=True, timeout=60)


def test_a_non_loopback_address_needs_tokens() -> None:
    done = web("--listen", "0.0.0.0:0", "--nats-url", "nats://127.0.0.1:1")
    assert done.returncode == 1
    assert "not a loopback address" in done.stderr and "--tokens" in done.stderr
    assert done.stderr.count("\n") == 1  # one line, no traceback


def test_an_unusable_token_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "tokens").write_text("main short\n")
    done = web("--listen", "127.0.0.1:0", "--tokens", str(tmp_path / "tokens"))
    assert done.returncode == 1 and "shorter than 16 characters" in done.stderr


def test_a_bad_listen_address_is_one_line() -> None:
    done = web("--listen", "nowhere")
    assert done.returncode == 1 and "--listen 'nowhere': expected HOST:PORT" in done.stderr
