"""The embedded nats-server and a port another process holds: a port it picked itself (taken
between the pick and the bind) is picked again; a port it was given is a clear error. Before,
a connection to the port decided readiness, and the other process's listener answered it:
Cortex went on against whatever held the port."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest

from shared import embedded
from shared.embedded import EmbeddedError, EmbeddedNats


@pytest.fixture
def held() -> Iterator[int]:
    """A port some other process listens on (it never speaks NATS)."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield int(other.getsockname()[1])


async def test_a_picked_port_taken_before_the_server_binds_it_is_picked_again(
    held: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    picks = iter([held])  # the first pick is the port the other process took meanwhile
    real = embedded.free_port
    monkeypatch.setattr(embedded, "free_port", lambda: next(picks, None) or real())
    with EmbeddedNats(str(tmp_path)) as server:
        assert server.port != held
        nc = await nats.connect(server.url)
        try:  # the server Cortex talks to is its own, with JetStream
            assert (await nc.jetstream().account_info()).streams == 0
        finally:
            await nc.close()
    log = (tmp_path / "nats-server.log").read_text()
    assert "address already in use" in log and "Server is ready" in log


def test_a_given_port_another_process_holds_is_an_error_naming_it(held: int, tmp_path: Path) -> None:
    server = EmbeddedNats(str(tmp_path), port=held)
    with pytest.raises(EmbeddedError, match=f"port {held} is in use by another process"):
        server.start()
    assert server.pid is None
    with EmbeddedNats(str(tmp_path)) as again:  # the data directory's lock was given back
        assert again.pid is not None
