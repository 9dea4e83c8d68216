"""Watermarks of other workers, for composed documents (snapshot, narrative, boot).

A composed document made for the event at stream sequence S must reflect every event
before S. Source worker W has applied all of them when either

* its checkpoint (highest contiguous applied sequence, ``cortex_checkpoints``) is ≥ the
  sequence we need, or
* its consumer has nothing left: no pending and no unacked messages. That second rule is
  what keeps a worker which never sees the trigger's kind of event (its filter excludes
  it, so its checkpoint stops at its own last event) from making every boot wait out the
  bound.

Checkpoints are followed with a KV watch, so the common case costs no request at all.

With partitions, the consumer to wait on is the source's consumer of the agent's
partition (``<worker>-<k>``, ``shared.composed.source_consumer``): it reads every event
and acks other partitions' unapplied, so its checkpoint covers the whole stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import nats.js.errors
from nats.js.client import JetStreamContext

from shared.names import BUCKET_CHECKPOINTS, EVENTS_STREAM

log = logging.getLogger(__name__)

STALLED_LAG = 1000  # events short of a missed sequence past which a consumer counts as stalled


class WatermarkTracker:
    def __init__(self, js: JetStreamContext, poll_s: float = 0.02) -> None:
        self._js = js
        self._checkpoints: dict[str, int] = {}
        self._changed = asyncio.Event()
        self._watch_task: asyncio.Task[None] | None = None
        self._poll_s = poll_s
        self._idle_cache: dict[str, tuple[float, bool]] = {}
        self._behind: dict[str, int] = {}  # consumer → the highest sequence it missed at a bound

    async def start(self) -> None:
        kv = await self._js.key_value(BUCKET_CHECKPOINTS)
        watcher = await kv.watchall()
        self._watch_task = asyncio.create_task(self._follow(watcher), name="checkpoint-watch")

    async def _follow(self, watcher: object) -> None:
        try:
            async for entry in watcher:  # type: ignore[attr-defined]
                if entry is None or entry.value is None or entry.key is None:
                    continue
                with contextlib.suppress(ValueError):
                    self._checkpoints[entry.key] = int(entry.value)
                    self._changed.set()
        finally:
            with contextlib.suppress(Exception):
                await watcher.stop()  # type: ignore[attr-defined]

    async def stop(self) -> None:
        if self._watch_task is not None:
            self._watch_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch_task

    def checkpoint(self, consumer: str) -> int:
        return self._checkpoints.get(consumer, 0)

    async def drained(self, consumer: str) -> bool:
        """True when the consumer has no pending or unacked messages right now."""
        try:
            info = await self._js.consumer_info(EVENTS_STREAM, consumer)
        except nats.js.errors.NotFoundError:
            return False
        return not info.num_pending and not info.num_ack_pending

    async def reached(self, consumer: str, seq: int) -> bool:
        if self.checkpoint(consumer) >= seq:
            return True
        return await self.drained(consumer)

    def _stalled(self, consumer: str) -> bool:
        """More than ``STALLED_LAG`` events short of a sequence it missed at an earlier
        bound: waiting again would only hold every later document for the whole bound.
        (A consumer that is merely slow — one long batch, say — is still waited for.)"""
        missed = self._behind.get(consumer)
        if missed is None:
            return False
        now = self.checkpoint(consumer)
        if now >= missed:
            del self._behind[consumer]
            return False
        return missed - now > STALLED_LAG

    async def wait(self, needs: dict[str, int], bound_s: float) -> list[str]:
        """Wait until every consumer reached its sequence, at most ``bound_s``.

        Returns the consumers still lagging at the bound (empty when all caught up). A
        consumer that missed an earlier bound and is stalled (see ``_stalled``) is not
        waited for again: it is reported lagging at once, until it catches up.
        """
        deadline = time.monotonic() + bound_s
        pending = dict(needs)
        while True:
            results = await asyncio.gather(*(self.reached(c, s) for c, s in pending.items()))
            pending = {c: s for (c, s), ok in zip(pending.items(), results, strict=True) if not ok}
            remaining = deadline - time.monotonic()
            if not pending or remaining <= 0 or all(self._stalled(c) for c in pending):
                for consumer, seq in pending.items():
                    self._behind[consumer] = max(seq, self._behind.get(consumer, 0))
                return sorted(pending)
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=min(self._poll_s * 5, remaining))

    async def lagging_now(self, needs: dict[str, int], cache_s: float = 0.5) -> list[str]:
        """Lag without waiting (for requests): cached consumer state, refreshed every ``cache_s``."""
        out = []
        now = time.monotonic()
        for consumer, seq in needs.items():
            if self.checkpoint(consumer) >= seq:
                continue
            cached = self._idle_cache.get(consumer)
            if cached is None or now - cached[0] > cache_s:
                cached = (now, await self.drained(consumer))
                self._idle_cache[consumer] = cached
            if not cached[1]:
                out.append(consumer)
        return sorted(out)
