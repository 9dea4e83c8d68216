"""Helpers shared by tests (importable as `testkit`; pytest adds tests/ to the path)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any


async def wait_for(predicate: Callable[[], Awaitable[Any]], within: float = 10.0, interval: float = 0.02) -> Any:
    """Poll an async predicate until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + within
    last: Any = None
    while time.monotonic() < deadline:
        last = await predicate()
        if last:
            return last
        await asyncio.sleep(interval)
    raise AssertionError(f"condition not met within {within}s (last value: {last!r})")
