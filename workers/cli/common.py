"""Connection plumbing shared by CLI commands."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
from nats.aio.client import Client

from shared.config import Settings
from shared.connection import connect


def discovered_url(settings: Settings) -> str | None:
    """The URL of an embedded server running under the data dir (from its lock file)."""
    lock = Path(settings.data_path) / "cortex.lock"
    try:
        text = lock.read_text()
    except OSError:
        return None
    for part in text.split(","):
        if part.strip().startswith("nats://"):
            return part.strip()
    return None


def resolve_url(settings: Settings, override: str | None = None) -> str:
    return override or settings.nats_url or discovered_url(settings) or "nats://127.0.0.1:4222"


@contextlib.asynccontextmanager
async def connected(settings: Settings, override: str | None = None) -> AsyncIterator[Client]:
    url = resolve_url(settings, override)
    nc = await connect(msgspec.structs.replace(settings, nats_url=url), "cortex-cli")
    try:
        yield nc
    finally:
        with contextlib.suppress(Exception):
            await nc.drain()
