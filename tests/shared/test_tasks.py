"""cancel_and_wait: a task that swallows a cancellation still ends.

The swallowing is Python 3.11's ``asyncio.wait_for``: a task cancelled while the future it
waits on has just completed gets the result instead of the cancellation. nats-py awaits a
request's reply exactly that way (a future its reader task completes), so the loop below
is a lease keeper's: wait for a reply, then ask again.
"""

from __future__ import annotations

import asyncio
import sys

import pytest

from shared.tasks import cancel_and_wait


class Renewer:
    """A loop of requests whose replies the test delivers, like a lease keeper's renewals."""

    def __init__(self) -> None:
        self.replies: list[asyncio.Future[None]] = []
        self.renewals = 0
        self.asked = asyncio.Event()  # set at every request sent

    async def run(self) -> None:
        while True:
            reply = asyncio.get_running_loop().create_future()
            self.replies.append(reply)
            self.asked.set()
            await asyncio.wait_for(reply, timeout=60)  # as nats-py's request waits for its reply
            self.renewals += 1

    async def requests(self, n: int) -> None:
        """Until ``n`` requests were sent (at most 10 s)."""
        async with asyncio.timeout(10):
            while len(self.replies) < n:
                self.asked.clear()
                await self.asked.wait()

    async def cancelled_as_its_reply_arrives(self) -> asyncio.Task[None]:
        task = asyncio.create_task(self.run())
        await self.requests(1)  # it waits for its first reply
        self.replies[-1].set_result(None)  # the reply arrives...
        task.cancel()  # ...in the same turn as the cancellation
        return task


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12's wait_for no longer swallows a cancellation")
async def test_on_python_3_11_a_cancellation_meeting_a_reply_is_swallowed() -> None:
    """The hazard itself: after cancel() the loop runs on, so a plain ``await task`` would
    wait for ever (a worker waited for its lease keeper, which went on renewing)."""
    renewer = Renewer()
    task = await renewer.cancelled_as_its_reply_arrives()
    await renewer.requests(2)
    assert not task.done()
    assert renewer.renewals == 1 and len(renewer.replies) == 2  # it asked again
    await cancel_and_wait(task)


async def test_cancel_and_wait_ends_a_task_that_swallowed_the_cancellation() -> None:
    renewer = Renewer()
    task = await renewer.cancelled_as_its_reply_arrives()
    async with asyncio.timeout(10):
        await cancel_and_wait(task, again_s=0.05)
    assert task.cancelled()


async def test_cancel_and_wait_raises_the_tasks_own_error_and_ends_a_finished_task_quietly() -> None:
    async def fails() -> None:
        raise ValueError("the keeper's own error")

    failed = asyncio.create_task(fails())
    await asyncio.wait([failed])  # ended before cancel_and_wait is called
    with pytest.raises(ValueError, match="own error"):
        await cancel_and_wait(failed)

    async def returns() -> int:
        return 1

    finished = asyncio.create_task(returns())
    await asyncio.wait([finished])
    await cancel_and_wait(finished)
    assert finished.result() == 1


async def test_the_callers_own_cancellation_is_not_swallowed() -> None:
    release = asyncio.Event()
    started, cancelled_twice = asyncio.Event(), asyncio.Event()
    cancellations = 0

    async def refuses() -> None:  # swallows every cancellation until released
        nonlocal cancellations
        started.set()
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                cancellations += 1
                if cancellations >= 2:
                    cancelled_twice.set()

    task = asyncio.create_task(refuses())
    await started.wait()
    caller = asyncio.create_task(cancel_and_wait(task, again_s=0.05))
    await asyncio.wait_for(cancelled_twice.wait(), 10)  # the caller is cancelling again and again
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert not task.done()
    release.set()
    await cancel_and_wait(task)
    assert task.done()
