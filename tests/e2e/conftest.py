"""The end-to-end tests start every worker as a process (some two pipelines and a replay) and
wait for them to drain: on a loaded machine that outgrows pytest's default 120 s, which is a
safety bound here, not what any test checks (the full suite at load ~22 timed out the demo
conversation and the forget-under-traffic tests at 120 s, both passing idle in ~30-60 s).
A test without its own ``timeout`` marker gets 300 s."""

from __future__ import annotations

import pytest

E2E_TIMEOUT_S = 300


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in item.nodeid.replace("\\", "/") and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(E2E_TIMEOUT_S))
