"""``shared.kv.kv_cas`` on a Cortex connection: one lean publish per document write
(``_CortexClient.publish_expecting``) with ``KeyValue.update``'s effects and errors, against a
real server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import nats
import nats.errors
import nats.js.errors
import pytest
from nats.aio.client import Client

from shared.config import load_settings
from shared.connection import _CortexClient, connect
from shared.kv import kv_cas, kv_delete, kv_read


@pytest.fixture
async def cortex_nc(nats_url: str) -> AsyncIterator[_CortexClient]:
    nc = await connect(load_settings({"CORTEX_NATS_URL": nats_url}), "t")
    assert isinstance(nc, _CortexClient)
    try:
        yield nc
    finally:
        await nc.close()


def _count_lean(nc: _CortexClient) -> list[int]:
    calls: list[int] = []
    lean = nc.publish_expecting

    async def counted(*args: Any) -> int:  # the real one, counted
        calls.append(1)
        return await lean(*args)

    nc.publish_expecting = counted  # type: ignore[method-assign,assignment]
    return calls


async def _history(nc: Client, bucket: str, key: str) -> list[tuple[int, bytes | None]]:
    kv = await nc.jetstream().key_value(bucket)
    return [(e.revision or 0, e.value) for e in await kv.history(key)]


async def test_writes_conflicts_and_history_as_update_makes_them(cortex_nc: _CortexClient, nats_url: str) -> None:
    js = cortex_nc.jetstream()
    kv = await js.create_key_value(bucket="cas", history=16)
    lean = _count_lean(cortex_nc)

    first = await kv_cas(kv, "agent-1", b'{"a":1}', 0)
    assert (await kv_read(kv, "agent-1")) == (b'{"a":1}', first)
    with pytest.raises(nats.js.errors.KeyWrongLastSequenceError):
        await kv_cas(kv, "agent-1", b'{"a":2}', 0)  # must not exist: it does
    second = await kv_cas(kv, "agent-1", b'{"a":2}', first)
    assert second > first
    with pytest.raises(nats.js.errors.KeyWrongLastSequenceError):
        await kv_cas(kv, "agent-1", b'{"a":3}', first)  # stale: someone wrote since
    other = await kv_cas(kv, "agent-2", b"x" * 5000, 0)
    assert other > second
    # over a delete marker: its revision is what the write names
    marker = await kv_delete(js, "cas", "agent-1", second)
    with pytest.raises(nats.js.errors.KeyWrongLastSequenceError):
        await kv_cas(kv, "agent-1", b'{"a":4}', second)
    third = await kv_cas(kv, "agent-1", b'{"a":4}', marker)
    assert len(lean) == 7
    assert [value for _, value in await _history(cortex_nc, "cas", "agent-1")] == [
        b'{"a":1}', b'{"a":2}', b"", b'{"a":4}']
    assert (await kv_read(kv, "agent-1")) == (b'{"a":4}', third)

    # nats-py's own client takes KeyValue.update: the same revisions, the same errors
    plain = await nats.connect(nats_url)
    try:
        kv2 = await plain.jetstream().key_value("cas")
        with pytest.raises(nats.js.errors.KeyWrongLastSequenceError):
            await kv_cas(kv2, "agent-1", b'{"a":5}', marker)
        fourth = await kv_cas(kv2, "agent-1", b'{"a":5}', third)
        assert (await kv_read(kv, "agent-1")) == (b'{"a":5}', fourth)
    finally:
        await plain.close()
    assert len(lean) == 7


async def test_a_bad_key_a_missing_bucket_and_an_oversized_value_raise_as_update_does(
        cortex_nc: _CortexClient) -> None:
    js = cortex_nc.jetstream()
    kv = await js.create_key_value(bucket="gone", history=4)
    lean = _count_lean(cortex_nc)
    with pytest.raises(nats.js.errors.InvalidKeyError):
        await kv_cas(kv, "a b", b"x", 0)
    with pytest.raises(nats.errors.MaxPayloadError):
        await kv_cas(kv, "agent", b"x" * (cortex_nc.max_payload + 1), 0)
    await js.delete_key_value("gone")
    with pytest.raises(nats.js.errors.NoStreamResponseError):  # the projection looks the bucket up again
        await kv_cas(kv, "agent", b"x", 0)
    assert len(lean) == 2  # the oversized value and the missing bucket: refused by the lean path
    assert not cortex_nc._resp_map  # no request left waiting


async def test_writes_in_flight_together_each_get_their_own_answer(cortex_nc: _CortexClient) -> None:
    import asyncio

    kv = await cortex_nc.jetstream().create_key_value(bucket="many", history=2)
    keys = [f"agent-{i}" for i in range(200)]
    revisions = await asyncio.gather(*(kv_cas(kv, key, key.encode(), 0) for key in keys))
    assert sorted(revisions) == list(range(1, 201))
    for key, revision in zip(keys, revisions, strict=True):
        assert (await kv_read(kv, key)) == (key.encode(), revision)
