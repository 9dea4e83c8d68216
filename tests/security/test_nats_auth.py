"""NATS auth in every mode the settings offer, against a real server configured for it.

For each mode: ``cortex status`` and a worker without (or with wrong) credentials are
refused with one clear line — the CLI exits 1, the worker keeps retrying, logs why and
answers 503 on ``/readyz`` — while the same commands with the right settings work end to end.
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import nats
import nkeys
import pytest
from nats_jwt import OperatorAuth, new_keypair

from shared.connection import MISSING_CLIENT_CERT
from shared.embedded import free_port
from shared.kv import kv_read

PASSWORD = "pw-Zq8uLk2v"
TOKEN = "tok-Hb4nW9xe"

EVENT = (b'{"id":"auth-1","agent":"alice","session":"s","ts":"2026-02-17T10:00:00Z",'
         b'"role":"user","content":"hello","channel":"webchat"}')


def readyz(port: int) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as resp:
            return int(resp.status), resp.read().decode()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode()
    except OSError as exc:
        return 0, repr(exc)


def one_line_refusal(stderr: str, port: int, *cause: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"cortex: cannot connect to NATS at nats://127.0.0.1:{port}: "), lines[0]
    assert any(c in lines[0] for c in cause), lines[0]
    assert "Traceback" not in stderr


async def admin_client(url: str, good: dict[str, str], files: dict[str, Path] | None) -> Any:
    opts: dict[str, Any] = {}
    if "CORTEX_NATS_USER" in good:
        opts.update(user=good["CORTEX_NATS_USER"], password=good["CORTEX_NATS_PASSWORD"])
    if "CORTEX_NATS_TOKEN" in good:
        opts["token"] = good["CORTEX_NATS_TOKEN"]
    if "CORTEX_NATS_CREDS" in good:
        opts["user_credentials"] = good["CORTEX_NATS_CREDS"]
    if files is not None:
        ctx = ssl.create_default_context(cafile=str(files["ca.pem"]))
        ctx.load_cert_chain(str(files["client.pem"]), str(files["client.key"]))
        opts["tls"] = ctx
    return await nats.connect(url, **opts)


async def check_mode(server: Any, good: dict[str, str], bad: list[tuple[dict[str, str], tuple[str, ...]]],
                     cortex_cli: Any, workers_procs: Any, wait_for: Any, tls: dict[str, Path] | None = None) -> None:
    url = server.url()
    for env, cause in bad:
        refused = cortex_cli("status", env={"CORTEX_NATS_URL": url, **env})
        assert refused.returncode == 1, refused
        one_line_refusal(refused.stderr, server.port, *cause)

    init = cortex_cli("init", env={"CORTEX_NATS_URL": url, **good})
    assert init.returncode == 0, init.stderr
    status = cortex_cli("status", env={"CORTEX_NATS_URL": url, **good})
    assert status.returncode == 0 and "CORTEX_EVENTS" in status.stdout, status.stderr

    # a worker without credentials keeps retrying, says why once per attempt, and is not ready
    env, cause = bad[0]
    port = free_port()
    refused = workers_procs.start("channels", url, CORTEX_METRICS_PORT=str(port), **env)
    log = Path(workers_procs.tmp) / f"channels-{len(workers_procs.procs) - 1}.log"

    async def logged_refusal() -> str | None:
        text = log.read_text() if log.exists() else ""
        return next((line for line in text.splitlines() if "nats_connect_failed" in line), None)

    line = await wait_for(logged_refusal, within=30)
    assert any(c in line for c in cause), line
    code, body = await asyncio.to_thread(readyz, port)
    assert (code, body.strip()) == (503, "not connected to NATS")
    assert refused.poll() is None

    # with the right settings the worker consumes and writes its document
    good_port = free_port()
    workers_procs.start("channels", url, CORTEX_METRICS_PORT=str(good_port), **good)
    nc = await admin_client(url, good, tls)
    js = nc.jetstream()
    await js.publish("cortex.msg.alice.received", EVENT, headers={"Nats-Msg-Id": "auth-1"})

    async def applied() -> bytes | None:
        raw, _ = await kv_read(await js.key_value("cortex_channels"), "alice")
        return raw

    await wait_for(applied, within=60)
    code, _ = await asyncio.to_thread(readyz, good_port)
    assert code == 200
    await nc.close()


AUTH_HINT = ("authorization violation",)
NO_CREDENTIALS = ("authorization violation: the server requires credentials and none are set",)


async def test_user_and_password(nats_conf: Any, cortex_cli: Any, workers_procs: Any, wait_for: Any) -> None:
    server = nats_conf("userpass", f'authorization {{ users = [ {{ user: cortex, password: "{PASSWORD}" }} ] }}')
    good = {"CORTEX_NATS_USER": "cortex", "CORTEX_NATS_PASSWORD": PASSWORD}
    refused = ("authorization violation: the server refused CORTEX_NATS_USER/CORTEX_NATS_PASSWORD",)
    bad = [({}, NO_CREDENTIALS),
           ({"CORTEX_NATS_USER": "cortex", "CORTEX_NATS_PASSWORD": "wrong"}, refused),
           ({"CORTEX_NATS_USER": "mallory", "CORTEX_NATS_PASSWORD": PASSWORD}, refused)]
    await check_mode(server, good, bad, cortex_cli, workers_procs, wait_for)


async def test_token(nats_conf: Any, cortex_cli: Any, workers_procs: Any, wait_for: Any) -> None:
    server = nats_conf("token", f'authorization {{ token: "{TOKEN}" }}')
    good = {"CORTEX_NATS_TOKEN": TOKEN}
    bad = [({}, NO_CREDENTIALS),
           ({"CORTEX_NATS_TOKEN": "tok-wrong"}, ("authorization violation: the server refused CORTEX_NATS_TOKEN",))]
    await check_mode(server, good, bad, cortex_cli, workers_procs, wait_for)


async def test_mutual_tls_with_a_self_signed_ca(
    nats_conf: Any, tls_files: dict[str, Path], cortex_cli: Any, workers_procs: Any, wait_for: Any
) -> None:
    f = {k: str(v) for k, v in tls_files.items()}
    server = nats_conf("tls", f'tls {{ cert_file: "{f["server.pem"]}", key_file: "{f["server.key"]}", '
                              f'ca_file: "{f["ca.pem"]}", verify: true, timeout: 3 }}')
    good = {"CORTEX_NATS_TLS_CA": f["ca.pem"], "CORTEX_NATS_TLS_CERT": f["client.pem"],
            "CORTEX_NATS_TLS_KEY": f["client.key"]}
    bad = [({}, TLS_HINT),  # no TLS settings: the server's certificate is not trusted
           ({"CORTEX_NATS_TLS_CERT": f["client.pem"], "CORTEX_NATS_TLS_KEY": f["client.key"]}, TLS_HINT)]
    await check_mode(server, good, bad, cortex_cli, workers_procs, wait_for, tls=tls_files)


TLS_HINT = ("TLS", "SSL", "certificate")


def test_a_missing_client_certificate_is_named_in_the_refusal(
    nats_conf: Any, tls_files: dict[str, Path], cortex_cli: Any
) -> None:
    """With ``verify: true`` the server ends the TLS 1.3 handshake after the client finished its
    half, so what the client sees races ("Connection lost", "Broken pipe", the server's alert);
    the refusal is taken from the server's INFO (``tls_verify``) and is the same every time."""
    f = {k: str(v) for k, v in tls_files.items()}
    server = nats_conf("tls", f'tls {{ cert_file: "{f["server.pem"]}", key_file: "{f["server.key"]}", '
                              f'ca_file: "{f["ca.pem"]}", verify: true, timeout: 3 }}')
    for _ in range(8):  # the raw failure is racy: every attempt must say the same
        refused = cortex_cli("status", env={"CORTEX_NATS_URL": server.url(), "CORTEX_NATS_TLS_CA": f["ca.pem"]})
        assert refused.returncode == 1
        one_line_refusal(refused.stderr, server.port, MISSING_CLIENT_CERT)
        assert refused.stderr.strip().endswith(MISSING_CLIENT_CERT), refused.stderr


def test_tls_files_that_do_not_exist_are_refused_in_one_line(cortex_cli: Any, tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.pem")
    result = cortex_cli("status", env={"CORTEX_NATS_URL": f"nats://127.0.0.1:{free_port()}",
                                       "CORTEX_NATS_TLS_CA": missing})
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cortex: ") and "nope.pem" in lines[0], result.stderr


def test_a_missing_creds_file_is_refused_in_one_line_naming_the_file(cortex_cli: Any, tmp_path: Path) -> None:
    missing = str(tmp_path / "cortex.creds")
    result = cortex_cli("status", env={"CORTEX_NATS_URL": f"nats://127.0.0.1:{free_port()}",
                                       "CORTEX_NATS_CREDS": missing})
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cortex: "), result.stderr
    assert "cortex.creds" in lines[0] and "no such file" in lines[0], lines[0]


@pytest.mark.parametrize("content", ["empty", "text", "seed without JWT"])
def test_a_file_that_is_not_a_creds_file_is_refused_in_one_line(
    nats_conf: Any, cortex_cli: Any, tmp_path: Path, content: str
) -> None:
    """nats-py alone fails such a file with a TypeError, or — a valid seed but no JWT block —
    reads past its end forever, blocking the event loop."""
    server = nats_conf("operator", OperatorAuth().server_config())
    creds = tmp_path / "not.creds"
    seed = new_keypair(nkeys.PREFIX_BYTE_USER).seed.decode()
    creds.write_text({"empty": "", "text": "hello\n",
                      "seed without JWT": f"-----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n"}
                     [content])
    # a read past the end would block forever: the subprocess timeout fails the test then
    result = cortex_cli("status", env={"CORTEX_NATS_URL": server.url(), "CORTEX_NATS_CREDS": str(creds)}, timeout=30)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0] == (f"cortex: cannot connect to NATS: CORTEX_NATS_CREDS={creds}: not a NATS user credentials "
                        "file (it needs the 'BEGIN NATS USER JWT' and 'BEGIN USER NKEY SEED' blocks "
                        "`nsc generate creds` writes)"), lines[0]


async def test_creds_file_against_an_operator_mode_server(
    nats_conf: Any, cortex_cli: Any, workers_procs: Any, wait_for: Any, tmp_path: Path
) -> None:
    """Decentralised auth: operator, system and JetStream account JWTs preloaded in the server
    (``resolver: MEMORY``), users signed by the account. The right creds file runs ``cortex init``
    and a worker end to end; none, or a user of an account the server does not know, is refused."""
    auth = OperatorAuth()
    server = nats_conf("operator", auth.server_config())
    good = {"CORTEX_NATS_CREDS": str(auth.user_creds(tmp_path / "cortex.creds"))}
    foreign = str(OperatorAuth().user_creds(tmp_path / "foreign.creds"))  # valid file, unknown account
    bad = [({}, NO_CREDENTIALS),
           ({"CORTEX_NATS_CREDS": foreign},
            (f"authorization violation: the server refused the user in CORTEX_NATS_CREDS={foreign}",))]
    await check_mode(server, good, bad, cortex_cli, workers_procs, wait_for)


def test_the_creds_setting_reaches_the_nats_client(tmp_path: Path) -> None:
    """The settings → connect-options path: the creds file goes to nats-py, nothing else beside it."""
    from shared.config import load_settings
    from shared.connection import connect_options

    creds = str(OperatorAuth().user_creds(tmp_path / "cortex.creds"))
    opts = connect_options(load_settings({"CORTEX_NATS_CREDS": creds, "CORTEX_NATS_URL": "nats://h:1"}), "t")
    assert opts["user_credentials"] == creds and opts["servers"] == ["nats://h:1"]
    assert "user" not in opts and "token" not in opts and "tls" not in opts


PASSWORD = "s3cret-pass-word"


def test_a_tls_url_against_a_server_without_tls_is_refused_before_the_password_is_sent(
    nats_conf: Any, cortex_cli: Any
) -> None:
    """``tls://`` asks for TLS; nats-py would connect in clear to a server that offers none
    and send CONNECT, password included. A relay in front of the server records what the
    client sent: with ``tls://`` the password never crosses it; with ``nats://`` (the
    control) it does, so the recording is real."""
    from cortex_testkit import TcpProxy

    server = nats_conf("plain", f'authorization {{ user: cortex, password: "{PASSWORD}" }}')
    creds = {"CORTEX_NATS_USER": "cortex", "CORTEX_NATS_PASSWORD": PASSWORD}
    with TcpProxy(server.port) as proxy:
        refused = cortex_cli("status", env={"CORTEX_NATS_URL": f"tls://127.0.0.1:{proxy.port}", **creds})
        assert refused.returncode == 1
        [line] = refused.stderr.strip().splitlines()
        assert line == (f"cortex: cannot connect to NATS at tls://127.0.0.1:{proxy.port}: the server does not "
                        "offer TLS, but a tls:// URL or CORTEX_NATS_TLS_* asks for it: refusing to connect "
                        "(the credentials would travel in clear)")
        assert proxy.accepted >= 1 and PASSWORD.encode() not in proxy.sent

        allowed = cortex_cli("status", env={"CORTEX_NATS_URL": f"nats://127.0.0.1:{proxy.port}", **creds})
        assert allowed.returncode == 0, allowed.stderr
        assert PASSWORD.encode() in proxy.sent  # nats:// without TLS settings: in clear, as asked


def test_tls_settings_against_a_server_without_tls_are_refused_too(
    nats_conf: Any, tls_files: dict[str, Path], cortex_cli: Any
) -> None:
    server = nats_conf("plain", f'authorization {{ user: cortex, password: "{PASSWORD}" }}')
    refused = cortex_cli("status", env={"CORTEX_NATS_URL": server.url(), "CORTEX_NATS_TLS_CA": str(tls_files["ca.pem"]),
                                        "CORTEX_NATS_USER": "cortex", "CORTEX_NATS_PASSWORD": PASSWORD})
    assert refused.returncode == 1
    one_line_refusal(refused.stderr, server.port, "the server does not offer TLS")


def test_a_tls_url_upgrades_where_the_server_only_offers_tls(
    nats_conf: Any, tls_files: dict[str, Path], cortex_cli: Any
) -> None:
    """``allow_non_tls``: TLS is offered, not required, and nats-py would not upgrade on its
    own; with ``tls://`` it must."""
    from cortex_testkit import TcpProxy

    f = {k: str(v) for k, v in tls_files.items()}
    server = nats_conf("optional", f'tls {{ cert_file: "{f["server.pem"]}", key_file: "{f["server.key"]}" }}\n'
                                   f'allow_non_tls: true\nauthorization {{ user: cortex, password: "{PASSWORD}" }}')
    with TcpProxy(server.port) as proxy:
        result = cortex_cli("status", env={"CORTEX_NATS_URL": f"tls://127.0.0.1:{proxy.port}",
                                           "CORTEX_NATS_TLS_CA": f["ca.pem"], "CORTEX_NATS_USER": "cortex",
                                           "CORTEX_NATS_PASSWORD": PASSWORD})
        assert result.returncode == 0, result.stderr
        assert proxy.accepted >= 1 and PASSWORD.encode() not in proxy.sent  # it went inside TLS
