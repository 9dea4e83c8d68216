"""A wait's proof (the agent's document of the source: ``shared.asof.DocReader.final_before``) is
not read while the server says the source's consumer has not even been given the event the
document would have to hold (``shared.watermarks.Proof.needs``) — the first look of nearly every
wait read a whole document head to learn "no" (docs/BENCHMARKS.md, twentieth and twenty-second
rounds). Against a real nats-server: a consumer given nothing, then the events, then a document."""

from __future__ import annotations

import asyncio

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.docs import Integrity
from shared.asof import DocReader
from shared.config import load_settings
from shared.names import EVENTS_STREAM
from shared.provision import ConsumerSpec, provision
from shared.watermarks import Proof, WatermarkTracker

BUCKET = "proofs"


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    return nc.jetstream()


class _Doc(msgspec.Struct):
    integrity: Integrity


async def _publish(js: JetStreamContext, n: int) -> list[int]:
    seqs = []
    for i in range(n):
        payload = {"id": f"e{i}", "agent": "a", "session": "s", "ts": "2026-03-01T10:00:00Z", "role": "user",
                   "content": "x"}
        seqs.append((await js.publish("cortex.msg.a.received", msgspec.json.encode(payload))).seq)
    return seqs


async def test_a_wait_reads_no_document_before_its_source_was_given_the_event_and_still_ends_on_it(
    js: JetStreamContext,
) -> None:
    await provision(js, load_settings({}), [ConsumerSpec(name="src", families=("msg",))])
    kv = await js.create_key_value(bucket=BUCKET, history=4)
    s1, s2, s3 = await _publish(js, 3)  # the trigger is s3: the read before it needs a document holding s2
    await kv.put("a", msgspec.json.encode(_Doc(Integrity(last_seq=s1 - 1))))  # an older document of the agent
    reader = DocReader(js)
    looks: list[bool] = []

    async def look() -> bool:
        said = await reader.final_before(BUCKET, "a", s3)
        looks.append(said)
        return said

    proofs = {"src": Proof(look, needs=s3 - 1)}
    tracker = WatermarkTracker(js, patience_s=600)
    try:
        # one look (a bound of 0): the consumer was given nothing — its document cannot hold s2
        assert await tracker.wait({"src": s3}, 0.0, proofs) == ["src"]
        assert looks == []  # on main: one head read, "no"
        # given s1 and s2 (fetched, not applied): its document may hold s2 now, so it is read
        sub = await js.pull_subscribe_bind("src", stream=EVENTS_STREAM)
        fetched = await sub.fetch(2, timeout=10)
        assert [m.metadata.sequence.stream for m in fetched] == [s1, s2]
        assert await tracker.wait({"src": s3}, 0.0, proofs) == ["src"]
        assert looks == [False]
        # the source writes the document holding s2: a wait ends on it (no checkpoint, s3 still pending)
        waiting = asyncio.create_task(tracker.wait({"src": s3}, 30.0, proofs))
        await kv.put("a", msgspec.json.encode(_Doc(Integrity(last_seq=s2))))
        assert await asyncio.wait_for(waiting, timeout=30) == []
        assert looks[-1] is True
        assert tracker.checkpoint("src") == 0 and not (await tracker.server("src", 0.0)).drained
    finally:
        await tracker.stop()


async def test_a_proof_without_a_sequence_it_needs_is_read_at_every_look(js: JetStreamContext) -> None:
    """``needs`` 0 (a caller that does not say): read as before, the server's answer notwithstanding."""
    await provision(js, load_settings({}), [ConsumerSpec(name="src", families=("msg",))])
    (s1,) = await _publish(js, 1)
    looks = 0

    async def look() -> bool:
        nonlocal looks
        looks += 1
        return looks > 1

    tracker = WatermarkTracker(js, patience_s=600)
    try:
        assert await tracker.wait({"src": s1 + 1}, 0.0, {"src": Proof(look)}) == ["src"]
        assert await tracker.wait({"src": s1 + 1}, 0.0, {"src": Proof(look)}) == []
        assert looks == 2
    finally:
        await tracker.stop()
