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


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    except OSError:
        pytest.skip("the kernel's ephemeral port range is not readable here (not Linux)")
    return int(low), int(high)


def test_a_picked_port_lies_below_the_ephemeral_range_no_outbound_connection_can_take_it() -> None:
    """The race above, at its source: bind(0) picked from the range every outbound connection's
    local port comes from (a test's client, a cluster's routes took a picked port 2 in 64 runs
    under load); a port below it is never given to a connection."""
    low, _ = _ephemeral_range()
    picks = {embedded.free_port() for _ in range(40)}
    assert all(10000 <= port < low for port in picks), sorted(picks)
    assert len(picks) > 30  # picked at random: two test servers starting at once do not collide
    held = []
    for port in picks:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))  # and nothing held it
            except OSError:
                held.append(port)
    # a test server of another worker of the suite may have taken one since it was picked (a clean
    # clone's CI: one of 40); a picker that gave held ports would fail most of them
    assert len(held) <= 2, held


def test_a_port_something_holds_is_not_picked(monkeypatch: pytest.MonkeyPatch) -> None:
    _ephemeral_range()
    held_port = embedded.free_port()
    free = next(p for p in iter(embedded.free_port, None) if p != held_port)
    with socket.socket() as other:
        other.bind(("127.0.0.1", held_port))
        other.listen()
        draws = iter([held_port - 10000, free - 10000])  # the first draw is the held port
        monkeypatch.setattr(embedded.secrets, "randbelow", lambda _n: next(draws))
        assert embedded.free_port() == free


def test_without_the_kernels_range_the_kernel_picks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(embedded, "_EPHEMERAL", tmp_path / "absent")
    port = embedded.free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
