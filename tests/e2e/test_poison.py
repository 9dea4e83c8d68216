"""Issue 15's poison run, end to end: `cortex up` (every worker in one process) on a real
nats-server is fed the events that used to take every worker down for good — a payload
nested 1000 deep, invalid UTF-8, twenty messages with a 60 000-byte channel, timestamps
whose UTC time overflows — while garbage bytes and wrong-shape JSON sit in alice's
threads and decisions documents. Afterwards bob's events are all applied, alice's
documents are repaired (exactly what `cortex replay --agent alice` makes of them), every
poison event is a dead letter with its reason, and `cortex up` is still running."""

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
from cortex_testkit import CONSUMING, cortex, drained, stop_process

from schemas.docs import BootDoc, ChannelsDoc, CommitmentsDoc, DecisionsDoc, ThreadsDoc
from shared.kv import kv_read
from shared.names import DLQ_STREAM, EVENTS_STREAM

EVENT_DERIVED = {"cortex_threads": ThreadsDoc, "cortex_decisions": DecisionsDoc,
                 "cortex_commitments": CommitmentsDoc, "cortex_channels": ChannelsDoc}
CONVERSATION = ["Let's get back to the billing dashboard redesign", "We decided to use Postgres for billing.",
                "I'll fix the billing export tomorrow", "Regarding the deploy pipeline migration",
                "We agreed to ship the deploy pipeline on Friday."]


def good(agent: str, n: int, minute: int) -> tuple[str, bytes]:
    payload = {"id": f"{agent}-{n}", "agent": agent, "session": "s1", "ts": f"2026-02-17T10:{minute:02d}:00Z",
               "role": "user", "sender": "matrix:@albert:example.org", "channel": "webchat",
               "content": CONVERSATION[n % len(CONVERSATION)] + f" ({n})"}
    return f"cortex.msg.{agent}.received", msgspec.json.encode(payload)


def raw_message(agent: str, event_id: str, *, ts: str = "2026-02-17T10:30:00Z", extra: bytes = b"",
                content: bytes = b"hello", channel: bytes = b"webchat") -> tuple[str, bytes]:
    body = (b'{"id":"' + event_id.encode() + b'","agent":"' + agent.encode() + b'","session":"s1","ts":"'
            + ts.encode() + b'","role":"user","channel":"' + channel + b'","content":"' + content + b'"'
            + extra + b"}")
    return f"cortex.msg.{agent}.received", body


def poison(agent: str) -> list[tuple[str, bytes, str]]:
    """(subject, payload, the reason its dead letter must give)."""
    out = [(*raw_message(agent, f"{agent}-deep", extra=b',"extra":' + b"[" * 1000 + b"]" * 1000),
            "JSON nested too deeply"),
           (*raw_message(agent, f"{agent}-utf8", content=b"bad \xff\xfe utf8"), "invalid UTF-8"),
           (*raw_message(agent, f"{agent}-late", ts="9999-12-31T23:59:59-12:00"), "out of range"),
           (*raw_message(agent, f"{agent}-early", ts="0001-01-01T00:00:00+14:00"), "out of range")]
    out += [(*raw_message(agent, f"{agent}-wide-{i}", channel=b"c" * 60000), "channel too long") for i in range(20)]
    return out


@pytest.fixture
def cortex_up(nats_url: str, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, "CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
           "CORTEX_EMBEDDER": "hashing", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_RUNTIME_LEASE_TTL_S": "2",
           "CORTEX_LOG_LEVEL": "WARNING"}
    env.pop("ANTHROPIC_API_KEY", None)
    log = open(tmp_path / "up.log", "wb")  # noqa: SIM115 - the child writes it
    proc = subprocess.Popen([sys.executable, "-m", "workers", "up"], env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    log.close()
    yield proc
    stop_process(proc)


async def documents(js: Any, agent: str) -> dict[str, bytes | None]:
    out = {}
    for bucket in EVENT_DERIVED:
        raw, _ = await kv_read(await js.key_value(bucket), agent)
        out[bucket] = raw
    return out


def event_id_of(payload: bytes) -> str:
    return payload.split(b'"id":"')[1].split(b'"')[0].decode()


async def dead_letter_errors(js: Any) -> dict[str, set[str]]:
    """Cortex-Error of every dead letter, by the id of the event it carries."""
    info = await js.stream_info(DLQ_STREAM)
    out: dict[str, set[str]] = {}
    for seq in range(info.state.first_seq or 1, (info.state.last_seq or 0) + 1):
        msg = await js.get_msg(DLQ_STREAM, seq)
        out.setdefault(event_id_of(msg.data), set()).add(str((msg.headers or {}).get("Cortex-Error", "")))
    return out


@pytest.mark.timeout(300)
async def test_poison_events_and_corrupt_documents_never_take_cortex_down(
        cortex_up: subprocess.Popen[bytes], nats_url: str, tmp_path: Path, wait_for: Any) -> None:
    nc = await nats.connect(nats_url)
    js = nc.jetstream()

    async def consuming() -> bool:
        try:
            return all([await js.consumer_info(EVENTS_STREAM, name) for name in CONSUMING])
        except Exception:  # not provisioned yet
            return False

    await wait_for(consuming, within=60, interval=0.1)
    for n in range(5):  # alice's conversation, then her documents are damaged under the running workers
        await js.publish(*good("alice", n, n))
    await wait_for(lambda: drained(js), within=120)
    await (await js.key_value("cortex_threads")).put("alice", b"\x00\xff garbage, not a ThreadsDoc")
    await (await js.key_value("cortex_decisions")).put("alice", b'{"version":1}')

    # a session start: boot reads alice's threads and decisions as of it, through the damage
    start = {"id": "alice-start", "agent": "alice", "session": "s2", "ts": "2026-02-17T10:20:00Z"}
    await js.publish("cortex.session.alice.start", msgspec.json.encode(start))
    bad = poison("alice") + poison("mallory")
    for subject, payload, _ in bad:
        await js.publish(subject, payload)
    for n in range(30):
        await js.publish(*good("bob", n, n))
    for n in range(5, 8):
        await js.publish(*good("alice", n, 10 + n))
    await wait_for(lambda: drained(js), within=180)
    assert cortex_up.poll() is None, (tmp_path / "up.log").read_text()[-3000:]

    bob = await documents(js, "bob")
    for bucket in ("cortex_threads", "cortex_decisions", "cortex_channels"):
        doc = msgspec.json.decode(bob[bucket], type=EVENT_DERIVED[bucket])
        assert doc.integrity.events == 30, bucket  # every one of bob's events applied
    alice = await documents(js, "alice")
    for bucket, raw in alice.items():
        assert raw is not None, bucket
        doc = msgspec.json.decode(raw, type=EVENT_DERIVED[bucket])
        # repaired: all eight messages, also those before the damage (channels count the session start too)
        assert doc.integrity.events == (9 if bucket == "cortex_channels" else 8), bucket
    assert "document_unreadable" in (tmp_path / "up.log").read_text()
    boot, _ = await kv_read(await js.key_value("cortex_boot"), "alice")
    assert boot is not None and msgspec.json.decode(boot, type=BootDoc).trigger == "session_start"

    errors = await dead_letter_errors(js)
    for _, payload, reason in bad:
        event_id = event_id_of(payload)
        assert errors.get(event_id) and all(reason in e for e in errors[event_id]), (event_id, errors.get(event_id))

    # exactly what a replay makes of alice's documents (the stream is the truth)
    replayed = cortex("replay", "--worker", "threads,decisions,channels", "--agent", "alice", url=nats_url,
                      CORTEX_RUNTIME_LEASE_TTL_S="2", CORTEX_DATA_DIR=str(tmp_path / "replay"))
    assert replayed.returncode == 0, replayed.stderr
    assert await documents(js, "alice") == alice
    assert cortex_up.poll() is None
    await nc.close()
    cortex_up.send_signal(signal.SIGTERM)
    assert cortex_up.wait(40) == 0
