"""``kv_keys``: a bucket's keys with a value, asked of the server by subject."""

from __future__ import annotations

from nats.aio.client import Client

from shared.asof import DOC_HISTORY
from shared.kv import kv_keys
from shared.provision import ensure_bucket


async def test_an_agents_head_and_parts_with_a_value_and_nothing_else(nc: Client) -> None:
    js = nc.jetstream()
    await ensure_bucket(js, "test_forget", history=DOC_HISTORY)
    kv = await js.key_value("test_forget")
    for key in ("alice", "alice.part1", "alice.part2", "alicex", "bob", "bob.part1"):
        await kv.put(key, b"{}")
    await kv.delete("alice.part2")  # a stale part, deleted: nothing left to purge
    await kv.put("alice", b'{"v": 2}')  # several revisions of the head: listed once
    assert await kv_keys(js, "test_forget", "alice") == ["alice", "alice.part1"]
    await kv.purge("alice")
    assert await kv_keys(js, "test_forget", "alice") == ["alice.part1"]
    assert await kv_keys(js, "test_forget", "nobody") == []
    assert await kv_keys(js, "test_forget") == ["alice.part1", "alicex", "bob", "bob.part1"]


async def test_every_key_of_a_bucket_of_thousands(nc: Client) -> None:
    js = nc.jetstream()
    await ensure_bucket(js, "test_many", history=1)
    kv = await js.key_value("test_many")
    names = [f"agent-{i:05d}" for i in range(2500)]
    for name in names:
        await kv.put(name, b"1")
    assert await kv_keys(js, "test_many") == names
