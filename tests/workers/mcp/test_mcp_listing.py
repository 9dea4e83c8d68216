"""What ``tools/list`` tells a host, without a server: self-contained input schemas, output
schemas of the replies' top level only (cheap for a client to check), the NATS footprint; and
the shortcuts the server takes past the SDK's per-call pydantic work, held to what the SDK
itself would send."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import msgspec
import pytest
from mcp import types
from mcp.server._otel import OpenTelemetryMiddleware

from schemas.api import ThreadsReply
from schemas.docs import Thread
from shared.config import Settings
from workers.mcp.gateway import Gateway
from workers.mcp.server import build_server, listing, output_schema, tool_result, wire_line
from workers.mcp.tools import TOOLS, Tool, nats_permissions


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_each_tool_lists_schemas_a_client_can_check(tool: Tool) -> None:
    listed = listing(tool)
    jsonschema.Draft202012Validator.check_schema(listed.input_schema)
    jsonschema.Draft202012Validator.check_schema(listed.output_schema)
    refs = json.dumps(listed.input_schema).split('"$ref": ')[1:]
    assert all(part.startswith('"#/$defs/') for part in refs), refs  # every reference resolves inside
    assert "$ref" not in json.dumps(listed.output_schema) and "$defs" not in listed.output_schema
    assert set(listed.output_schema["properties"]) == {f.encode_name for f in msgspec.structs.fields(tool.output)}


def test_an_output_schema_names_the_fields_of_the_objects_a_list_holds() -> None:
    schema = output_schema(ThreadsReply)
    assert schema["properties"]["threads"]["type"] == "array"
    described = schema["properties"]["threads"]["description"]
    assert all(f.encode_name in described for f in msgspec.structs.fields(Thread))
    jsonschema.validate({"threads": [{"anything": 1}]}, schema)  # the inside is not checked
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"threads": {}}, schema)


def test_the_permissions_are_the_agents_apis_and_the_feedback_its_tools_publish() -> None:
    assert nats_permissions("alice", "acme") == {
        "publish": ["acme.api.*.alice", "acme.feedback.alice.memory_forget", "acme.feedback.alice.memory_update",
                    "acme.feedback.alice.remember"],
        "subscribe": ["_INBOX_alice.>"]}


@pytest.mark.parametrize(("text", "data", "is_error"), [
    ("3 threads", {"threads": [{"id": "t1", "title": "Füße", "score": 0.5}], "agent": "alice"}, False),
    ("(no threads for alice match)", {"threads": []}, False),
    ("Cortex's api worker is not running.", None, True),
])
def test_a_tool_result_is_what_the_sdk_dumps_a_call_tool_result_to(text: str, data: dict[str, Any] | None,
                                                                   is_error: bool) -> None:
    model = types.CallToolResult(content=[types.TextContent(text=text)], structured_content=data, is_error=is_error)
    assert tool_result(text, data, is_error=is_error) == model.model_dump(by_alias=True, mode="json",
                                                                          exclude_none=True)


@pytest.mark.parametrize("message", [
    types.JSONRPCResponse(jsonrpc="2.0", id=7, result={
        "content": [{"type": "text", "text": 'ID  TITLE\nt1  "Füße" \\ \u2028 \x00'}],
        "structuredContent": {"n": [1, 2.5, 1e-7, 1e300, None, True], "s": "ü"}, "isError": False}),
    types.JSONRPCResponse(jsonrpc="2.0", id="abc", result={}),
    types.JSONRPCError(jsonrpc="2.0", id=3, error=types.ErrorData(code=-32602, message="Invalid request parameters")),
    types.JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"level": "info", "data": "x"}),
])
def test_a_message_on_the_pipe_is_the_json_the_sdks_stdio_transport_writes(message: types.JSONRPCMessage) -> None:
    line = wire_line(message)
    sdk = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    assert json.loads(line) == json.loads(sdk)
    if not isinstance(message, types.JSONRPCResponse):
        assert line[:-1] == sdk


def test_the_sdks_opentelemetry_middleware_is_opt_in() -> None:
    gateway = Gateway(Settings(), "alice", 1.0)
    assert not any(isinstance(m, OpenTelemetryMiddleware) for m in build_server(gateway).middleware)
    assert any(isinstance(m, OpenTelemetryMiddleware) for m in build_server(gateway, otel=True).middleware)
