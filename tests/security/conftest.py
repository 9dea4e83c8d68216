"""Servers for the security tests: ``nats-server -c <file>`` with auth, TLS and permissions
written by the test, a throw-away CA made with ``openssl``, and the ``cortex`` CLI."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import worker_forkserver
from cortex_testkit import ConfiguredNats


@pytest.fixture
def nats_conf(tmp_path: Path) -> Any:
    """``nats_conf(name, body)`` starts a configured server; all are stopped at teardown."""
    servers: list[ConfiguredNats] = []

    def start(name: str, body: str) -> ConfiguredNats:
        server = ConfiguredNats(tmp_path / name, body)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


def cortex(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the CLI with exactly the CORTEX_* settings given (none inherited from the caller)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_") and k != "ANTHROPIC_API_KEY"}
    return worker_forkserver.run_cortex(args, env={**base, **env}, timeout=timeout)


@pytest.fixture
def cortex_cli() -> Any:
    return cortex


def _openssl(*args: str, cwd: Path) -> None:
    result = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


@pytest.fixture
def tls_files(tmp_path: Path) -> dict[str, Path]:
    """A self-signed CA, a server certificate for 127.0.0.1 and a client certificate."""
    if subprocess.run(["which", "openssl"], capture_output=True).returncode != 0:
        pytest.skip("openssl is needed to make the test CA")
    d = tmp_path / "pki"
    d.mkdir()
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
             "-subj", "/CN=cortex-test-ca", cwd=d)
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"),
                      ("client", "extendedKeyUsage=clientAuth\n")):
        (d / f"{name}.ext").write_text(ext)
        _openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN=cortex-{name}", cwd=d)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", f"{name}.pem", "-days", "1", "-extfile", f"{name}.ext", cwd=d)
    return {name: d / name for name in ("ca.pem", "server.pem", "server.key", "client.pem", "client.key")}
