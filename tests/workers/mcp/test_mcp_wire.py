"""``workers.mcp.wire``: the id of a line the SDK rejects, found where a JSON parser gives up."""

from __future__ import annotations

import pytest
from mcp import types

from workers.mcp.wire import rejection, top_level


@pytest.mark.parametrize(("line", "found"), [
    (b'{"jsonrpc": "2.0", "id": 5, "method": "x"}', (5, False)),
    (b'{"id": "a\\"b", "params": {"id": 9, "deep": [[[{"id": 1}]]]}}', ('a\\"b', False)),
    (b'{"params": {"id": 9}, "id": -2}', (-2, False)),
    (b'{"jsonrpc": "2.0", "id": 3, "result": {}}', (3, True)),
    (b'{"jsonrpc": "2.0", "method": "notifications/x"}', (None, False)),
    (b'{"id": 1.5}', (None, False)),
    (b'{"id": 4, "method": ', (4, False)),  # truncated: the head of an oversize line
    (b'[{"id": 4}]', (None, False)),
])
def test_the_top_level_id_and_whether_it_is_a_response(line: bytes, found: tuple[object, bool]) -> None:
    assert top_level(line) == found


def test_a_line_without_an_id_or_a_response_gets_no_answer() -> None:
    assert rejection(b'{"jsonrpc": "2.0", "method": "x", "params": 5}', None) is None
    assert rejection(b'{"jsonrpc": "2.0", "id": 1, "error": 5}', None) is None
    error = rejection(b'{"id": 1, "method": "x"}', None)
    assert error is not None and error.id == 1 and error.error.code == types.INVALID_REQUEST
