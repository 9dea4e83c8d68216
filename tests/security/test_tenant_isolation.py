"""The agent is the tenant boundary.

* Crafted events — a payload agent that differs from the subject's, agent ids with ``.``,
  ``*``, ``>``, ``..``, spaces, unicode or 65 characters, in the payload or in the subject —
  are dead-lettered with a reason, and none of them reaches any agent's document.
  (NATS itself refuses subjects with spaces or empty tokens; wildcard subjects such as
  ``cortex.msg.*.received`` *are* stored by JetStream, so the workers must reject them.)
* API requests for agent A never return agent B's data, and wildcard agent tokens are refused.
* A client permitted only ``cortex.api.*.alice`` is refused by the server on bob's subjects.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
import nats
import nats.errors
import nats.js.errors
import pytest
from cortex_testkit import bucket_keys, caught_up, drained

from shared.kv import kv_read
from shared.names import DLQ_STREAM


def message(agent: str, event_id: str, content: str = "hello") -> bytes:
    return msgspec.json.encode({"id": event_id, "agent": agent, "session": "s", "ts": "2026-02-17T10:00:00Z",
                                "role": "user", "content": content, "channel": "webchat"})


LONG = "x" * 65
BAD_ID = ("at `$.agent`", "invalid agent id")  # msgspec's pattern check, or the decoder's fullmatch
# (subject, payload, fragments of which the reason must contain one)
CRAFTED = [
    ("cortex.msg.alice.received", message("bob", "c1"), "agent mismatch"),
    ("cortex.msg.alice.received", message("a.b", "c2"), BAD_ID),
    ("cortex.msg.alice.received", message("*", "c3"), BAD_ID),
    ("cortex.msg.alice.received", message(">", "c4"), BAD_ID),
    ("cortex.msg.alice.received", message("..", "c5"), BAD_ID),
    ("cortex.msg.alice.received", message("alice bob", "c6"), BAD_ID),
    ("cortex.msg.alice.received", message("älice", "c7"), BAD_ID),
    ("cortex.msg.alice.received", message(LONG, "c8"), BAD_ID),
    ("cortex.msg.alice.received", message("alice\n", "c9"), BAD_ID),
    ("cortex.msg.*.received", message("*", "c11"), "stored without a slot"),  # no transform for a '*'
    ("cortex.msg.alice.*", message("alice", "c12"), "stored without a slot"),
    ("cortex.msg.a*b.received", message("a*b", "c13"), "invalid agent token"),
    ("cortex.msg.älice.received", message("älice", "c14"), "invalid agent token"),
    (f"cortex.msg.{LONG}.received", message(LONG, "c15"), "invalid agent token"),
    ("cortex.session.alice.start", msgspec.json.encode({"id": "c16", "agent": "bob", "session": "s",
                                                        "ts": "2026-02-17T10:00:00Z"}), "agent mismatch"),
]
UNPUBLISHABLE = ["cortex.msg.a b.received", "cortex.msg.a..b.received", "cortex.msg..received",
                 # no stream takes a subject of another shape (CORTEX_EVENTS captures <family>.<agent>.<kind>,
                 # CORTEX_NOTES the contract's notes.<agent> only)
                 "cortex.msg.a.b.received", "cortex.msg.>", "cortex.msg.alice", "cortex.notes.a.b.section"]


def cortex(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workers", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "CORTEX_NATS_URL": url})


async def test_crafted_agent_ids_are_dead_lettered_with_reasons_and_reach_no_document(
    nats_url: str, workers_procs: Any, wait_for: Any
) -> None:
    assert cortex("init", url=nats_url).returncode == 0
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    for subject in UNPUBLISHABLE:  # NATS refuses these before any worker sees them
        with pytest.raises((nats.errors.BadSubjectError, nats.js.errors.NoStreamResponseError)):
            await js.publish(subject, message("x", "never"), timeout=2)
    await js.publish("cortex.msg.alice.received", message("alice", "ok-1"), headers={"Nats-Msg-Id": "ok-1"})
    for subject, data, _ in CRAFTED:
        await js.publish(subject, data)
    workers_procs.start("channels", nats_url)

    async def dead_lettered() -> bool:
        return int((await js.stream_info(DLQ_STREAM)).state.messages) >= len(CRAFTED)

    await wait_for(dead_lettered, within=60)
    reasons = {}
    # a pull consumer, not js.get_msg: get_msg parses headers with the email parser and mangles
    # non-ASCII values (the unicode subject), subscriptions decode them as UTF-8
    sub = await js.pull_subscribe("cortex.dlq.>", stream=DLQ_STREAM)
    letters = await sub.fetch(len(CRAFTED), timeout=10)
    for msg in letters:
        assert msg.subject == "cortex.dlq.channels"
        reasons[int(msg.headers["Cortex-Stream-Seq"])] = (msg.headers["Cortex-Original-Subject"],
                                                          msg.headers["Cortex-Error"])
    for offset, (subject, _, fragment) in enumerate(CRAFTED):
        original, reason = reasons[offset + 2]  # seq 1 is alice's valid event
        assert original == subject
        assert any(f in reason for f in ((fragment,) if isinstance(fragment, str) else fragment)), (subject, reason)
    assert int((await js.stream_info(DLQ_STREAM)).state.messages) == len(CRAFTED)

    async def all_acked() -> bool:  # dead letters are published before the batch's documents and acks
        return await caught_up(js, "channels")

    await wait_for(all_acked, within=60)
    kv = await js.key_value("cortex_channels")
    assert await bucket_keys(kv) == ["alice"]
    raw, _ = await kv_read(kv, "alice")
    assert msgspec.json.decode(raw)["integrity"]["events"] == 1  # only alice's own event
    await nc.close()


def demo_lines(agent: str, replace: dict[str, str]) -> list[dict[str, Any]]:
    text = resources.files("workers.demo").joinpath("conversation.jsonl").read_text()
    for old, new in replace.items():
        text = text.replace(old, new)
    out = []
    for line in text.splitlines():
        event = json.loads(line)
        event.update(agent=agent, id=f"{agent}-{event['id']}")
        out.append(event)
    return out


BOB_ONLY = {"auth migration": "billing export", "kubernetes": "terraform", "Redis": "Memcached"}
ALICE_MARKERS = ("auth migration", "kubernetes", "Redis", "alice")
BOB_MARKERS = ("billing export", "terraform", "Memcached", "bob")
PERMISSIONS = """
authorization {
  users = [
    { user: svc, password: svc }
    { user: client_alice, password: alice,
      permissions: { publish: { allow: ["cortex.api.*.alice"] }, subscribe: { allow: ["_INBOX.>"] } } }
  ]
}
"""
SERVICES = ("threads", "decisions", "commitments", "search", "status")


async def test_api_answers_never_cross_agents_and_a_client_confined_to_alice_is_refused_on_bob(
    nats_conf: Any, tmp_path: Path, workers_procs: Any, wait_for: Any
) -> None:
    server = nats_conf("perms", PERMISSIONS)
    svc = server.url("svc:svc")
    assert cortex("init", url=svc).returncode == 0
    for name in ("threads", "decisions", "channels", "api"):
        workers_procs.start(name, svc)
    path = tmp_path / "two.jsonl"
    alice, bob = demo_lines("alice", {}), demo_lines("bob", BOB_ONLY)
    path.write_text("".join(json.dumps(e) + "\n" for pair in zip(alice, bob, strict=True) for e in pair))
    assert cortex("publish", str(path), url=svc).returncode == 0

    nc = await nats.connect(svc)
    js = nc.jetstream()

    await wait_for(lambda: drained(js, ("threads", "decisions", "channels")), within=60)

    async def ask(client: Any, service: str, agent: str) -> str:
        body = b'{"query": "terraform billing export auth migration kubernetes Redis Memcached"}' \
            if service == "search" else b"{}"
        return (await client.request(f"cortex.api.{service}.{agent}", body, timeout=10)).data.decode()

    await wait_for(lambda: _has_threads(nc), within=30)  # the api worker is serving
    for service in SERVICES:
        for agent, own, foreign in (("alice", ALICE_MARKERS, BOB_MARKERS), ("bob", BOB_MARKERS, ALICE_MARKERS)):
            reply = await ask(nc, service, agent)
            assert not any(m in reply for m in foreign), (service, agent, reply[:500])
            if service in ("threads", "search"):
                assert any(m in reply for m in own[:3]), (service, agent, reply[:500])
    for wildcard in ("*", ">"):  # JetStream stores such subjects; the service must not answer with data
        reply = await nc.request(f"cortex.api.threads.{wildcard}", b"{}", timeout=10)
        assert json.loads(reply.data)["error"]["code"] == 400, reply.data

    refusals: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        refusals.append(exc)

    client = await nats.connect(server.url("client_alice:alice"), error_cb=on_error)
    assert "Auth migration" in await ask(client, "threads", "alice") or "auth migration" in (
        await ask(client, "threads", "alice")).lower()
    for service in SERVICES:
        with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
            await client.request(f"cortex.api.{service}.bob", b"{}", timeout=1)
    await wait_for(lambda: _refused(refusals, "cortex.api.status.bob"), within=10)
    await client.close()
    await nc.close()


async def _has_threads(nc: Any) -> bool:
    try:
        reply = await nc.request("cortex.api.threads.alice", b"{}", timeout=2)
    except (nats.errors.TimeoutError, nats.errors.NoRespondersError):
        return False
    return bool(json.loads(reply.data).get("threads"))


async def _refused(errors: list[Exception], subject: str) -> bool:
    return any("permissions violation" in str(e).lower() and subject in str(e) for e in errors)
