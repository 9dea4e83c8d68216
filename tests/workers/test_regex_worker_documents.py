"""What the threads and decisions workers write is the fold of their projections over each
agent's events, byte for byte: the handler's path around the cores (the document cache, the
stamping, the batches, the cuts at triggers and stream boundaries, the writes) adds nothing and
loses nothing. A real nats-server, the consume loop and each worker's own handler, over the
bench's mixed English and German backlog."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from nats.aio.client import Client

from shared.codec import Envelope, Limits, decode_event
from shared.config import load_settings
from shared.consume import ConsumeLoop, LoopConfig
from shared.health import Health
from shared.kv import kv_read
from shared.names import EVENTS_STREAM, stored_subject
from shared.projection import ProjectionHandler, step
from shared.provision import provision
from workers.bench.events import backlog
from workers.registry import all_specs

EVENTS = 900
AGENTS = 6


async def test_the_regex_workers_write_exactly_the_fold_of_their_projections(
    nc: Client, wait_for: Callable[..., Awaitable[Any]]
) -> None:
    js = nc.jetstream()
    settings = load_settings({})
    specs = [all_specs()[name] for name in ("threads", "decisions")]
    await provision(js, settings, [spec.consumer(spec.name) for spec in specs])
    events = backlog(EVENTS, AGENTS, seed=11)
    for ev in events:
        await js.publish(ev.subject, ev.data)
    # small batches and cuts every 100 sequences: many commits, boundaries inside batches
    config = LoopConfig(batch_size=37, fetch_timeout_s=0.1, read_ahead=200)
    for spec in specs:
        assert spec.derive is not None
        projections = spec.derive(settings)
        handler = ProjectionHandler(js, spec.name, f"{spec.name}@test", projections,
                                    cut_on_triggers=True, cut_every=100)
        loop = ConsumeLoop(js, worker=spec.name, consumer=spec.name, handler=handler, config=config,
                           health=Health(spec.name))
        task = asyncio.create_task(loop.run())
        try:
            async def drained(name: str = spec.name) -> bool:
                info = await js.consumer_info(EVENTS_STREAM, name)
                return bool(info.num_pending == 0 and info.num_ack_pending == 0)

            await wait_for(drained, within=120)
        finally:
            loop.stop()
            await asyncio.wait_for(task, timeout=30)
        # the fold: every event of the agent, in stream order, through ``step`` (what a replay derives)
        for projection in projections:
            kv = await js.key_value(projection.bucket)
            for agent in {ev.agent for ev in events}:
                doc = None
                for seq, ev in enumerate(events, start=1):
                    if ev.agent != agent:
                        continue
                    _, family, _, kind = ev.subject.split(".")
                    env = decode_event("cortex", stored_subject("cortex", family, agent, kind), seq, ev.data, Limits())
                    assert isinstance(env, Envelope)
                    if projection.accepts(env):
                        doc, _ = step(projection, doc, env, None, f"{spec.name}@test")
                raw, _ = await kv_read(kv, agent)
                assert raw is not None, (projection.bucket, agent)
                assert raw == msgspec.json.encode(doc), (projection.bucket, agent)
