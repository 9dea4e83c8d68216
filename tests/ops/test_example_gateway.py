"""examples/producer.py's ``Gateway.fresh_boot`` against a real nats-server, the boot API
played by a plain responder: a 503 (a cluster electing a leader under the boot worker) is
asked again; any other error reply is raised at once."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import producer
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

UNAVAILABLE = {"error": {"code": 503, "message": "temporarily unavailable: NATS did not answer (TimeoutError: "
                                                 "a leader election or a reconnect); ask again"}}


@pytest.fixture
async def answers(nc: Client) -> AsyncIterator[list[dict[str, object]]]:
    """The replies the stand-in boot API gives, one per request, in order; the requests counted."""
    replies: list[dict[str, object]] = []

    async def respond(msg: Msg) -> None:
        await msg.respond(json.dumps(replies.pop(0)).encode())

    sub = await nc.subscribe("cortex.api.boot.alice", cb=respond)
    yield replies
    await sub.unsubscribe()


async def test_fresh_boot_asks_again_after_a_503(nc: Client, answers: list[dict[str, object]]) -> None:
    doc = {"agent": "alice", "markdown": "# BOOTSTRAP", "lagging": []}
    answers.extend([UNAVAILABLE, UNAVAILABLE, doc])
    assert await producer.Gateway(nc, "alice").fresh_boot(within_s=10) == doc
    assert answers == []  # asked three times


async def test_fresh_boot_raises_any_other_error_at_once(nc: Client, answers: list[dict[str, object]]) -> None:
    answers.extend([{"error": {"code": 400, "message": "max_chars must be between 2000 and 64000"}}, UNAVAILABLE])
    with pytest.raises(producer.CortexError) as raised:
        await producer.Gateway(nc, "alice").fresh_boot(within_s=10)
    assert raised.value.code == 400 and answers == [UNAVAILABLE]


def test_the_example_fails_in_one_line_when_nothing_listens() -> None:
    """Issue 44 item 1: against a URL where no server runs, the example retried silently for
    two minutes and died with nats-py's NoServersError traceback; now a few seconds and one line."""
    import subprocess
    import sys
    from pathlib import Path

    from shared.embedded import free_port

    url = f"nats://127.0.0.1:{free_port()}"
    example = Path(producer.__file__)
    result = subprocess.run([sys.executable, str(example), "--url", url], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith(f"producer: cannot connect to NATS at {url}: ")
    assert result.stderr.count("\n") == 1 and "`cortex up` prints its URL" in result.stderr, result.stderr
