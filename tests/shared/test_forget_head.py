"""A forget that moved the stream's start records where it left it (``cortex_forgets``'
``stream.forgotten-head``), so a replay and a composed read's derivation know every event
below was a forgotten agent's — also when the last thing it removes at the head is its own
marker: a forget with the recall worker running keeps the ``memory_forget`` marker until
recall applied it and deletes it then. When the forgotten agent's events (and so its
marker) opened the stream, that deletion moved the start again, unrecorded: every later
replay was refused as if history were lost, and every derivation past a source's history
fell back to the latest document."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
from nats.aio.client import Client

from shared.config import load_settings
from shared.forget import ForgetRecord, finish_if_applied, purge_events_at_the_head, start_forgotten
from shared.names import BUCKET_CHECKPOINTS, BUCKET_FORGETS, EVENTS_STREAM
from shared.provision import ensure_bucket, provision
from shared.replay import check_history

GONE, KEPT = "gone", "kept"


def _message(agent: str, i: int) -> bytes:
    return msgspec.json.encode({"id": f"{agent}-{i}", "agent": agent, "session": "s", "ts": "2026-02-17T10:00:00Z",
                                "role": "user", "content": f"We decided to ship feature {i}."})


async def test_the_stream_start_a_forget_leaves_after_deleting_its_marker_is_recorded(nc: Client) -> None:
    js = nc.jetstream()
    settings = load_settings({})
    await provision(js, settings, [])
    await ensure_bucket(js, BUCKET_FORGETS)
    for i in range(3):  # the forgotten agent's events open the stream
        await js.publish(f"cortex.msg.{GONE}.received", _message(GONE, i))
    marker = msgspec.json.encode({"id": "forget-1", "agent": GONE, "ts": "2026-02-17T10:01:00Z",
                                  "kind": "memory_forget", "value": "all", "actor": "cortex forget"})
    marker_seq = (await js.publish(f"cortex.feedback.{GONE}.memory_forget", marker)).seq
    for i in range(2):
        await js.publish(f"cortex.msg.{KEPT}.received", _message(KEPT, i))

    await purge_events_at_the_head(js, settings.prefix, GONE, marker_seq)  # the events below the marker
    assert (await js.stream_info(EVENTS_STREAM)).state.first_seq == marker_seq
    await (await js.key_value(BUCKET_CHECKPOINTS)).put("recall", b"6")  # recall applied the marker
    now = datetime.now(UTC)
    record = ForgetRecord(agent=GONE, id="forget-1", state="pending", step="memories", started=now, updated=now,
                          marker_seq=marker_seq, recall_consumer="recall", waits_on=["recall"])
    assert await finish_if_applied(js, record)

    first = int((await js.stream_info(EVENTS_STREAM)).state.first_seq)
    assert first == marker_seq + 1  # the marker itself is gone too
    assert await start_forgotten(js, first), "only the forget moved the start: nothing lost"
    assert await check_history(js, force=False) == marker_seq + 2  # a replay is not refused
