"""Fixtures: a real nats-server with JetStream per test (random port, fresh store), and
`wait_for` — poll a condition with a timeout (tests never sleep to synchronise)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from shared.embedded import EmbeddedNats


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[EmbeddedNats]:
    server = EmbeddedNats(str(tmp_path / "nats"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def nats_url(nats_server: EmbeddedNats) -> str:
    return nats_server.url


@pytest.fixture
async def nc(nats_url: str) -> AsyncIterator[Client]:
    client = await nats.connect(nats_url)
    try:
        yield client
    finally:
        await client.close()




async def _wait_for(predicate: Callable[[], Awaitable[Any]], within: float = 10.0, interval: float = 0.02) -> Any:
    """Poll an async predicate until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + within
    last: Any = None
    while time.monotonic() < deadline:
        last = await predicate()
        if last:
            return last
        await asyncio.sleep(interval)
    raise AssertionError(f"condition not met within {within}s (last value: {last!r})")


@pytest.fixture
def wait_for() -> Callable[..., Awaitable[Any]]:
    return _wait_for
