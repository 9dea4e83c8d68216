"""The nats-py internals ``shared.natsio`` reads are still where it reads them: an upgrade
of nats-py that moves them fails here, not in a worker at run time."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
from nats.aio.client import Client

from shared.natsio import api_prefix, api_request, connection, kv_location, max_payload, server_info


def test_a_context_without_a_connection_gives_its_connection_and_prefix() -> None:
    nc = Client()
    js = nc.jetstream()
    assert connection(js) is nc
    assert api_prefix(js) == "$JS.API"
    assert api_prefix(nc.jetstream(domain="hub")) == "$JS.hub.API"
    assert api_prefix(nc.jetstream(prefix="$JS.other.API")) == "$JS.other.API"
    assert server_info(nc) == {}
    assert max_payload(None, 4096) == 4096  # a handler made without a server


async def test_on_a_server_the_info_payload_and_api_requests_are_the_servers(nc: Client) -> None:
    js = nc.jetstream()
    info = server_info(connection(js))
    assert isinstance(info.get("server_id"), str) and info["server_id"]
    assert isinstance(info.get("max_payload"), int)
    assert max_payload(js, 1) == info["max_payload"] == nc.max_payload
    reply = msgspec.json.decode((await api_request(js, "INFO", b"", 5)).data)
    assert reply["type"] == "io.nats.jetstream.api.v1.account_info_response", reply
    assert "error" not in reply
    kv = await js.create_key_value(bucket="natsio_location")
    assert kv_location(kv) == (js, "natsio_location")


def test_no_other_module_reaches_into_nats_py() -> None:
    root = Path(__file__).resolve().parents[2]
    private = re.compile(r"\bjs\._(?:nc|prefix)\b|\bkv\._(?:js|name)\b|[\"']_nc[\"']"
                         r"|\._server_info\b|[\"']_server_info[\"']")
    found = [f"{path.relative_to(root)}:{n}" for folder in ("shared", "workers", "tests", "deploy", "examples")
             for path in sorted((root / folder).rglob("*.py")) if path.name not in ("natsio.py", "test_natsio.py")
             for n, line in enumerate(path.read_text().splitlines(), 1) if private.search(line)]
    assert not found, f"nats-py internals outside shared/natsio.py: {found}"
