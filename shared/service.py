"""Request/reply services over NATS micro: ``<prefix>.api.<service>.<agent>``.

The agent is the last subject token, so NATS permissions can confine a client to its own
agents. Requests are JSON decoded into a Struct; an error reply is
``{"error": {"code", "message"}}`` with the micro error headers: 400 for a bad request,
503 when NATS could not answer the handler's reads for now (a cluster electing a leader, a
reconnect: ask again), 500 for any other failure inside Cortex.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from nats.aio.client import Client
from nats.micro import add_service
from nats.micro.request import Request
from prometheus_client import Counter, Histogram

from schemas.api import ErrorBody, ErrorReply
from schemas.events import is_valid_agent
from shared.errors import TransientError, is_transient
from shared.names import api_endpoint_subject, service_name, shadow_service

if TYPE_CHECKING:
    from shared.runtime import WorkerContext

log = logging.getLogger(__name__)

REQ = TypeVar("REQ", bound=msgspec.Struct)

API_REQUESTS = Counter("cortex_api_requests_total", "API requests by service and outcome", ["service", "outcome"])
API_SECONDS = Histogram("cortex_api_seconds", "API request latency", ["service"],
                        buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0))

_encoder = msgspec.json.Encoder()


class ApiError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def error_body(code: int, message: str) -> bytes:
    return _encoder.encode(ErrorReply(error=ErrorBody(code=code, message=message)))


def unavailable(exc: BaseException) -> bool:
    """A failure under the handler that asking again can cure: NATS timed out, had no
    responder, JetStream was unavailable or the connection was being re-established (a
    cluster electing a leader, a reconnect), or a store the handler needs is down
    (``TransientError``). An ``OSError`` counts only as a connection error or a timeout:
    a file the handler cannot write is not cured by asking again."""
    if isinstance(exc, OSError) and not isinstance(exc, ConnectionError | TimeoutError):
        return False
    return is_transient(exc)


def _failure(exc: Exception, service: str) -> tuple[str, int, str]:
    """(outcome, code, message) of a request whose handler raised ``exc``."""
    if isinstance(exc, ApiError):
        return ("bad_request" if exc.code < 500 else "error"), exc.code, exc.message
    if unavailable(exc):
        log.warning("api_unavailable", extra={"service": service, "error": f"{type(exc).__name__}: {exc}"})
        cause = str(exc) if isinstance(exc, TransientError) else (
            f"NATS did not answer ({type(exc).__name__}: a leader election or a reconnect)")
        return "unavailable", 503, f"temporarily unavailable: {cause}; ask again"
    log.exception("api_failed", extra={"service": service})
    return "error", 500, f"internal error: {type(exc).__name__}"


Endpoint = tuple[str, type[Any], Callable[[str, Any], Awaitable[msgspec.Struct]]]


async def _dispatch(req: Request, service: str, request_type: type[Any],
                    handle: Callable[[str, Any], Awaitable[msgspec.Struct]]) -> None:
    started = time.perf_counter()
    agent = req.subject.rsplit(".", 1)[-1]
    outcome = "ok"
    try:
        if not is_valid_agent(agent):
            raise ApiError(400, f"invalid agent id {agent!r}")
        try:
            body = msgspec.json.decode(req.data or b"{}", type=request_type)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise ApiError(400, f"bad request: {exc}") from exc
        reply = await handle(agent, body)
        await req.respond(_encoder.encode(reply))
    except Exception as exc:
        outcome, code, message = _failure(exc, service)
        await req.respond_error(str(code), message, data=error_body(code, message))
    finally:
        API_REQUESTS.labels(service, outcome).inc()
        API_SECONDS.labels(service).observe(time.perf_counter() - started)


async def serve_worker(ctx: WorkerContext, endpoints: list[Endpoint], stop: asyncio.Event) -> None:
    """Serve a worker's API until ``stop`` is set: the services its ``WorkerSpec.serves``
    declares (its NATS permissions follow from them) as the micro service ``cortex-<worker>``;
    in shadow mode as ``<service>-shadow`` of ``cortex-<worker>-shadow`` (``shadow_service``).
    Endpoints other than the declared ones are a mistake in the code, refused before any is
    served (checked when the worker's spec is in ``ctx.catalog``: always under a host)."""
    spec = ctx.catalog.get(ctx.worker)
    if spec is not None and sorted(e[0] for e in endpoints) != sorted(spec.serves):
        raise ValueError(f"worker {ctx.worker} serves {sorted(e[0] for e in endpoints)}, "
                         f"its spec declares {sorted(spec.serves)}")
    if ctx.settings.mode == "shadow":  # its own subjects and queue group: a live request never gets a shadow answer
        endpoints = [(shadow_service(service), request_type, handle) for service, request_type, handle in endpoints]
    await serve_endpoints(ctx.nc, ctx.settings.prefix, service_name(ctx.worker, ctx.settings.mode == "shadow"),
                          semver(ctx.version), endpoints, stop)


_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?")
_PEP440 = re.compile(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.\d+)*[.-]?([0-9A-Za-z.]*?)(?:\+([0-9A-Za-z.]+))?")


def semver(version: str) -> str:
    """The package version (PEP 440) as the semantic version NATS micro requires (`nats service
    info` shows it): ``0.1.0`` as it is, ``0.2.0rc1`` → ``0.2.0-rc1``, ``1.0.dev3+g12ab`` →
    ``1.0.0-dev3+g12ab``, ``0+unknown`` → ``0.0.0+unknown``."""
    if _SEMVER.fullmatch(version):
        return version
    found = _PEP440.fullmatch(version)
    if found is None:
        return "0.0.0"
    major, minor, patch, pre, local = found.groups()
    text = f"{int(major)}.{int(minor or 0)}.{int(patch or 0)}"
    text += f"-{pre.strip('.')}" if pre.strip(".") else ""
    return text + (f"+{local}" if local else "")


async def serve_endpoints(nc: Client, prefix: str, name: str, version: str, endpoints: list[Endpoint],
                          stop: asyncio.Event) -> None:
    """Serve ``<prefix>.api.<service>.*`` endpoints until ``stop`` is set, as the NATS micro
    service ``name`` (its queue group too: `nats service info` shows the name once)."""
    svc = await add_service(nc, name=name, version=version, description=f"Cortex {name} API",
                            queue_group=name)
    for service, request_type, handle in endpoints:

        async def handler(req: Request, service: str = service, request_type: type[Any] = request_type,
                          handle: Callable[[str, Any], Awaitable[msgspec.Struct]] = handle) -> None:
            await _dispatch(req, service, request_type, handle)

        await svc.add_endpoint(name=service, subject=api_endpoint_subject(prefix, service), handler=handler)
    try:
        await stop.wait()
    finally:
        await svc.stop()
