"""DocReader.as_of against a real nats-server: the newest revision below a stream sequence,
walked back with direct gets; delete markers; keys that never existed then; history that
no longer reaches back."""

from __future__ import annotations

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.docs import Integrity
from shared.asof import DOC_HISTORY, DocReader
from shared.kv import kv_revision_below
from shared.provision import ensure_bucket

BUCKET = "test_asof"


class Doc(msgspec.Struct, kw_only=True):
    note: str
    integrity: Integrity


def doc(last_seq: int) -> bytes:
    return msgspec.json.encode(Doc(note=f"at {last_seq}", integrity=Integrity(last_seq=last_seq)))


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    js = nc.jetstream()
    await ensure_bucket(js, BUCKET, history=DOC_HISTORY)
    return js


async def as_of(js: JetStreamContext, key: str, before: int) -> tuple[str | None, bool]:
    found, complete = await DocReader(js).as_of(BUCKET, key, Doc, before)
    return (found.note if found else None), complete


async def test_the_newest_revision_below_the_sequence_is_read(js: JetStreamContext) -> None:
    kv = await js.key_value(BUCKET)
    for seq in (3, 7, 12, 20):
        await kv.put("a", doc(seq))
        await kv.put("b", doc(seq))  # another key's revisions interleave
    assert await as_of(js, "a", 100) == ("at 20", True)  # latest is old enough
    assert await as_of(js, "a", 20) == ("at 12", True)
    assert await as_of(js, "a", 13) == ("at 12", True)
    assert await as_of(js, "a", 8) == ("at 7", True)
    assert await as_of(js, "a", 4) == ("at 3", True)
    assert await as_of(js, "a", 3) == (None, True)  # nothing existed before the first write
    assert await as_of(js, "missing", 5) == (None, True)


async def test_a_delete_marker_means_nothing_existed_then(js: JetStreamContext) -> None:
    kv = await js.key_value(BUCKET)
    await kv.put("a", doc(5))
    await kv.delete("a")
    await kv.put("a", doc(30))
    assert await as_of(js, "a", 31) == ("at 30", True)
    assert await as_of(js, "a", 10) == (None, True)


async def test_history_that_no_longer_reaches_back_returns_the_latest_flagged(js: JetStreamContext) -> None:
    kv = await js.key_value(BUCKET)
    for seq in range(10, 10 + DOC_HISTORY + 4):
        await kv.put("a", doc(seq))
    newest = 10 + DOC_HISTORY + 3
    assert await as_of(js, "a", 12) == (f"at {newest}", False)  # revisions at 10-13 are gone
    assert await as_of(js, "a", newest - 1) == (f"at {newest - 2}", True)


async def test_revision_below_names_revisions_and_markers(js: JetStreamContext) -> None:
    kv = await js.key_value(BUCKET)
    first = await kv.put("a", doc(1))
    await kv.put("b", doc(1))
    second = await kv.put("a", doc(2))
    found = await kv_revision_below(js, BUCKET, "a", second)
    assert found is not None and found.revision == first and found.value == doc(1)
    assert await kv_revision_below(js, BUCKET, "a", first) is None
    assert await kv_revision_below(js, BUCKET, "a", 1) is None
    await kv.delete("a")
    after = await kv.put("b", doc(3))  # (a sequence beyond the stream's last one finds nothing)
    marker = await kv_revision_below(js, BUCKET, "a", after)
    assert marker is not None and marker.revision == after - 1 and marker.value is None
