"""``agent_keys``: the keys of one agent's document, asked of the server by subject."""

from __future__ import annotations

from nats.aio.client import Client

from shared.asof import DOC_HISTORY
from shared.forget import agent_keys
from shared.provision import ensure_bucket


async def test_an_agents_head_and_parts_with_a_value_and_nothing_else(nc: Client) -> None:
    js = nc.jetstream()
    await ensure_bucket(js, "test_forget", history=DOC_HISTORY)
    kv = await js.key_value("test_forget")
    for key in ("alice", "alice.part1", "alice.part2", "alicex", "bob", "bob.part1"):
        await kv.put(key, b"{}")
    await kv.delete("alice.part2")  # a stale part, deleted: nothing left to purge
    await kv.put("alice", b'{"v": 2}')  # several revisions of the head: listed once
    assert await agent_keys(js, "test_forget", "alice") == ["alice", "alice.part1"]
    await kv.purge("alice")
    assert await agent_keys(js, "test_forget", "alice") == ["alice.part1"]
    assert await agent_keys(js, "test_forget", "nobody") == []
