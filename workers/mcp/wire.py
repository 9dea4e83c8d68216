"""A stdio line the MCP SDK cannot take as a JSON-RPC message, answered anyway when it carries an
id: the host waits for that id, and the SDK drops such a line without a word (invalid UTF-8,
JSON nested deeper than its parser goes, params that are no object, a line over the size
limit). Pure: the line (or its head) in, the error to send (or None: no id, nothing to answer).

The id is read by a tokenizer that tracks only nesting and strings, so it works where a JSON
parser gives up — on the head of a truncated line too.
"""

from __future__ import annotations

import re

import msgspec
from mcp import types
from pydantic import ValidationError

from shared.codec import nesting_depth

# a JSON string, a structural character, a number or a literal; anything else is skipped
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null')
_ANSWERS_NOTHING = frozenset({b'"result"', b'"error"'})  # a response from the host: never answered
DEEPEST = 256  # beyond this a line is reported as nested too deeply (the SDK's parser stops earlier)


def top_level(line: bytes) -> tuple[int | str | None, bool]:
    """The id of the line's top-level object (an integer or a string; None when there is none
    or it is of another kind), and whether the object is a response (``result``/``error``)."""
    depth = 0
    key: bytes | None = None
    expecting_key = False
    found: int | str | None = None
    response = False
    tokens = iter(_TOKEN.findall(line))
    for token in tokens:
        if token in (b"{", b"["):
            depth += 1
            expecting_key = token == b"{" and depth == 1
            key = None
        elif token in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and expecting_key and token.startswith(b'"'):
            key, expecting_key = token, False
            response = response or token in _ANSWERS_NOTHING
        elif depth == 1 and token == b",":
            expecting_key = True
        elif depth == 1 and key == b'"id"' and token != b":":
            found = _scalar(token)
            key = None
    return found, response


def _scalar(token: bytes) -> int | str | None:
    if token.startswith(b'"'):
        try:
            return token[1:-1].decode()
        except UnicodeDecodeError:
            return None
    return int(token) if re.fullmatch(rb"-?\d+", token) else None


def rejection(line: bytes, reason: Exception | None, *, oversize_limit: int | None = None) -> types.JSONRPCError | None:
    """The error reply for a line the SDK rejected (``reason``) or one over ``oversize_limit``
    bytes (``line`` is then its head), or None when it carries no id to answer."""
    request_id, response = top_level(line)
    if request_id is None or response:
        return None
    code, message = _classify(line, reason, oversize_limit)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def _classify(line: bytes, reason: Exception | None, oversize_limit: int | None) -> tuple[int, str]:
    if oversize_limit is not None:
        return types.INVALID_REQUEST, f"Invalid request: a message is at most {oversize_limit >> 20} MiB on one line"
    try:
        line.decode()
    except UnicodeDecodeError as exc:
        return types.PARSE_ERROR, f"Parse error: the line is not valid UTF-8 (byte {exc.start})"
    depth = nesting_depth(line)
    if depth > DEEPEST:
        return types.PARSE_ERROR, f"Parse error: JSON nested {depth} levels deep (at most {DEEPEST})"
    try:
        msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        return types.PARSE_ERROR, f"Parse error: {exc}"
    return types.INVALID_REQUEST, f"Invalid request: {_detail(reason)}"


def _detail(reason: Exception | None) -> str:
    """What is wrong with it as a request: the SDK's first complaint about the request form."""
    if isinstance(reason, ValidationError):
        for error in reason.errors():
            where = error["loc"]
            if where and where[0] == "JSONRPCRequest":
                field = ".".join(str(part) for part in where[1:]) or "the message"
                return f"{field}: {error['msg']}"
    return "not a JSON-RPC 2.0 request"
