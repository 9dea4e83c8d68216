"""Stopping a task for certain.

On Python 3.11 ``asyncio.wait_for`` swallows a cancellation that arrives while the future
it waits on has just completed: it returns the result instead of raising (3.12 rebuilt
``wait_for`` on ``asyncio.timeout`` and no longer does). nats-py awaits every request that
way, so a task looping over requests — a lease keeper renewing its lease — can miss a
``cancel()`` and run on, and whoever then awaits it waits for ever. A worker did exactly
that after its lease fence tripped: it waited for its keeper, which went on renewing the
lease, so neither it nor a standby consumed again (the soak test's hang).
``cancel_and_wait`` cancels again until the task has ended.
"""

from __future__ import annotations

import asyncio
from typing import Any

_AGAIN_S = 0.5  # how long to wait for a cancelled task before cancelling it again


async def cancel_and_wait(task: asyncio.Future[Any], again_s: float = _AGAIN_S) -> None:
    """Cancel ``task`` and wait until it has ended, cancelling it again every ``again_s``
    while it runs on. Its own error (other than the cancellation) is raised, as ``await
    task`` would; a cancellation of the caller is not swallowed."""
    while not task.done():
        task.cancel()
        await asyncio.wait((task,), timeout=again_s)
    if not task.cancelled():
        task.result()
