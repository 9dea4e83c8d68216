"""The boot API's request validation against a real nats-server (issue 15, item 18): the
contract's session is at most 128 characters; a 100 000-character one was accepted and
echoed into the reply."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec
import nats.errors
import pytest
from nats.aio.client import Client

from schemas.api import ErrorReply
from schemas.docs import BootDoc
from shared.config import load_settings
from shared.health import Health
from shared.provision import provision
from shared.runtime import WorkerContext
from workers.boot.worker import serve


@pytest.fixture
async def boot_api(nc: Client, tmp_path: Path, wait_for: Callable[..., Awaitable[Any]]) -> AsyncIterator[None]:
    settings = load_settings({"CORTEX_DATA_DIR": str(tmp_path)})
    from workers.registry import all_specs, doc_buckets  # every worker's document buckets

    await provision(nc.jetstream(), settings, [], doc_buckets())
    ctx = WorkerContext(nc=nc, js=nc.jetstream(), settings=settings, worker="boot", consumer="",
                        producer="boot@test", health=Health("boot-api"), catalog=all_specs())
    stop = asyncio.Event()
    task = asyncio.create_task(serve(ctx, stop))

    async def answering() -> bool:
        try:
            await nc.request("cortex.api.boot.alice", b"{}", timeout=1)
        except (nats.errors.NoRespondersError, nats.errors.TimeoutError):
            return False
        return True

    await wait_for(answering, within=20)
    yield
    stop.set()
    await asyncio.wait_for(task, timeout=10)


async def ask(nc: Client, body: dict[str, object]) -> bytes:
    reply = await nc.request("cortex.api.boot.alice", msgspec.json.encode(body), timeout=10)
    return reply.data


async def test_a_session_over_128_characters_is_a_bad_request(boot_api: None, nc: Client) -> None:
    error = msgspec.json.decode(await ask(nc, {"session": "s" * 100_000}), type=ErrorReply).error
    assert error.code == 400 and "length <= 128" in error.message and "session" in error.message
    assert len(error.message) < 300  # the reply does not echo the session


async def test_a_session_of_128_characters_is_served(boot_api: None, nc: Client) -> None:
    doc = msgspec.json.decode(await ask(nc, {"session": "s" * 128}), type=BootDoc)
    assert doc.session == "s" * 128 and doc.agent == "alice"
