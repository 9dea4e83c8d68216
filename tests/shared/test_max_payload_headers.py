"""A message's headers count against the server's max payload, and a server error is a
disconnect to come back from — the two halves of issue 44's critical defect, on a real
nats-server whose limit is small enough to reach in a test."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats.errors
import pytest
from cortex_testkit import ConfiguredNats
from nats.aio.client import Client

from shared.config import load_settings
from shared.connection import connect
from shared.consume import dead_letter_message
from shared.natsio import message_size

LIMIT = 4096
HEADERS = {"Cortex-Error": "content too long: 70000 characters", "Cortex-Stream-Seq": "12",
           "Nats-Msg-Id": "dlq:threads:12"}


@pytest.fixture
def small_server(tmp_path: Path) -> Iterator[ConfiguredNats]:
    with ConfiguredNats(tmp_path / "nats", f"max_payload: {LIMIT}") as server:
        yield server


async def worker_connection(server: ConfiguredNats) -> Client:
    return await connect(load_settings({"CORTEX_NATS_URL": server.url()}), "test", retry_forever=True)


async def round_trip(nc: Client) -> bytes:
    sub = await nc.subscribe("echo.test")
    await nc.publish("echo.test", b"ping")
    msg = await sub.next_msg(timeout=5)
    await sub.unsubscribe()
    return msg.data


async def test_a_message_exactly_at_the_limit_with_headers_is_sent_and_one_byte_more_is_refused_before_sending(
        small_server: ConfiguredNats) -> None:
    nc = await worker_connection(small_server)
    bare = message_size(b"", HEADERS)
    assert bare > len(b"".join(k.encode() + v.encode() for k, v in HEADERS.items()))  # the block's framing counts
    sub = await nc.subscribe("sized.test")
    await nc.publish("sized.test", b"x" * (LIMIT - bare), headers=HEADERS)  # the server takes it: the count is exact
    assert len((await sub.next_msg(timeout=5)).data) == LIMIT - bare
    with pytest.raises(nats.errors.MaxPayloadError):
        await nc.publish("sized.test", b"x" * (LIMIT - bare + 1), headers=HEADERS)
    assert nc.is_connected and await round_trip(nc) == b"ping"
    await nc.close()


async def test_a_server_error_that_closes_the_connection_is_followed_by_a_reconnect(
        small_server: ConfiguredNats, wait_for: Any) -> None:
    """nats-py closes a connection for good on any -ERR; the server's "maximum payload" error
    (here provoked by going around the size check) took every worker of a process off NATS."""
    errors: list[str] = []
    nc = await connect(load_settings({"CORTEX_NATS_URL": small_server.url()}), "test", retry_forever=True,
                       on_error=lambda exc: errors.append(str(exc)))
    over = b"x" * (LIMIT - message_size(b"", HEADERS) + 64)
    await Client.publish(nc, "sized.test", over, headers=HEADERS)  # nats-py's own check sees the payload alone
    await wait_for(lambda: asyncio.sleep(0, any("maximum payload" in e.lower() for e in errors)), within=20)

    async def back() -> bool:
        return nc.is_connected and await round_trip(nc) == b"ping"

    await wait_for(back, within=20, interval=0.1)
    assert not nc.is_closed
    await nc.close()


def test_a_dead_letter_keeps_its_body_while_it_fits() -> None:
    body, headers = dead_letter_message(b'{"id":"e1"}', HEADERS, LIMIT)
    assert body == b'{"id":"e1"}' and headers == HEADERS


def test_a_dead_letter_over_the_limit_drops_its_body_and_says_so() -> None:
    event = b"y" * (LIMIT - 100)  # the event itself fitted; with the dead letter's headers it would not
    body, headers = dead_letter_message(event, HEADERS, LIMIT)
    assert body == b""
    assert headers["Cortex-Body-Omitted"].startswith(f"{len(event)} bytes")
    assert {k: headers[k] for k in HEADERS} == HEADERS  # the reason and the original's place are kept
    assert message_size(body, headers) < LIMIT
