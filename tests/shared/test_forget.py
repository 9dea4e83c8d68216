"""The pieces of `cortex forget` that need no workers: header decoding, the marker, lease takeover,
damaged records and checkpoints."""

from __future__ import annotations

import asyncio
import email.header
from datetime import UTC, datetime

import pytest
from nats.aio.client import Client

from schemas.events import FeedbackEvent
from shared.codec import Envelope
from shared.forget import ForgetRecord, Records, header_text, is_agent_forget, recall_checkpoint
from shared.lease import Lease, LeaseRefused
from shared.names import BUCKET_CHECKPOINTS, BUCKET_FORGETS, BUCKET_LEASES
from shared.provision import ensure_bucket
from workers.boot.worker import is_change

TS = datetime(2026, 2, 17, tzinfo=UTC)


def test_header_text_decodes_what_the_email_parser_made_of_utf8() -> None:
    raw = email.header.Header("cortex.msg.bøb.received".encode(), "unknown-8bit")
    assert header_text(raw) == "cortex.msg.bøb.received"
    assert header_text("plain") == "plain"
    assert header_text(None) == ""


def _forget(value: object, target: str | None = None) -> FeedbackEvent:
    return FeedbackEvent(id="f", agent="alice", ts=TS, kind="memory_forget", value=value, target=target)


def test_only_an_all_forget_without_a_target_is_the_agent_marker() -> None:
    assert is_agent_forget(_forget("all"))
    assert not is_agent_forget(_forget("all", target="mem-1"))
    assert not is_agent_forget(_forget(["mem-1"]))
    assert not is_agent_forget(FeedbackEvent(id="p", agent="alice", ts=TS, kind="memory_pin", value="all"))


def test_the_marker_is_no_change_for_the_boot_worker() -> None:
    """The marker follows the purge of all her documents: a briefing made from it would be
    a document no remaining event explains."""
    env = Envelope(seq=9, subject="cortex.feedback.alice.memory_forget", family="feedback", kind="memory_forget",
                   agent="alice", event=_forget("all"))
    assert not is_change(env)
    single = Envelope(seq=9, subject="cortex.feedback.alice.memory_forget", family="feedback", kind="memory_forget",
                      agent="alice", event=_forget(None, target="mem-1"))
    assert is_change(single)


async def test_take_over_deposes_the_holder_and_names_it_with_its_ttl(nc: Client) -> None:
    js = nc.jetstream()
    await ensure_bucket(js, BUCKET_LEASES)
    worker = Lease(js, "threads", "worker-1", 5)
    assert await worker.acquire(asyncio.Event())
    lost = asyncio.Event()
    keeper = asyncio.create_task(worker.keep_alive(lost.set))
    try:
        holder = await Lease(js, "threads", "forget-x", 2).take_over()
        assert holder == ("worker-1", 5)
        await asyncio.wait_for(lost.wait(), timeout=10)  # its next renewal fails: it knows
    finally:
        keeper.cancel()
    assert await Lease(js, "free", "forget-y", 2).take_over() == (None, 0)


async def test_take_over_refuses_a_holder_it_must_not_interrupt(nc: Client) -> None:
    """A running replay (it renews its lease); a killed one's is taken once it lapses
    (tests/shared/test_lease.py)."""
    js = nc.jetstream()
    await ensure_bucket(js, BUCKET_LEASES)
    replay = Lease(js, "threads", "replay-host-1", 2)
    assert await replay.acquire(asyncio.Event())
    keeper = asyncio.create_task(replay.keep_alive(lambda: None))
    try:
        with pytest.raises(LeaseRefused, match="replay"):
            await Lease(js, "threads", "forget-x", 2).take_over(
                lambda h: "a replay" if h.startswith("replay-") else None)
    finally:
        keeper.cancel()


@pytest.mark.parametrize("garbage", [b"not json", b"\xff\xfe", b"[" * 5000, b'{"agent": 7}', b"{}"])
async def test_a_damaged_forget_record_is_read_as_none_not_an_exception(nc: Client, garbage: bytes) -> None:
    js = nc.jetstream()
    await ensure_bucket(js, BUCKET_FORGETS)
    await (await js.key_value(BUCKET_FORGETS)).put("alice", garbage)
    assert await Records(js).load("alice") is None
    # and a new forget writes over it
    await Records(js).save(ForgetRecord(agent="alice", id="f1", state="complete", step="done", started=TS, updated=TS))
    loaded = await Records(js).load("alice")
    assert loaded is not None and loaded.agent == "alice"


@pytest.mark.parametrize(("stored", "read"), [(b"41", 41), (b"garbage", 0), (b"-3", 0), (b"\xff", 0)])
async def test_an_unreadable_recall_checkpoint_reads_as_the_start(nc: Client, stored: bytes, read: int) -> None:
    js = nc.jetstream()
    await ensure_bucket(js, BUCKET_CHECKPOINTS)
    await (await js.key_value(BUCKET_CHECKPOINTS)).put("recall", stored)
    assert await recall_checkpoint(js, "recall") == read
