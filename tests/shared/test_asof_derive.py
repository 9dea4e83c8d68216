"""A source written more often since a trigger than its bucket keeps revisions (paced load:
a revision per small batch) is read as of the trigger exactly: the threads document is
derived from the agent's events before it (``shared.derive``), byte for byte what the
threads worker had stored then — bad input and another agent's events in between.
Before, the reader took the latest document (``history_too_short``) and a composed
document made from it (the channel summaries) differed from a replay's."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.docs import ThreadsDoc
from shared.asof import DocReader
from shared.codec import Envelope, decode_event, event_limits
from shared.config import Settings, load_settings
from shared.derive import YIELD_EVERY, Derivation
from shared.inputs import Inputs
from shared.kv import kv_read
from shared.names import BUCKET_THREADS, EVENTS_STREAM
from shared.projection import ProjectionHandler, is_trigger
from shared.provision import provision
from shared.runtime import derivation
from shared.tasks import cancel_and_wait
from workers.threads.worker import SPEC as THREADS
from workers.threads.worker import projections

AGENT = "agent-0"


async def _publish(js: JetStreamContext, events: list[tuple[str, bytes, str]]) -> int:
    """Every event, with bad input and another agent's event among them; the stream's last sequence."""
    for i, (subject, data, msg_id) in enumerate(events):
        await js.publish(subject, data, headers={"Nats-Msg-Id": msg_id})
        if i % 25 == 7:
            broken = b'{"id": "broken", "agent"'
            await js.publish(f"cortex.msg.{AGENT}.received", broken, headers={"Nats-Msg-Id": f"x{i}"})
            other = {"id": f"o{i}", "agent": "other", "session": "s", "ts": "2026-02-17T10:00:00Z", "role": "user",
                     "content": "Let's get back to the auth migration, the token rotation is still open."}
            await js.publish("cortex.msg.other.received", msgspec.json.encode(other), headers={"Nats-Msg-Id": f"o{i}"})
    return int((await js.stream_info(EVENTS_STREAM)).state.last_seq)


async def _apply_one_per_batch(js: JetStreamContext, settings: Settings, last: int) -> dict[int, bytes | None]:
    """The threads worker's handler over the stream, one event per batch (as under paced load);
    the agent's stored document just before each of its triggers."""
    handler = ProjectionHandler(js, "threads", "threads@test", projections(settings), cut_on_triggers=True)
    kv = await js.key_value(BUCKET_THREADS)
    limits = event_limits(settings)
    before: dict[int, bytes | None] = {}
    for seq in range(1, last + 1):
        msg = await js.get_msg(EVENTS_STREAM, seq)
        env = decode_event(settings.prefix, msg.subject or "", seq, msg.data or b"", limits)
        if not isinstance(env, Envelope):
            continue  # a dead letter
        if env.agent == AGENT and is_trigger(env):
            before[seq] = (await kv_read(kv, AGENT))[0]
        await handler.apply(env)
        await handler.commit()
    return before


async def test_a_source_past_its_history_is_derived_as_of_the_trigger(nc: Client, make_chat_events: Any) -> None:
    js = nc.jetstream()
    settings = load_settings({})
    await provision(js, settings, [], doc_buckets=[BUCKET_THREADS])
    last = await _publish(js, make_chat_events(240, 1, seed=5, triggers_every=40))
    before = await _apply_one_per_batch(js, settings, last)
    triggers = sorted(before)
    assert len(triggers) >= 10

    plain = DocReader(js)  # without derivation: what the readers did before
    short = [seq for seq in triggers if not (await plain.as_of(BUCKET_THREADS, AGENT, ThreadsDoc, seq))[1]]
    assert short, "the early triggers should lie past the bucket's history: the test would prove nothing"

    reader = Inputs(js, settings, derivation(js, settings, [THREADS], "9.9.9")).docs
    # in stream order (each derived from the last: one session's events), then back (from the start)
    for seq in [*triggers, *reversed(triggers)]:
        doc, exact = await reader.as_of(BUCKET_THREADS, AGENT, ThreadsDoc, seq)
        assert exact, seq
        got = msgspec.json.encode(doc) if doc is not None else None
        assert got == before[seq], f"as of the trigger at {seq} ({'derived' if seq in short else 'a revision'})"


async def test_a_long_derivation_gives_the_event_loop_turns_between_its_events(
    nc: Client, make_chat_events: Any, monkeypatch: Any
) -> None:
    """Deriving a source far past its history applies hundreds of events in one read: boot's
    event loop, and every briefing in flight with it, was held for up to 1.2 s (issue 39). The
    derivation now lets the loop run every ``YIELD_EVERY`` events: a task ticking beside it
    advances between its applications. What it derives is unchanged (the test above)."""
    js = nc.jetstream()
    settings = load_settings({})
    await provision(js, settings, [], doc_buckets=[BUCKET_THREADS])
    last = await _publish(js, make_chat_events(240, 1, seed=5, triggers_every=40))
    ticks = 0

    async def ticking() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    seen: list[int] = []
    applied = Derivation._applied

    def counted(*args: Any) -> Any:
        seen.append(ticks)
        return applied(*args)

    monkeypatch.setattr(Derivation, "_applied", staticmethod(counted))
    deriving = derivation(js, settings, [THREADS], "9.9.9")
    ticker = asyncio.create_task(ticking())
    try:
        doc, exact = await deriving.as_of(BUCKET_THREADS, AGENT, last + 1, "threads@test")
    finally:
        await cancel_and_wait(ticker)
    assert exact and doc is not None
    assert len(seen) > YIELD_EVERY
    assert len(set(seen)) >= len(seen) // YIELD_EVERY  # the loop ran between every YIELD_EVERY applications
