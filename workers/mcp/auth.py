"""Who a request to ``cortex mcp --http --tokens`` is for: an ASGI layer in front of the SDK's
streamable HTTP app that binds each request to the agent its bearer token stands for
(``tokens.TokenTable``), or answers 401 with one line. The tools read the agent back from the
request (``request_agent``), so no argument and no session can name another agent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.requests import Request

from workers.mcp.tokens import TokenTable

AGENT_KEY = "cortex.agent"  # where the agent rides in the ASGI scope

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

MISSING = "cortex mcp: this server needs a bearer token (Authorization: Bearer <token>)"
REFUSED = "cortex mcp: the bearer token is not valid here (unknown or revoked)"


def bearer(scope: Scope) -> str | None:
    """The token of the request's ``Authorization: Bearer`` header, if it has one."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            kind, _, token = bytes(value).decode("latin-1").strip().partition(" ")
            if kind.lower() == "bearer" and token.strip():
                found: str = token.strip()
                return found
    return None


class BearerAgents:
    """The SDK's app behind bearer tokens: every HTTP request carries a token of some agent."""

    def __init__(self, app: App, tokens: TokenTable) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: the SDK's session manager starts and stops
            await self.app(scope, receive, send)
            return
        token = bearer(scope)
        agent = self.tokens.agent_for(token) if token is not None else None
        if agent is None:
            await refuse(send, MISSING if token is None else REFUSED)
            return
        await self.app({**scope, AGENT_KEY: agent}, receive, send)


async def refuse(send: Send, line: str) -> None:
    body = (line + "\n").encode()
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b'Bearer realm="cortex", error="invalid_token"')]})
    await send({"type": "http.response.body", "body": body})


def request_agent(request: object) -> str | None:
    """The agent an HTTP request was bound to by ``BearerAgents`` (None for anything else)."""
    agent = request.scope.get(AGENT_KEY) if isinstance(request, Request) else None
    return agent if isinstance(agent, str) else None
