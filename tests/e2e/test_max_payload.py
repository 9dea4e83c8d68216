"""Issue 44's critical defect, end to end: one event just under the server's max payload used
to take every worker off NATS, for every tenant, for good. Its dead letter added ~210 bytes of
headers, the server closed the connection (``maximum payload exceeded``), nats-py treated the
server's -ERR as final and never reconnected, and every restart met the same event again.

Here `cortex up` runs every worker, the OpenClaw event store as a source included, and is fed a
contract event whose content is ~1 MB and an OpenClaw store message of ~1 MB, each published as
close to the server's limit as the publishing client allows. Afterwards bob's ordinary events are
all applied, each big event is a dead letter whose headers keep the reason and where the
original is, and `cortex up` is still running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from cortex_testkit import drained, stop_process
from nats.js import api

from schemas.docs import ThreadsDoc
from shared.kv import kv_read
from shared.names import DLQ_STREAM, EVENTS_STREAM

STORE = "openclaw-events"


@pytest.fixture
def cortex_up(nats_url: str, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, "CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
           "CORTEX_EMBEDDER": "hashing", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_RUNTIME_LEASE_TTL_S": "2",
           "CORTEX_LOG_LEVEL": "WARNING", "CORTEX_OPENCLAW_STREAM": STORE}
    env.pop("ANTHROPIC_API_KEY", None)
    log = open(tmp_path / "up.log", "wb")  # noqa: SIM115 - the child writes it
    proc = subprocess.Popen([sys.executable, "-m", "workers", "up"], env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    log.close()
    yield proc
    stop_process(proc)


def padded(body: dict[str, Any], field: str, total: int) -> bytes:
    """``body`` as JSON with ``field`` padded so the whole payload is ``total`` bytes."""
    bare = len(msgspec.json.encode({**body, field: ""}))
    return msgspec.json.encode({**body, field: "x" * (total - bare)})


async def dead_letters(js: Any) -> list[tuple[dict[str, str], bytes]]:
    info = await js.stream_info(DLQ_STREAM)
    out = []
    for seq in range(info.state.first_seq or 1, (info.state.last_seq or 0) + 1):
        msg = await js.get_msg(DLQ_STREAM, seq)
        out.append(({k: str(v) for k, v in (msg.headers or {}).items()}, msg.data or b""))
    return out


@pytest.mark.timeout(300)
async def test_an_event_at_the_servers_max_payload_is_a_dead_letter_and_every_worker_stays_on_nats(
        cortex_up: subprocess.Popen[bytes], nats_url: str, tmp_path: Path, wait_for: Any) -> None:
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await js.add_stream(api.StreamConfig(name=STORE, subjects=["openclaw.events.>"], storage=api.StorageType.FILE))
    limit = nc.max_payload

    async def consuming() -> bool:
        try:
            return len(await js.consumers_info(EVENTS_STREAM)) >= 9
        except Exception:  # not provisioned yet
            return False

    await wait_for(consuming, within=60, interval=0.1)
    big = padded({"id": "alice-big", "agent": "alice", "session": "s1", "ts": "2026-02-17T10:00:00Z",
                  "role": "user", "channel": "webchat"}, "content", limit - 64)
    await js.publish("cortex.msg.alice.received", big)
    store_big = {"id": "0b9d4c55-7a4f-4d3e-9a35-3f5f2e6f0a11", "ts": 1771322400000, "agent": "carol",
                 "session": "carol:webchat:carol", "type": "msg.in",
                 "payload": {"from": "carol", "channel": "webchat", "metadata": {}, "content": ""}}
    bare = len(msgspec.json.encode(store_big))
    store_big["payload"]["content"] = "y" * (limit - 64 - bare)  # type: ignore[index]
    await js.publish("openclaw.events.carol.msg_in", msgspec.json.encode(store_big))
    for n in range(12):
        event = {"id": f"bob-{n}", "agent": "bob", "session": "s1", "ts": f"2026-02-17T10:{n:02d}:30Z",
                 "role": "user", "channel": "webchat", "content": f"Let's get back to the billing export ({n})"}
        await js.publish("cortex.msg.bob.received", msgspec.json.encode(event))

    await wait_for(lambda: drained(js), within=180)
    assert cortex_up.poll() is None, (tmp_path / "up.log").read_text()[-3000:]
    raw, _ = await kv_read(await js.key_value("cortex_threads"), "bob")
    assert raw is not None and msgspec.json.decode(raw, type=ThreadsDoc).integrity.events == 12

    letters = await dead_letters(js)
    for original in ("cortex.msg.alice.received", "cortex.openclaw.carol.msg_in"):
        mine = [(h, body) for h, body in letters if h.get("Cortex-Original-Subject") == original]
        assert mine, (original, [h for h, _ in letters])
        for headers, body in mine:
            assert headers["Cortex-Error"] and headers["Cortex-Stream-Seq"].isdigit()
            # the body was cut to fit under the server's limit; the headers say so and where the whole is
            assert len(body) < limit - 1024
            assert "Cortex-Body-Omitted" in headers, headers
    log = (tmp_path / "up.log").read_text()
    assert "maximum payload" not in log.lower(), log[-3000:]
    await nc.close()
    cortex_up.send_signal(signal.SIGTERM)
    assert cortex_up.wait(40) == 0
