"""A source past its bucket's history is derived from the agent's events only when the
stream still holds all of them: once retention (``CORTEX_RETENTION``) or a purge moved the
stream's start, the events it dropped made the stored documents too, and a document
derived from what is left is not what the source stored then. The read says so (the
latest document, flagged as past the history: ``history_too_short``) instead of handing
out a derived document as exact. A start that only forgets moved (every event below it a
forgotten agent's, as ``cortex replay`` accepts it) is still derived, exactly."""

from __future__ import annotations

from typing import Any

import msgspec
from cortex_testkit import apply_one_per_batch
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.docs import ThreadsDoc
from shared.asof import DocReader
from shared.config import Settings, load_settings
from shared.forget import purge_events_at_the_head
from shared.inputs import Inputs
from shared.names import BUCKET_FORGETS, BUCKET_THREADS, EVENTS_STREAM
from shared.projection import ProjectionHandler
from shared.provision import ensure_bucket, provision
from shared.runtime import derivation
from workers.threads.worker import SPEC as THREADS
from workers.threads.worker import projections

AGENT = "agent-0"
GONE = "gone"  # an agent forgotten: its events open the stream


async def _publish(js: JetStreamContext, events: list[tuple[str, bytes, str]], first: int = 0) -> int:
    """``first`` events of another agent, then ``events``; the stream's last sequence."""
    for i in range(first):
        other = {"id": f"g{i}", "agent": GONE, "session": "s", "ts": "2026-02-17T09:00:00Z", "role": "user",
                 "content": "Let's get back to the auth migration, the token rotation is still open."}
        await js.publish(f"cortex.msg.{GONE}.received", msgspec.json.encode(other), headers={"Nats-Msg-Id": f"g{i}"})
    for subject, data, msg_id in events:
        await js.publish(subject, data, headers={"Nats-Msg-Id": msg_id})
    return int((await js.stream_info(EVENTS_STREAM)).state.last_seq)


async def _apply_one_per_batch(js: JetStreamContext, settings: Settings, last: int) -> dict[int, bytes | None]:
    """The threads worker's handler over the stream, one event per batch; the agent's stored
    document just before each of its triggers."""
    handler = ProjectionHandler(js, "threads", "threads@test", projections(settings), cut_on_triggers=True)
    return await apply_one_per_batch(js, settings, handler, BUCKET_THREADS, AGENT, last)


async def _past_history(js: JetStreamContext, triggers: list[int]) -> list[int]:
    plain = DocReader(js)  # without derivation: which triggers the bucket's history no longer reaches
    return [seq for seq in triggers if not (await plain.as_of(BUCKET_THREADS, AGENT, ThreadsDoc, seq))[1]]


async def _reads(js: JetStreamContext, settings: Settings, triggers: list[int]) -> dict[int, tuple[Any, bool]]:
    reader = Inputs(js, settings, derivation(js, settings, [THREADS], "9.9.9")).docs
    return {seq: await reader.as_of(BUCKET_THREADS, AGENT, ThreadsDoc, seq) for seq in triggers}


def _encoded(doc: Any) -> bytes | None:
    return msgspec.json.encode(doc) if doc is not None else None


async def test_a_read_past_the_history_after_retention_moved_the_stream_start_is_not_passed_off_as_exact(
    nc: Client, make_chat_events: Any,
) -> None:
    js = nc.jetstream()
    settings = load_settings({})
    await provision(js, settings, [], doc_buckets=[BUCKET_THREADS])
    last = await _publish(js, make_chat_events(200, 1, seed=5, triggers_every=40))
    before = await _apply_one_per_batch(js, settings, last)
    triggers = sorted(before)
    short = await _past_history(js, triggers)
    assert len(short) >= 2, "the early triggers should lie past the bucket's history: the test would prove nothing"

    await js.purge_stream(EVENTS_STREAM, seq=triggers[0])  # retention: every event before the first trigger gone
    reads = await _reads(js, settings, short)
    for seq, (doc, exact) in reads.items():
        if exact:
            assert _encoded(doc) == before[seq], f"the read as of {seq} is said exact but is not what was stored then"
    assert not any(exact for _, exact in reads.values())


async def test_a_stream_start_only_forgets_moved_still_derives_exactly(nc: Client, make_chat_events: Any) -> None:
    js = nc.jetstream()
    settings = load_settings({})
    await provision(js, settings, [], doc_buckets=[BUCKET_THREADS])
    last = await _publish(js, make_chat_events(200, 1, seed=5, triggers_every=40), first=5)
    before = await _apply_one_per_batch(js, settings, last)
    triggers = sorted(before)
    short = await _past_history(js, triggers)
    assert short

    await ensure_bucket(js, BUCKET_FORGETS)  # a forget's records: where it notes the start it moved
    await purge_events_at_the_head(js, settings.prefix, GONE, None)  # `cortex forget gone`
    assert (await js.stream_info(EVENTS_STREAM)).state.first_seq == 6
    for seq, (doc, exact) in (await _reads(js, settings, short)).items():
        assert exact, seq
        assert _encoded(doc) == before[seq], f"as of the trigger at {seq}"
