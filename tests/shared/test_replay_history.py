"""`cortex replay` refuses when CORTEX_EVENTS no longer starts at sequence 1 (contract: the
stream) — also when retention or a purge has emptied it, where a replay of nothing would
only delete every document — and replays what is left with --force. A real nats-server and
the CLI as an operator runs it."""

from __future__ import annotations

import json
from pathlib import Path

import nats
from cortex_testkit import cortex

from shared.kv import kv_read
from shared.names import EVENTS_STREAM

THREADS = "cortex_threads"


def message(i: int) -> bytes:
    return json.dumps({"id": f"m{i}", "agent": "alice", "session": "s", "ts": f"2026-02-17T10:0{i}:00Z",
                       "role": "user", "content": f"We decided to ship feature {i}."}).encode()


async def _setup(url: str, tmp_path: Path, purge_to: int | None) -> bytes:
    """Three events, alice's threads document as a worker left it; then the first events
    purged (up to ``purge_to``, or all of them). Returns the document."""
    assert cortex("init", url=url, CORTEX_DATA_DIR=str(tmp_path)).returncode == 0
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        for i in range(3):
            await js.publish("cortex.msg.alice.received", message(i))
        doc = b'{"kept": "what the gone events made"}'
        await (await js.key_value(THREADS)).put("alice", doc)
        await js.purge_stream(EVENTS_STREAM, seq=purge_to)
        return doc
    finally:
        await nc.close()


async def _threads_doc(url: str) -> bytes | None:
    nc = await nats.connect(url)
    try:
        return (await kv_read(await nc.jetstream().key_value(THREADS), "alice"))[0]
    finally:
        await nc.close()


async def test_a_replay_of_an_emptied_stream_is_refused_and_deletes_nothing(nats_url: str, tmp_path: Path) -> None:
    doc = await _setup(nats_url, tmp_path, None)  # retention took every event
    refused = cortex("replay", "--worker", "threads", url=nats_url, CORTEX_DATA_DIR=str(tmp_path))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "CORTEX_EVENTS starts at sequence 4: events 1..3 are gone" in refused.stderr, refused.stderr
    assert "none is left, so a replay would only delete the documents" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert await _threads_doc(nats_url) == doc

    forced = cortex("replay", "--worker", "threads", "--force", url=nats_url, CORTEX_DATA_DIR=str(tmp_path))
    assert forced.returncode == 0, forced.stderr
    assert await _threads_doc(nats_url) is None  # asked for: the document no remaining event explains is gone


async def test_a_replay_of_a_stream_missing_its_first_events_is_refused(nats_url: str, tmp_path: Path) -> None:
    doc = await _setup(nats_url, tmp_path, 3)  # events 1 and 2 gone, 3 left
    refused = cortex("replay", "--worker", "threads", url=nats_url, CORTEX_DATA_DIR=str(tmp_path))
    assert refused.returncode == 1
    assert "events 1..2 are gone (retention or purge) and sequences 3..3 are left" in refused.stderr, refused.stderr
    assert await _threads_doc(nats_url) == doc
