"""What a composed read asks the server (issue 39, eighteenth round): a read as of a stream cut
past most of a key's history, and a derivation over hundreds of events, each took a request a
revision or an event — the boot worker's change documents (read at the last cut) made 1.4 direct
gets of CORTEX_EVENTS and ~1 of the source buckets an event at 300 msg/s. Now the rest of a key's
history comes in one batched direct get, and a derivation's events 256 to a request; what is read
is unchanged (``test_asof.py``, ``test_asof_derive.py`` compare it byte for byte)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.docs import Integrity, ThreadsDoc
from shared.asof import DOC_HISTORY, DocReader
from shared.config import load_settings
from shared.derive import READ_BATCH
from shared.kv import kv_revisions_below
from shared.names import BUCKET_THREADS, EVENTS_STREAM
from shared.provision import ensure_bucket, provision
from shared.runtime import derivation
from workers.threads.worker import SPEC as THREADS

BUCKET = "test_asof_requests"


class Doc(msgspec.Struct, kw_only=True):
    note: str
    integrity: Integrity


def doc(last_seq: int) -> bytes:
    return msgspec.json.encode(Doc(note=f"at {last_seq}", integrity=Integrity(last_seq=last_seq)))


def count_requests(nc: Client, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every request the client sends, by API subject (``DIRECT.GET.<stream>``, …)."""
    asked: Counter[str] = Counter()
    publish = nc.publish

    async def counted(subject: str, payload: bytes = b"", reply: str = "", headers: Any = None) -> None:
        if subject.startswith("$JS.API."):
            asked[".".join(subject.split(".")[2:5])] += 1
        await publish(subject, payload, reply, headers)

    monkeypatch.setattr(nc, "publish", counted)
    return asked


async def test_a_read_far_back_in_a_keys_history_asks_three_times_not_once_a_revision(
    nc: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    js = nc.jetstream()
    await ensure_bucket(js, BUCKET, history=DOC_HISTORY)
    kv = await js.key_value(BUCKET)
    for seq in range(10, 10 + DOC_HISTORY - 1):  # 15 revisions, another key's between them
        await kv.put("a", doc(seq))
        await kv.put("b", doc(seq))
    asked = count_requests(nc, monkeypatch)
    reader = DocReader(js)

    assert (await reader.as_of(BUCKET, "a", Doc, 11))[0] == Doc(note="at 10", integrity=Integrity(last_seq=10))
    assert asked[f"DIRECT.GET.KV_{BUCKET}"] == 3  # the latest, one step back, the rest at once (14 before)

    asked.clear()
    assert await reader.as_of(BUCKET, "a", Doc, 10) == (None, True)  # nothing before the first write
    assert asked[f"DIRECT.GET.KV_{BUCKET}"] == 3

    asked.clear()
    newest = 10 + DOC_HISTORY - 2
    assert (await reader.as_of(BUCKET, "a", Doc, newest))[0] == Doc(note=f"at {newest - 1}",
                                                                    integrity=Integrity(last_seq=newest - 1))
    assert asked[f"DIRECT.GET.KV_{BUCKET}"] == 2  # one step back is enough: nothing more is read


async def test_the_revisions_below_are_every_one_the_bucket_holds_oldest_first_with_markers(js_kv: Any) -> None:
    js, kv = js_kv
    first = await kv.put("a", doc(1))
    await kv.put("b", doc(1))
    await kv.delete("a")
    third = await kv.put("a", doc(3))
    fourth = await kv.put("a", doc(4))
    below = await kv_revisions_below(js, BUCKET, "a", fourth)
    assert [(r.revision, r.value) for r in below] == [(first, doc(1)), (first + 2, None), (third, doc(3))]
    assert await kv_revisions_below(js, BUCKET, "a", first) == []
    assert await kv_revisions_below(js, BUCKET, "missing", fourth + 10) == []


@pytest.fixture
async def js_kv(nc: Client) -> tuple[JetStreamContext, Any]:
    js = nc.jetstream()
    await ensure_bucket(js, BUCKET, history=DOC_HISTORY)
    return js, await js.key_value(BUCKET)


async def test_a_derivation_reads_its_events_in_batches_not_a_request_each(
    nc: Client, make_chat_events: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    js = nc.jetstream()
    settings = load_settings({})
    await provision(js, settings, [], doc_buckets=[BUCKET_THREADS])
    for subject, data, msg_id in make_chat_events(600, 1, seed=5, triggers_every=40):
        await js.publish(subject, data, headers={"Nats-Msg-Id": msg_id})
    last = int((await js.stream_info(EVENTS_STREAM)).state.last_seq)
    assert last > 2 * READ_BATCH
    asked = count_requests(nc, monkeypatch)
    deriving = derivation(js, settings, [THREADS], "9.9.9")
    doc_, exact = await deriving.as_of(BUCKET_THREADS, "agent-0", last + 1, "threads@test")
    assert exact and isinstance(doc_, ThreadsDoc) and doc_.integrity.last_seq > last - 3
    # the agent's subjects (3 batches of 256 and the end), the shared session agent's and the
    # OpenClaw store's (one each): ~600 requests before
    assert asked[f"DIRECT.GET.{EVENTS_STREAM}"] <= 8, asked
