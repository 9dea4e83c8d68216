"""Giving a lease back and taking one from a holder that must not be interrupted, on a real
nats-server: a lease goes back even when its last renewal's ack was never seen, and a
forget or replay that finds a killed replay's (or forget's) lease waits for it to lapse
instead of refusing — while a running one, which renews, is still refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats.js.errors
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from shared.config import load_settings
from shared.errors import api_codes, is_transient, is_unwritable
from shared.forget import _refuse as forget_refuses
from shared.kv import kv_read
from shared.lease import Lease, LeaseRefused
from shared.names import BUCKET_LEASES
from shared.provision import provision
from workers.registry import consumer_specs


async def _leases(nc: Client, tmp_path: Path) -> JetStreamContext:
    settings = load_settings({"CORTEX_NATS_URL": "nats://unused", "CORTEX_DATA_DIR": str(tmp_path)})
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    return js


async def _holder(js: JetStreamContext, consumer: str) -> bytes | None:
    return (await kv_read(await js.key_value(BUCKET_LEASES), consumer))[0]


async def _acquired(js: JetStreamContext, consumer: str, instance: str, ttl_s: int) -> Lease:
    lease = Lease(js, consumer, instance, ttl_s)
    assert await lease.acquire(asyncio.Event())
    return lease


async def test_a_lease_goes_back_when_its_last_renewal_was_applied_unseen(nc: Client, tmp_path: Path) -> None:
    """The keeper cancelled between sending a renewal and reading its ack: the server holds a
    newer revision than the lease knows. Giving it back still deletes the key (before, the
    delete named the old revision, failed quietly, and the key stayed for its whole TTL)."""
    js = await _leases(nc, tmp_path)
    lease = await _acquired(js, "threads", "replay-r1", 30)
    kv = await js.key_value(BUCKET_LEASES)
    _, revision = await kv_read(kv, "threads")
    await js.publish(f"$KV.{BUCKET_LEASES}.threads", b"replay-r1", msg_ttl=30,  # the renewal it never saw
                     headers={"Nats-Expected-Last-Subject-Sequence": str(revision)})
    await lease.release()
    assert await _holder(js, "threads") is None
    assert not lease.held


async def test_a_lapsed_lease_still_naming_this_instance_goes_back(nc: Client, tmp_path: Path) -> None:
    js = await _leases(nc, tmp_path)
    lease = await _acquired(js, "threads", "w-1", 30)
    lease._lose("could not renew within the TTL", lambda: None)  # renewals failed; the key is still ours
    await lease.release()
    assert await _holder(js, "threads") is None


async def test_a_lease_another_instance_took_is_left_to_it(nc: Client, tmp_path: Path) -> None:
    js = await _leases(nc, tmp_path)
    first = await _acquired(js, "threads", "w-1", 30)
    assert (await Lease(js, "threads", "w-2", 30).take_over()).instance == "w-1"
    await first.release()
    await first.release()  # twice: still nothing of w-2's touched
    assert await _holder(js, "threads") == b"w-2"


async def test_a_killed_replays_lease_is_taken_once_it_lapses(nc: Client, tmp_path: Path) -> None:
    """A replay killed while holding the lease (no keeper, no give-back): the forget waits for
    the key to lapse unrenewed — saying so — and takes it, instead of refusing 'a replay is
    running' until someone runs it again."""
    js = await _leases(nc, tmp_path)
    await _acquired(js, "threads", "replay-dead", 1)  # never renewed, never given back
    said: list[str] = []
    holder = await Lease(js, "threads", "forget-f1", 30).take_over(forget_refuses, said.append)
    assert holder.instance is None  # it lapsed: nobody held it any more when taken
    assert await _holder(js, "threads") == b"forget-f1"
    assert said == ["waiting up to 2s for replay-dead to renew the lease of threads (running) or let it lapse (gone)"]


async def test_a_running_replays_lease_is_still_refused(nc: Client, tmp_path: Path) -> None:
    js = await _leases(nc, tmp_path)
    replay = await _acquired(js, "threads", "replay-live", 1)
    keeper = asyncio.create_task(replay.keep_alive(lambda: None))  # renews every third of a second
    try:
        with pytest.raises(LeaseRefused, match=r"a replay is running \(replay-live\)"):
            await Lease(js, "threads", "forget-f2", 30).take_over(forget_refuses)
        assert await _holder(js, "threads") == b"replay-live"
    finally:
        keeper.cancel()
        await asyncio.gather(keeper, return_exceptions=True)
    await replay.release()
    assert await _holder(js, "threads") is None


async def test_a_holder_lapsing_inside_the_create_is_taken_not_a_crash(
        nc: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race behind a soak run's crashed standby: nats-py's create finds the key taken,
    then looks at it to see whether it was deleted — and by then the holder's TTL has
    removed it, so the look raises KeyNotFoundError, an API error without a status code.
    The standby crashed on reading that code. It now creates the key again at once.
    The interleaving is made exact on the real server: the key is purged from the stream
    right before nats-py's look (the message TTL would remove it the same way)."""
    js = await _leases(nc, tmp_path)
    await _acquired(js, "threads", "w-old", 30)
    looked: list[str] = []
    real_get = KeyValue._get

    async def lapsed_first(kv: KeyValue, key: str, *args: object, **kwargs: object) -> object:
        if not looked:
            looked.append(key)
            await js.purge_stream(f"KV_{BUCKET_LEASES}", subject=f"$KV.{BUCKET_LEASES}.{key}")
        return await real_get(kv, key, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(KeyValue, "_get", lapsed_first)
    lease = Lease(js, "threads", "w-new", 30)
    assert await asyncio.wait_for(lease.acquire(asyncio.Event()), timeout=10)
    assert looked == ["threads"] and lease.held
    assert await _holder(js, "threads") == b"w-new"


def test_key_value_errors_without_codes_are_classified_not_raised() -> None:
    """nats-py's key-value errors never set ``code`` or ``err_code``; the classifiers read
    them anyway and return, instead of raising AttributeError into the caller's loop."""
    for exc in (nats.js.errors.KeyNotFoundError(), nats.js.errors.KeyDeletedError(),
                nats.js.errors.KeyWrongLastSequenceError("wrong last sequence"),
                nats.js.errors.NoKeysError()):
        assert api_codes(exc) == (None, None)
        assert not is_transient(exc) and not is_unwritable(exc)
    assert api_codes(nats.js.errors.ServiceUnavailableError(code=503, err_code=10008)) == (503, 10008)
    assert is_transient(nats.js.errors.APIError(code=503, description="JetStream not ready"))
    assert api_codes(ValueError("not NATS")) == (None, None)
