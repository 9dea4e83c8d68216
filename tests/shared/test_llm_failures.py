"""What an API's answer means to the LLM client (``shared.llm.providers``): pure, no server."""

from __future__ import annotations

import email.utils

import pytest

from shared.llm import failure_for_status, retry_delay
from shared.llm.providers import retry_after_s


@pytest.mark.parametrize(("status", "body", "cause", "permanent"), [
    (401, None, "auth", True),  # a revoked key: no retry can help, nor waiting in place
    (402, None, "auth", True),
    (403, None, "auth", True),  # a closed account
    (404, None, "not_found", True),  # a model name the API does not know
    (400, {"error": {"code": "model_not_found", "message": "The model `gpt-9` does not exist"}}, "not_found", True),
    (400, {"error": {"message": "model 'llama9' not found, try pulling it first"}}, "not_found", True),
    (400, {"error": {"message": "prompt is too long"}}, "rejected", True),
    (413, None, "rejected", True),
    (422, None, "rejected", True),
    (408, None, "timeout", False),
    (429, None, "rate_limited", False),
    (500, None, "server_error", False),
    (503, None, "server_error", False),
    (529, None, "server_error", False),
])
def test_each_status_has_its_cause(status: int, body: object, cause: str, permanent: bool) -> None:
    failure = failure_for_status(status, {}, body)
    assert (failure.cause, failure.permanent, failure.status) == (cause, permanent, status)


def test_retry_after_is_read_in_every_form_the_apis_send() -> None:
    assert retry_after_s({"retry-after": "2"}) == 2.0
    assert retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5  # the finer one wins
    now = 1_800_000_000.0
    assert retry_after_s({"retry-after": email.utils.formatdate(now + 30, usegmt=True)}, now=now) == 30.0
    assert retry_after_s({"retry-after": email.utils.formatdate(now - 30, usegmt=True)}, now=now) == 0.0
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None
    assert failure_for_status(429, {"retry-after": "7"}).retry_after_s == 7.0


def test_the_wait_between_requests_is_the_apis_when_it_says_one() -> None:
    assert [retry_delay(n, None, 0.5) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert retry_delay(1, 4.0, 0.5) == 4.0
    assert retry_delay(20, None, 0.5, cap_s=30.0) == 30.0
