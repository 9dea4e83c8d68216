"""The MCP server's side of NATS: one connection, made when a tool first needs it, for one
agent — API requests on ``cortex.api.<service>.<agent>`` and FeedbackEvents on
``cortex.feedback.<agent>.<kind>``, nothing else — with every failure turned into a
``ToolError``: one sentence a model can act on, never a traceback.

The agent is fixed when the server starts (the tenant boundary): no tool argument names
another agent, so with NATS credentials confined to the agent's subjects (see
``docs/integration.md``) the process cannot reach anyone else's data even if it tried.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from datetime import datetime
from typing import Any

import msgspec
import nats.errors
import nats.js.errors
from nats.aio.client import Client

from schemas.api import ErrorReply, StatusReply
from schemas.events import FeedbackEvent
from shared.config import Settings
from shared.connection import ConnectError, connect, redact_url
from shared.feedback import publish_feedback, status_time
from shared.names import api_subject, feedback_subject

ERROR_HEADER = "Nats-Service-Error"  # NATS micro's error reply header (shared.service)
REFRESH_DELAY_S = 0.05  # before a publish's time refresh asks: the tool's reply goes first
REFRESH_EVERY_S = 1.0  # at most this often: a burst of remembers asks once


class ToolError(Exception):
    """A tool call that cannot be answered; the message is the one sentence the model sees."""


def inbox_prefix(agent: str) -> str:
    """The reply inbox of the agent's MCP server: its credentials need ``_INBOX_<agent>.>`` only."""
    return f"_INBOX_{agent}"


class Gateway:
    def __init__(self, settings: Settings, agent: str, timeout_s: float) -> None:
        self.settings = settings
        self.agent = agent
        self.timeout_s = timeout_s
        self.url = redact_url(settings.nats_url or "nats://127.0.0.1:4222")
        self._nc: Client | None = None
        self._lock = asyncio.Lock()
        self._refusals: list[str] = []  # the server's permission refusals, latest last (bounded)
        self._time: datetime | None = None  # the agent's latest event time, as last asked (event_time)
        self._refreshing: asyncio.Task[None] | None = None
        self._asked = 0.0  # when the last refresh started (monotonic)

    async def client(self) -> Client:
        """The connection, made now if there is none: an unreachable NATS is a ToolError
        for this call, and the next call tries again."""
        async with self._lock:
            if self._nc is None or self._nc.is_closed:
                try:
                    self._nc = await connect(self.settings, f"cortex-mcp-{self.agent}",
                                             inbox_prefix=inbox_prefix(self.agent), on_error=self._on_error)
                except ConnectError as exc:
                    raise ToolError(f"Cortex is unreachable ({exc}); start it with `cortex up` or point "
                                    "CORTEX_NATS_URL at its NATS server, then call the tool again.") from exc
            nc = self._nc
        if not nc.is_connected:
            raise ToolError(f"The connection to NATS at {self.url} is lost and being re-established; "
                            "call the tool again in a few seconds.")
        return nc

    async def request(self, service: str, body: bytes, worker: str) -> bytes:
        """The reply of ``cortex.api.<service>.<agent>`` (served by ``worker``), or a ToolError."""
        nc = await self.client()
        subject = api_subject(self.settings.prefix, service, self.agent)
        try:
            reply = await nc.request(subject, body, timeout=self.timeout_s)
        except nats.errors.NoRespondersError as exc:
            raise ToolError(f"Cortex's {worker} worker is not running (nothing answers {subject}); start it "
                            f"with `cortex up` or `cortex worker {worker}`, then call the tool again.") from exc
        except nats.errors.TimeoutError as exc:
            raise ToolError(self._silence(subject, f"Cortex's {worker} worker did not answer {subject} within "
                                                   f"{self.timeout_s:g} s: it is overloaded or stuck; try again "
                                                   "shortly.")) from exc
        except (nats.errors.ConnectionClosedError, nats.errors.ConnectionReconnectingError,
                nats.errors.ConnectionDrainingError) as exc:
            raise ToolError(f"The connection to NATS at {self.url} was lost during the call; call the tool "
                            "again in a few seconds.") from exc
        if reply.headers and reply.headers.get(ERROR_HEADER):
            raise ToolError(f"Cortex refused the request: {_error_message(reply.data, reply.headers[ERROR_HEADER])}.")
        return bytes(reply.data)

    async def publish_feedback(self, kind: str, *, target: str | None = None, value: Any = None) -> FeedbackEvent:
        """Publish a FeedbackEvent of the agent through JetStream (acknowledged: the stream has
        it, and the owning worker applies it like any event, in stream order)."""
        nc = await self.client()
        event = FeedbackEvent(id=f"mcp-{uuid.uuid4().hex}", agent=self.agent, ts=await self.event_time(),
                              kind=kind, target=target, value=value, actor="mcp")  # type: ignore[arg-type]
        subject = feedback_subject(self.settings.prefix, self.agent, kind)
        try:
            await publish_feedback(nc.jetstream(), self.settings.prefix, event, ack_timeout_s=self.timeout_s)
        except nats.js.errors.NoStreamResponseError as exc:
            raise ToolError(f"No Cortex stream stores {subject}: run `cortex init` against {self.url}, "
                            "then call the tool again.") from exc
        except nats.errors.TimeoutError as exc:
            raise ToolError(self._silence(subject, f"JetStream did not acknowledge {subject} within "
                                                   f"{self.timeout_s:g} s; call the tool again shortly.")) from exc
        except (nats.errors.ConnectionClosedError, nats.errors.ConnectionReconnectingError) as exc:
            raise ToolError(f"The connection to NATS at {self.url} was lost during the call; call the tool "
                            "again in a few seconds.") from exc
        self._refresh_soon()
        return event

    async def event_time(self) -> datetime:
        """The time of the feedback a tool publishes: the agent's latest event time applied,
        as ``cortex.api.status`` reports it (``shared.feedback.status_time``; the wall clock
        only for an agent without any, contract: Time and replay).

        The first call asks and waits. A publish then asks again off the call's path (at most
        once a second, ``_refresh_soon``), and later calls take that answer: a time of the
        agent's events never later than its latest, at most a second and a call old — so a
        remember costs one JetStream publish, not a request to the api worker before it."""
        if self._time is None:
            self._time = await self._status_time()
        return self._time

    async def _status_time(self) -> datetime:
        raw = await self.request("status", b"{}", "api")
        try:
            return status_time(msgspec.json.decode(raw, type=StatusReply))
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
            raise ToolError(f"Cortex's api worker sent a reply this server cannot read ({exc}); "
                            "it may be a different version.") from exc

    def _refresh_soon(self) -> None:
        """Ask for the agent's time again after this call's reply is on its way (once at a time,
        at most every ``REFRESH_EVERY_S``; a failure keeps the time known)."""
        if (self._refreshing is not None and not self._refreshing.done()) \
                or time.monotonic() - self._asked < REFRESH_EVERY_S:
            return
        self._asked = time.monotonic()

        async def refresh() -> None:
            await asyncio.sleep(REFRESH_DELAY_S)  # behind the reply the tool is about to write
            try:
                fresh = await self._status_time()
            except ToolError:
                return
            self._time = fresh if self._time is None else max(self._time, fresh)

        self._refreshing = asyncio.create_task(refresh(), name="mcp-event-time")

    def _on_error(self, exc: Exception) -> None:
        if "permissions violation" in str(exc).lower():
            self._refusals = [*self._refusals[-9:], str(exc)]

    def _silence(self, subject: str, otherwise: str) -> str:
        """Why ``subject`` got no answer: the server's permission refusal when it sent one
        (credentials without that subject), else ``otherwise``."""
        if any(f'"{subject}"' in refusal for refusal in self._refusals):
            return (f"NATS refused to let this server publish to {subject}: its credentials lack that "
                    "permission (docs/integration.md lists what `cortex mcp` needs).")
        return otherwise

    async def close(self) -> None:
        if self._refreshing is not None:
            self._refreshing.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._refreshing
        if self._nc is not None and not self._nc.is_closed:
            with contextlib.suppress(Exception):
                await self._nc.drain()


class Gateways:
    """One Gateway per agent for ``cortex mcp --http --tokens``, made at the agent's first
    request (each its own connection, with the agent's inbox prefix, as a one-agent server has):
    the agents are those of the token file, so there are never more than it names."""

    def __init__(self, settings: Settings, timeout_s: float) -> None:
        self.settings = settings
        self.timeout_s = timeout_s
        self.url = redact_url(settings.nats_url or "nats://127.0.0.1:4222")
        self._by_agent: dict[str, Gateway] = {}

    def for_agent(self, agent: str) -> Gateway:
        gateway = self._by_agent.get(agent)
        if gateway is None:
            gateway = self._by_agent[agent] = Gateway(self.settings, agent, self.timeout_s)
        return gateway

    async def close(self) -> None:
        await asyncio.gather(*(gateway.close() for gateway in self._by_agent.values()))


def _error_message(data: bytes, header: str) -> str:
    try:
        return msgspec.json.decode(data, type=ErrorReply).error.message
    except (msgspec.DecodeError, msgspec.ValidationError):
        return header
