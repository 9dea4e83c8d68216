"""The embedded server's Go scheduler takes half the machine's cores (the workers beside it take
the rest), unless the caller's environment says otherwise (docs/BENCHMARKS.md, issue 39, seventeenth
round: with a P for every core, a third of its CPU went to threads waking and looking for work)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shared.embedded import EmbeddedNats, server_env


def test_half_the_cores_at_least_one_and_a_callers_setting_kept() -> None:
    assert server_env({"PATH": "/bin"}, 2) == {"PATH": "/bin", "GOMAXPROCS": "1"}
    assert server_env({}, 8)["GOMAXPROCS"] == "4"
    assert server_env({}, 1)["GOMAXPROCS"] == "1"
    assert server_env({}, None)["GOMAXPROCS"] == "1"
    assert server_env({"GOMAXPROCS": "3"}, 2)["GOMAXPROCS"] == "3"


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads the server's environment from /proc")
def test_the_started_server_runs_with_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOMAXPROCS", raising=False)
    with EmbeddedNats(str(tmp_path)) as server:
        assert server.pid is not None
        assert _environ(server.pid).get("GOMAXPROCS") == str(max(1, (os.cpu_count() or 1) // 2))
