"""``cortex status``'s SOURCES section: the OpenClaw event store Cortex reads, and a backfill's
progress — how much the store holds, how much the server copied, what the events are, and
how far the slowest worker is, at what rate, and about how long it has left."""

from __future__ import annotations

import asyncio
import time

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext

from shared.config import Settings
from shared.names import EVENTS_STREAM
from shared.sources import SourceState, source_states

RATE_SAMPLE_S = 1.0  # between the two looks that give the rates (only while work is left)


class Progress(msgspec.Struct, kw_only=True):
    """One look at the consumers: each one's events left and acknowledged so far."""

    at: float
    left: dict[str, int]
    acked: dict[str, int]
    copied: int


async def look(js: JetStreamContext, sources: list[SourceState]) -> Progress:
    left: dict[str, int] = {}
    acked: dict[str, int] = {}
    try:
        consumers = await js.consumers_info(EVENTS_STREAM)
    except nats.js.errors.NotFoundError:
        consumers = []
    for info in consumers:
        left[info.name] = int(info.num_pending or 0) + int(info.num_ack_pending or 0)
        acked[info.name] = int(info.ack_floor.consumer_seq or 0) if info.ack_floor else 0
    return Progress(at=time.monotonic(), left=left, acked=acked, copied=sum(s.copied for s in sources))


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def workers_line(first: Progress, second: Progress | None) -> str:
    """The slowest consumer: its events left, its rate and the time left at that rate."""
    if not first.left:
        return "workers: no consumers yet (run `cortex init`)"
    name = max(first.left, key=lambda n: (first.left[n], n))
    left = (second or first).left.get(name, first.left[name])
    if left == 0:
        return "workers: every consumer has applied everything (caught up)"
    line = f"workers: slowest {name}, {left} events left"
    if second is not None and second.at > first.at:
        rate = (second.acked.get(name, 0) - first.acked.get(name, 0)) / (second.at - first.at)
        line += f", {rate:.0f} events/s"
        if rate > 0:
            line += f", about {_duration(left / rate)} to go"
    return line


def source_lines(state: SourceState, first: Progress, second: Progress | None) -> list[str]:
    store = (f"store {state.store_messages} messages" if state.store_messages is not None
             else "store not readable from here")
    lag = f"lag {state.lag}" if state.lag is not None else "lag unknown"
    active = f", last activity {state.active_s:.1f} s ago" if state.active_s is not None else ""
    head = f"  {state.stream} → {EVENTS_STREAM}: {store}, copied {state.copied} ({lag}{active})"
    if state.error:
        head += f"; error: {state.error}"
    if second is not None and second.at > first.at and second.copied > first.copied:
        head += f", copying {(second.copied - first.copied) / (second.at - first.at):.0f} events/s"
    c = state.classes
    kinds = (f"    conversation {c.get('conversation', 0)} · tool {c.get('tool', 0)} · run {c.get('run', 0)} · "
             f"ignored (llm.*, gateway.*, msg.sending) {c.get('not_conversation', 0)} · unknown {c.get('unknown', 0)}")
    if state.unknown_types:
        kinds += f" ({', '.join(state.unknown_types[:5])})"
    return [head, kinds]


async def print_sources(js: JetStreamContext, settings: Settings, sample_s: float = RATE_SAMPLE_S) -> None:
    print("SOURCES")
    sources = await source_states(js, settings.prefix)
    if not sources:
        wanted = settings.openclaw.stream
        print(f"  (none; CORTEX_OPENCLAW_STREAM={wanted} is not wired yet: run `cortex init`)" if wanted
              else "  (none: set CORTEX_OPENCLAW_STREAM and run `cortex init` to read an OpenClaw event store)")
        return
    first = await look(js, sources)
    second: Progress | None = None
    busy = any(first.left.values()) or any(s.lag for s in sources)
    if busy and sample_s > 0:
        await asyncio.sleep(sample_s)  # a measurement over time, not a synchronisation
        sources = await source_states(js, settings.prefix)
        second = await look(js, sources)
    for state in sources:
        for line in source_lines(state, first, second):
            print(line)
    print("  " + workers_line(first, second))
