"""The limit: bare nats-py pull consume of the backlog — fetch 500, msgspec decode, ack.

This is what a Python process on this machine can do with the same events before any
worker logic: the ceiling every worker's throughput is compared with. Run as a module it
is the helper process of the two-process measurement (see ``scaleout``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time

import msgspec
import nats.errors
from nats.aio.client import Client
from nats.js import api
from nats.js.client import JetStreamContext

from shared.codec import EVENT_DECODERS
from shared.names import EVENTS_STREAM

BATCH = 500


class BareConsumer:
    """A durable pull consumer configured like a worker's, consumed with no worker logic."""

    def __init__(self, nc: Client, name: str, filters: list[str], batch: int = BATCH) -> None:
        self._nc = nc
        self._js: JetStreamContext = nc.jetstream()
        self.name = name
        self._filters = filters
        self._batch = batch
        self._sub: JetStreamContext.PullSubscription | None = None

    async def prepare(self) -> None:
        config = api.ConsumerConfig(
            durable_name=self.name, deliver_policy=api.DeliverPolicy.ALL, ack_policy=api.AckPolicy.EXPLICIT,
            ack_wait=30.0, max_ack_pending=max(1000, self._batch * 2), filter_subjects=self._filters,
        )
        await self._js.add_consumer(EVENTS_STREAM, config)
        self._sub = await self._js.pull_subscribe_bind(durable=self.name, stream=EVENTS_STREAM)

    async def consume(self, expected: int, limit_s: float = 120.0) -> tuple[int, float]:
        """Consume until ``expected`` messages were acked; (messages, seconds)."""
        assert self._sub is not None, "prepare() first"
        got = 0
        started = time.perf_counter()
        while got < expected and time.perf_counter() - started < limit_s:
            try:
                msgs = await self._sub.fetch(self._batch, timeout=1.0)
            except (TimeoutError, nats.errors.TimeoutError):
                continue
            for msg in msgs:
                EVENT_DECODERS[msg.subject.split(".", 2)[1]].decode(msg.data)
                await msg.ack()
            got += len(msgs)
        await self._nc.flush()
        return got, time.perf_counter() - started

    async def close(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
        with contextlib.suppress(Exception):
            await self._js.delete_consumer(EVENTS_STREAM, self.name)


async def measure_once(nc: Client, name: str, filters: list[str], expected: int) -> float:
    """One bare consume of the backlog from the start; msgs/s."""
    consumer = BareConsumer(nc, name, filters)
    try:
        await consumer.prepare()
        got, seconds = await consumer.consume(expected)
    finally:
        await consumer.close()
    if got < expected:
        raise RuntimeError(f"bare consumer {name} got {got} of {expected} messages")
    return got / seconds


async def _helper(args: argparse.Namespace) -> int:
    """Helper-process mode: prepare, say ``ready``, wait for ``go`` on stdin, consume, print JSON."""
    from shared.config import load_settings
    from shared.connection import connect

    nc = await connect(load_settings(), f"cortex-bench-{args.consumer}")
    consumer = BareConsumer(nc, args.consumer, args.filter)
    try:
        await consumer.prepare()
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        await asyncio.to_thread(sys.stdin.readline)
        start = time.time()
        got, _ = await consumer.consume(args.expect)
        end = time.time()
    finally:
        await consumer.close()
        await nc.close()
    sys.stdout.write(msgspec.json.encode({"events": got, "start": start, "end": end}).decode() + "\n")
    return 0 if got >= args.expect else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.bench.limit")
    parser.add_argument("--consumer", required=True)
    parser.add_argument("--expect", type=int, required=True)
    parser.add_argument("--filter", action="append", required=True)
    return asyncio.run(_helper(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
