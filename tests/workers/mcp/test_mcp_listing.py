"""What ``tools/list`` tells a host, without a server: self-contained input schemas, output
schemas of the replies' top level only (cheap for a client to check), the NATS footprint."""

from __future__ import annotations

import json

import jsonschema
import msgspec
import pytest

from schemas.api import ThreadsReply
from schemas.docs import Thread
from workers.mcp.server import listing, output_schema
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
        "publish": ["acme.api.*.alice", "acme.feedback.alice.memory_forget", "acme.feedback.alice.remember"],
        "subscribe": ["_INBOX_alice.>"]}
