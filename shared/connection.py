"""NATS connections built from Settings: auth, TLS, reconnect forever, logged state changes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import nats
from nats.aio.client import Client

from shared.backoff import backoff_delay
from shared.config import Settings

log = logging.getLogger(__name__)


class ConnectError(Exception):
    """NATS could not be reached or refused us; the message is one readable line."""


def redact_url(url: str) -> str:
    """The URL without user info, safe for logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def _tls_context(settings: Settings) -> ssl.SSLContext | None:
    if not (settings.nats_tls_ca or settings.nats_tls_cert):
        return None
    for var, path in (("CORTEX_NATS_TLS_CA", settings.nats_tls_ca), ("CORTEX_NATS_TLS_CERT", settings.nats_tls_cert),
                      ("CORTEX_NATS_TLS_KEY", settings.nats_tls_key)):
        if path and not os.path.isfile(path):
            raise FileNotFoundError(f"{var}={path}: no such file")
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=settings.nats_tls_ca)
    if settings.nats_tls_cert:
        ctx.load_cert_chain(settings.nats_tls_cert, settings.nats_tls_key)
    return ctx


def connect_options(settings: Settings, name: str) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "servers": [settings.nats_url or "nats://127.0.0.1:4222"],
        "name": name,
        "max_reconnect_attempts": -1,
        "reconnect_time_wait": 1,
        "connect_timeout": 5,
        "allow_reconnect": True,
    }
    if settings.nats_creds:
        if not os.path.isfile(settings.nats_creds):
            raise FileNotFoundError(f"CORTEX_NATS_CREDS={settings.nats_creds}: no such file")
        opts["user_credentials"] = settings.nats_creds
    if settings.nats_user:
        opts["user"] = settings.nats_user
        opts["password"] = settings.nats_password or ""
    if settings.nats_token:
        opts["token"] = settings.nats_token
    tls = _tls_context(settings)
    if tls is not None:
        opts["tls"] = tls
    return opts


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, ModuleNotFoundError) and exc.name == "nkeys":
        return "a credentials file needs the nkeys package (pip install 'nats-py[nkeys]')"
    if "Authorization" in text or "authorization" in text:
        return "authorization violation (check CORTEX_NATS_USER/PASSWORD, CORTEX_NATS_TOKEN or CORTEX_NATS_CREDS)"
    return text


async def _probe(opts: dict[str, Any]) -> None:
    """nats-py retries an initial connect forever when reconnects are unlimited: probe once
    without reconnects so a wrong URL or credential fails fast with the real reason."""
    seen: list[Exception] = []

    async def remember(exc: Exception) -> None:
        seen.append(exc)

    try:
        quiet = {k: v for k, v in opts.items() if not k.endswith("_cb")}
        probe = await nats.connect(**{**quiet, "allow_reconnect": False, "max_reconnect_attempts": 1,
                                      "reconnect_time_wait": 0.1, "error_cb": remember})
    except Exception as exc:
        raise (seen[-1] if seen else exc) from exc
    await probe.close()


def _checked_options(settings: Settings, name: str) -> dict[str, Any]:
    try:
        return connect_options(settings, name)
    except (OSError, ssl.SSLError) as exc:
        raise ConnectError(f"cannot connect to NATS: {exc}") from exc


async def _stopped_during(delay: float, stop: asyncio.Event | None) -> bool:
    """Wait ``delay`` before the next attempt; True when ``stop`` was set meanwhile."""
    if stop is None:
        await asyncio.sleep(delay)
        return False
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=delay)
    return stop.is_set()


async def connect(settings: Settings, name: str, *, retry_forever: bool = False,
                  on_state: Any = None, stop: asyncio.Event | None = None) -> Client:
    """Connect to NATS. CLI commands fail fast; workers (``retry_forever``) keep trying."""
    url = redact_url(settings.nats_url or "nats://127.0.0.1:4222")

    async def error_cb(exc: Exception) -> None:
        log.warning("nats_error", extra={"error": _describe(exc)})

    holder: list[Client] = []

    async def disconnected_cb() -> None:
        closing = not retry_forever or (bool(holder) and (holder[0].is_closed or holder[0].is_draining))
        log.log(logging.DEBUG if closing else logging.WARNING, "nats_disconnected", extra={"url": url})
        if on_state:
            on_state(False)

    async def reconnected_cb() -> None:
        log.info("nats_reconnected", extra={"url": url})
        if on_state:
            on_state(True)

    async def closed_cb() -> None:
        log.debug("nats_closed", extra={"url": url})

    opts = _checked_options(settings, name)
    opts.update(error_cb=error_cb, disconnected_cb=disconnected_cb,
                reconnected_cb=reconnected_cb, closed_cb=closed_cb)
    attempt = 0
    while True:
        attempt += 1
        try:
            await _probe(opts)
            nc = await nats.connect(**opts)
            holder.append(nc)
            log.log(logging.INFO if retry_forever else logging.DEBUG, "nats_connected", extra={"url": url})
            if on_state:
                on_state(True)
            return nc
        except Exception as exc:
            if not retry_forever:
                raise ConnectError(f"cannot connect to NATS at {url}: {_describe(exc)}") from exc
            delay = backoff_delay(attempt, 0.5, 10.0)
            log.warning("nats_connect_failed", extra={"url": url, "error": _describe(exc), "retry_in_s": delay})
            if await _stopped_during(delay, stop):  # SIGTERM while NATS is unreachable
                raise ConnectError(f"stopped while connecting to NATS at {url}") from exc
