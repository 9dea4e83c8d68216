"""``cortex forget AGENT`` (contract: CLI) removes an agent everywhere and nothing else.

What must be gone afterwards, for agent ``alice``:

* her events: every message of CORTEX_EVENTS on ``cortex.<family>.alice[.<kind>]``
  (a purge by subject, ``cortex.*.<slot>.alice.*``, every family);
* her documents: the key ``alice`` and every ``alice.<part>`` key in every document bucket
  (threads, decisions, commitments, snapshots, narratives, boot, knowledge, channels);
* her dead letters: every CORTEX_DLQ message whose ``Cortex-Original-Subject`` names her;
* her memories: the points of ``cortex_memories`` whose payload ``agent`` is ``alice``.

``bob`` keeps his events, his documents byte for byte (``bob.<part>`` keys too) and his dead
letters.
"""

from __future__ import annotations

import os
import subprocess
from typing import Any

import msgspec
import nats
import nats.js.errors
import worker_forkserver
from cortex_testkit import bucket_keys, drained

from shared.kv import kv_read
from shared.names import DLQ_STREAM, EVENTS_STREAM, agent_filter
from workers.registry import doc_buckets

WORKERS = ("channels", "threads", "decisions")


def cortex(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    return worker_forkserver.run_cortex(args, timeout=120, env={**os.environ, "CORTEX_NATS_URL": url})


def events_for(agent: str) -> list[tuple[str, bytes, str]]:
    out = []
    for i, text in enumerate(["Let's get back to the auth migration.", "We decided to use Redis for the cache.",
                              "I'll fix the build tomorrow, promise."]):
        body = {"id": f"{agent}-{i}", "agent": agent, "session": "s1", "ts": f"2026-02-17T10:0{i}:00Z",
                "role": "user", "content": text, "channel": "webchat"}
        out.append((f"cortex.msg.{agent}.received", msgspec.json.encode(body), body["id"]))
    start = {"id": f"{agent}-start", "agent": agent, "session": "s2", "ts": "2026-02-17T11:00:00Z"}
    out.append((f"cortex.session.{agent}.start", msgspec.json.encode(start), start["id"]))
    out.append((f"cortex.msg.{agent}.sent", b'{"id": "broken', f"{agent}-bad"))  # a dead letter
    return out


async def subject_count(js: Any, pattern: str) -> int:
    info = await js.stream_info(EVENTS_STREAM, subjects_filter=pattern)
    return sum((info.state.subjects or {}).values())


async def dead_letter_subjects(js: Any) -> list[str]:
    info = await js.stream_info(DLQ_STREAM)
    out = []
    for seq in range(int(info.state.first_seq or 1), int(info.state.last_seq or 0) + 1):
        try:
            out.append(str((await js.get_msg(DLQ_STREAM, seq)).headers["Cortex-Original-Subject"]))
        except nats.js.errors.NotFoundError:
            continue
    return out


async def docs_of(js: Any, agent: str) -> dict[str, bytes]:
    out = {}
    for bucket in doc_buckets():
        kv = await js.key_value(bucket)
        for key in await bucket_keys(kv):
            if key == agent or key.startswith(f"{agent}."):
                raw, _ = await kv_read(kv, key)
                if raw is not None:
                    out[f"{bucket}/{key}"] = raw
    return out


async def test_forget_removes_the_agent_everywhere_and_leaves_others_untouched(
    nats_url: str, workers_procs: Any, wait_for: Any
) -> None:
    assert cortex("init", url=nats_url).returncode == 0
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    for subject, data, msg_id in events_for("alice") + events_for("bob"):
        await js.publish(subject, data, headers={"Nats-Msg-Id": msg_id})
    for name in WORKERS:
        workers_procs.start(name, nats_url)

    await wait_for(lambda: drained(js, WORKERS), within=60)
    knowledge = await js.key_value("cortex_knowledge")  # a split store: agent.<part> keys
    for agent in ("alice", "bob"):
        await knowledge.put(f"{agent}.part-1", b'{"part": 1}')
    assert await subject_count(js, agent_filter("cortex", "alice")) == 5
    assert sum(".alice." in s for s in await dead_letter_subjects(js)) == len(WORKERS)
    bob_docs = await docs_of(js, "bob")
    assert "cortex_channels/bob" in bob_docs and "cortex_knowledge/bob.part-1" in bob_docs
    bob_events = await subject_count(js, agent_filter("cortex", "bob"))
    bob_letters = [s for s in await dead_letter_subjects(js) if ".bob." in s]

    result = cortex("forget", "alice", "--yes", url=nats_url)
    assert result.returncode == 0, result.stderr

    assert await subject_count(js, agent_filter("cortex", "alice")) == 0
    assert await subject_count(js, "cortex.notes.*.alice.*") == 0
    assert await docs_of(js, "alice") == {}
    assert not [s for s in await dead_letter_subjects(js) if ".alice." in s or s.endswith(".alice")]
    assert await subject_count(js, agent_filter("cortex", "bob")) == bob_events
    assert await docs_of(js, "bob") == bob_docs
    assert [s for s in await dead_letter_subjects(js) if ".bob." in s] == bob_letters
    await nc.close()
