"""The API's error replies (shared/service.py): a NATS failure under the handler — a cluster
electing a leader, a reconnect — is a 503 that says to ask again, not an "internal error"
500; a store that is down is a 503 naming it; anything else stays a 500 (issue 19: "a KV
bucket's leader killed during a boot assembly: answered after the election, or a clear
retryable error"). The election itself is tests/faults/test_cluster.py's."""

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
from shared.errors import TransientError
from shared.service import serve_endpoints


class Probe(msgspec.Struct):
    pass


class Answer(msgspec.Struct):
    ok: bool


@pytest.fixture
async def probe_api(nc: Client, tmp_path: Path, wait_for: Callable[..., Awaitable[Any]]) -> AsyncIterator[None]:
    async def handle(agent: str, _: Probe) -> Answer:
        if agent == "no-responder":  # a request nobody answers (JetStream's API while a stream has no leader)
            await nc.request("cortex.nobody.answers", b"", timeout=0.5)
        elif agent == "store-down":
            raise TransientError("memory store unavailable: connection refused")
        elif agent == "disk":
            (tmp_path / "missing" / "file").write_text("x")  # FileNotFoundError: asking again cures nothing
        return Answer(ok=True)

    stop = asyncio.Event()
    task = asyncio.create_task(serve_endpoints(nc, "cortex", "cortex-probe", "0.1.0",
                                               [("probe", Probe, handle)], stop))

    async def answering() -> bool:
        try:
            await nc.request("cortex.api.probe.fine", b"{}", timeout=1)
        except (nats.errors.NoRespondersError, nats.errors.TimeoutError):
            return False
        return True

    await wait_for(answering, within=20)
    yield
    stop.set()
    await asyncio.wait_for(task, timeout=10)


async def error_of(nc: Client, agent: str) -> tuple[int, str, str | None]:
    reply = await nc.request(f"cortex.api.probe.{agent}", b"{}", timeout=10)
    error = msgspec.json.decode(reply.data, type=ErrorReply).error
    return error.code, error.message, (reply.headers or {}).get("Nats-Service-Error-Code")


async def test_nats_not_answering_under_the_handler_is_a_503_that_says_to_ask_again(probe_api: None,
                                                                                      nc: Client) -> None:
    code, message, header = await error_of(nc, "no-responder")
    assert (code, header) == (503, "503")
    assert message.startswith("temporarily unavailable: NATS did not answer (NoRespondersError"), message
    assert message.endswith("; ask again")


async def test_a_store_that_is_down_is_a_503_naming_it(probe_api: None, nc: Client) -> None:
    assert await error_of(nc, "store-down") == (
        503, "temporarily unavailable: memory store unavailable: connection refused; ask again", "503")


async def test_any_other_failure_stays_an_internal_error(probe_api: None, nc: Client) -> None:
    assert await error_of(nc, "disk") == (500, "internal error: FileNotFoundError", "500")
    reply = await nc.request("cortex.api.probe.fine", b"{}", timeout=10)
    assert msgspec.json.decode(reply.data, type=Answer).ok  # and the service goes on


@pytest.mark.parametrize(("pep440", "expected"), [
    ("0.1.0", "0.1.0"), ("0.2.0rc1", "0.2.0-rc1"), ("1.0.dev3+g12ab", "1.0.0-dev3+g12ab"),
    ("0+unknown", "0.0.0+unknown"), ("2.1", "2.1.0"), ("1.2.3.4", "1.2.3")])
def test_a_package_version_becomes_the_semantic_version_nats_micro_requires(pep440: str, expected: str) -> None:
    from nats.micro.service import SEMVER_REGEX

    from shared.service import semver

    assert semver(pep440) == expected and SEMVER_REGEX.match(expected)
