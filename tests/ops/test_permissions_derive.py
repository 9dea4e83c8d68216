"""A composed worker that derives an event-derived source past its history asks, once the
stream's start moved, whether only forgets moved it (``shared.forget.start_forgotten``):
under exactly its NATS permissions (k8s/helm/nats-values.yaml) that read works — no
violation, the recorded start read — for every worker the generated permissions let derive."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import gen_manifests as gen
import nats
import pytest
from cortex_testkit import wait_listening
from ops_support import load_yaml, nats_conf

from shared.embedded import free_port, nats_server_binary
from shared.forget import FORGOTTEN_HEAD_KEY, start_forgotten
from shared.names import BUCKET_FORGETS, EVENTS_STREAM
from shared.provision import ensure_bucket

DERIVE = f"$JS.API.DIRECT.GET.{EVENTS_STREAM}"


def _deriving_workers() -> list[str]:
    return sorted(w for w, p in gen.all_permissions()["workers"].items() if DERIVE in p["publish"])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], Path]]:
    passwords = {u: secrets.token_hex(12) for u in gen.all_users(gen.all_permissions())}
    port = free_port()
    conf, log = tmp_path / "nats.conf", tmp_path / "nats-server.log"
    conf.write_text(nats_conf(load_yaml("k8s/helm/nats-values.yaml")["config"]["merge"], {
        "host": "127.0.0.1", "port": port, "jetstream": {"store_dir": str(tmp_path / "js")}}))
    env = {**os.environ, **{gen.password_env(u): p for u, p in passwords.items()}}
    proc = subprocess.Popen([nats_server_binary(), "-c", str(conf), "-l", str(log)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_listening(proc, port, log)
        yield f"nats://127.0.0.1:{port}", passwords, log
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


async def test_every_deriving_worker_may_read_whether_only_forgets_moved_the_stream_start(
    server: tuple[str, dict[str, str], Path],
) -> None:
    url, passwords, log = server
    workers = _deriving_workers()
    assert {"boot", "channels"} <= set(workers)
    admin = await nats.connect(url, user=gen.ADMIN_USER, password=passwords[gen.ADMIN_USER])
    try:
        js = admin.jetstream()
        await ensure_bucket(js, BUCKET_FORGETS)
        await (await js.key_value(BUCKET_FORGETS)).put(FORGOTTEN_HEAD_KEY, b"6")  # a forget moved it to 6
    finally:
        await admin.close()
    for worker in workers:
        user = f"cortex-{worker}"
        nc = await nats.connect(url, user=user, password=passwords[user])
        try:
            js = nc.jetstream()
            assert await start_forgotten(js, 6), worker
            assert not await start_forgotten(js, 7), worker  # retention moved it further
        finally:
            await nc.close()
    assert "Violation" not in log.read_text(errors="replace")
