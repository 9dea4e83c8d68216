"""A Cortex connection parses a delivery's headers with its own ``_parse_header_lines``
(``shared.connection._CortexClient``): the same dict as nats-py's for every block, and the
headers a real server delivers arrive as published."""

from __future__ import annotations

import random

from nats.aio.client import Client

from shared.config import load_settings
from shared.connection import _CortexClient, connect

_NAMES = (b"Nats-Msg-Id", b"X", b"", b" Padded ", b"in side", b"tab\there", b"\x1cfs", b"sep\x1f",
          b"Nats-Expected-Last-Subject-Sequence", b"caf\xc3\xa9", b"\xff\xfe", b"a:b", b"\x0bvt", b"x\x0c")
_VALUES = (b"", b" 42", b"  spaced  ", b"\xc3\xbc", b"\xff bad utf-8", b":colon:", b"\t tab", b"a\rb")


def _block(rng: random.Random) -> bytes:
    lines = []
    for _ in range(rng.randrange(0, 5)):
        kind = rng.random()
        if kind < 0.1:
            lines.append(b"")  # an empty line
        elif kind < 0.2:
            lines.append(rng.choice(_NAMES))  # no colon
        else:
            lines.append(rng.choice(_NAMES) + rng.choice((b":", b": ", b":\t")) + rng.choice(_VALUES))
    return b"\r\n".join(lines) + rng.choice((b"", b"\r\n", b"\r\n\r\n"))


def test_the_header_block_parses_as_nats_py_parses_it() -> None:
    assert _CortexClient._parse_header_lines is not Client._parse_header_lines  # the override is in place
    rng = random.Random(39)
    blocks = [_block(rng) for _ in range(5000)]
    blocks += [b"Nats-Msg-Id: 0f3c2d1e\r\n\r\n", b"A: 1\r\nA: 2\r\n", b"\r\n", b""]
    for block in blocks:
        assert _CortexClient._parse_header_lines(block) == Client._parse_header_lines(block), block


async def test_a_delivery_s_headers_arrive_as_published(nats_url: str) -> None:
    nc = await connect(load_settings({"CORTEX_NATS_URL": nats_url}), "t")
    try:
        assert isinstance(nc, _CortexClient)
        sub = await nc.subscribe("t.headers")
        sent = {"Nats-Msg-Id": "ev-1", "Cortex-Note": "grüße: ok", "Empty": ""}
        await nc.publish("t.headers", b"{}", headers=sent)
        msg = await sub.next_msg(timeout=5)
        assert msg.headers == sent
        assert msg.data == b"{}"
    finally:
        await nc.close()
