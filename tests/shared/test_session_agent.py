"""The OpenClaw store's events filed under its session token (OpenClaw 2026.9: every agent's
messages on ``<prefix>.openclaw.<slot>.agent.<type>``) belong to the agents their session keys
name, for everything that acts on one agent's events: a forget deletes exactly its own of them,
a rebuild rewinds to before the first of them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from nats.aio.client import Client
from nats.js.api import StreamConfig

from shared.config import load_settings
from shared.forget import purge_events
from shared.names import EVENTS_STREAM, session_agent_filter
from shared.openclaw import filed_agent_of
from shared.provision import provision
from shared.repair import first_event_seq

WaitFor = Callable[..., Awaitable[Any]]


def store_event(i: int, store_agent: str, session: str, token: str = "msg_in") -> tuple[str, bytes]:
    kind = {"msg_in": "msg.in", "run_start": "run.start"}[token]
    payload = {"from": "albert", "content": f"message {i}"} if token == "msg_in" else {"prompt": f"prompt {i}"}
    data = {"id": f"o{i}", "ts": 1771318803000 + i, "agent": store_agent, "session": session, "type": kind,
            "payload": payload}
    return f"openclaw.events.{store_agent}.{token}", msgspec.json.encode(data)


async def stored(js: Any) -> list[tuple[str, str | None]]:
    """(id, filed agent) of every event CORTEX_EVENTS holds, in stream order."""
    info = await js.stream_info(EVENTS_STREAM)
    out = []
    for seq in range(int(info.state.first_seq or 1), int(info.state.last_seq or 0) + 1):
        try:
            msg = await js.get_msg(EVENTS_STREAM, seq)
        except Exception:
            continue  # deleted
        out.append((msgspec.json.decode(msg.data)["id"], filed_agent_of(msg.data)))
    return out


async def test_a_forget_deletes_the_agent_s_events_under_the_session_token_and_no_other_s(
        nc: Client, wait_for: WaitFor) -> None:
    js = nc.jetstream()
    await js.add_stream(StreamConfig(name="openclaw-events", subjects=["openclaw.events.>"]))
    await provision(js, load_settings({"CORTEX_OPENCLAW_STREAM": "openclaw-events"}), [])
    sent = [store_event(0, "bob", "agent:bob:main", "run_start"),
            store_event(1, "agent", "agent:bob:main"),
            store_event(2, "ops", "agent:ops:main", "run_start"),
            store_event(3, "agent", "agent:ops:main"),
            store_event(4, "agent", "agent:main:main"),
            store_event(5, "agent", "agent:ops:telegram:direct:42"),
            store_event(6, "agent", "agent:bob:main")]
    for subject, data in sent:
        await js.publish(subject, data)

    async def copied() -> bool:
        return (await js.stream_info(EVENTS_STREAM)).state.messages == len(sent)

    await wait_for(copied, within=30)
    first_ops = (await js.get_msg(EVENTS_STREAM, seq=1, subject=session_agent_filter("cortex"), next=True)).seq
    assert first_ops and await first_event_seq(js, "cortex", "ops") <= first_ops, \
        "a rebuild of ops starts before its messages"

    assert await purge_events(js, "cortex", "ops") == 3
    assert await stored(js) == [("o0", "bob"), ("o1", "bob"), ("o4", "main"), ("o6", "bob")]
    # below a marker: only what came before it
    assert await purge_events(js, "cortex", "bob", below=int((await js.stream_info(EVENTS_STREAM)).state.last_seq)) == 2
    assert await stored(js) == [("o4", "main"), ("o6", "bob")]
