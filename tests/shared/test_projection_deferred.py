"""ProjectionHandler's deferred projections (what the recall worker runs on), against a real
nats-server: events prepared together when their documents are next written (a trigger's
cuts, a stream boundary, the commit), the events a document holds given again for what lives
outside it, a document an event ends, and the commit hook that comes before the writes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.docs import Integrity
from schemas.events import FeedbackEvent, MessageEvent, SessionEvent
from shared.asof import DOC_HISTORY, DocReader
from shared.codec import Envelope
from shared.errors import TransientError
from shared.kv import kv_read
from shared.projection import Deferred, Projection, ProjectionHandler
from shared.provision import ensure_bucket

BUCKET = "test_deferred"
T0 = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)


class Doc(msgspec.Struct, kw_only=True):
    seqs: list[int]
    outside: int  # what the "store" held when the event's inputs were made
    integrity: Integrity


class Tally(Projection[Doc, int]):
    """Keeps an outside store (a list of sequences, as recall keeps Qdrant) written in
    ``prepare_deferred``; the document lists its events and how big the store was."""

    bucket = BUCKET
    doc_type = Doc
    deferred = True

    def __init__(self, failures: int = 0) -> None:
        self.store: list[int] = []
        self.calls: list[list[tuple[int, bool]]] = []  # each preparation: (seq, applied) of its events
        self.log: list[str] = []
        self.failures = failures

    def accepts(self, env: Envelope) -> bool:
        return True

    def resets(self, env: Envelope) -> bool:
        return isinstance(env.event, FeedbackEvent)

    async def prepare(self, env: Envelope, doc: Doc | None) -> int:
        raise AssertionError("a deferred projection is prepared by prepare_deferred")

    async def prepare_deferred(self, events: Sequence[Deferred[Doc]]) -> list[int]:
        if self.failures:
            self.failures -= 1
            raise TransientError("the store is away")
        self.calls.append([(e.env.seq, e.applied) for e in events])
        self.store += [e.env.seq for e in events if e.env.seq not in self.store]
        self.log.append("prepare")
        return [len(self.store)] * len(events)

    def compose(self, doc: Doc | None, env: Envelope, inputs: int) -> Doc:
        return Doc(seqs=[*(doc.seqs if doc else []), env.seq], outside=inputs, integrity=Integrity())

    async def on_commit(self, more: bool) -> None:
        self.log.append("commit, more waiting" if more else "commit")


def message(seq: int, agent: str = "a") -> Envelope:
    event = MessageEvent(id=f"m{seq}", agent=agent, session="s", ts=T0, role="user", content="hello")
    return Envelope(seq=seq, subject=f"cortex.msg.{agent}.received", family="msg", kind="received", agent=agent,
                    event=event)


def start(seq: int, agent: str = "a") -> Envelope:
    event = SessionEvent(id=f"s{seq}", agent=agent, session="s", ts=T0)
    return Envelope(seq=seq, subject=f"cortex.session.{agent}.start", family="session", kind="start", agent=agent,
                    event=event)


def forget(seq: int, agent: str = "a") -> Envelope:
    event = FeedbackEvent(id=f"f{seq}", agent=agent, ts=T0, kind="memory_forget", value="all")
    return Envelope(seq=seq, subject=f"cortex.feedback.{agent}.memory_forget", family="feedback",
                    kind="memory_forget", agent=agent, event=event)


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    js = nc.jetstream()
    await ensure_bucket(js, BUCKET, history=DOC_HISTORY)
    return js


async def stored(js: JetStreamContext, agent: str = "a") -> Doc | None:
    raw, _ = await kv_read(await js.key_value(BUCKET), agent)
    return msgspec.json.decode(raw, type=Doc) if raw is not None else None


async def run(handler: ProjectionHandler, envs: Sequence[Envelope]) -> None:
    for env in envs:
        await handler.apply(env)
    await handler.commit()


async def test_deferred_events_are_prepared_together_at_each_cut_and_the_commit(js: JetStreamContext) -> None:
    """Agent a's events before its session start are prepared (and written) before it, the
    start alone after it, everything else at the commit — b's events before a's start too."""
    tally = Tally()
    handler = ProjectionHandler(js, "tally", "tally@test", [tally], cut_on_triggers=True)
    await run(handler, [message(1), message(2, "b"), message(3), start(4), message(5), message(6, "b")])
    assert tally.calls == [[(1, False), (3, False)], [(4, False)], [(2, False), (5, False), (6, False)]]
    reader = DocReader(js)
    assert (await reader.as_of(BUCKET, "a", Doc, 4))[0] == Doc(seqs=[1, 3], outside=2, integrity=Integrity(
        last_seq=3, last_event_ts=T0, events=2, producer="tally@test"))  # the state before the trigger
    assert (await stored(js, "a")).seqs == [1, 3, 4, 5]  # type: ignore[union-attr]
    assert (await stored(js, "b")).seqs == [2, 6]  # type: ignore[union-attr]


async def test_a_stream_boundary_prepares_and_writes_every_agents_events_before_it(js: JetStreamContext) -> None:
    tally = Tally()
    handler = ProjectionHandler(js, "tally", "tally@test", [tally], cut_every=4)
    await run(handler, [message(1), message(2, "b"), message(3), message(5, "b")])
    assert tally.calls == [[(1, False), (2, False), (3, False)], [(5, False)]]
    assert (await DocReader(js).as_of(BUCKET, "b", Doc, 4))[0].seqs == [2]  # type: ignore[union-attr]


async def test_events_the_document_holds_are_given_again_marked_applied_and_never_composed(
        js: JetStreamContext) -> None:
    """A redelivery after a crash: what lives outside the document (the store) may be behind
    it, so the projection sees those events again; the document counts each event once."""
    await run(ProjectionHandler(js, "tally", "tally@test", [Tally()]), [message(1), message(2)])
    again = Tally()
    handler = ProjectionHandler(js, "tally", "tally@test", [again])
    assert not await handler.apply(message(2))  # held: no document changes
    assert await handler.apply(message(3))
    await handler.commit()
    assert again.calls == [[(2, True), (3, False)]]
    doc = await stored(js)
    assert doc is not None and doc.seqs == [1, 2, 3] and doc.integrity.events == 3


async def test_an_event_that_ends_the_document_deletes_it_and_the_next_one_starts_anew(
        js: JetStreamContext) -> None:
    handler = ProjectionHandler(js, "tally", "tally@test", [Tally()])
    await run(handler, [message(1), message(2)])
    await run(handler, [forget(3)])
    raw, revision = await kv_read(await js.key_value(BUCKET), "a")
    assert raw is None and revision > 0  # a delete marker
    await run(handler, [message(4)])  # over the marker: the handler knows its revision, no conflict
    doc = await stored(js)
    assert doc is not None and doc.seqs == [4] and doc.integrity.events == 1
    await run(handler, [message(5), forget(6), message(7)])  # in one batch: counted from the forget on
    doc = await stored(js)
    assert doc is not None and doc.seqs == [7] and doc.integrity.events == 1


async def test_the_commit_hook_comes_after_the_preparations_and_before_the_writes(js: JetStreamContext) -> None:
    tally = Tally()
    handler = ProjectionHandler(js, "tally", "tally@test", [tally])
    await handler.apply(message(1))
    assert tally.log == [] and await stored(js) is None  # deferred: nothing prepared yet
    await handler.commit()
    assert tally.log == ["prepare", "commit"] and await stored(js) is not None


async def test_a_failed_preparation_leaves_its_events_for_the_retry(js: JetStreamContext) -> None:
    tally = Tally(failures=1)
    handler = ProjectionHandler(js, "tally", "tally@test", [tally])
    await handler.apply(message(1))
    await handler.apply(message(2))
    with pytest.raises(TransientError):
        await handler.commit()
    await handler.commit()  # the consume loop retries the commit in place
    assert tally.calls == [[(1, False), (2, False)]]
    assert (await stored(js)).seqs == [1, 2]  # type: ignore[union-attr]


async def test_closing_the_handler_closes_its_projections(js: JetStreamContext) -> None:
    closed: list[str] = []

    class Closing(Tally):
        async def aclose(self) -> None:
            closed.append("tally")

    await ProjectionHandler(js, "tally", "tally@test", [Closing()]).aclose()
    assert closed == ["tally"]


async def test_the_commit_hook_hears_whether_events_wait_behind_the_commit(js: JetStreamContext) -> None:
    """The loop gives the handler its backlog (``follow_backlog``), asked once the commit's
    events are prepared; a stream boundary's cut is always followed by the rest of its batch."""
    tally = Tally()
    backlog = [3]
    handler = ProjectionHandler(js, "tally", "tally@test", [tally], cut_every=4)
    handler.follow_backlog(lambda: backlog[0])
    await run(handler, [message(1)])
    backlog[0] = 0
    await run(handler, [message(2)])
    await run(handler, [message(3), message(5)])  # the boundary at 4 commits before 5
    assert [entry for entry in tally.log if entry != "prepare"] == [
        "commit, more waiting", "commit", "commit, more waiting", "commit"]
