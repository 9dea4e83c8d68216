"""The ASGI shell of ``cortex web`` (Starlette, which the MCP SDK already brings): routes, who
may see which agent, corrections, and live updates as server-sent events fed by KV watches.

Access: without a token file every agent is shown, and the server listens on loopback only
(``workers.cli.web`` refuses another address without one). With one (``--tokens``, the
``cortex mcp --http`` format), every request carries a token — ``Authorization: Bearer`` or the
cookie ``/login`` sets — and sees only the agent its token stands for: another agent's page is
403. A request whose ``Host`` is not this server's name (DNS rebinding) is refused, and so is
a correction posted from another origin.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from datetime import datetime
from importlib import resources
from ipaddress import ip_address
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import msgspec
from nats.aio.client import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from schemas.events import is_memory_id, is_valid_agent
from schemas.types import FeedbackKind
from shared.config import Settings
from workers.cli.base import CliError
from workers.cli.query import check_target, publish_correction
from workers.mcp.auth import bearer
from workers.mcp.tokens import TokenTable
from workers.web import pages
from workers.web.reader import WATCHED, Reader, Unavailable, by_derived_id, by_event_id, by_time, either

log = logging.getLogger(__name__)

COOKIE = "cortex_token"
HEARTBEAT_S = 15.0
FORM_BYTES = 64 * 1024
STATIC = {"style.css": "text/css; charset=utf-8", "live.js": "text/javascript; charset=utf-8"}
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


class Access(msgspec.Struct, frozen=True):
    """The agents a request may see: every one (None) or those of its token."""

    agents: frozenset[str] | None

    def allows(self, agent: str) -> bool:
        return self.agents is None or agent in self.agents


class Web:
    """The application's state: one NATS connection, the reader over it, the token table."""

    def __init__(self, nc: Client, settings: Settings, tokens: TokenTable | None, timeout: float,
                 loopback: bool) -> None:
        self.nc = nc
        self.settings = settings
        self.tokens = tokens
        self.reader = Reader(nc, settings, timeout)
        self.loopback = loopback

    def access(self, request: Request) -> Access | None:
        """None: the request has no valid token on a server that wants one."""
        if self.tokens is None:
            return Access(None)
        token = bearer(request.scope) or request.cookies.get(COOKIE)
        agent = self.tokens.agent_for(token) if token else None
        return Access(frozenset([agent])) if agent else None

    def host_ok(self, request: Request) -> bool:
        """On loopback, only a loopback name (a page of another site that resolved its own
        name to 127.0.0.1 cannot read this one)."""
        if not self.loopback:
            return True
        host = urlsplit("//" + request.headers.get("host", "")).hostname or ""
        return host in LOOPBACK_NAMES

    @staticmethod
    def same_origin(request: Request) -> bool:
        """A browser says where a form was posted from (``Sec-Fetch-Site``, else ``Origin``); a
        client that says neither (curl, a script with a token) is no page of another site."""
        site = request.headers.get("sec-fetch-site")
        if site is not None:
            return site in ("same-origin", "none")
        origin = request.headers.get("origin")
        return origin is None or urlsplit(origin).netloc == request.headers.get("host")


Handler = Callable[[Web, Request, str], Awaitable[Response]]


def page(status: int, text: str) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers=SECURITY_HEADERS)


SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; "
                               "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def guarded(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Every agent route: the host, the token, the agent id and that this token may see it."""
    async def endpoint(request: Request) -> Response:
        web: Web = request.app.state.web
        access = _admitted(web, request)
        if isinstance(access, Response):
            return access
        agent = request.path_params["agent"]
        if not is_valid_agent(agent):
            return page(404, pages.error_page(404, f"{agent!r} is not an agent id"))
        if not access.allows(agent):
            return page(403, pages.error_page(403, f"This token does not stand for {agent}: its pages are not "
                                                   "yours to see."))
        try:
            return await handler(web, request, agent)
        except Unavailable as exc:
            return page(exc.status, pages.error_page(exc.status, str(exc), agent))

    return endpoint


def _admitted(web: Web, request: Request) -> Access | Response:
    """What the request may see, or the answer that refuses it (host, origin, token)."""
    refused = _refusal(web, request)
    if refused is not None:
        return refused
    access = web.access(request)
    return _unauthenticated(request) if access is None else access


def _refusal(web: Web, request: Request) -> Response | None:
    if not web.host_ok(request):
        return PlainTextResponse("cortex web: this server answers only to its loopback name\n", status_code=421)
    if request.method == "POST" and not web.same_origin(request):
        return PlainTextResponse("cortex web: a correction must come from this server's own pages\n",
                                 status_code=403)
    return None


def _unauthenticated(request: Request) -> Response:
    if "text/html" in request.headers.get("accept", "") and request.method == "GET":
        return RedirectResponse("/login?next=" + quote(request.url.path), status_code=303)
    return PlainTextResponse("cortex web: this server needs a token (Authorization: Bearer <token>)\n",
                             status_code=401, headers={"WWW-Authenticate": 'Bearer realm="cortex"'})


def notice(request: Request) -> str | None:
    return request.query_params.get("done") or None


# --------------------------------------------------------------------------- pages


async def overview(request: Request) -> Response:
    web: Web = request.app.state.web
    access = _admitted(web, request)
    if isinstance(access, Response):
        return access
    agents = [a for a in await web.reader.agents() if access.allows(a)]
    if access.agents is not None and not agents:
        agents = sorted(access.agents)
    pending = await web.reader.pending()
    rows = await asyncio.gather(*(web.reader.overview(a, pending) for a in agents))
    return page(200, pages.agents_page(rows, notice(request)))


async def agent_home(web: Web, request: Request, agent: str) -> Response:
    return RedirectResponse(pages.agent_url(agent, "briefing"), status_code=303)


async def briefing(web: Web, request: Request, agent: str) -> Response:
    doc = await web.reader.briefing(agent)
    return page(200, pages.briefing_page(agent, doc.markdown if doc else "", doc.generated_at if doc else None,
                                         doc.lagging if doc else []))


async def threads(web: Web, request: Request, agent: str) -> Response:
    return page(200, pages.threads_page(agent, (await web.reader.threads(agent)).threads, notice(request)))


async def decisions(web: Web, request: Request, agent: str) -> Response:
    return page(200, pages.decisions_page(agent, (await web.reader.decisions(agent)).decisions, notice(request)))


async def commitments(web: Web, request: Request, agent: str) -> Response:
    return page(200, pages.commitments_page(agent, (await web.reader.commitments(agent)).commitments,
                                            notice(request)))


async def facts(web: Web, request: Request, agent: str) -> Response:
    from workers.render import entity_names

    doc = await web.reader.knowledge(agent)
    ordered = sorted(doc.facts, key=lambda f: (-f.relevance, f.id)) if doc else []
    return page(200, pages.facts_page(agent, ordered, entity_names(doc.entities) if doc else {}))


async def memories(web: Web, request: Request, agent: str) -> Response:
    query = request.query_params.get("q", "").strip()[:2000]
    if not query:
        return page(200, pages.memories_page(agent, "", None, 0, notice(request)))
    reply = await web.reader.recall(agent, query)
    return page(200, pages.memories_page(agent, query, reply.memories, reply.tokens, notice(request)))


async def traces(web: Web, request: Request, agent: str) -> Response:
    findings, operations = await web.reader.traces(agent)
    return page(200, pages.traces_page(agent, findings.findings, operations.operations))


async def timeline(web: Web, request: Request, agent: str) -> Response:
    doc = await web.reader.narrative(agent)
    return page(200, pages.timeline_page(agent, doc.timeline if doc else [], doc.sessions if doc else []))


SECTION_HANDLERS: dict[str, Handler] = {
    "briefing": briefing, "threads": threads, "decisions": decisions, "commitments": commitments, "facts": facts,
    "memories": memories, "traces": traces, "timeline": timeline,
}


async def section(web: Web, request: Request, agent: str) -> Response:
    handler = SECTION_HANDLERS.get(request.path_params["section"])
    if handler is None:
        return page(404, pages.error_page(404, "No such page.", agent))
    return await handler(web, request, agent)


# --------------------------------------------------------------------------- why is this here?


Wanted = tuple[Callable[[Any], bool], str, int | None]  # which events, what they are the source of, how many


async def source(web: Web, request: Request, agent: str) -> Response:
    kind, item = request.path_params["kind"], request.path_params["item"]
    query = await _source_query(web, agent, kind, item)
    if isinstance(query, str):
        return page(404, pages.error_page(404, query, agent))
    wanted, what, enough = query
    found, scanned, complete = await web.reader.sources(agent, wanted, enough)
    return page(200, pages.source_page(agent, what, found, scanned, complete))


async def _source_query(web: Web, agent: str, kind: str, item: str) -> Wanted | str:
    """What to look for in the stream for an item, or why there is nothing to look for."""
    match kind:
        case "event":
            return by_event_id([item]), f"event {item}", 1  # a commitment's, a finding's: the event itself
        case "memory":
            if not is_memory_id(item):
                return f"{item!r} is not a memory id"
            memory = await web.reader.memory(agent, item)
            ids = [memory.source_event, *memory.sources, *(v.event for v in memory.versions)]
            fact = await _fact_time(web, agent, memory.fact_id) if memory.fact_id else None
            return (either(by_event_id(ids), by_time(fact)) if fact else by_event_id(ids),
                    f"the memory “{memory.content[:80]}”", None)
        case "fact":
            at = await _fact_time(web, agent, item)
            return (by_time(at), "the fact", None) if at else f"{agent} has no fact {item}"
        case "thread" | "decision":
            found = await _item(web, agent, kind, item)
            if found is None:
                return f"{agent} has no {kind} {item}"
            at, said = found
            return by_derived_id(kind, item, at), f"the {kind} “{said[:80]}”", 1
    return "No such kind of item."


async def _fact_time(web: Web, agent: str, fact_id: str) -> datetime | None:
    doc = await web.reader.knowledge(agent)
    return next((f.created_at for f in doc.facts if f.id == fact_id), None) if doc else None


async def _item(web: Web, agent: str, kind: str, item: str) -> tuple[datetime, str] | None:
    """A thread's or decision's time (its message's) and what it says, if the agent has it."""
    if kind == "thread":
        return next(((t.created, t.title) for t in (await web.reader.threads(agent)).threads if t.id == item), None)
    return next(((d.extracted_at, d.what) for d in (await web.reader.decisions(agent)).decisions if d.id == item),
                None)


# --------------------------------------------------------------------------- corrections


async def form(request: Request) -> dict[str, str]:
    body = await request.body()
    if len(body) > FORM_BYTES:
        return {}
    fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    return {k: v[-1] for k, v in fields.items()}


def back(agent: str, section_name: str, said: str) -> Response:
    return RedirectResponse(pages.agent_url(agent, section_name) + "?done=" + quote(said), status_code=303)


async def _correct(web: Web, agent: str, kind: FeedbackKind, target: str, value: Any = None) -> str:
    event = await publish_correction(web.nc, web.settings, agent, kind, target, value, actor="web")
    return f"Published {kind} for {target} (event {event.id}); the owning worker applies it."


async def close_thread(web: Web, request: Request, agent: str) -> Response:
    return await _checked(web, agent, "thread_close", request.path_params["item"], "threads")


async def commitment_done(web: Web, request: Request, agent: str) -> Response:
    return await _checked(web, agent, "commitment_done", request.path_params["item"], "commitments")


async def commitment_reject(web: Web, request: Request, agent: str) -> Response:
    return await _checked(web, agent, "commitment_reject", request.path_params["item"], "commitments")


async def decision_reject(web: Web, request: Request, agent: str) -> Response:
    return await _checked(web, agent, "decision_reject", request.path_params["item"], "decisions")


async def _checked(web: Web, agent: str, kind: FeedbackKind, target: str, section_name: str) -> Response:
    try:
        await check_target(web.nc, web.settings, agent, kind, target)  # the CLI's check: an id it has
    except CliError as exc:
        return page(404, pages.error_page(404, str(exc), agent))
    return back(agent, section_name, await _correct(web, agent, kind, target))


def _memory_id(request: Request) -> str | None:
    item: str = request.path_params["item"]
    return item if is_memory_id(item) else None


async def pin_memory(web: Web, request: Request, agent: str) -> Response:
    if (memory_id := _memory_id(request)) is None:
        return page(404, pages.error_page(404, "Not a memory id.", agent))
    return back(agent, "memories", await _correct(web, agent, "memory_pin", memory_id))


async def forget_memory(web: Web, request: Request, agent: str) -> Response:
    """GET: the confirmation page; POST with ``confirm=yes``: the memory_forget event."""
    if (memory_id := _memory_id(request)) is None:
        return page(404, pages.error_page(404, "Not a memory id.", agent))
    if request.method == "GET" or (await form(request)).get("confirm") != "yes":
        return page(200, pages.forget_page(agent, await web.reader.memory(agent, memory_id)))
    return back(agent, "memories", await _correct(web, agent, "memory_forget", memory_id))


async def edit_memory(web: Web, request: Request, agent: str) -> Response:
    if (memory_id := _memory_id(request)) is None:
        return page(404, pages.error_page(404, "Not a memory id.", agent))
    return page(200, pages.edit_page(agent, await web.reader.memory(agent, memory_id)))


async def update_memory(web: Web, request: Request, agent: str) -> Response:
    if (memory_id := _memory_id(request)) is None:
        return page(404, pages.error_page(404, "Not a memory id.", agent))
    content = (await form(request)).get("content", "").strip()
    if not content:
        return page(400, pages.error_page(400, "The new statement is blank: nothing was published.", agent))
    return back(agent, "memories", await _correct(web, agent, "memory_update", memory_id, {"content": content}))


# --------------------------------------------------------------------------- live updates


async def changes(web: Web, buckets: list[str], key: str) -> AsyncGenerator[str]:
    """The bucket of each change to ``key`` (an agent, or ``>`` for all) in ``buckets``, as it
    happens: one KV watch per bucket (updates only, not the values already there)."""
    queue: asyncio.Queue[str] = asyncio.Queue()
    js = web.nc.jetstream()
    watchers = []
    for bucket in buckets:
        with contextlib.suppress(Exception):  # a bucket not made yet: nothing of it to watch
            watchers.append((bucket, await (await js.key_value(bucket)).watch(key, meta_only=True)))

    async def pump(bucket: str, watcher: Any) -> None:
        current = False  # the watch first delivers the values already there, then None
        async for entry in watcher:
            if entry is None:
                # one change once the watch is current: a document written after the page was
                # rendered and before this watch began is otherwise never sent (the page
                # refreshes once, and every later write is sent as it happens)
                current = True
                queue.put_nowait(bucket)
            elif current:
                queue.put_nowait(bucket)

    tasks = [asyncio.create_task(pump(b, w)) for b, w in watchers]
    try:
        while True:
            yield await queue.get()
    finally:
        for task in tasks:
            task.cancel()
        for _, watcher in watchers:
            with contextlib.suppress(Exception):
                await watcher.stop()  # type: ignore[no-untyped-call]  # nats-py's watcher is untyped


async def event_stream(web: Web, buckets: list[str], key: str) -> AsyncIterator[str]:
    yield "retry: 1000\n: watching\n\n"
    updates = changes(web, buckets, key)
    try:
        while True:
            try:
                bucket = await asyncio.wait_for(anext(updates), timeout=HEARTBEAT_S)
            except TimeoutError:
                yield ": still here\n\n"
                continue
            yield f"event: change\ndata: {bucket}\n\n"
    finally:
        await updates.aclose()


def sse(web: Web, buckets: list[str], key: str) -> Response:
    return StreamingResponse(event_stream(web, buckets, key), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def agent_live(web: Web, request: Request, agent: str) -> Response:
    buckets = [WATCHED[w] for w in request.query_params.getlist("watch") if w in WATCHED] or [WATCHED["boot"]]
    return sse(web, buckets, agent)


async def overview_live(request: Request) -> Response:
    web: Web = request.app.state.web
    access = _admitted(web, request)
    if isinstance(access, Response):
        return access
    key = ">" if access.agents is None else next(iter(access.agents))
    return sse(web, [WATCHED["boot"], WATCHED["threads"]], key)


# --------------------------------------------------------------------------- sign in, assets


async def login(request: Request) -> Response:
    web: Web = request.app.state.web
    refused = _refusal(web, request)
    if refused is not None:
        return refused
    if web.tokens is None:
        return RedirectResponse("/", status_code=303)
    if request.method == "GET":
        return page(200, pages.login_page())
    token = (await form(request)).get("token", "").strip()
    agent = web.tokens.agent_for(token) if token else None
    if agent is None:
        return page(401, pages.login_page("That token is not valid here (unknown or revoked)."))
    response = RedirectResponse(pages.agent_url(agent, "briefing"), status_code=303)
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=request.url.scheme == "https")
    return response


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        return PlainTextResponse("not found\n", status_code=404)
    body = resources.files("workers.web").joinpath("static", name).read_bytes()
    return Response(body, media_type=STATIC[name], headers={"Cache-Control": "no-cache",
                                                            "X-Content-Type-Options": "nosniff"})


def build_app(web: Web) -> Starlette:
    routes = [
        Route("/", overview), Route("/live", overview_live), Route("/login", login, methods=["GET", "POST"]),
        Route("/static/{name}", static),
        Route("/agents/{agent}", guarded(agent_home)),
        Route("/agents/{agent}/live", guarded(agent_live)),
        Route("/agents/{agent}/source/{kind}/{item}", guarded(source)),
        Route("/agents/{agent}/threads/{item}/close", guarded(close_thread), methods=["POST"]),
        Route("/agents/{agent}/commitments/{item}/done", guarded(commitment_done), methods=["POST"]),
        Route("/agents/{agent}/commitments/{item}/reject", guarded(commitment_reject), methods=["POST"]),
        Route("/agents/{agent}/decisions/{item}/reject", guarded(decision_reject), methods=["POST"]),
        Route("/agents/{agent}/memories/{item}/pin", guarded(pin_memory), methods=["POST"]),
        Route("/agents/{agent}/memories/{item}/forget", guarded(forget_memory), methods=["GET", "POST"]),
        Route("/agents/{agent}/memories/{item}/edit", guarded(edit_memory)),
        Route("/agents/{agent}/memories/{item}/update", guarded(update_memory), methods=["POST"]),
        Route("/agents/{agent}/{section}", guarded(section)),
    ]
    app = Starlette(routes=routes)
    app.state.web = web
    return app


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False
