"""Connection plumbing shared by CLI commands."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from nats.aio.client import Client

from shared.config import Settings
from shared.connection import ConnectError, connect, lost_connection
from shared.embedded import running_url
from shared.names import EVENTS_STREAM, agent_event_filters, published_subject, session_agent_filter
from workers.cli.base import CliError


def discovered_url(settings: Settings) -> str | None:
    """The URL of an embedded server running under the data dir (from its lock file, while
    the `cortex up` that wrote it lives)."""
    return running_url(settings.data_path)


DEFAULT_URL = "nats://127.0.0.1:4222"
AGENT_HELP = "the agent's id (^[A-Za-z0-9_-]{1,64}$, the token in its subjects: cortex.msg.<agent>.*)"
NATS_URL_HELP = ("NATS server (default: CORTEX_NATS_URL, else NATS_URL or the nats CLI's context, else the `cortex "
                 "up` running with this CORTEX_DATA_DIR, else nats://127.0.0.1:4222)")


def resolve_url(settings: Settings, override: str | None = None) -> str:
    return override or settings.nats_url or discovered_url(settings) or DEFAULT_URL


def nothing_running(settings: Settings, exc: ConnectError) -> ConnectError:
    """No server named and none running embedded under the data dir: the guess at the default
    port failed, so say what to do (a newcomer after ``cortex demo``, whose server is gone)."""
    return ConnectError(f"{exc} — no NATS server named (--nats-url, CORTEX_NATS_URL, NATS_URL, a nats CLI context) "
                        f"and no Cortex running with an embedded one under {settings.data_path}: start one with "
                        "`cortex up`, or name yours")


@contextlib.asynccontextmanager
async def connected(settings: Settings, override: str | None = None,
                    max_reconnects: int | None = None) -> AsyncIterator[Client]:
    """A command's connection (a few reconnects, then closed: see ``shared.connection.connect``);
    a failure inside the block because the connection is gone becomes one line."""
    url = resolve_url(settings, override)
    try:
        nc = await connect(msgspec.structs.replace(settings, nats_url=url), "cortex-cli", max_reconnects=max_reconnects)
    except ConnectError as exc:
        if url == DEFAULT_URL and not (override or settings.nats_url):
            raise nothing_running(settings, exc) from exc
        if not override and settings.nats_origin:
            raise ConnectError(f"{exc} (the URL is from {settings.nats_origin}; CORTEX_NATS_URL names another)") \
                from exc
        raise
    try:
        yield nc
    except Exception as exc:
        lost = lost_connection(exc, nc, url)
        if lost is None:
            raise
        raise lost from exc
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(nc.drain(), timeout=5)
        if not nc.is_closed:
            with contextlib.suppress(Exception):
                await nc.close()


async def has_data(js: Any, prefix: str, agent: str) -> bool:
    """Has Cortex any event of ``agent``? (Cannot tell, e.g. no JetStream permission: True —
    never claim there is none.)"""
    try:
        # the OpenClaw store's events filed under its session token may be any agent's: any at all count
        for subject in (*agent_event_filters(prefix, agent), session_agent_filter(prefix)):
            if (await js.stream_info(EVENTS_STREAM, subjects_filter=subject)).state.subjects:
                return True
    except Exception:
        return True
    return False


def no_data(prefix: str, agent: str) -> CliError:
    """The one line (exit 1) of every command asked about an agent Cortex knows nothing of."""
    return CliError(f"no data for agent {agent}: none of its events is in the stream (is its gateway publishing "
                    f"to {published_subject(prefix, 'msg', agent, '*')}? was it forgotten?)")


async def require_data(nc: Client, settings: Settings, agent: str) -> None:
    if not await has_data(nc.jetstream(), settings.prefix, agent):
        raise no_data(settings.prefix, agent)


def add_json_flag(parser: Any, what: str = "the API's reply") -> None:
    """``--json``: a reading command prints the data it read, as JSON, instead of its table
    (as the nats CLI's ``-j``): for scripts and ``jq``."""
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON instead of the table")


def print_json(value: bytes | object) -> None:
    """``value`` (JSON bytes as an API replied, or anything msgspec encodes) indented, on stdout."""
    raw = value if isinstance(value, bytes) else msgspec.json.encode(value)
    print(msgspec.json.format(raw, indent=2).decode())
