"""`cortex` reading commands ask a service again while it answers 503 ("temporarily unavailable …;
ask again": recall reopening its store after a lost lease, a leader election) — a real nats-server,
a responder that answers as ``shared.service`` does."""

from __future__ import annotations

import msgspec
import nats
import pytest
from nats.aio.msg import Msg

from schemas.api import ErrorBody, ErrorReply
from workers.cli.base import CliError
from workers.cli.query import request_api

SUBJECT = "cortex.api.recall.someone"


def _error(code: int, message: str) -> tuple[bytes, dict[str, str]]:
    body = msgspec.json.encode(ErrorReply(error=ErrorBody(code=code, message=message)))
    return body, {"Nats-Service-Error": message, "Nats-Service-Error-Code": str(code)}


async def _serve(nc: nats.NATS, answers: list[tuple[bytes, dict[str, str] | None]]) -> list[int]:
    """Answer each request with the next of ``answers`` (the last one again when they run out)."""
    asked: list[int] = []

    async def on_request(msg: Msg) -> None:
        data, headers = answers[min(len(asked), len(answers) - 1)]
        asked.append(1)
        await nc.publish(msg.reply, data, headers=headers)

    await nc.subscribe(SUBJECT, cb=on_request)
    return asked


async def test_a_503_is_asked_again_until_the_service_answers(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        unavailable = _error(503, "temporarily unavailable: recall is reopening its memory store; ask again")
        asked = await _serve(nc, [unavailable, unavailable, (b'{"ok": true}', None)])
        assert await request_api(nc, SUBJECT, b"{}") == b'{"ok": true}'
        assert len(asked) == 3
    finally:
        await nc.close()


async def test_a_service_still_unavailable_at_the_bound_is_the_error(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        message = "temporarily unavailable: recall is reopening its memory store; ask again"
        asked = await _serve(nc, [_error(503, message)])
        with pytest.raises(CliError) as raised:
            await request_api(nc, SUBJECT, b"{}", retry_s=0.25)
        assert str(raised.value) == message
        assert len(asked) >= 2  # asked again before giving up
    finally:
        await nc.close()


@pytest.mark.parametrize("code", [400, 404, 500])
async def test_any_other_error_is_not_asked_again(nats_url: str, code: int) -> None:
    nc = await nats.connect(nats_url)
    try:
        asked = await _serve(nc, [_error(code, f"error {code}"), (b'{"ok": true}', None)])
        with pytest.raises(CliError) as raised:
            await request_api(nc, SUBJECT, b"{}")
        assert str(raised.value) == f"error {code}"
        assert len(asked) == 1
    finally:
        await nc.close()
