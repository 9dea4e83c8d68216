"""Secrets never appear in logs or metrics: a worker runs at DEBUG with a password, a token,
an API key and a URL carrying credentials in its environment; its whole log, ``/metrics``,
``/readyz`` and ``/healthz``, and the CLI's refusals are searched for every one of them."""

from __future__ import annotations

import asyncio
import signal
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import nats
import pytest

from shared.embedded import free_port
from shared.kv import kv_read

# test credentials, grepped for below
PASSWORD = "pw-K7d2Qx9Lm4"
WRONG_PASSWORD = "pw-wrong-R5t8Vb1Nc3"
TOKEN = "tok-J3h6Fs8Ga0"
API_KEY = "sk-ant-test-Y2u5Io7Pe9"
SECRETS = (PASSWORD, WRONG_PASSWORD, TOKEN, API_KEY)
SERVER = f'authorization {{ users = [ {{ user: cortex, password: "{PASSWORD}" }} ] }}'
EVENT = (b'{"id":"s-1","agent":"alice","session":"s","ts":"2026-02-17T10:00:00Z",'
         b'"role":"user","content":"We decided to use Redis. I will fix the build tomorrow.","channel":"webchat"}')


def get(port: int, path: str) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return str(resp.read().decode())
    except urllib.error.HTTPError as exc:
        return str(exc.read().decode())
    except OSError:
        return ""


def assert_clean(where: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} leaked into {where}"
        assert secret[3:] not in text, f"part of {secret!r} leaked into {where}"


@pytest.mark.parametrize("how", ["settings", "url"])
async def test_credentials_never_reach_logs_metrics_or_health_endpoints(
    how: str, nats_conf: Any, workers_procs: Any, wait_for: Any, cortex_cli: Any
) -> None:
    server = nats_conf("userpass", SERVER)
    assert cortex_cli("init", env={"CORTEX_NATS_URL": server.url(f"cortex:{PASSWORD}")}).returncode == 0
    common = {"CORTEX_LOG_LEVEL": "DEBUG", "ANTHROPIC_API_KEY": API_KEY}
    if how == "settings":
        good_url, good = server.url(), {"CORTEX_NATS_USER": "cortex", "CORTEX_NATS_PASSWORD": PASSWORD}
    else:
        good_url, good = server.url(f"cortex:{PASSWORD}"), {}
    port, bad_port = free_port(), free_port()
    worker = workers_procs.start("channels", good_url, CORTEX_METRICS_PORT=str(port), **common, **good)
    refused = workers_procs.start("threads", server.url(f"cortex:{WRONG_PASSWORD}"), CORTEX_NATS_TOKEN=TOKEN,
                                  CORTEX_METRICS_PORT=str(bad_port), **common)

    nc = await nats.connect(server.url(f"cortex:{PASSWORD}"))
    js = nc.jetstream()
    await js.publish("cortex.msg.alice.received", EVENT, headers={"Nats-Msg-Id": "s-1"})

    async def applied() -> bytes | None:
        raw, _ = await kv_read(await js.key_value("cortex_channels"), "alice")
        return raw

    await wait_for(applied, within=60)
    refused_log = Path(workers_procs.tmp) / "threads-1.log"
    await wait_for(lambda: _contains(refused_log, "nats_connect_failed"), within=30)

    for p in (port, bad_port):
        for path in ("/metrics", "/readyz", "/healthz"):
            assert_clean(f"{path} on :{p}", await asyncio.to_thread(get, p, path))
    assert "cortex_events_total" in await asyncio.to_thread(get, port, "/metrics")

    worker.send_signal(signal.SIGTERM)
    refused.kill()  # a worker that cannot connect ignores SIGTERM (tests/faults/test_sigterm_drain.py)
    worker.wait(30)
    refused.wait(30)
    await nc.close()
    logs = await asyncio.to_thread(read_logs, Path(workers_procs.tmp))
    assert "nats_connected" in logs["channels-0.log"] and "authorization violation" in logs["threads-1.log"]
    for name, text in logs.items():
        assert_clean(name, text)

    for env in ({"CORTEX_NATS_URL": server.url(f"cortex:{WRONG_PASSWORD}")},
                {"CORTEX_NATS_URL": server.url(), "CORTEX_NATS_USER": "cortex",
                 "CORTEX_NATS_PASSWORD": WRONG_PASSWORD, "CORTEX_LOG_LEVEL": "DEBUG"},
                {"CORTEX_NATS_URL": server.url(), "CORTEX_NATS_TOKEN": TOKEN, "CORTEX_LOG_LEVEL": "DEBUG"}):
        result = cortex_cli("status", env=env)
        assert result.returncode == 1
        assert_clean("cortex status output", result.stdout + result.stderr)


def read_logs(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text(errors="replace") for p in directory.glob("*.log")}


async def _contains(path: Path, text: str) -> bool:
    return text in (await asyncio.to_thread(read_logs, path.parent)).get(path.name, "")
