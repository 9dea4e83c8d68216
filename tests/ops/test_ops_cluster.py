"""Every worker under exactly its NATS permissions, against a real nats-server configured
from k8s/helm/nats-values.yaml: `cortex init` as the admin user, each worker as its own
user, the example gateway (examples/producer.py) as the confined client. Nothing may hit
a permission violation; the gateway gets a fresh BOOTSTRAP document; every metric the
dashboard and the alerts use is scraped from some worker's /metrics."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gen_manifests as gen
import nats
import nats.errors
import producer
import pytest
from cortex_testkit import NotMet, wait_for, wait_listening, wait_until
from ops_support import (
    PROMETHEUS_BUILTINS,
    load_yaml,
    nats_conf,
    promql_metric_names,
    sample_names,
)
from prometheus_client.parser import text_string_to_metric_families

from shared.config import load_settings
from shared.embedded import free_port, nats_server_binary
from workers.registry import all_specs

AGENT = gen.EXAMPLE_AGENT
VIOLATION = re.compile(r'user:([^"]+)".*?(Publish|Subscription) Violation.*?Subject "([^"]+)"')


@dataclass
class Cluster:
    url: str
    tmp: Path
    passwords: dict[str, str]
    server: subprocess.Popen[bytes]
    server_log: Path
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)

    def env_for(self, user: str) -> dict[str, str]:
        return {**os.environ, "CORTEX_NATS_URL": self.url, "CORTEX_NATS_USER": user,
                "CORTEX_NATS_PASSWORD": self.passwords[user], "CORTEX_DATA_DIR": str(self.tmp / "data"),
                "CORTEX_LOG_LEVEL": "WARNING", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100",
                "CORTEX_RUNTIME_LEASE_TTL_S": "2", "CORTEX_EMBEDDER": "hashing"}

    def violations(self) -> list[tuple[str, str, str]]:
        return VIOLATION.findall(self.server_log.read_text(errors="replace"))


@dataclass
class Outcome:
    boot: dict[str, Any]
    status: dict[str, Any]
    client_errors: list[str]
    foreign_request: str
    dead_letters: set[str]
    documents: dict[str, bool]
    scraped: set[str]
    violations: list[tuple[str, str, str]]
    exit_codes: dict[str, int | None]


def _start_server(tmp: Path, passwords: dict[str, str]) -> Cluster:
    values = load_yaml("k8s/helm/nats-values.yaml")
    port = free_port()
    conf = tmp / "nats.conf"
    conf.write_text(nats_conf(values["config"]["merge"], {
        "host": "127.0.0.1", "port": port, "jetstream": {"store_dir": str(tmp / "js")}}))
    env = {**os.environ, **{gen.password_env(u): p for u, p in passwords.items()}}
    log = tmp / "nats-server.log"
    server = subprocess.Popen([nats_server_binary(), "-c", str(conf), "-l", str(log)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_listening(server, port, log)
    return Cluster(f"nats://127.0.0.1:{port}", tmp, passwords, server, log)


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _start_workers(cluster: Cluster) -> None:
    for name in all_specs():
        cluster.ports[name] = free_port()
        env = {**cluster.env_for(f"cortex-{name}"), "CORTEX_METRICS_PORT": str(cluster.ports[name])}
        log = open(cluster.tmp / f"{name}.log", "wb")  # noqa: SIM115 - the child owns it
        cluster.workers[name] = subprocess.Popen([sys.executable, "-m", "workers", "worker", name], env=env,
                                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
    pending = set(cluster.workers)

    def all_ready() -> bool:
        pending.difference_update([n for n in pending if _ready(cluster.ports[n])])
        for name in pending:
            assert cluster.workers[name].poll() is None, (cluster.tmp / f"{name}.log").read_text()
        return not pending

    try:
        wait_until(all_ready, within=60, interval=0.1)
    except NotMet:
        raise AssertionError(f"not ready: {pending}") from None


def _scrape(cluster: Cluster) -> set[str]:
    names: set[str] = set()
    for name, port in cluster.ports.items():
        if cluster.workers[name].poll() is not None:
            continue  # it crashed: test_workers_stop_cleanly_on_sigterm and the violations tell why
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
        for family in text_string_to_metric_families(text):
            names |= sample_names(family.name, family.type)
    return names


async def _gateway(cluster: Cluster) -> tuple[dict[str, Any], dict[str, Any], list[str], str]:
    """The example gateway: a conversation, BOOTSTRAP, status; then attempts outside its agent."""
    user = f"client-{AGENT}"
    nc = await producer.connect(cluster.url, AGENT, user, cluster.passwords[user])
    errors: list[str] = []

    async def on_error(exc: Exception) -> None:
        errors.append(str(exc))

    nc._error_cb = on_error  # collect the asynchronous permission errors the server sends
    try:
        gateway = producer.Gateway(nc, AGENT)
        boot = await producer.demo(gateway, "s-ops")
        status = json.loads((await nc.request(f"cortex.api.status.{AGENT}", b"{}", timeout=10)).data)
        # an event that breaks the contract: dead-lettered by every worker that consumes messages
        bad = {"id": "ops-bad-1", "agent": AGENT, "session": "s-ops", "ts": "not a time", "role": "user",
               "content": "x"}
        await gateway._publish(f"cortex.msg.{AGENT}.received", bad)
        # outside its agent: the server must refuse both
        await nc.publish("cortex.msg.other-agent.received", b"{}")
        try:
            await nc.request("cortex.api.boot.other-agent", b"{}", timeout=1)
            foreign = "answered"
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError) as exc:
            foreign = type(exc).__name__
        await nc.flush()
    finally:
        await nc.close()
    return boot, status, errors, foreign


def _consuming() -> set[str]:
    """The workers that take every message in this cluster: those whose consumer reads messages
    and is not idle with the cluster's settings (no model configured: extraction's consumer reads
    only its feedback kinds, ``WorkerSpec.idle``, and never sees the bad message)."""
    settings = load_settings({})
    return {n for n, s in all_specs().items()
            if s.build is not None and "msg" in s.families and not (s.idle is not None and s.idle(settings))}


async def _inspect(cluster: Cluster) -> tuple[set[str], dict[str, bool]]:
    """As the admin: the dead letters' workers and which documents exist for the agent."""
    nc = await nats.connect(cluster.url, user=gen.ADMIN_USER, password=cluster.passwords[gen.ADMIN_USER])
    try:
        js = nc.jetstream()
        consuming = _consuming()
        dead: set[str] = set()

        async def all_dead_lettered() -> bool:
            info = await js.stream_info("CORTEX_DLQ", subjects_filter="cortex.dlq.>")
            dead.clear()
            dead.update(s.rsplit(".", 1)[-1] for s in (info.state.subjects or {}))
            return dead == consuming

        with contextlib.suppress(NotMet):  # test_bad_input_reaches_the_dead_letter_stream compares the sets
            await wait_for(all_dead_lettered, within=20, interval=0.2)
        documents = {}
        for bucket in ("cortex_threads", "cortex_decisions", "cortex_channels", "cortex_snapshots",
                       "cortex_narratives", "cortex_boot"):
            kv = await js.key_value(bucket)
            try:
                documents[bucket] = (await kv.get(AGENT)).value is not None
            except Exception:
                documents[bucket] = False
        return dead, documents
    finally:
        await nc.close()


def _stop_workers(cluster: Cluster) -> dict[str, int | None]:
    """SIGTERM, as Kubernetes does: the graceful path (lease release) runs under the permissions too."""
    for proc in cluster.workers.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    codes = {}
    for name, proc in cluster.workers.items():
        try:
            codes[name] = proc.wait(40)
        except subprocess.TimeoutExpired:
            proc.kill()
            codes[name] = proc.wait(10)
    return codes


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    tmp = tmp_path_factory.mktemp("cluster")
    users = gen.all_users(gen.all_permissions())
    passwords = {u: secrets.token_hex(12) for u in users}
    cluster = _start_server(tmp, passwords)
    try:
        init = subprocess.run([sys.executable, "-m", "workers", "init"], env=cluster.env_for(gen.ADMIN_USER),
                              capture_output=True, text=True, timeout=60)
        assert init.returncode == 0, init.stdout + init.stderr
        _start_workers(cluster)
        boot, status, errors, foreign = asyncio.run(_gateway(cluster))
        dead, documents = asyncio.run(_inspect(cluster))
        scraped = _scrape(cluster)
        codes = _stop_workers(cluster)
        yield Outcome(boot=boot, status=status, client_errors=errors, foreign_request=foreign,
                      dead_letters=dead, documents=documents, scraped=scraped, violations=cluster.violations(),
                      exit_codes=codes)
    finally:
        for proc in cluster.workers.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        cluster.server.send_signal(signal.SIGTERM)
        try:
            cluster.server.wait(10)
        except subprocess.TimeoutExpired:
            cluster.server.kill()
            cluster.server.wait(5)


def test_no_worker_hits_a_permission_violation(outcome: Outcome) -> None:
    workers = [v for v in outcome.violations if v[0] != f"client-{AGENT}"]
    assert not workers, workers


def test_workers_stop_cleanly_on_sigterm(outcome: Outcome) -> None:
    assert outcome.exit_codes == dict.fromkeys(outcome.exit_codes, 0)


def test_the_gateway_gets_a_fresh_bootstrap(outcome: Outcome) -> None:
    assert outcome.boot["agent"] == AGENT and outcome.boot["lagging"] == []
    assert "auth migration" in outcome.boot["markdown"]
    assert outcome.status["agent"] == AGENT


def test_every_worker_wrote_its_document(outcome: Outcome) -> None:
    assert outcome.documents == dict.fromkeys(outcome.documents, True)


def test_bad_input_reaches_the_dead_letter_stream(outcome: Outcome) -> None:
    consuming = _consuming()
    assert outcome.dead_letters == consuming


def test_the_client_cannot_leave_its_agent(outcome: Outcome) -> None:
    mine = [(kind, subject) for user, kind, subject in outcome.violations if user == f"client-{AGENT}"]
    assert ("Publish", "cortex.msg.other-agent.received") in mine
    assert ("Publish", "cortex.api.boot.other-agent") in mine
    assert outcome.foreign_request != "answered"
    assert any("permissions violation" in e.lower() for e in outcome.client_errors)


def _used_names() -> set[str]:
    dashboard = json.loads((Path(__file__).resolve().parents[2] / "deploy/grafana/cortex-dashboard.json").read_text())
    alerts = load_yaml("deploy/prometheus/alerts.yaml")
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    exprs += [r["expr"] for g in alerts["groups"] for r in g["rules"]]
    return {n for e in exprs for n in promql_metric_names(e)}


@pytest.mark.parametrize("name", sorted(_used_names()))
def test_running_workers_export_the_metric(outcome: Outcome, name: str) -> None:
    if name in PROMETHEUS_BUILTINS:
        return
    assert name in outcome.scraped, f"no worker's /metrics has {name}"
