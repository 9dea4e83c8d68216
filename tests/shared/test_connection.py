"""``CORTEX_NATS_URL`` as a list of servers (the ``NATS_URL`` convention): every listed server
is tried at start-up, the servers a cluster announces are learnt, and a connection follows
the cluster when its node dies."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import nats.errors
import pytest
from cortex_testkit import NatsCluster, wait_for

from shared.config import load_settings
from shared.connection import (
    ConnectError,
    _probe,
    _with_announced,
    connect,
    connect_options,
    redact_url,
    server_urls,
)
from shared.embedded import free_port


def test_a_comma_separated_list_names_every_server_and_logs_without_user_info() -> None:
    url = " nats://alice:pw@n1:4222, nats://alice:pw@n2:4222 ,,tls://n3:4223"
    assert server_urls(url) == ["nats://alice:pw@n1:4222", "nats://alice:pw@n2:4222", "tls://n3:4223"]
    assert server_urls(None) == server_urls("") == ["nats://127.0.0.1:4222"]
    assert redact_url(url) == "nats://n1:4222,nats://n2:4222,tls://n3:4223"
    opts = connect_options(load_settings({"CORTEX_NATS_URL": url}), "t")
    assert opts["servers"] == server_urls(url)


def test_a_port_that_is_not_a_number_is_named_in_one_line() -> None:
    """Before: "Port could not be cast to integer value" from deep inside the client."""
    with pytest.raises(ValueError, match=r"nats://n2:42x: the port is not a number"):
        connect_options(load_settings({"CORTEX_NATS_URL": "nats://n1:4222,nats://u:secret@n2:42x"}), "t")


async def test_a_list_whose_first_server_is_down_connects_to_a_live_one(nats_url: str) -> None:
    dead = f"nats://127.0.0.1:{free_port()}"
    for url in (f"{dead},{nats_url}", f"{nats_url},{dead}"):
        nc = await connect(load_settings({"CORTEX_NATS_URL": url}), "t")
        try:
            assert nc.connected_url is not None
            assert f"nats://{nc.connected_url.netloc}" == nats_url
        finally:
            await nc.close()


async def test_a_list_where_no_server_answers_fails_in_one_line_naming_the_list() -> None:
    url = f"nats://127.0.0.1:{free_port()},nats://127.0.0.1:{free_port()}"
    with pytest.raises(ConnectError, match=f"cannot connect to NATS at {url}: "):
        await connect(load_settings({"CORTEX_NATS_URL": url}), "t")


def test_cortex_init_takes_a_list_of_servers(nats_url: str) -> None:
    """The command that crashed ("Port could not be cast to integer") with the NATS_URL convention."""
    url = f"nats://127.0.0.1:{free_port()},{nats_url}"
    result = subprocess.run([sys.executable, "-m", "workers", "init", "--nats-url", url],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "stream CORTEX_EVENTS" in result.stdout


async def test_the_probe_learns_the_servers_the_cluster_announces(nats_cluster: NatsCluster) -> None:
    """Given one node, start-up learns the other two: a later attempt tries them when the listed one is down."""
    opts = connect_options(load_settings({"CORTEX_NATS_URL": nats_cluster.node_url(0)}), "t")
    announced = await _probe(opts)
    others = {nats_cluster.node_url(1), nats_cluster.node_url(2)}
    assert others <= set(announced)
    _with_announced(opts, announced)
    assert set(opts["servers"]) == {nats_cluster.node_url(i) for i in range(3)}  # the listed one not twice


async def test_a_connection_follows_the_cluster_when_its_node_dies(nats_cluster: NatsCluster) -> None:
    """Configured with one node only: when the node it is on is killed the connection moves
    to another (one the cluster announced) and requests are answered again."""
    states: list[bool] = []
    nc = await connect(load_settings({"CORTEX_NATS_URL": nats_cluster.node_url(0)}), "worker",
                       retry_forever=True, on_state=states.append)
    try:
        assert nc.connected_url is not None and nc.connected_url.port is not None
        first = nc.connected_url.port
        nats_cluster.kill(nats_cluster.node_of_port(first))

        async def elsewhere() -> Any:
            url = nc.connected_url
            # the reconnected callback runs after nats-py reports the new connection: wait for it too
            return nc.is_connected and url is not None and url.port != first and bool(states) and states[-1]

        await wait_for(elsewhere, within=30)
        assert states[0] is True and False in states and states[-1] is True
        await nc.flush(timeout=5)  # a round trip to the server it is on now

        async def jetstream_answers() -> bool:  # after the meta leader's election, if it was the one killed
            try:
                return b'"error"' not in (await nc.request("$JS.API.INFO", b"", timeout=2)).data
            except nats.errors.TimeoutError:
                return False

        await wait_for(jetstream_answers, within=30)
    finally:
        await nc.close()


async def test_a_command_s_connection_to_a_server_that_drops_it_after_every_handshake_is_closed(
    nats_url: str,
) -> None:
    """nats-py forgets its reconnect count at every completed handshake, so a command's
    connection to a server (or load balancer) that accepts and then drops was reconnected to
    for ever — a command ended only when a request of its timed out. Its drops are counted
    now: past CLI_RECONNECTS it is closed, with no request pending at all."""
    from cortex_testkit import TcpProxy

    from shared.connection import CLI_RECONNECTS

    with TcpProxy(int(nats_url.rsplit(":", 1)[1]), drop_after_pong=True) as proxy:
        nc = await connect(load_settings({"CORTEX_NATS_URL": f"nats://127.0.0.1:{proxy.port}"}), "cortex-cli")
        try:
            assert await wait_for(lambda: _closed(nc), within=60)  # reconnecting for ever before: never closed
        finally:
            await nc.close()
        # the probe, the connection and its CLI_RECONNECTS reconnects: nothing after the close
        assert proxy.accepted <= 2 + CLI_RECONNECTS, proxy.accepted


async def _closed(nc: Any) -> bool:
    return bool(nc.is_closed)
