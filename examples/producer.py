"""An agent gateway's side of Cortex, in one file: publish events, fetch BOOTSTRAP.

This is what an OpenClaw gateway (or any agent runtime) does:

* on ``message_received`` / ``message_sent``: publish a MessageEvent to
  ``cortex.msg.<agent>.received`` / ``.sent``;
* on ``session_start``: publish a SessionEvent to ``cortex.session.<agent>.start``, then
  request ``cortex.api.boot.<agent>`` and put the BOOTSTRAP markdown into the context;
* on ``before_compaction`` / ``after_compaction``: publish a CompactionEvent with the
  messages about to be compacted.

Every event carries a unique ``id``, sent again as the ``Nats-Msg-Id`` header, so a retried
publish is dropped by the stream's duplicate window instead of being counted twice.

Only ``nats-py`` is needed. Run it against a Cortex (``cortex up`` listens on 4222 and prints
the URL)::

    python examples/producer.py --url nats://127.0.0.1:4222 --agent example-agent

Without ``--url``: ``CORTEX_NATS_URL``, else ``NATS_URL``, else ``nats://127.0.0.1:4222``.

With NATS users (k8s/helm/nats-values.yaml) the gateway logs in as ``client-<agent>``;
its permissions let it publish only its agent's events and API requests, and receive
replies only on its own inbox prefix ``_INBOX_<agent>`` (set below).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid
from datetime import UTC, datetime
from typing import Any

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client


class CortexError(Exception):
    """Cortex answered a request with an error reply ``{"error": {"code", "message"}}``."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def now() -> str:
    """RFC 3339 with an offset, as the contract requires."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id(kind: str) -> str:
    """A unique event id (``^[A-Za-z0-9_.:-]{1,128}$``). A gateway with its own message ids
    should use those instead (``msg:<gateway id>``): then a re-sent event deduplicates."""
    return f"{kind}:{uuid.uuid4().hex}"


class Unreachable(Exception):
    """No server answered at the URL (after a few attempts); the message says why."""


async def connect(url: str, agent: str, user: str | None = None, password: str | None = None) -> Client:
    """Connect with an inbox prefix of the agent's own: a client confined to one agent may
    subscribe to ``_INBOX_<agent>.>`` only (see k8s/permissions.yaml, example-client).

    nats-py's defaults retry a first connect for two minutes and log a traceback at every
    attempt: here a few quiet attempts, then ``Unreachable`` with the last reason. (A
    long-running gateway would rather keep trying; it should still say why it waits.)"""
    errors: list[Exception] = []

    async def remember(exc: Exception) -> None:
        errors.append(exc)

    options: dict[str, Any] = {"servers": [url], "name": f"gateway-{agent}", "inbox_prefix": f"_INBOX_{agent}",
                               "connect_timeout": 2, "max_reconnect_attempts": 3, "reconnect_time_wait": 1,
                               "error_cb": remember}
    if user:
        options.update(user=user, password=password or "")
    try:
        return await nats.connect(**options)
    except (OSError, nats.errors.Error) as exc:
        reason = errors[-1] if errors else exc
        raise Unreachable(f"cannot connect to NATS at {url}: {reason or type(reason).__name__}") from exc


class Gateway:
    """Publishes one agent's events and asks for its BOOTSTRAP document."""

    def __init__(self, nc: Client, agent: str, prefix: str = "cortex") -> None:
        self.nc = nc
        self.js = nc.jetstream()
        self.agent = agent
        self.prefix = prefix

    async def _publish(self, subject: str, event: dict[str, Any]) -> bool:
        """Publish and wait for the stream's acknowledgement; False when it was a duplicate."""
        data = json.dumps(event, ensure_ascii=False).encode()
        ack = await self.js.publish(subject, data, headers={"Nats-Msg-Id": event["id"]})
        return not ack.duplicate

    async def session_start(self, session: str, channel: str | None = None, ts: str | None = None) -> bool:
        event = {"id": new_id("session"), "agent": self.agent, "session": session, "ts": ts or now()}
        if channel:
            event["channel"] = channel
        return await self._publish(f"{self.prefix}.session.{self.agent}.start", event)

    async def session_end(self, session: str, ts: str | None = None) -> bool:
        event = {"id": new_id("session"), "agent": self.agent, "session": session, "ts": ts or now()}
        return await self._publish(f"{self.prefix}.session.{self.agent}.end", event)

    async def message(self, session: str, role: str, content: str, *, sender: str | None = None,
                      channel: str | None = None, ts: str | None = None, event_id: str | None = None) -> bool:
        """A message the agent received (role user) or sent (role assistant)."""
        event: dict[str, Any] = {"id": event_id or new_id("msg"), "agent": self.agent, "session": session,
                                 "ts": ts or now(), "role": role, "content": content}
        if sender:
            event["sender"] = sender
        if channel:
            event["channel"] = channel
        direction = "sent" if role == "assistant" else "received"
        return await self._publish(f"{self.prefix}.msg.{self.agent}.{direction}", event)

    async def compaction(self, session: str, phase: str, messages: list[dict[str, str]],
                         ts: str | None = None) -> bool:
        """``phase`` is ``before`` (history about to be compacted) or ``after``."""
        event = {"id": new_id("compaction"), "agent": self.agent, "session": session, "ts": ts or now(),
                 "message_count": len(messages), "messages": messages if phase == "before" else []}
        return await self._publish(f"{self.prefix}.compaction.{self.agent}.{phase}", event)

    async def boot(self, session: str | None = None, max_chars: int | None = None,
                   timeout_s: float = 10.0) -> dict[str, Any]:
        """The BootDoc, freshly assembled by the boot worker (``cortex.api.boot.<agent>``)."""
        request: dict[str, Any] = {}
        if session:
            request["session"] = session
        if max_chars:
            request["max_chars"] = max_chars
        reply = await self.nc.request(f"{self.prefix}.api.boot.{self.agent}", json.dumps(request).encode(),
                                      timeout=timeout_s)
        body: dict[str, Any] = json.loads(reply.data)
        if "error" in body:
            raise CortexError(int(body["error"]["code"]), body["error"]["message"])
        return body

    async def fresh_boot(self, session: str | None = None, within_s: float = 30.0) -> dict[str, Any]:
        """Ask until no source worker is lagging behind the events just published (and
        until the boot worker answers at all: it may still be starting, or answer 503 while
        a NATS cluster elects a leader)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_s
        while True:
            try:
                doc = await self.boot(session)
            except (nats.errors.NoRespondersError, nats.errors.TimeoutError, CortexError) as exc:
                if loop.time() >= deadline or (isinstance(exc, CortexError) and exc.code != 503):
                    raise
                doc = {"lagging": ["boot"]}
            if not doc.get("lagging") or loop.time() >= deadline:
                return doc
            await asyncio.sleep(0.5)


async def demo(gateway: Gateway, session: str) -> dict[str, Any]:
    """A short conversation: session start, a few turns, a compaction; then BOOTSTRAP."""
    await gateway.session_start(session, channel="webchat")
    turns = [
        ("user", "albert", "Let's get back to the auth migration, the token rotation is still open."),
        ("assistant", "agent", "Right. We decided to rotate tokens daily because the audit requires it."),
        ("user", "albert", "I'll write the rollout plan tomorrow."),
    ]
    for role, sender, text in turns:
        await gateway.message(session, role, text, sender=sender, channel="webchat")
    history = [{"role": role, "content": text} for role, _, text in turns]
    await gateway.compaction(session, "before", history)
    await gateway.compaction(session, "after", [])
    return await gateway.fresh_boot(session)


async def main_async(args: argparse.Namespace) -> int:
    try:
        nc = await connect(args.url, args.agent, args.user, args.password)
    except Unreachable as exc:
        print(f"producer: {exc} (is Cortex running? `cortex up` prints its URL)", file=sys.stderr)
        return 1
    try:
        doc = await demo(Gateway(nc, args.agent, args.prefix), args.session)
    except CortexError as exc:
        print(f"producer: Cortex answered {exc}", file=sys.stderr)
        return 1
    except nats.js.errors.NoStreamResponseError:
        print(f"producer: no stream takes {args.prefix}.* events at {args.url}: is it a Cortex? (`cortex init` makes "
              "the streams)", file=sys.stderr)
        return 1
    except nats.errors.Error as exc:  # no responders, a timeout, a connection lost
        print(f"producer: {exc or type(exc).__name__}", file=sys.stderr)
        return 1
    finally:
        await nc.drain()
    print(doc["markdown"])
    if doc.get("lagging"):
        print(f"(still catching up: {', '.join(doc['lagging'])})", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description="Publish an agent gateway's events to Cortex and print BOOTSTRAP")
    parser.add_argument("--url", default=os.environ.get("CORTEX_NATS_URL") or os.environ.get("NATS_URL")
                        or "nats://127.0.0.1:4222")
    parser.add_argument("--agent", default="example-agent")
    parser.add_argument("--session", default=f"session-{uuid.uuid4().hex[:8]}")
    parser.add_argument("--prefix", default=os.environ.get("CORTEX_PREFIX", "cortex"))
    parser.add_argument("--user", default=os.environ.get("NATS_USER"))
    parser.add_argument("--password", default=os.environ.get("NATS_PASSWORD"))
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
