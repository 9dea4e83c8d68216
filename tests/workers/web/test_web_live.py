"""The live stream behind every page (`changes`), on a real nats-server: a page rendered before its
watch began still learns of a write made in between."""

from __future__ import annotations

import asyncio

import nats

from shared.config import load_settings
from workers.web.app import Web, changes
from workers.web.reader import WATCHED

WITHIN_S = 30  # a bound on a wait that is not expected to be approached, never a timing claim


async def test_a_watch_that_is_current_sends_one_change_then_every_write_of_its_agent(nats_url: str) -> None:
    bucket = WATCHED["decisions"]
    nc = await nats.connect(nats_url)
    try:
        kv = await nc.jetstream().create_key_value(bucket=bucket)
        await kv.put("main", b"rendered")  # what the page showed
        web = Web(nc, load_settings({"CORTEX_NATS_URL": nats_url}), None, 5.0, True)
        updates = changes(web, [bucket], "main")
        try:
            # the watch delivers the stored value, then says it is current: one change, so a write
            # made after the render and before the watch began cannot be lost
            assert await asyncio.wait_for(anext(updates), WITHIN_S) == bucket
            await kv.put("main", b"written later")
            assert await asyncio.wait_for(anext(updates), WITHIN_S) == bucket
            pending = asyncio.ensure_future(anext(updates))
            await kv.put("main", b"and again")
            assert await asyncio.wait_for(pending, WITHIN_S) == bucket
        finally:
            await updates.aclose()
    finally:
        await nc.close()

