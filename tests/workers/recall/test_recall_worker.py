"""The recall worker's document writes against a real nats-server and the embedded store
(issue 15, items 4 and 5): a compare-and-set conflict on ``cortex_recall`` is rebased, not
fatal; an unreadable RecallDoc is deleted and rebuilt from the stream, not a crash. Recall
runs on the runtime's ``ProjectionHandler`` (issue 42): its cuts, reads and writes are the
handler's, its store work deferred to them."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client

from schemas.docs import Integrity, RecallDoc
from schemas.events import FeedbackEvent, MessageEvent
from shared.codec import Envelope
from shared.config import load_settings
from shared.errors import DocumentCorrupt, InvalidEvent, TransientError, WorkerCannotRun
from shared.health import Health
from shared.kv import kv_read
from shared.llm import LlmClient
from shared.names import BUCKET_RECALL
from shared.projection import ProjectionHandler
from shared.provision import provision
from shared.runtime import WorkerContext
from workers.recall import worker as recall_worker
from workers.recall.apply import StoreApplier
from workers.recall.embedders import HashingEmbedder
from workers.recall.store import StoreUnavailable
from workers.recall.worker import HOLDER, SYNC_AT_REST_S, SYNC_WHILE_BUSY_S, RecallProjection

TS = datetime(2026, 2, 17, 10, 30, tzinfo=UTC)


class Recall:
    """Makes recall handlers (the worker's projection, or a variant of it) on one context."""

    def __init__(self, ctx: WorkerContext) -> None:
        self.ctx = ctx
        self.handlers: list[ProjectionHandler] = []

    async def __call__(self, cls: type[RecallProjection] = RecallProjection) -> ProjectionHandler:
        store, embedder = await asyncio.to_thread(HOLDER.acquire, self.ctx)
        settings = self.ctx.settings
        projection = cls(self.ctx, StoreApplier(store, embedder, settings.recall, settings.languages),
                         LlmClient(settings, self.ctx.js))
        handler = ProjectionHandler(self.ctx.js, "recall", "recall@test", [projection], cut_on_triggers=True)
        self.handlers.append(handler)
        return handler


@pytest.fixture
def env() -> dict[str, str]:
    return {}


@pytest.fixture
async def recall(nc: Client, tmp_path: Path, env: dict[str, str]) -> Any:
    settings = load_settings({"CORTEX_DATA_DIR": str(tmp_path), **env})
    js = nc.jetstream()
    from workers.registry import doc_buckets  # every worker's document buckets

    await provision(js, settings, [], doc_buckets())
    ctx = WorkerContext(nc=nc, js=js, settings=settings, worker="recall", consumer="recall",
                        producer="recall@test", health=Health("recall"), extras={"embedder": HashingEmbedder(64)})
    make = Recall(ctx)
    yield make
    for handler in make.handlers:
        await handler.aclose()


def message(seq: int, content: str = "We decided to deploy with Kubernetes on Fridays.") -> Envelope:
    event = MessageEvent(id=f"e{seq}", agent="alice", session="s", ts=TS, role="user", content=content)
    return Envelope(seq=seq, subject="cortex.msg.alice.received", family="msg", kind="received", agent="alice",
                    event=event)


async def stored(nc: Client) -> RecallDoc | None:
    raw, _ = await kv_read(await nc.jetstream().key_value(BUCKET_RECALL), "alice")
    return msgspec.json.decode(raw, type=RecallDoc) if raw else None


async def test_a_write_conflict_on_the_recall_document_is_rebased_not_fatal(recall: Any, nc: Client) -> None:
    """nats-py reports a wrong last sequence as a 400 (``KeyWrongLastSequenceError``): the
    write used to let it out of commit, ending the consumer task and the process."""
    handler = await recall()
    await handler.apply(message(1))  # the handler has read the agent's document (none) …
    other = RecallDoc(agent="alice", updated=TS, key_memories=[], memories=0, hot=0, cold=0,
                      integrity=Integrity(last_seq=0, producer="another-writer"))
    await (await nc.jetstream().key_value(BUCKET_RECALL)).put("alice", msgspec.json.encode(other))  # … and it changes
    await handler.commit()
    doc = await stored(nc)
    assert doc is not None and doc.integrity.last_seq == 1 and doc.integrity.events == 1
    assert doc.integrity.producer == "recall@test"  # written over the other writer's, on top of it


async def test_an_unreadable_recall_document_is_deleted_for_a_rebuild(recall: Any, nc: Client) -> None:
    kv = await nc.jetstream().key_value(BUCKET_RECALL)
    await kv.put("alice", b"\x00 not a RecallDoc \xff")
    handler = await recall()
    with pytest.raises(DocumentCorrupt) as raised:
        await handler.apply(message(1))
    assert raised.value.agent == "alice" and raised.value.bucket == BUCKET_RECALL
    assert await stored(nc) is None  # deleted: the rewound loop derives it again
    handler.reset()
    await handler.apply(message(1))
    await handler.commit()
    doc = await stored(nc)
    assert doc is not None and doc.integrity.events == 1


@pytest.mark.parametrize("env", [{"ANTHROPIC_API_KEY": "sk-test", "CORTEX_RECALL_LLM_BATCH_SIZE": "20"}])
async def test_a_pending_llm_batch_of_huge_messages_stays_inside_one_value(recall: Any, nc: Client) -> None:
    """Nineteen 64 KiB messages waiting for the model (a batch of 20) made a RecallDoc of
    1.2 MB: past the server's max payload, a write that could never succeed."""
    handler = await recall()
    for seq in range(1, 20):
        await handler.apply(message(seq, "x" * 65536))
    await handler.commit()  # the batch is not full: no model call, the messages wait in the document
    raw, _ = await kv_read(await nc.jetstream().key_value(BUCKET_RECALL), "alice")
    doc = msgspec.json.decode(raw, type=RecallDoc)
    assert len(doc.llm_pending) == 19 and all(len(p[2]) == 48_000 // 20 for p in doc.llm_pending)
    assert len(raw) < 512 * 1024


async def test_a_recall_while_the_store_is_given_back_is_a_503_not_an_internal_error(recall: Any, nc: Client,
                                                                                      wait_for: Any) -> None:
    """A lost lease or a rebuild closes the store between two consume loops while the API
    keeps serving: a question then is "ask again" (503), not an AssertionError's 500, and
    once the loop has the store again it is answered (a CI run met the 500)."""
    from schemas.api import ErrorReply, RecallReply
    from workers.recall.worker import serve

    await recall()  # its consume loop has the store open
    HOLDER.set_ready()
    stop = asyncio.Event()
    serving = asyncio.create_task(serve(recall.ctx, stop))

    async def ask() -> Any:
        try:
            return await nc.request("cortex.api.recall.alice", b'{"query": "deploy"}', timeout=10)
        except Exception:  # not subscribed yet
            return None

    try:
        answered = await wait_for(ask, within=30)
        assert msgspec.json.decode(answered.data, type=RecallReply).memories == []
        HOLDER.release()  # the consume loop gives the store back
        closed = await ask()
        assert (closed.headers or {}).get("Nats-Service-Error-Code") == "503"
        error = msgspec.json.decode(closed.data, type=ErrorReply).error
        assert error.message == "temporarily unavailable: recall is reopening its memory store; ask again"
        await recall()  # the next loop acquires it again
        again = await ask()
        assert not (again.headers or {}).get("Nats-Service-Error-Code")
        msgspec.json.decode(again.data, type=RecallReply)
    finally:
        stop.set()
        await asyncio.wait_for(serving, timeout=30)


def feedback(seq: int, kind: str, target: str | None = None, value: Any = None) -> Envelope:
    event = FeedbackEvent(id=f"f{seq}", agent="alice", ts=TS, kind=kind, target=target, value=value)
    return Envelope(seq=seq, subject=f"cortex.feedback.alice.{kind}", family="feedback", kind=kind, agent="alice",
                    event=event)


class Unchecked(RecallProjection):
    """Takes every event as it is (none of accepts' checks): what a commit does with an id
    the store refuses, were one ever to get past them."""

    def accepts(self, env: Envelope) -> bool:
        return True


@pytest.mark.parametrize(("kind", "target", "value"), [
    ("memory_forget", "nonexistent", None), ("recall_access", None, ["not-a-uuid"]), ("memory_pin", "42", None)])
async def test_memory_feedback_the_store_cannot_hold_is_refused_at_apply_and_never_staged(
        recall: Any, kind: str, target: str | None, value: Any) -> None:
    """The decoder refuses these already; an Envelope made some other way gets the store's
    own check: bad input (a dead letter), not a StoreError at commit that ended the process."""
    handler = await recall()
    await handler.apply(message(1))
    with pytest.raises(InvalidEvent, match=rf"^{kind}: not a memory id"):
        await handler.apply(feedback(2, kind, target, value))
    await handler.commit()  # the rest of the batch is applied
    assert [m.content for m in HOLDER.current()[0].scroll("alice")]


async def test_a_well_formed_unknown_memory_id_changes_nothing_and_the_agent_forget_still_applies(
        recall: Any) -> None:
    handler = await recall()
    await handler.apply(message(1))
    await handler.commit()
    store = HOLDER.current()[0]
    before = sorted((m.id, m.pinned, m.access_count) for m in store.scroll("alice"))
    for seq, kind in enumerate(("recall_access", "memory_pin", "memory_forget"), start=2):
        assert await handler.apply(feedback(seq, kind, target=str(uuid.uuid4())))
    await handler.commit()
    assert before and sorted((m.id, m.pinned, m.access_count) for m in store.scroll("alice")) == before
    assert await handler.apply(feedback(5, "memory_forget", value="all"))  # `cortex forget alice`'s marker
    await handler.commit()
    assert not list(store.scroll("alice"))


async def test_a_store_error_at_commit_stops_recall_alone_rather_than_the_process(recall: Any) -> None:
    """Not transient and, past apply's checks, not an event's: the worker cannot run (recall
    stops with the reason, the other workers go on) — never a crash of the whole process."""
    handler = await recall(Unchecked)
    await handler.apply(message(1))
    await handler.apply(feedback(2, "memory_forget", target="nonexistent"))
    with pytest.raises(WorkerCannotRun, match=r"^recall stopped: memory store: not a memory id"):
        await handler.commit()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_the_shard_is_synced_on_a_cadence_whether_the_loop_is_busy_or_caught_up(
        recall: Any, nc: Client, monkeypatch: pytest.MonkeyPatch, wait_for: Any) -> None:
    """A commit with events waiting behind it (the loop's backlog) leaves its writes in the
    engine's log (a sync holds the loop for the disk) unless the oldest write not synced is
    ``SYNC_WHILE_BUSY_S`` old — counted from its preparation, so a burst after a rest is not
    synced at its first commit; a commit that catches up never syncs itself: a timer does
    (after the commit's acks), one for however many commits; closing syncs what is left.
    The documents are written at every commit."""
    clock = Clock()
    monkeypatch.setattr(recall_worker, "SYNC_AT_REST_S", 1.0)  # the timer's real sleep, short here

    class Clocked(RecallProjection):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args, clock=clock)

    handler = await recall(Clocked)
    backlog = [0]
    handler.follow_backlog(lambda: backlog[0])
    store, _ = HOLDER.current()
    syncs: list[int] = []
    monkeypatch.setattr(store, "flush", lambda real=store.flush: (syncs.append(1), real())[1])

    async def commit(seq: int, waiting: int) -> int:
        await handler.apply(message(seq, f"We decided to ship release {seq} on Friday."))
        backlog[0] = waiting
        await handler.commit()
        doc = await stored(nc)
        assert doc is not None and doc.integrity.last_seq == seq  # written whether synced or not
        return len(syncs)

    async def synced(count: int) -> bool:
        return len(syncs) == count

    clock.now += 10 * SYNC_WHILE_BUSY_S  # a long rest: the first write of the burst is fresh
    assert await commit(1, waiting=5) == 0
    clock.now += SYNC_WHILE_BUSY_S / 2
    assert await commit(2, waiting=5) == 0
    clock.now += SYNC_WHILE_BUSY_S / 2
    assert await commit(3, waiting=5) == 1  # busy, and commit 1's write SYNC_WHILE_BUSY_S old
    assert await commit(4, waiting=5) == 1  # a fresh write after the sync
    assert await commit(5, waiting=0) == 1  # caught up: left to the timer
    assert await commit(6, waiting=0) == 1  # one timer for both
    await wait_for(lambda: synced(2), within=10 * SYNC_AT_REST_S)
    clock.now += 10 * SYNC_WHILE_BUSY_S
    assert await commit(7, waiting=5) == 2  # however long since the last sync: its write is fresh
    clock.now += SYNC_WHILE_BUSY_S
    assert await commit(8, waiting=5) == 3
    assert await commit(9, waiting=5) == 3
    recall.handlers.remove(handler)
    await handler.aclose()
    assert len(syncs) == 4  # what the last commit left is synced on the way out


async def test_a_store_that_cannot_be_written_is_synced_at_the_commit_and_a_failed_timer_sync_at_the_next(
        recall: Any, monkeypatch: pytest.MonkeyPatch, wait_for: Any) -> None:
    """The store-fault contract under the cadence: a commit that would leave its sync to the
    timer syncs at once when the store says its files cannot be written, so the sync's failure
    holds that commit (raised: unacked, retried, not ready — tests/faults/test_store_unavailable
    runs this against a real unwritable directory); and after a sync that failed (a timer's or
    a commit's) the next commit syncs, however fresh its writes."""
    clock = Clock()
    monkeypatch.setattr(recall_worker, "SYNC_AT_REST_S", 1.0)  # the timer's real sleep, short here
    made: list[RecallProjection] = []

    class Clocked(RecallProjection):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args, clock=clock)
            made.append(self)

    handler = await recall(Clocked)
    handler.follow_backlog(lambda: 0)
    store, _ = HOLDER.current()
    syncs: list[int] = []
    failing = [False]

    def flush(real: Any = store.flush) -> None:
        syncs.append(1)
        if failing[0]:
            raise StoreUnavailable("embedded qdrant: flush: Permission denied (injected)")
        real()

    writable = [True]
    monkeypatch.setattr(store, "flush", flush)
    monkeypatch.setattr(store, "writable", lambda: writable[0])

    async def commit(seq: int) -> int:
        await handler.apply(message(seq, f"We decided to ship release {seq} on Friday."))
        await handler.commit()
        return len(syncs)

    async def timer_done() -> bool:
        return made[0]._later is None

    assert await commit(1) == 0  # caught up: left to the timer
    await wait_for(timer_done, within=10 * SYNC_AT_REST_S)
    assert len(syncs) == 1
    writable[0] = False
    assert await commit(2) == 2  # the store cannot be written: synced now
    assert made[0]._later is None  # nothing left for a timer
    writable[0], failing[0] = True, True
    assert await commit(3) == 2  # left to the timer, whose sync fails
    await wait_for(timer_done, within=10 * SYNC_AT_REST_S)
    assert len(syncs) == 3
    failing[0] = False
    assert await commit(4) == 4  # synced at the commit although its write is fresh
    assert await commit(5) == 4  # and left to the timer again after that success
    await wait_for(timer_done, within=10 * SYNC_AT_REST_S)
    assert len(syncs) == 5
    writable[0], failing[0] = False, True
    with pytest.raises(TransientError, match="Permission denied"):
        await commit(6)  # the failing sync holds the commit
    writable[0], failing[0] = True, False
    await handler.commit()  # the retry syncs at once (the last sync failed) and goes through
    assert len(syncs) == 7 and made[0]._later is None
    recall.handlers.remove(handler)
    await handler.aclose()


async def test_without_a_model_a_batch_and_its_summaries_are_one_worker_thread_call(
        recall: Any, nc: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipeline batch is a few events: each ``asyncio.to_thread`` is a fixed cost (the pool's
    hand-over, the loop woken), so without a model — nothing is written between the batch and its
    summaries — the batch is applied and its agents' summaries read in one call; the RecallDoc is
    what a summary read afresh says."""
    handler = await recall()
    called: list[str] = []
    to_thread = asyncio.to_thread

    async def counted(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        called.append(getattr(func, "__name__", repr(func)))
        return await to_thread(func, *args, **kwargs)

    monkeypatch.setattr(recall_worker.asyncio, "to_thread", counted)
    for seq, text in enumerate(["Always answer in German.", "We decided to ship on Friday.",
                                "Never deploy on Sundays."], start=1):
        await handler.apply(message(seq, text))
    await handler.commit()
    monkeypatch.undo()
    assert called.count("_summaries") == 0 and called.count("apply") == 1
    doc = await stored(nc)
    assert doc is not None and doc.integrity.last_seq == 3
    projection = handler._projections[0]
    assert isinstance(projection, RecallProjection)
    fresh = projection._summary("alice", doc.updated)
    assert (doc.key_memories, doc.hot, doc.cold) == (fresh.texts, fresh.hot, fresh.cold)
    assert doc.key_memories  # the rules are shown


async def test_a_batchs_change_counters_are_looked_up_once_and_count_what_changed(
        recall: Any, nc: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """At a live rate a batch is one to three events: its eight change counters are looked up
    once per process (``labels`` takes a lock each time: ~8 µs a batch on the event loop), a
    count of none is not added, and every change of the batch is counted as before."""
    handler = await recall()
    before = {change: counter._value.get() for change, counter in recall_worker._CHANGES}

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a change counter looked up at a batch")

    monkeypatch.setattr(recall_worker.RECALL_MEMORIES, "labels", refused)
    for seq, text in enumerate(["Always answer in German.", "We decided to ship on Friday."], start=1):
        await handler.apply(message(seq, text))
    await handler.commit()
    monkeypatch.undo()
    counted = {change: counter._value.get() - before[change] for change, counter in recall_worker._CHANGES}
    assert {change for change, _ in recall_worker._CHANGES} == {
        "added", "merged", "consolidated", "superseded", "skipped", "expired", "demoted", "updated"}
    assert all(counter is recall_worker.RECALL_MEMORIES.labels(change) for change, counter in recall_worker._CHANGES)
    assert counted["added"] > 0  # the two messages' memories
    assert all(n == 0 for change, n in counted.items() if change != "added")
    doc = await stored(nc)
    assert doc is not None and doc.integrity.last_seq == 2
