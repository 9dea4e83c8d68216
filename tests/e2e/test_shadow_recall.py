"""A recall worker in shadow mode has its own memory collection (contract: a shadow worker
writes only shadow state): a live and a shadow recall worker sharing one store location
(here the embedded engine under one ``CORTEX_DATA_DIR``, a real nats-server) each write and
answer from their own collection, ``cortex_memories`` and ``cortex_shadow_memories``.

Before, nothing in the recall worker looked at the mode: the shadow worker opened
``cortex_memories`` too (on a shared Qdrant server it upserted and deleted live points; on
a shared data dir it could not even open the locked shard), and its API answered live
requests in the live queue group; ``cortex forget`` left her shadow memories."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
import nats
from cortex_testkit import caught_up, cortex

from schemas.api import RecallReply
from shared.lease import Lease
from shared.names import api_subject, memory_collection, shadow_service
from workers.recall.embedders import make_embedder
from workers.recall.store import open_store

ENV = {"CORTEX_EMBEDDER": "hashing", "CORTEX_CHANNEL_MODES": "whatsapp=shadow"}
BOTH = "The on-call phone number is kept in the red binder."
SHADOW_CHANNEL = "Back to the billing export for the accountants, the numbers are due Friday."
SHADOW_REMEMBER = "The spare office key hangs behind the reception desk."


def remember(event_id: str, content: str, agent: str = "alice") -> bytes:
    return json.dumps({"id": event_id, "agent": agent, "ts": "2026-02-17T09:00:00Z", "kind": "remember",
                       "value": {"content": content}, "actor": "mcp"}).encode()


async def recalled(nc: Any, service: str, query: str, agent: str = "alice") -> str:
    """The memories ``service`` (``recall`` or ``recall-shadow``) answers for the agent, one
    text ("" when it cannot answer yet)."""
    try:
        reply = await nc.request(api_subject("cortex", service, agent),
                                 msgspec.json.encode({"query": query, "limit": 50}), timeout=5)
        return "\n".join(m.content for m in msgspec.json.decode(reply.data, type=RecallReply).memories)
    except Exception:
        return ""


async def applied(js: Any, consumer: str) -> bool:
    try:
        return await caught_up(js, consumer)
    except Exception:  # the worker has not made its consumer yet
        return False


def contents(data_dir: str, shadow: bool, agent: str = "alice") -> set[str]:
    """The agent's memories in one collection of the store, opened directly (its worker stopped)."""
    embedder = make_embedder("hashing")
    store = open_store(url=None, data_dir=data_dir, embedder_name=embedder.name, dim=embedder.dim,
                       collection=memory_collection(shadow))
    try:
        return {m.content for m in store.scroll(agent)}
    finally:
        store.close()


async def test_a_shadow_recall_worker_writes_and_answers_from_its_own_collection(
    nats_url: str, workers_procs: Any, wait_for: Any
) -> None:
    assert cortex("init", url=nats_url, CORTEX_MODE="shadow").returncode == 0
    assert cortex("init", url=nats_url).returncode == 0
    live = workers_procs.start("recall", nats_url, **ENV)
    shadow = workers_procs.start("recall", nats_url, CORTEX_MODE="shadow", **ENV)
    data_dir = str(workers_procs.tmp / "data")  # both: one store location
    shadow_api = shadow_service("recall")
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        await js.publish("cortex.feedback.alice.remember", remember("r-both", BOTH))
        message = {"id": "m-1", "agent": "alice", "session": "s1", "ts": "2026-02-17T09:01:00Z", "role": "user",
                   "sender": "albert", "channel": "whatsapp", "content": SHADOW_CHANNEL}
        await js.publish("cortex.msg.alice.received", json.dumps(message).encode())  # a shadow channel
        await wait_for(lambda: applied(js, "recall"), within=60)
        await wait_for(lambda: applied(js, "recall-shadow"), within=60)

        assert BOTH in await wait_for(lambda: recalled(nc, "recall", "on-call phone number"), within=30)
        assert BOTH in await wait_for(lambda: recalled(nc, shadow_api, "on-call phone number"), within=30)
        assert SHADOW_CHANNEL in await recalled(nc, shadow_api, "billing export accountants")
        assert SHADOW_CHANNEL not in await recalled(nc, "recall", "billing export accountants")

        live.terminate()  # the live worker stops: what the shadow one applies now is its own only
        assert live.wait(30) == 0
        await js.publish("cortex.feedback.alice.remember", remember("r-shadow", SHADOW_REMEMBER))
        await wait_for(lambda: applied(js, "recall-shadow"), within=60)
        assert SHADOW_REMEMBER in await wait_for(lambda: recalled(nc, shadow_api, "spare office key"), within=30)
    finally:
        await nc.close()
    shadow.terminate()
    assert shadow.wait(30) == 0

    assert contents(data_dir, shadow=False) == {BOTH}  # neither the shadow channel nor the shadow's remember
    in_shadow = "\n".join(contents(data_dir, shadow=True))
    assert all(text in in_shadow for text in (BOTH, SHADOW_CHANNEL, SHADOW_REMEMBER))

    # no recall worker runs: `cortex forget` deletes her memories from both collections itself
    forget = cortex("forget", "alice", "--yes", url=nats_url, CORTEX_DATA_DIR=data_dir, CORTEX_EMBEDDER="hashing")
    assert forget.returncode == 0, forget.stderr
    assert contents(data_dir, shadow=False) == contents(data_dir, shadow=True) == set()


async def test_a_forget_completes_once_the_shadow_recall_worker_applied_it_too(
    nats_url: str, workers_procs: Any, wait_for: Any
) -> None:
    """Both recall workers run; when alice is forgotten the shadow one holds its lease but
    applies nothing (as when it lags behind). The live worker applies the cut; the forget stays
    pending (exit 3) until the shadow worker has applied it too, then no memory of alice is
    left in either collection and bob's stay. Before, the forget completed as soon as the live
    worker applied the cut and deleted it: the shadow worker never saw it and kept hers."""
    assert cortex("init", url=nats_url, CORTEX_MODE="shadow").returncode == 0
    assert cortex("init", url=nats_url).returncode == 0
    live = workers_procs.start("recall", nats_url, **ENV)
    shadow = workers_procs.start("recall", nats_url, CORTEX_MODE="shadow", **ENV)
    data_dir = str(workers_procs.tmp / "data")
    shadow_api = shadow_service("recall")
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        await js.publish("cortex.feedback.alice.remember", remember("r-a", BOTH))
        await js.publish("cortex.feedback.bob.remember", remember("r-b", SHADOW_REMEMBER, agent="bob"))
        for service in ("recall", shadow_api):
            assert BOTH in await wait_for(lambda s=service: recalled(nc, s, "on-call phone number"), within=60)
            assert SHADOW_REMEMBER in await wait_for(lambda s=service: recalled(nc, s, "spare office key", "bob"),
                                                     within=60)
        shadow.terminate()
        assert shadow.wait(30) == 0
        stuck = Lease(js, "recall-shadow", "stuck-shadow", 5)  # held, applying nothing
        await stuck.take_over()
        keeper = asyncio.create_task(stuck.keep_alive(lambda: None))
        try:  # in a thread: the event loop keeps renewing the stuck lease meanwhile
            result = await asyncio.to_thread(cortex, "forget", "alice", "--yes", "--wait", "3", url=nats_url,
                                             CORTEX_DATA_DIR=data_dir, CORTEX_RUNTIME_LEASE_TTL_S="2", **ENV)
        finally:
            keeper.cancel()
        assert result.returncode == 3, result.stdout + result.stderr  # pending: the shadow worker has not applied it
        await wait_for(lambda: applied(js, "recall"), within=60)
        assert BOTH not in await recalled(nc, "recall", "on-call phone number")

        shadow = workers_procs.start("recall", nats_url, CORTEX_MODE="shadow", **ENV)

        async def complete() -> bool:
            status = await asyncio.to_thread(cortex, "forget", "alice", "--status", url=nats_url)
            return status.returncode == 0

        await wait_for(complete, within=60, interval=0.5)
        assert SHADOW_REMEMBER in await wait_for(lambda: recalled(nc, shadow_api, "spare office key", "bob"),
                                                 within=30)
    finally:
        await nc.close()
    for proc in (live, shadow):
        proc.terminate()
        assert proc.wait(30) == 0
    assert contents(data_dir, shadow=False) == contents(data_dir, shadow=True) == set()
    assert contents(data_dir, shadow=False, agent="bob") == contents(data_dir, shadow=True, agent="bob") \
        == {SHADOW_REMEMBER}
