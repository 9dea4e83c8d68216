"""`cortex forget AGENT` removes the agent everywhere and leaves other agents untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import nats
from cortex_testkit import ALL, cortex, demo_file, drained

from schemas.api import RecallReply
from shared.kv import kv_read
from shared.names import DLQ_STREAM, EVENTS_STREAM, agent_filter
from workers.registry import doc_buckets


async def test_forget_removes_events_documents_memories_and_dead_letters_of_one_agent_only(
    nats_url: str, tmp_path: Path, workers_procs: Any, wait_for: Any
) -> None:
    assert cortex("init", url=nats_url).returncode == 0
    for name in ALL:
        workers_procs.start(name, nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        for agent in ("gone", "kept"):
            assert cortex("publish", str(demo_file(tmp_path, agent)), url=nats_url).returncode == 0
            await js.publish(f"cortex.msg.{agent}.received", b"{broken json")  # a dead letter each
        await wait_for(lambda: drained(js), within=90)
        await wait_for(lambda: _recall_answers(nc, "gone"), within=30)

        result = cortex("forget", "gone", url=nats_url)
        assert result.returncode != 0 and "--yes" in result.stderr
        result = cortex("forget", "gone", "--yes", url=nats_url)
        assert result.returncode == 0, result.stderr
        assert "memories deleted by the recall worker" in result.stdout

        for subject in (agent_filter("cortex", "gone"), "cortex.notes.*.gone.*"):
            info = await js.stream_info(EVENTS_STREAM, subjects_filter=subject)
            assert not info.state.subjects, info.state.subjects
        kept_events = await js.stream_info(EVENTS_STREAM, subjects_filter=agent_filter("cortex", "kept"))
        assert sum(kept_events.state.subjects.values()) == 18  # 17 demo events + the broken one

        for bucket in doc_buckets():
            kv = await js.key_value(bucket)
            assert (await kv_read(kv, "gone"))[0] is None, bucket
        assert (await kv_read(await js.key_value("cortex_threads"), "kept"))[0] is not None

        dlq = await js.stream_info(DLQ_STREAM)
        originals = []
        for seq in range(dlq.state.first_seq, dlq.state.last_seq + 1):
            try:
                originals.append((await js.get_msg(DLQ_STREAM, seq)).headers["Cortex-Original-Subject"])
            except Exception:
                continue
        assert originals and all(".gone." not in o for o in originals)
        assert any(".kept." in o for o in originals)

        # a 503 says "ask again" (the API's contract: a worker whose lease lapsed on a loaded
        # machine is reopening its store); anything else is the answer, and must be empty
        replies: list[Any] = []

        async def answered() -> bool:
            reply = await nc.request("cortex.api.recall.gone", b'{"query":"auth migration"}', timeout=10)
            if (reply.headers or {}).get("Nats-Service-Error-Code") == "503":
                return False
            replies.append(reply)
            return True

        await wait_for(answered, within=60)
        assert msgspec.json.decode(replies[0].data, type=RecallReply).memories == [], \
            (replies[0].headers, replies[0].data)

        # Issue 44 item 9: the purge took the stream's first events (gone published first), and
        # every later full replay refused without --force as if history were lost. Only forgotten
        # events are missing: the replay runs, and adds no second copy of kept's dead letter.
        assert (await js.stream_info(EVENTS_STREAM)).state.first_seq > 1
        letters = (await js.stream_info(DLQ_STREAM)).state.messages
        replay = cortex("replay", "--worker", "threads", url=nats_url)
        assert replay.returncode == 0, replay.stderr
        await wait_for(lambda: drained(js), within=90)
        assert (await js.stream_info(DLQ_STREAM)).state.messages == letters
        assert await _recall_answers(nc, "kept")
    finally:
        await nc.close()


async def _recall_answers(nc: Any, agent: str) -> bool:
    try:
        reply = await nc.request(f"cortex.api.recall.{agent}", b'{"query":"auth migration"}', timeout=5)
        return bool(msgspec.json.decode(reply.data, type=RecallReply).memories)
    except Exception:
        return False
