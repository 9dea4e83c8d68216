"""DocReader.as_of against a real nats-server: the newest revision below a stream sequence,
walked back with direct gets; delete markers; keys that never existed then; history that
no longer reaches back."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext
from prometheus_client import REGISTRY

from schemas.docs import Integrity
from schemas.events import MessageEvent, SessionEvent
from shared.asof import DOC_HISTORY, DocReader
from shared.codec import Envelope
from shared.kv import kv_revision_below
from shared.projection import EventProjection, ProjectionHandler
from shared.provision import ensure_bucket

BUCKET = "test_asof"
T0 = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)


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
    counted = REGISTRY.get_sample_value("cortex_asof_history_short_total") or 0.0
    assert await as_of(js, "a", 12) == (f"at {newest}", False)  # revisions at 10-13 are gone
    assert await as_of(js, "a", newest - 1) == (f"at {newest - 2}", True)
    assert REGISTRY.get_sample_value("cortex_asof_history_short_total") == counted + 1  # for the dashboard


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


class _Notes(EventProjection[Doc]):
    """A projection whose document lists the sequences applied to it."""

    bucket = BUCKET
    doc_type = Doc

    def accepts(self, env: Envelope) -> bool:
        return True

    def apply(self, document: Doc | None, env: Envelope) -> Doc:
        before = document.note if document else ""
        return Doc(note=f"{before} {env.seq}".strip(), integrity=Integrity())


def _message(seq: int, agent: str) -> Envelope:
    event = MessageEvent(id=f"m{seq}", agent=agent, session="s", ts=T0, role="user", content="hello")
    return Envelope(seq=seq, subject=f"cortex.msg.{agent}.received", family="msg", kind="received", agent=agent,
                    event=event)


async def test_the_state_at_every_stream_cut_is_a_revision_whatever_the_batch(js: JetStreamContext) -> None:
    """With ``cut_every`` 4, a worker writes its pending documents before the first event at
    or past 4, 8, …: as of each multiple, every agent's document is exact — a batch of
    sequences 1…10 at once reads the same as one event per batch."""
    one_batch = ProjectionHandler(js, "notes", "notes@test", [_Notes()], cut_every=4)
    for seq in range(1, 11):
        await one_batch.apply(_message(seq, "a" if seq % 3 else "b"))  # b: 3, 6, 9
    await one_batch.commit()
    by_one = ProjectionHandler(js, "notes", "notes@test", [_Notes()], cut_every=4)
    for seq in range(1, 11):
        await by_one.apply(_message(seq, "c" if seq % 3 else "d"))  # the same stream shape
        await by_one.commit()
    reader = DocReader(js)
    for cut in (4, 8):
        for batched, single in (("a", "c"), ("b", "d")):
            got = (await reader.as_of(BUCKET, batched, Doc, cut))[0]
            want = (await reader.as_of(BUCKET, single, Doc, cut))[0]
            assert got is not None and want is not None and got.note == want.note, (cut, batched)
    assert (await reader.as_of(BUCKET, "a", Doc, 8))[0].note == "1 2 4 5 7"  # type: ignore[union-attr]
    assert (await reader.as_of(BUCKET, "b", Doc, 4))[0].note == "3"  # type: ignore[union-attr]


async def test_the_state_a_trigger_made_is_a_revision_whatever_the_batch(js: JetStreamContext) -> None:
    """With ``cut_on_triggers``, the documents are written just before a trigger and just
    after it: a document made for the trigger at S (the channel summaries) is read as of
    S + 1, and a message after the trigger in the same batch must not be written over it.
    (A replay, reading the stream in large batches, showed the state before the trigger.)"""
    handler = ProjectionHandler(js, "notes", "notes@test", [_Notes()], cut_on_triggers=True)
    start = SessionEvent(id="s2", agent="e", session="s", ts=T0)
    trigger = Envelope(seq=2, subject="cortex.session.e.start", family="session", kind="start", agent="e",
                       event=start)
    for env in (_message(1, "e"), trigger, _message(3, "e")):
        await handler.apply(env)
    await handler.commit()
    reader = DocReader(js)
    assert (await reader.as_of(BUCKET, "e", Doc, 2))[0].note == "1"  # type: ignore[union-attr]  # before it
    assert (await reader.as_of(BUCKET, "e", Doc, 3))[0].note == "1 2"  # type: ignore[union-attr]  # made for it
    assert (await reader.latest(BUCKET, "e", Doc)).note == "1 2 3"  # type: ignore[union-attr]
