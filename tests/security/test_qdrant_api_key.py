"""``CORTEX_QDRANT_API_KEY`` reaches the Qdrant server (issue 15, item 13: Qdrant ran without
an API key because Cortex had no way to send one). A gRPC listener on a port of its own
(``CORTEX_QDRANT_GRPC_PORT``: the URL names the REST port) records the metadata every call
carries and refuses it as a server with another key would: the key must be on the wire, and
the refusal must be one line that stops only what needs the store."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from shared.embedded import free_port

KEY = "qdrant-s3cret-key"
HOST = "127.0.0.1"


class RefusingQdrant(grpc.GenericRpcHandler):
    """Every call's metadata, then UNAUTHENTICATED (what Qdrant says to a wrong or missing key).
    It listens on a port of its own: the store reaches it only through CORTEX_QDRANT_GRPC_PORT."""

    def __init__(self) -> None:
        self.metadata: list[dict[str, str]] = []
        self.port = 0

    def service(self, handler_call_details: Any) -> Any:
        self.metadata.append({k: v for k, v in handler_call_details.invocation_metadata})

        def refuse(request: bytes, context: grpc.ServicerContext) -> bytes:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "Must provide an API key or an Authorization bearer token")
            return b""

        return grpc.unary_unary_rpc_method_handler(refuse)


@pytest.fixture
def qdrant() -> Iterator[RefusingQdrant]:
    handler = RefusingQdrant()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    handler.port = server.add_insecure_port(f"{HOST}:0")
    server.start()
    try:
        yield handler
    finally:
        server.stop(0)


def test_the_store_sends_the_key_and_a_refusal_is_not_transient(qdrant: RefusingQdrant) -> None:
    from workers.recall.store import StoreError, StoreUnavailable, open_store

    with pytest.raises(StoreError) as refused, contextlib.suppress(Warning):
        open_store(url=f"http://{HOST}:{free_port()}", api_key=KEY, grpc_port=qdrant.port, data_dir="/nonexistent",
                   embedder_name="hashing-v1-64", dim=64)
    assert not isinstance(refused.value, StoreUnavailable)  # a wrong key is not retried for ever
    assert "UNAUTHENTICATED" in str(refused.value) and "\n" not in str(refused.value)
    assert qdrant.metadata and all(m.get("api-key") == KEY for m in qdrant.metadata)


def test_the_setting_reaches_the_server_and_a_refusal_stops_recall_with_one_line(
    qdrant: RefusingQdrant, nats_url: str
) -> None:
    env = {**os.environ, "CORTEX_NATS_URL": nats_url, "CORTEX_QDRANT_URL": f"http://{HOST}:{free_port()}",
           "CORTEX_QDRANT_GRPC_PORT": str(qdrant.port),
           "CORTEX_QDRANT_API_KEY": KEY, "CORTEX_EMBEDDER": "hashing", "CORTEX_LOG_LEVEL": "WARNING",
           "PYTHONWARNINGS": "ignore"}
    assert subprocess.run([sys.executable, "-m", "workers", "init"], env=env, capture_output=True).returncode == 0
    result = subprocess.run([sys.executable, "-m", "workers", "worker", "recall"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.startswith("cortex: recall stopped: qdrant ") and result.stderr.count("\n") == 1, \
        result.stderr
    assert "UNAUTHENTICATED" in result.stderr and KEY not in result.stderr
    assert qdrant.metadata and all(m.get("api-key") == KEY for m in qdrant.metadata)
