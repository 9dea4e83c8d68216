"""The consume loop against a real nats-server: ack, retry, dead letters, order, watermarks."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
import pytest
from cortex_testkit import kv_history
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import StreamConfig
from nats.js.client import JetStreamContext

from schemas.docs import Integrity
from schemas.events import MessageEvent
from shared import metrics
from shared.codec import Envelope, Limits
from shared.config import load_settings
from shared.consume import Beats, ConsumeLoop, LoopConfig
from shared.errors import InvalidEvent, TransientError
from shared.health import Health
from shared.kv import kv_read
from shared.lease import Lease
from shared.names import BUCKET_CHECKPOINTS, DLQ_STREAM, EVENTS_STREAM, OPENCLAW_SESSION_AGENT, slot_of
from shared.projection import EventProjection, ProjectionHandler
from shared.provision import ConsumerSpec, ensure_bucket, provision

WaitFor = Callable[..., Awaitable[Any]]
BUCKET = "test_tally"


class TallyDoc(msgspec.Struct, kw_only=True):
    ids: list[str]
    integrity: Integrity = msgspec.field(default_factory=Integrity)


class Tally(EventProjection[TallyDoc]):
    """Order-sensitive test projection: the ids of an agent's messages, in applied order."""

    bucket = BUCKET
    doc_type = TallyDoc

    def accepts(self, env: Envelope) -> bool:
        return isinstance(env.event, MessageEvent)

    def apply(self, doc: TallyDoc | None, env: Envelope) -> TallyDoc:
        return TallyDoc(ids=[*(doc.ids if doc else []), env.event.id])


class Faulty(ProjectionHandler):
    """A real ProjectionHandler with switches: permanent failures by content, transient outages."""

    def __init__(self, js: JetStreamContext) -> None:
        super().__init__(js, "tally", "tally@test", [Tally()])
        self.outage = asyncio.Event()
        self.attempts: dict[str, int] = {}
        self.started: asyncio.Event = asyncio.Event()
        self.hold: str | None = None  # the event whose apply waits for ``gate`` (a slow handler)
        self.holding = asyncio.Event()
        self.gate = asyncio.Event()

    async def apply(self, env: Envelope) -> bool:
        self.attempts[env.event.id] = self.attempts.get(env.event.id, 0) + 1
        self.started.set()
        if env.event.id == self.hold:
            self.holding.set()
            await asyncio.wait_for(self.gate.wait(), timeout=30)
        if self.outage.is_set():
            raise TransientError("store unreachable (test outage)")
        if isinstance(env.event, MessageEvent) and env.event.content == "boom":
            raise ValueError("cannot handle boom")
        if isinstance(env.event, MessageEvent) and env.event.content == "invalid":
            raise InvalidEvent("names an id the store cannot hold")
        return await super().apply(env)


CONFIG = LoopConfig(batch_size=50, fetch_timeout_s=0.1, max_attempts=3, retry_base_s=0.01, retry_max_s=0.05,
                    drain_timeout_s=5.0, limits=Limits(max_content_bytes=4096))


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="tally", families=("msg",))])
    await ensure_bucket(js, BUCKET)
    return js


@contextlib.asynccontextmanager
async def running(js: JetStreamContext, handler: Faulty, health: Health | None = None) -> AsyncIterator[ConsumeLoop]:
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler, config=CONFIG,
                       health=health or Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        yield loop
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)


def msg(i: int | str, agent: str = "main", content: str | None = None) -> tuple[str, bytes]:
    minute = i % 60 if isinstance(i, int) else 0
    payload = {"id": f"e{i}", "agent": agent, "session": "s", "ts": f"2026-02-17T10:{minute:02d}:00Z",
               "role": "user", "content": content if content is not None else f"message {i}"}
    return f"cortex.msg.{agent}.received", msgspec.json.encode(payload)


async def publish(js: JetStreamContext, items: list[tuple[str, bytes]]) -> None:
    for subject, data in items:
        await js.publish(subject, data)


async def tally(js: JetStreamContext, agent: str = "main") -> list[str]:
    raw, _ = await kv_read(await js.key_value(BUCKET), agent)
    return msgspec.json.decode(raw, type=TallyDoc).ids if raw else []


async def dead_letters(js: JetStreamContext) -> list[tuple[str, dict[str, str], bytes]]:
    info = await js.stream_info(DLQ_STREAM)
    out = []
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        if info.state.messages == 0:
            break
        m = await js.get_msg(DLQ_STREAM, seq)
        out.append((m.subject, dict(m.headers or {}), m.data or b""))
    return out


async def checkpoint(js: JetStreamContext) -> int:
    raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), "tally")
    return int(raw) if raw else 0


async def test_handled_events_are_applied_in_order_acked_and_checkpointed(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    await publish(js, [msg(i) for i in range(1, 21)])
    async with running(js, Faulty(js)):
        await wait_for(lambda: checkpoint(js), within=10)
        await wait_for(lambda: _eq(checkpoint(js), 20))
    assert await tally(js) == [f"e{i}" for i in range(1, 21)]
    await wait_for(lambda: _drained(js), within=10)  # acked: applied by the server's consumer after the stop


async def _eq(coro: Awaitable[Any], value: Any) -> bool:
    return bool(await coro == value)


async def _second_of_three_dead_lettered(js: JetStreamContext, wait_for: WaitFor, content: str) -> tuple[Faulty, Any]:
    """Three events, the second with ``content`` the handler refuses: the first and third are
    applied, the second is the one dead letter (returned with the handler)."""
    await publish(js, [msg(1), msg(2, content=content), msg(3)])
    handler = Faulty(js)
    async with running(js, handler):
        await wait_for(lambda: _eq(checkpoint(js), 3))
    assert await tally(js) == ["e1", "e3"]
    [letter] = await dead_letters(js)
    return handler, letter


async def test_a_handler_failing_every_time_is_retried_then_dead_lettered_and_the_next_event_applies(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    handler, (subject, headers, data) = await _second_of_three_dead_lettered(js, wait_for, "boom")
    assert handler.attempts["e2"] == CONFIG.max_attempts
    assert subject == "cortex.dlq.tally"
    assert headers["Cortex-Error"] == "handler failed 3 times: ValueError: cannot handle boom"
    assert headers["Cortex-Original-Subject"] == "cortex.msg.main.received"
    assert headers["Cortex-Stream-Seq"] == "2"
    assert headers["Nats-Msg-Id"] == "dlq:tally:2"
    assert data == msg(2, content="boom")[1]  # republished unchanged


async def test_an_event_the_handler_finds_invalid_is_dead_lettered_at_once_and_the_next_event_applies(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    """Bad input only the handler can tell (``InvalidEvent``): no retry, the reason as it is."""
    handler, (subject, headers, data) = await _second_of_three_dead_lettered(js, wait_for, "invalid")
    assert handler.attempts["e2"] == 1
    assert (subject, headers["Cortex-Error"], headers["Cortex-Stream-Seq"]) == (
        "cortex.dlq.tally", "names an id the store cannot hold", "2")
    assert data == msg(2, content="invalid")[1]


async def test_a_transient_failure_is_retried_past_max_attempts_with_readiness_false_and_never_dead_lettered(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    handler = Faulty(js)
    handler.outage.set()
    health = Health("tally")
    await publish(js, [msg(1), msg(2)])
    async with running(js, handler, health):
        await wait_for(lambda: _true(handler.attempts.get("e1", 0) > CONFIG.max_attempts * 3))
        assert not health.ready
        assert "store unreachable" in health.reason
        handler.outage.clear()
        await wait_for(lambda: _eq(checkpoint(js), 2))
        assert health.ready
    assert await tally(js) == ["e1", "e2"]
    assert await dead_letters(js) == []


async def _true(value: bool) -> bool:
    return value


BAD_INPUTS: list[tuple[str, bytes, str]] = [
    ("cortex.msg.main.received", b"{not json", "malformed JSON"),
    ("cortex.msg.main.received", msgspec.json.encode({"id": "b2", "agent": "main", "session": "s",
                                                     "ts": "2026-02-17T10:00:00Z", "role": "user", "content": 5}),
     "Expected `str`"),
    ("cortex.msg.main.received", msgspec.json.encode({"id": "b3", "agent": "main", "session": "s",
                                                     "ts": "2026-02-17T10:00:00Z", "role": "user"}),
     "missing required field `content`"),
    ("cortex.msg.main.received", msgspec.json.encode({"id": "b4", "agent": "a.b", "session": "s",
                                                     "ts": "2026-02-17T10:00:00Z", "role": "user", "content": ""}),
     "agent"),
    ("cortex.msg.main.received", msgspec.json.encode({"id": "b5", "agent": "other", "session": "s",
                                                     "ts": "2026-02-17T10:00:00Z", "role": "user", "content": ""}),
     "agent mismatch"),
    ("cortex.msg.main.received", msg(6, content="x" * 5000)[1], "content too large: 5000 bytes > 4096"),
]


async def test_bad_input_is_dead_lettered_with_a_readable_reason_and_the_next_message_still_applies(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    items = [(s, d) for s, d, _ in BAD_INPUTS] + [msg("ok")]
    await publish(js, items)
    async with running(js, Faulty(js)):
        await wait_for(lambda: _eq(checkpoint(js), len(items)))
    letters = await dead_letters(js)
    assert len(letters) == len(BAD_INPUTS)
    for (_, headers, data), (_, sent, reason) in zip(letters, BAD_INPUTS, strict=True):
        assert reason in headers["Cortex-Error"]
        assert data == sent
    assert await tally(js) == ["eok"]


async def test_the_same_event_delivered_twice_changes_the_document_once(js: JetStreamContext) -> None:
    subject, data = msg(1)
    ack = await js.publish(subject, data)
    env = Envelope(seq=ack.seq, subject=subject, family="msg", kind="received", agent="main",
                   event=msgspec.json.decode(data, type=MessageEvent))
    first = Faulty(js)
    assert await first.apply(env)
    await first.commit()
    again = Faulty(js)  # a fresh instance: nothing cached, only the stored watermark
    assert not await again.apply(env)
    await again.commit()
    assert await tally(js) == ["e1"]
    raw, _ = await kv_read(await js.key_value(BUCKET), "main")
    assert msgspec.json.decode(raw, type=TallyDoc).integrity.events == 1


async def test_a_writer_that_lost_a_race_rebases_on_the_stored_document(js: JetStreamContext) -> None:
    """CAS conflict: the stored document is reloaded and the pending events re-applied on top."""
    subject, data = msg(1)
    a1 = await js.publish(subject, data)
    subject2, data2 = msg(2)
    a2 = await js.publish(subject2, data2)
    envs = [Envelope(seq=a.seq, subject=subject, family="msg", kind="received", agent="main",
                     event=msgspec.json.decode(d, type=MessageEvent)) for a, d in ((a1, data), (a2, data2))]
    stale = Faulty(js)
    await stale.apply(envs[0])  # loads the (absent) doc at revision 0
    fresh = Faulty(js)
    await fresh.apply(envs[0])
    await fresh.commit()  # someone else wrote e1 first
    await stale.apply(envs[1])
    await stale.commit()  # conflict → rebase: e1 already stored, e2 applied on top
    assert await tally(js) == ["e1", "e2"]


async def test_two_concurrent_read_modify_write_updaters_both_land(nc: Client, nats_url: str) -> None:
    import nats

    from shared.kv import kv_update

    js = nc.jetstream()
    await ensure_bucket(js, "test_counter")
    other = await nats.connect(nats_url)
    try:
        kvs = [await js.key_value("test_counter"), await other.jetstream().key_value("test_counter")]

        def inc(raw: bytes | None) -> bytes:
            return str(int(raw or b"0") + 1).encode()

        await asyncio.gather(*(kv_update(kvs[i % 2], "n", inc) for i in range(60)))
        raw, _ = await kv_read(kvs[0], "n")
        assert raw == b"60"
    finally:
        await other.close()


async def test_stop_during_a_slow_handler_never_loses_or_doubles_an_event(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    await publish(js, [msg(i) for i in range(1, 11)])
    handler = Faulty(js)
    handler.hold = "e3"  # the handler is busy with e3 when the stop comes
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler,
                       config=msgspec.structs.replace(CONFIG, drain_timeout_s=0.12), health=Health("tally"))
    task = asyncio.create_task(loop.run())
    await asyncio.wait_for(handler.holding.wait(), timeout=30)
    loop.stop()
    # e3 finishes only once the drain limit has passed: the loop must then stop at its batch's prefix
    await wait_for(lambda: _true(time.monotonic() > loop._drain_deadline))
    handler.gate.set()
    await asyncio.wait_for(task, timeout=10)
    partial = await tally(js)
    assert partial == [f"e{i}" for i in range(1, len(partial) + 1)]  # a prefix, in order
    assert partial == ["e1", "e2", "e3"]  # what was applied before the drain limit, and nothing after
    assert await checkpoint(js) == len(partial)
    handler2 = Faulty(js)
    async with running(js, handler2):
        await wait_for(lambda: _eq(checkpoint(js), 10))
    assert await tally(js) == [f"e{i}" for i in range(1, 11)]


async def test_restart_rewinds_to_the_checkpoint_so_unacked_messages_keep_their_order(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    """The naive design's trap: unacked messages redelivered after later ones. Rewinding avoids it."""
    await publish(js, [msg(i) for i in range(1, 6)])
    sub = await js.pull_subscribe_bind(durable="tally", stream=EVENTS_STREAM)
    stolen = await sub.fetch(3, timeout=2)  # a crashed instance fetched e1..e3 and never acked
    assert len(stolen) == 3
    await sub.unsubscribe()
    async with running(js, Faulty(js)):
        await wait_for(lambda: _eq(checkpoint(js), 5))
    assert await tally(js) == ["e1", "e2", "e3", "e4", "e5"]


async def test_a_deleted_document_is_written_again_over_its_delete_marker(js: JetStreamContext) -> None:
    """Replay and forget delete keys; a later write must succeed over the delete marker."""
    subject, data = msg(1)
    ack = await js.publish(subject, data)
    env = Envelope(seq=ack.seq, subject=subject, family="msg", kind="received", agent="main",
                   event=msgspec.json.decode(data, type=MessageEvent))
    first = Faulty(js)
    await first.apply(env)
    await first.commit()
    await (await js.key_value(BUCKET)).delete("main")
    again = Faulty(js)
    assert await again.apply(env)  # the watermark went with the document: applied anew
    await again.commit()
    assert await tally(js) == ["e1"]


async def test_readiness_comes_back_when_fetching_works_again(
    js: JetStreamContext, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fetch that fails (the connection reconnecting, the server restarting) makes the worker
    not ready; the next fetch that works makes it ready again — an idle one too, not only a
    batch that needed a retry (it stayed "fetch failed" for ever: a NATS restart fault test
    caught a worker consuming and never ready again)."""
    from nats.errors import ConnectionReconnectingError

    from shared.pull import PullFetcher

    real = PullFetcher.fetch
    failed: list[str] = []

    async def once_failing(self: PullFetcher, batch: int, wait_s: float, *linger: Any) -> Any:
        if not failed:
            failed.append("reason")
            raise ConnectionReconnectingError
        return await real(self, batch, wait_s, *linger)

    monkeypatch.setattr(PullFetcher, "fetch", once_failing)
    health = Health("tally")
    async with running(js, Faulty(js), health):
        await wait_for(lambda: _true(bool(failed) and health.ready))
        assert health.reason == "consuming"
        await publish(js, [msg(1)])
        await wait_for(lambda: _eq(checkpoint(js), 1))


async def test_a_delivery_lost_on_the_way_is_applied_in_stream_order(
    nc: Client, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Messages the server delivered that never reached the loop (their node killed with them
    in flight — a clean-clone CI run's cluster fault lost ten decisions this way) come back
    only after their ack wait, behind later ones: the loop sees the gap in the consumer's
    delivery numbers, applies nothing past it and rewinds, so every event is applied once,
    in stream order (before, the late ones were taken for redeliveries and never applied)."""
    from shared.pull import PullFetcher, stream_seq

    js = nc.jetstream()
    await provision(js, load_settings({"CORTEX_RUNTIME_ACK_WAIT_S": "1"}),
                    [ConsumerSpec(name="tally", families=("msg",))])
    await ensure_bucket(js, BUCKET)
    await publish(js, [msg(i) for i in range(20)])
    real = PullFetcher.fetch
    lost: list[int] = []

    async def losing_three(self: PullFetcher, batch: int, wait_s: float, *linger: Any) -> Any:
        msgs = await real(self, batch, wait_s, *linger)
        dropped = [m for m in msgs if stream_seq(m) in (6, 7, 8) and stream_seq(m) not in lost]  # once each
        lost.extend(stream_seq(m) for m in dropped)
        return [m for m in msgs if m not in dropped]  # delivered by the server, never seen: no ack, no nak

    monkeypatch.setattr(PullFetcher, "fetch", losing_three)
    retries = metrics.RETRIES.labels("tally", "resync")
    before = retries._value.get()
    async with running(js, Faulty(js)):
        await wait_for(lambda: _eq(checkpoint(js), 20), within=30)
    assert lost == [6, 7, 8]
    assert await tally(js) == [f"e{i}" for i in range(20)]
    assert retries._value.get() == before + 1


# --------------------------------------------------------------------------- fairness between agents


class Recorder(ProjectionHandler):
    """A real ProjectionHandler that records the order it is given events in, (agent, seq)."""

    def __init__(self, js: JetStreamContext, projection: Tally | None = None, cut_every: int = 0,
                 hold: int | None = None) -> None:
        super().__init__(js, "tally", "tally@test", [projection or Tally()], cut_every=cut_every)
        self.order: list[tuple[str, int]] = []
        self.hold = hold  # the sequence whose apply waits for ``gate`` (a worker killed there)
        self.holding = asyncio.Event()
        self.gate = asyncio.Event()

    async def apply(self, env: Envelope) -> bool:
        self.order.append((env.agent, env.seq))
        if env.seq == self.hold:
            self.holding.set()
            await asyncio.wait_for(self.gate.wait(), timeout=60)
        return await super().apply(env)


BACKLOG = 2000  # agent "noisy"'s events (stream sequences 1..2000); agent "quiet"'s one event is 2001


async def _backlog_then_one(js: JetStreamContext) -> None:
    await publish(js, [msg(i, agent="noisy") for i in range(1, BACKLOG + 1)] + [msg("q", agent="quiet")])


async def _revision(js: JetStreamContext, agent: str) -> int:
    _, revision = await kv_read(await js.key_value(BUCKET), agent)
    return revision


@pytest.mark.parametrize("read_ahead", [5000, 1])
async def test_a_quiet_agents_event_is_applied_before_another_agents_backlog_is_drained(
    js: JetStreamContext, wait_for: WaitFor, read_ahead: int
) -> None:
    """Agent noisy has 2 000 events backlogged, agent quiet publishes one after them: with the
    read-ahead, quiet's document is written while most of noisy's backlog still waits (its KV
    revision is older than the one holding noisy's last event), and noisy's events are still
    applied in stream order, each once, the checkpoint at the end. Read-ahead 1 (a batch) is
    in-order consumption: quiet waits for the whole backlog — what this test would see if the
    fairness broke."""
    await _backlog_then_one(js)
    handler = Recorder(js)
    config = msgspec.structs.replace(CONFIG, read_ahead=read_ahead)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler, config=config, health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _eq(checkpoint(js), BACKLOG + 1), within=60)
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    assert await tally(js, "noisy") == [f"e{i}" for i in range(1, BACKLOG + 1)]
    assert await tally(js, "quiet") == ["eq"]
    quiet_at = handler.order.index(("quiet", BACKLOG + 1))
    if read_ahead > 1:
        assert quiet_at < BACKLOG // 2  # within a few batches of being read, not behind the backlog
        assert await _revision(js, "quiet") < await _revision(js, "noisy")
    else:
        assert quiet_at == BACKLOG
        assert await _revision(js, "quiet") > await _revision(js, "noisy")
    await wait_for(lambda: _drained(js), within=10)  # acked: applied by the server's consumer after the stop


async def test_a_worker_killed_after_a_quiet_agent_went_ahead_applies_every_event_once(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    """The checkpoint stays below the oldest event still waiting for its turn, whatever was
    applied and acked past it: killed in the middle of noisy's backlog after quiet's event was
    applied, a worker restarts there, applies noisy's rest in order and skips quiet's event by
    its document's watermark (the document is not written again)."""
    await _backlog_then_one(js)
    handler = Recorder(js, hold=BACKLOG // 2)
    task = asyncio.create_task(ConsumeLoop(js, worker="tally", consumer="tally", handler=handler, config=CONFIG,
                                           health=Health("tally")).run())
    await asyncio.wait_for(handler.holding.wait(), timeout=60)
    assert await tally(js, "quiet") == ["eq"]  # applied, committed and acked ahead of noisy's rest
    assert await checkpoint(js) < BACKLOG // 2  # below noisy's oldest event not applied
    quiet_revision = await _revision(js, "quiet")
    task.cancel()  # killed mid-batch: nothing more is committed or acked
    with contextlib.suppress(asyncio.CancelledError):
        await task
    async with running(js, Faulty(js)):
        await wait_for(lambda: _eq(checkpoint(js), BACKLOG + 1), within=60)
    assert await tally(js, "noisy") == [f"e{i}" for i in range(1, BACKLOG + 1)]
    assert await tally(js, "quiet") == ["eq"]
    assert await _revision(js, "quiet") == quiet_revision


CUT_BUCKET = "test_tally_cuts"


class CutTally(Tally):
    bucket = CUT_BUCKET


async def test_boundary_cuts_are_written_for_an_agent_whose_backlog_is_applied_after_a_later_event(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    """The stream is cut every ``cut_every`` sequences (each agent's state there is its own
    revision, what composed documents read): quiet's event at 2001 applied early must not make
    the handler skip the cuts noisy's backlog crosses after it."""
    await ensure_bucket(js, CUT_BUCKET, history=64)
    await _backlog_then_one(js)
    handler = Recorder(js, CutTally(), cut_every=777)  # cuts at 777 and 1554: never at a batch's end
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler, config=CONFIG, health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _eq(checkpoint(js), BACKLOG + 1), within=60)
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    assert handler.order.index(("quiet", BACKLOG + 1)) < 777  # the case: quiet went ahead of the cuts
    held = {msgspec.json.decode(value, type=TallyDoc).integrity.last_seq
            for value in await kv_history(js, CUT_BUCKET, "noisy")}
    assert {776, 1553} <= held


class BatchRecorder(Recorder):
    """A Recorder that also notes where each batch ended (at its commit)."""

    def __init__(self, js: JetStreamContext, projection: Tally, cut_every: int) -> None:
        super().__init__(js, projection, cut_every=cut_every)
        self.batches: list[list[tuple[str, int]]] = []
        self._from = 0

    async def commit(self) -> None:
        await super().commit()
        if len(self.order) > self._from:
            self.batches.append(self.order[self._from:])
            self._from = len(self.order)


async def test_a_batch_writes_each_agents_document_once_however_the_stream_cuts_fall(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    """Issue 39: a batch across a stream cut wrote every agent's document at the cut and again
    at the commit. Each agent's part of a batch now lies between two cuts, so each agent's
    document is written once a batch — and still at every cut its events cross."""
    await ensure_bucket(js, CUT_BUCKET, history=64)
    agents = ["a", "b", "c"]
    await publish(js, [msg(i, agent=agents[i % 3]) for i in range(1, 301)])  # sequences 1..300
    handler = BatchRecorder(js, CutTally(), cut_every=40)  # batches of 50: most would cross a cut
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler, config=CONFIG, health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _eq(checkpoint(js), 300), within=60)
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    assert sorted(seq for _, seq in handler.order) == list(range(1, 301))
    for batch in handler.batches:
        for agent in agents:
            mine = [seq for who, seq in batch if who == agent]
            assert not mine or mine[0] // 40 == mine[-1] // 40, (agent, mine)  # between two cuts
    for agent in agents:
        revisions = [msgspec.json.decode(value, type=TallyDoc).integrity.last_seq
                     for value in await kv_history(js, CUT_BUCKET, agent)]
        assert len(revisions) == sum(1 for batch in handler.batches if any(who == agent for who, _ in batch))
        mine = [i for i in range(1, 301) if agents[i % 3] == agent]
        cut_states = {max(i for i in mine if i < cut) for cut in range(40, 301, 40)}
        assert cut_states <= set(revisions)  # the state at every cut is its own revision, as before


def test_a_heartbeat_marks_what_it_saw_held_at_the_last_beat_and_not_what_was_just_read() -> None:
    """A message read since the last beat is left for the next (read within a beat, it is marked
    within two: a third of the ack wait to spare); one still held from the last beat is marked, once
    however many lists hold it; one handled since is not. A beat longer than a third of the ack
    wait marks everything held."""
    a, b, c = (Msg(None, subject=f"s{i}", reply=f"r{i}") for i in range(3))  # type: ignore[arg-type]
    beats = Beats(30.0)  # a beat every 10 s
    assert beats.interval_s == 10.0
    assert beats.due([a, b]) == []  # read since the last beat (the first): not yet
    assert beats.due([a, a, c]) == [a]  # b handled; c just read
    assert beats.due([c]) == [c]
    assert beats.due([]) == []
    every = Beats(1.0)  # a beat every 0.5 s: more than a third of the ack wait
    assert every.due([a, b]) == [a, b]


async def test_a_batch_held_past_the_ack_wait_is_kept_in_progress_and_never_redelivered(
    nc: Client, wait_for: WaitFor
) -> None:
    """A handler busy on one event for longer than the ack wait (6 s, a beat every 2 s): the
    heartbeat, marking each held message from its second beat on, keeps the server from
    redelivering any of them; every event is applied once."""
    js = nc.jetstream()
    await provision(js, load_settings({"CORTEX_RUNTIME_ACK_WAIT_S": "6"}),
                    [ConsumerSpec(name="tally", families=("msg",))])
    await ensure_bucket(js, BUCKET)
    await publish(js, [msg(i) for i in range(1, 31)])
    handler = Recorder(js, hold=1)
    config = msgspec.structs.replace(CONFIG, ack_wait_s=6.0, batch_size=10)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler, config=config, health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await asyncio.wait_for(handler.holding.wait(), timeout=30)
        held_at = loop.beats
        await wait_for(lambda: _true(loop.beats >= held_at + 5), within=30)  # ≥ 8 s held: past the ack wait
        assert (await js.consumer_info(EVENTS_STREAM, "tally")).num_redelivered == 0
        handler.gate.set()
        await wait_for(lambda: _drained(js), within=30)
        await wait_for(lambda: _eq(checkpoint(js), 30), within=10)
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    assert (await js.consumer_info(EVENTS_STREAM, "tally")).num_redelivered == 0
    assert sorted(handler.order) == sorted(set(handler.order))
    assert await tally(js) == [f"e{i}" for i in range(1, 31)]


async def test_a_copy_of_a_held_message_the_server_redelivers_is_applied_once_and_drained_means_checkpointed(
    nc: Client, wait_for: WaitFor
) -> None:
    """The server redelivers messages the loop still holds when it lost track of them — after a
    broker restart that forgot deliveries and acks it had not written down (the fault suite's
    SIGKILL case), or an ack wait shorter than the loop's heartbeat, forced here: the server's
    ack wait is 1 s, the loop's heartbeat every 10 s. While quiet's event and noisy's first
    events are applied, the server sends a second copy of everything. The loop holds each
    message once: every event is applied once, and once the server shows nothing pending and
    nothing unacked, the checkpoint is at the stream's end (before, the second copies were held
    and applied again, and kept the checkpoint behind after the first copies' acks drained the
    consumer)."""
    js = nc.jetstream()
    await provision(js, load_settings({"CORTEX_RUNTIME_ACK_WAIT_S": "1"}),
                    [ConsumerSpec(name="tally", families=("msg",))])
    await ensure_bucket(js, BUCKET)
    backlog = 200
    await publish(js, [msg(i, agent="noisy") for i in range(1, backlog + 1)] + [msg("q", agent="quiet")])
    handler = Recorder(js, hold=1)  # the first batch (noisy 1-49 and quiet's 201) waits until every copy is sent
    # the first fetch's pull request stays open 8 s (its ack wait is 1 s): the server's redeliveries come in by it
    config = msgspec.structs.replace(CONFIG, fetch_timeout_s=8.0)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler, config=config, health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await asyncio.wait_for(handler.holding.wait(), timeout=30)

        async def all_redelivered() -> bool:
            return (await js.consumer_info(EVENTS_STREAM, "tally")).num_redelivered >= backlog + 1

        await wait_for(all_redelivered, within=30)
        handler.gate.set()

        async def drained() -> bool:
            info = await js.consumer_info(EVENTS_STREAM, "tally")
            return info.num_pending == 0 and info.num_ack_pending == 0

        await wait_for(drained, within=60)
        # the last batch's write follows its acks within CHECKPOINT_EVERY_S (held twice, it stayed behind for good)
        await wait_for(lambda: _eq(checkpoint(js), backlog + 1), within=10)
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    assert sorted(handler.order) == sorted(set(handler.order))  # no event applied twice
    assert await tally(js, "noisy") == [f"e{i}" for i in range(1, backlog + 1)]
    assert await tally(js, "quiet") == ["eq"]


# --------------------------------------------------------------------------- past the read-ahead (shared.scout)

PAST = 200  # a read-ahead far shorter than noisy's backlog: quiet's event lies past it
PAST_CONFIG = msgspec.structs.replace(CONFIG, read_ahead=PAST)
REPLAY_BUCKET = "test_tally_replay"


class ReplayTally(Tally):
    bucket = REPLAY_BUCKET


async def _drained(js: JetStreamContext, consumer: str = "tally") -> bool:
    info = await js.consumer_info(EVENTS_STREAM, consumer)
    return info.num_pending == 0 and info.num_ack_pending == 0


async def test_a_quiet_agents_event_past_the_read_ahead_is_applied_before_the_backlog_filling_it(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    """Noisy's 2 000 events fill a read-ahead of 200 ten times over; quiet's two events come
    after them. Without a look past the read-ahead quiet waits until all but the last 200 of
    noisy's events are applied (the read-ahead alone); with it, quiet's document is written
    while most of noisy's backlog has not been read yet, in quiet's own order, and every
    event is applied once, the checkpoint at the end, the look-ahead's consumer gone."""
    await publish(js, [msg(i, agent="noisy") for i in range(1, BACKLOG + 1)]
                  + [msg("q1", agent="quiet"), msg("q2", agent="quiet")])
    handler = Recorder(js)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler, config=PAST_CONFIG,
                       health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _eq(checkpoint(js), BACKLOG + 2), within=60)
        await wait_for(lambda: _drained(js), within=30)
        await wait_for(lambda: _eq(_consumer_names(js), ["tally"]), within=30)
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    assert await tally(js, "noisy") == [f"e{i}" for i in range(1, BACKLOG + 1)]
    assert await tally(js, "quiet") == ["eq1", "eq2"]
    assert len(handler.order) == len(set(handler.order)) == BACKLOG + 2
    quiet_at = handler.order.index(("quiet", BACKLOG + 1))
    assert quiet_at < BACKLOG // 2  # the read-ahead alone: after BACKLOG - PAST of noisy's
    assert handler.order.index(("quiet", BACKLOG + 2)) > quiet_at
    assert await _revision(js, "quiet") < await _revision(js, "noisy")


async def _consumer_names(js: JetStreamContext) -> list[str]:
    return sorted(info.name for info in await js.consumers_info(EVENTS_STREAM))


@contextlib.asynccontextmanager
async def _held_past_the_read_ahead(js: JetStreamContext, noisy: str) -> AsyncIterator[Recorder]:
    """``noisy``'s backlog published and a tally loop holding it at a quarter, the look past the
    read-ahead open (without the agents the test publishes next); on leaving, the gate opens
    and the loop stops."""
    await publish(js, [msg(i, agent=noisy) for i in range(1, BACKLOG + 1)])
    handler = Recorder(js, hold=BACKLOG // 4)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler, config=PAST_CONFIG,
                       health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await asyncio.wait_for(handler.holding.wait(), timeout=60)
        assert "tally-scout" in await _consumer_names(js)
        yield handler
    finally:
        handler.gate.set()
        loop.stop()
        await asyncio.wait_for(task, timeout=15)


async def test_a_quiet_agents_event_applied_past_the_read_ahead_is_proven_applied_only_when_all_before_it_is(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    """Quiet's event is applied past the read-ahead while noisy's backlog is stuck (its event
    1 000 is slow): the checkpoint, the consumer's ack floor and its pending counts — what the
    composed readers take as proof — stay below noisy's oldest event not applied. Then the
    backlog drains: quiet's event, delivered by the consumer long after it was applied, is
    acked and not applied again, and the consumer is drained with the checkpoint at the end."""
    await _backlog_then_one(js)
    handler = Recorder(js, hold=BACKLOG // 2)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler, config=PAST_CONFIG,
                       health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await asyncio.wait_for(handler.holding.wait(), timeout=60)
        await wait_for(lambda: _eq(tally(js, "quiet"), ["eq"]), within=30)
        quiet_revision = await _revision(js, "quiet")
        info = await js.consumer_info(EVENTS_STREAM, "tally")
        assert await checkpoint(js) < BACKLOG // 2
        assert info.ack_floor.stream_seq < BACKLOG // 2
        assert info.delivered.stream_seq < BACKLOG  # the consumer has not delivered quiet's event yet
        assert not await _drained(js)
        handler.gate.set()
        await wait_for(lambda: _drained(js), within=60)
        await wait_for(lambda: _eq(checkpoint(js), BACKLOG + 1), within=10)  # follows the acks (CHECKPOINT_EVERY_S)
    finally:
        handler.gate.set()
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    assert handler.order.count(("quiet", BACKLOG + 1)) == 1
    assert len(handler.order) == len(set(handler.order)) == BACKLOG + 1
    assert await tally(js, "noisy") == [f"e{i}" for i in range(1, BACKLOG + 1)]
    assert await tally(js, "quiet") == ["eq"]
    assert await _revision(js, "quiet") == quiet_revision


async def test_a_worker_killed_after_a_quiet_agent_went_past_the_read_ahead_matches_a_replay(
    nc: Client, wait_for: WaitFor
) -> None:
    """Killed in the middle of noisy's backlog after quiet's event was applied past the
    read-ahead, a worker restarts at the checkpoint (below noisy's oldest event not applied),
    applies noisy's rest once, in order, and skips quiet's event by its watermark; the
    documents are then byte for byte those of a replay in stream order."""
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="tally", families=("msg",)),
                                            ConsumerSpec(name="replay", families=("msg",))])
    await ensure_bucket(js, BUCKET)
    await ensure_bucket(js, REPLAY_BUCKET)
    await _backlog_then_one(js)
    handler = Recorder(js, hold=BACKLOG // 2)
    task = asyncio.create_task(ConsumeLoop(js, worker="tally", consumer="tally", handler=handler,
                                           config=PAST_CONFIG, health=Health("tally")).run())
    await asyncio.wait_for(handler.holding.wait(), timeout=60)
    await wait_for(lambda: _eq(tally(js, "quiet"), ["eq"]), within=30)
    quiet_revision = await _revision(js, "quiet")
    task.cancel()  # killed mid-batch: nothing more is committed or acked
    with contextlib.suppress(asyncio.CancelledError):
        await task
    # Read after the kill: the checkpoint is written deferred (at most every 20 ms), so one
    # read before it could be overtaken by a write still due; the restart rewinds to this one.
    killed_at = await checkpoint(js)
    assert killed_at < BACKLOG // 2
    restarted = Recorder(js)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=restarted, config=PAST_CONFIG,
                       health=Health("tally"))
    replay = ConsumeLoop(js, worker="replay", consumer="replay", handler=Recorder(js, ReplayTally()),
                         config=msgspec.structs.replace(CONFIG, read_ahead=1), health=Health("replay"))
    tasks = [asyncio.create_task(loop.run()), asyncio.create_task(replay.run())]
    try:
        await wait_for(lambda: _eq(checkpoint(js), BACKLOG + 1), within=60)
        await wait_for(lambda: _drained(js, "replay"), within=60)
    finally:
        loop.stop()
        replay.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=15)
    assert await tally(js, "noisy") == [f"e{i}" for i in range(1, BACKLOG + 1)]
    assert await tally(js, "quiet") == ["eq"]
    assert await _revision(js, "quiet") == quiet_revision
    assert restarted.order[0] == ("noisy", killed_at + 1)  # it went back to the checkpoint
    assert ("quiet", BACKLOG + 1) in restarted.order  # delivered again, skipped by its watermark
    kv, replayed = await js.key_value(BUCKET), await js.key_value(REPLAY_BUCKET)
    for agent in ("noisy", "quiet"):
        assert (await kv_read(kv, agent))[0] == (await kv_read(replayed, agent))[0]


def _store_message(i: int, agent: str) -> tuple[str, bytes]:
    """An OpenClaw 2026.9 store event: ``agent``'s message, filed under the session token ``agent``."""
    data = {"id": f"o{i}", "ts": 1771318803000 + i, "agent": OPENCLAW_SESSION_AGENT, "session": f"agent:{agent}:main",
            "type": "msg.in", "payload": {"from": "albert", "content": f"message {i}"}}
    return f"openclaw.events.{OPENCLAW_SESSION_AGENT}.msg_in", msgspec.json.encode(data)


async def test_an_agents_message_under_the_session_token_is_not_overtaken_by_its_next_event_past_the_read_ahead(
    nc: Client, wait_for: WaitFor
) -> None:
    """The noisy agent shares the session token's slot (38), and the stream holds no event under
    the token yet when the look past the read-ahead opens: its filter leaves that slot out. Then
    quiet's message arrives under the session token (OpenClaw 2026.9), and quiet's next event
    under its own id after it. The look-ahead must not apply quiet's second event before its
    first, which the consumer delivers only behind noisy's backlog: the first would be skipped
    by quiet's watermark, lost."""
    noisy = "noisy7"
    assert slot_of(noisy) == slot_of(OPENCLAW_SESSION_AGENT) != slot_of("quiet")
    js = nc.jetstream()
    await js.add_stream(StreamConfig(name="openclaw-events", subjects=["openclaw.events.>"]))
    await provision(js, load_settings({"CORTEX_OPENCLAW_STREAM": "openclaw-events"}),
                    [ConsumerSpec(name="tally", families=("msg",))])
    await ensure_bucket(js, BUCKET)
    async with _held_past_the_read_ahead(js, noisy) as handler:
        await publish(js, [_store_message(1, "quiet")])

        await wait_for(lambda: _stored(js, BACKLOG + 1), within=30)
        await publish(js, [msg("q", agent="quiet")])
        await wait_for(lambda: _stored(js, BACKLOG + 2), within=30)
        handler.gate.set()
        await wait_for(lambda: _eq(checkpoint(js), BACKLOG + 2), within=60)
        await wait_for(lambda: _drained(js), within=30)
    assert await tally(js, "quiet") == ["o1", "eq"]
    assert await tally(js, noisy) == [f"e{i}" for i in range(1, BACKLOG + 1)]


async def test_an_agent_new_to_a_noisy_agents_slot_is_served_past_the_read_ahead(
    js: JetStreamContext, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look past the read-ahead names, in the noisy agent's slot, only the agents the stream
    held there when it opened. A new agent whose first event arrives in that slot afterwards is
    served all the same — a new look-ahead names it — while noisy's backlog is still held at
    its event 1 500; its event applied once, and noisy's backlog once, in order."""
    monkeypatch.setattr("shared.consume.SCOUT_RECHECK_S", 0.0)  # asked at every turn: no waiting on a clock
    newcomer = next(f"new{i}" for i in range(10_000) if slot_of(f"new{i}") == slot_of("noisy"))
    async with _held_past_the_read_ahead(js, "noisy") as handler:
        await publish(js, [msg("new", agent=newcomer)])
        first_gate, handler.gate, handler.holding = handler.gate, asyncio.Event(), asyncio.Event()
        handler.hold = BACKLOG * 3 // 4
        first_gate.set()
        await wait_for(lambda: _eq(tally(js, newcomer), ["enew"]), within=30)
        assert await checkpoint(js) < BACKLOG * 3 // 4
        handler.gate.set()
        await wait_for(lambda: _eq(checkpoint(js), BACKLOG + 1), within=60)
        await wait_for(lambda: _drained(js), within=30)
    assert await tally(js, newcomer) == ["enew"]
    assert await tally(js, "noisy") == [f"e{i}" for i in range(1, BACKLOG + 1)]
    assert len(handler.order) == len(set(handler.order)) == BACKLOG + 1


# the OpenClaw store's own events (each agent under its own id): the scout decides them in their agent's order

STORE_SPAN = 1000  # the duplicate window: shorter than noisy's burst, so what it decides depends on the span
STORE_CONFIG = msgspec.structs.replace(PAST_CONFIG, duplicate_window=STORE_SPAN)
STORE_BURST = 2600  # noisy's store events: quiet's, after them, lie more than a span past noisy's first


OWN_ID, SESSION_TOKEN = "own id", "session token"


def _store_event(event_id: str, agent: str, filed: str = OWN_ID) -> tuple[str, bytes]:
    """An OpenClaw store event of ``agent``: filed under its own id (the store's 0.2 plugin), or
    under the session token with the agent in the session key (OpenClaw 2026.9: every agent's)."""
    store_agent, session = (agent, f"{agent}:webchat:albert") if filed == OWN_ID else (
        OPENCLAW_SESSION_AGENT, f"agent:{agent}:main")
    data = {"id": event_id, "ts": 1771318803000, "agent": store_agent, "session": session,
            "type": "msg.in", "payload": {"from": "albert", "content": f"message {event_id}"}}
    return f"openclaw.events.{store_agent}.msg_in", msgspec.json.encode(data)


async def _store_burst_then_quiet(js: JetStreamContext, filed: str = OWN_ID) -> None:
    """Quiet's o1 (sequence 1); noisy's burst with a copy of its n100 after n900 (a duplicate, 801
    apart: n100 is read before the look past the read-ahead opens, its copy after); then quiet's o2,
    a copy of o2 (a duplicate) and a copy of o1 (more than a span after o1: applied again). In
    stream order the documents are noisy n1..n2600 once each, quiet o1 o2 o1."""
    burst = [_store_event(f"n{i}", "noisy", filed) for i in range(1, STORE_BURST + 1)]
    burst.insert(900, _store_event("n100", "noisy", filed))
    await publish(js, [_store_event("o1", "quiet", filed), *burst, _store_event("o2", "quiet", filed),
                       _store_event("o2", "quiet", filed), _store_event("o1", "quiet", filed)])


async def _store_streams(js: JetStreamContext, consumers: tuple[str, ...] = ("tally",)) -> None:
    await js.add_stream(StreamConfig(name="openclaw-events", subjects=["openclaw.events.>"]))
    await provision(js, load_settings({"CORTEX_OPENCLAW_STREAM": "openclaw-events"}),
                    [ConsumerSpec(name=name, families=("msg",)) for name in consumers])
    for bucket in (BUCKET, REPLAY_BUCKET):
        await ensure_bucket(js, bucket)


async def _stored(js: JetStreamContext, n: int) -> bool:
    return (await js.stream_info(EVENTS_STREAM)).state.messages == n


QUIET_STORE = ["o1", "o2", "o1"]
NOISY_STORE = [f"n{i}" for i in range(1, STORE_BURST + 1)]


@pytest.mark.parametrize("filed", [OWN_ID, SESSION_TOKEN])
async def test_a_quiet_agents_store_event_past_the_read_ahead_is_applied_before_the_burst_deciding_copies_in_order(
    nc: Client, wait_for: WaitFor, filed: str
) -> None:
    """Both agents on the OpenClaw store (the gateway's plugin), filed under their own ids or —
    OpenClaw 2026.9 — both under the session token, where the server cannot leave noisy's burst
    out. Quiet's o2 lies past a read-ahead noisy's burst holds 13 times over: the look past the
    read-ahead applies it while most of the burst is still to come, once, in quiet's order —
    and the duplicate window decides as the stream's order does: o2's copy is dropped, o1's copy
    (more than a span after o1) applied, and noisy's own copy of n100, decided after quiet's
    events were, still dropped."""
    js = nc.jetstream()
    await _store_streams(js)
    await _store_burst_then_quiet(js, filed)
    total = STORE_BURST + 5
    await wait_for(lambda: _stored(js, total), within=30)
    handler = Recorder(js)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler, config=STORE_CONFIG,
                       health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _eq(checkpoint(js), total), within=60)
        await wait_for(lambda: _drained(js), within=30)
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    assert await tally(js, "quiet") == QUIET_STORE
    assert await tally(js, "noisy") == NOISY_STORE
    assert len(handler.order) == len(set(handler.order)) == STORE_BURST + 3  # the two copies never applied
    o2_at = handler.order.index(("quiet", total - 2))
    assert o2_at < STORE_BURST // 2  # in stream order: after all of noisy's; the read-ahead alone: all but 200
    assert handler.order.index(("quiet", total)) > o2_at


@pytest.mark.parametrize("filed", [OWN_ID, SESSION_TOKEN])
async def test_a_worker_killed_after_a_quiet_agents_store_events_went_past_the_read_ahead_matches_a_replay(
    nc: Client, wait_for: WaitFor, filed: str
) -> None:
    """Killed in the middle of noisy's store burst after quiet's store events were applied past
    the read-ahead: restarted, the worker rewinds to the checkpoint (the window's span further),
    and its documents are byte for byte those of a replay in stream order."""
    js = nc.jetstream()
    await _store_streams(js, ("tally", "replay"))
    await _store_burst_then_quiet(js, filed)
    total = STORE_BURST + 5
    await wait_for(lambda: _stored(js, total), within=30)
    handler = Recorder(js, hold=STORE_BURST // 2)
    task = asyncio.create_task(ConsumeLoop(js, worker="tally", consumer="tally", handler=handler,
                                           config=STORE_CONFIG, health=Health("tally")).run())
    await asyncio.wait_for(handler.holding.wait(), timeout=60)
    await wait_for(lambda: _eq(tally(js, "quiet"), QUIET_STORE), within=30)
    assert await checkpoint(js) < STORE_BURST // 2
    task.cancel()  # killed mid-batch: nothing more is committed or acked
    with contextlib.suppress(asyncio.CancelledError):
        await task
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=Recorder(js), config=STORE_CONFIG,
                       health=Health("tally"))
    replay = ConsumeLoop(js, worker="replay", consumer="replay", handler=Recorder(js, ReplayTally()),
                         config=msgspec.structs.replace(STORE_CONFIG, read_ahead=1), health=Health("replay"))
    tasks = [asyncio.create_task(loop.run()), asyncio.create_task(replay.run())]
    try:
        await wait_for(lambda: _eq(checkpoint(js), total), within=60)
        await wait_for(lambda: _drained(js, "replay"), within=60)
    finally:
        loop.stop()
        replay.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=15)
    kv, replayed = await js.key_value(BUCKET), await js.key_value(REPLAY_BUCKET)
    assert await tally(js, "quiet") == QUIET_STORE
    assert await tally(js, "noisy") == NOISY_STORE
    for agent in ("noisy", "quiet"):
        assert (await kv_read(kv, agent))[0] == (await kv_read(replayed, agent))[0]


async def test_batches_in_quick_succession_write_one_checkpoint_between_them_and_the_last_follows(
    js: JetStreamContext, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every worker wrote its checkpoint after every batch, and every composed worker watching
    it received each one. Within CHECKPOINT_EVERY_S of a write, a batch's checkpoint is left to
    one write when that time is up, with every batch applied by then: 30 batches of one event
    (a backlog, batch size 1) write the first batch's and then one more — the last — with no
    event after them; a stop writes a deferred one at once."""
    monkeypatch.setattr("shared.consume.CHECKPOINT_EVERY_S", 2.0)
    monkeypatch.setattr("shared.consume.CHECKPOINT_IDLE_S", 2.0)
    await publish(js, [msg(i) for i in range(1, 31)])
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=Faulty(js),
                       config=msgspec.structs.replace(CONFIG, batch_size=1), health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _eq(checkpoint(js), 30), within=20)
        assert await tally(js) == [f"e{i}" for i in range(1, 31)]
        assert await _checkpoint_writes(js) == 2
        monkeypatch.setattr("shared.consume.CHECKPOINT_EVERY_S", 600.0)  # deferred for longer than the test
        monkeypatch.setattr("shared.consume.CHECKPOINT_IDLE_S", 600.0)
        await publish(js, [msg(i) for i in range(31, 34)])
        await wait_for(lambda: _eq(tally(js), [f"e{i}" for i in range(1, 34)]))
        assert await checkpoint(js) == 30
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    assert await checkpoint(js) == 33 and await _checkpoint_writes(js) == 3


async def test_a_worker_killed_with_its_acks_ahead_of_its_checkpoint_applies_nothing_twice_and_skips_nothing(
    js: JetStreamContext, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Acks do not wait for the checkpoint: killed after every event of noisy's backlog and of
    quiet's (applied past the read-ahead) is applied and acked, with the checkpoint's write still
    deferred, a worker restarts from the older checkpoint the bucket holds, far below the ack
    floor. The rewind delivers everything after it again: each document's watermark skips it
    (no revision written again), and the checkpoint and the consumer end where they did."""
    monkeypatch.setattr("shared.consume.CHECKPOINT_EVERY_S", 600.0)  # only the first batch's is written
    monkeypatch.setattr("shared.consume.CHECKPOINT_IDLE_S", 600.0)
    await _backlog_then_one(js)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=Recorder(js), config=PAST_CONFIG,
                       health=Health("tally"))
    task = asyncio.create_task(loop.run())
    await wait_for(lambda: _drained(js), within=60)
    task.cancel()  # killed: no stop, so the deferred write is dropped
    with contextlib.suppress(asyncio.CancelledError):
        await task
    written = await checkpoint(js)
    assert 0 < written < BACKLOG // 2
    assert (await js.consumer_info(EVENTS_STREAM, "tally")).ack_floor.stream_seq == BACKLOG + 1
    revisions = {agent: await _revision(js, agent) for agent in ("noisy", "quiet")}
    monkeypatch.setattr("shared.consume.CHECKPOINT_EVERY_S", 0.02)
    monkeypatch.setattr("shared.consume.CHECKPOINT_IDLE_S", 0.02)
    restarted = Recorder(js)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=restarted, config=PAST_CONFIG,
                       health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _eq(checkpoint(js), BACKLOG + 1), within=60)
        await wait_for(lambda: _drained(js), within=30)
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    assert restarted.order[0] == ("noisy", written + 1)  # it went back to the bucket's checkpoint
    assert await tally(js, "noisy") == [f"e{i}" for i in range(1, BACKLOG + 1)]
    assert await tally(js, "quiet") == ["eq"]
    assert {agent: await _revision(js, agent) for agent in ("noisy", "quiet")} == revisions


async def _checkpoint_writes(js: JetStreamContext) -> int:
    """How many times a checkpoint was written (the only key of the bucket here)."""
    return int((await js.stream_info(f"KV_{BUCKET_CHECKPOINTS}")).state.last_seq)


async def test_an_agent_new_to_a_noisy_slot_is_not_overtaken_by_its_message_under_the_session_token(
    nc: Client, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenClaw 2026.9 files an agent's messages under the session token, its other events under
    its own id. A new agent in the noisy agent's slot (the look past the read-ahead does not name
    it: the re-check has not come yet) has an event under its own id, then a message under the
    session token. The look-ahead must not apply the message before the event, which the
    consumer delivers only behind noisy's backlog: the event would be skipped by the agent's
    watermark, lost."""
    monkeypatch.setattr("shared.consume.SCOUT_RECHECK_S", 1e9)  # the new agent is not noticed meanwhile
    newcomer = next(f"new{i}" for i in range(10_000) if slot_of(f"new{i}") == slot_of("noisy"))
    js = nc.jetstream()
    await js.add_stream(StreamConfig(name="openclaw-events", subjects=["openclaw.events.>"]))
    await provision(js, load_settings({"CORTEX_OPENCLAW_STREAM": "openclaw-events"}),
                    [ConsumerSpec(name="tally", families=("msg",))])
    await ensure_bucket(js, BUCKET)
    async with _held_past_the_read_ahead(js, "noisy") as handler:

        await publish(js, [msg("n", agent=newcomer)])
        await wait_for(lambda: _stored(js, BACKLOG + 1), within=30)
        await publish(js, [_store_message(1, newcomer)])
        await wait_for(lambda: _stored(js, BACKLOG + 2), within=30)
        handler.gate.set()
        await wait_for(lambda: _eq(checkpoint(js), BACKLOG + 2), within=60)
        await wait_for(lambda: _drained(js), within=30)
    assert await tally(js, newcomer) == ["en", "o1"]
    assert await tally(js, "noisy") == [f"e{i}" for i in range(1, BACKLOG + 1)]


async def _acked(js: JetStreamContext, consumer: str = "tally") -> tuple[int, int]:
    """The consumer's ack floor (stream sequence) and how many delivered messages wait for an ack."""
    info = await js.consumer_info(EVENTS_STREAM, consumer)
    return int(info.ack_floor.stream_seq or 0), int(info.num_ack_pending or 0)


async def test_a_batchs_acks_leave_with_the_next_batchs_write_and_a_stop_sends_the_last(
    js: JetStreamContext, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At live rates a batch holds an event or two, and its acks were a write of their own to
    the server, per event, per worker. A committed batch's acks now leave with the loop's next
    write: the first batch's with its checkpoint (due at once), the second's with the third's
    document, and the third's — nothing else being sent — not before ACKS_WITHIN_S (here
    longer than the test) or a stop, which sends them."""
    monkeypatch.setattr("shared.consume.CHECKPOINT_EVERY_S", 600.0)
    monkeypatch.setattr("shared.consume.CHECKPOINT_IDLE_S", 600.0)
    monkeypatch.setattr("shared.consume.ACKS_WITHIN_S", 600.0)
    await publish(js, [msg(i) for i in range(1, 4)])
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=Faulty(js),
                       config=msgspec.structs.replace(CONFIG, batch_size=1), health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _eq(tally(js), ["e1", "e2", "e3"]))
        await wait_for(lambda: _eq(_acked(js), (2, 1)))  # the third's ack is owed
        assert await checkpoint(js) == 1  # the first batch's, written at once; the rest deferred
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    # the stop sent the third's ack (a plain ack: the server's consumer applies it on its own
    # queue, after the stop has returned)
    await wait_for(lambda: _eq(_acked(js), (3, 0)), within=10)
    assert await checkpoint(js) == 3


async def test_a_worker_killed_with_its_acks_and_checkpoint_owed_matches_a_replay_and_writes_nothing_again(
    nc: Client, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after applying and committing every event with both the checkpoint and the last
    acks still owed (each deferred for longer than the test), a worker restarts at the older
    checkpoint the bucket holds: the server delivers everything after it again, each document's
    watermark skips it (no revision written again), and the documents are byte for byte those
    of a replay in stream order."""
    monkeypatch.setattr("shared.consume.CHECKPOINT_EVERY_S", 600.0)
    monkeypatch.setattr("shared.consume.CHECKPOINT_IDLE_S", 600.0)
    monkeypatch.setattr("shared.consume.ACKS_WITHIN_S", 600.0)
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="tally", families=("msg",)),
                                            ConsumerSpec(name="replay", families=("msg",))])
    await ensure_bucket(js, BUCKET)
    await ensure_bucket(js, REPLAY_BUCKET)
    events = [msg(i, agent="a" if i % 3 else "b") for i in range(1, 31)]
    await publish(js, events)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=Recorder(js),
                       config=msgspec.structs.replace(CONFIG, batch_size=4), health=Health("tally"))
    task = asyncio.create_task(loop.run())
    await wait_for(lambda: _eq(tally(js, "a"), [f"e{i}" for i in range(1, 31) if i % 3]))
    await wait_for(lambda: _eq(tally(js, "b"), [f"e{i}" for i in range(3, 31, 3)]))
    task.cancel()  # killed: the owed acks and the deferred checkpoint are never sent
    with contextlib.suppress(asyncio.CancelledError):
        await task
    killed_at = await checkpoint(js)
    floor, unacked = await _acked(js)
    assert killed_at < 30 and floor < 30 and unacked > 0
    revisions = {agent: await _revision(js, agent) for agent in ("a", "b")}
    monkeypatch.setattr("shared.consume.CHECKPOINT_EVERY_S", 0.02)
    monkeypatch.setattr("shared.consume.CHECKPOINT_IDLE_S", 0.02)
    monkeypatch.setattr("shared.consume.ACKS_WITHIN_S", 0.02)
    restarted = Recorder(js)
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=restarted, config=CONFIG, health=Health("tally"))
    replay = ConsumeLoop(js, worker="replay", consumer="replay", handler=Recorder(js, ReplayTally()),
                         config=msgspec.structs.replace(CONFIG, read_ahead=1), health=Health("replay"))
    tasks = [asyncio.create_task(loop.run()), asyncio.create_task(replay.run())]
    try:
        await wait_for(lambda: _eq(checkpoint(js), 30), within=30)
        await wait_for(lambda: _drained(js), within=30)
        await wait_for(lambda: _drained(js, "replay"), within=30)
    finally:
        loop.stop()
        replay.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=15)
    assert restarted.order[0][1] == killed_at + 1  # it went back to the bucket's checkpoint
    assert {agent: await _revision(js, agent) for agent in ("a", "b")} == revisions
    kv, replayed = await js.key_value(BUCKET), await js.key_value(REPLAY_BUCKET)
    for agent in ("a", "b"):
        assert (await kv_read(kv, agent))[0] == (await kv_read(replayed, agent))[0]


# ------------------------------------------------------------------ when the checkpoint is written

def session_start(i: int, agent: str = "main") -> tuple[str, bytes]:
    payload = {"id": f"s{i}", "agent": agent, "session": "s2", "ts": "2026-02-17T11:00:00Z"}
    return f"cortex.session.{agent}.start", msgspec.json.encode(payload)


async def with_sessions(nc: Client) -> JetStreamContext:
    """The tally consumer reading the session family too (its triggers)."""
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="tally", families=("msg", "session"))])
    await ensure_bucket(js, BUCKET)
    return js


def loop_of(js: JetStreamContext) -> ConsumeLoop:
    return ConsumeLoop(js, worker="tally", consumer="tally", handler=Faulty(js),
                       config=msgspec.structs.replace(CONFIG, batch_size=1), health=Health("tally"))


def defer(monkeypatch: pytest.MonkeyPatch, every_s: float = 600.0, idle_s: float = 600.0) -> None:
    monkeypatch.setattr("shared.consume.CHECKPOINT_EVERY_S", every_s)
    monkeypatch.setattr("shared.consume.CHECKPOINT_IDLE_S", idle_s)


async def test_batches_inside_the_interval_make_one_write_and_a_stop_writes_it(
    js: JetStreamContext, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first batch's checkpoint is written at once (none for longer than the interval); the
    ten batches after it, inside the interval and never idle for long enough, write nothing;
    the stop writes the last one — two writes for eleven batches (each wrote one, 20 ms apart)."""
    defer(monkeypatch)
    await publish(js, [msg(1)])
    loop = loop_of(js)
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _eq(checkpoint(js), 1), within=10)
        await publish(js, [msg(i) for i in range(2, 12)])
        await wait_for(lambda: _eq(tally(js), [f"e{i}" for i in range(1, 12)]), within=10)
        # the documents are stored before the loop's commit returns and moves its checkpoint
        await wait_for(lambda: _true(loop.checkpoint == 11), within=10)
        assert await checkpoint(js) == 1 and await _checkpoint_writes(js) == 1
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)
    assert await checkpoint(js) == 11 and await _checkpoint_writes(js) == 2


async def test_a_checkpoint_that_passes_a_trigger_is_written_at_once(
    nc: Client, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A composed worker waits for its sources' checkpoints to reach a session's start: the
    batch that takes the loop past one writes it at once, inside the interval, with the
    batches deferred before it; a message after it waits again."""
    defer(monkeypatch)
    js = await with_sessions(nc)
    await publish(js, [msg(1)])
    loop = loop_of(js)
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _eq(checkpoint(js), 1), within=10)
        await publish(js, [msg(2), msg(3)])
        await wait_for(lambda: _eq(tally(js), ["e1", "e2", "e3"]), within=10)
        assert await checkpoint(js) == 1  # deferred
        await publish(js, [session_start(4)])
        await wait_for(lambda: _eq(checkpoint(js), 4), within=10)  # on main: 1 until the interval (600 s)
        assert await _checkpoint_writes(js) == 2
        await publish(js, [msg(5)])
        await wait_for(lambda: _eq(tally(js), ["e1", "e2", "e3", "e5"]), within=10)
        await wait_for(lambda: _true(loop.checkpoint == 5), within=10)  # the commit returned (see above)
        assert await checkpoint(js) == 4 and await _checkpoint_writes(js) == 2
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)


async def test_the_last_checkpoint_of_a_burst_is_written_once_the_loop_is_idle(
    js: JetStreamContext, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No trigger, the interval far away: the last batch's checkpoint is written once the loop
    has taken no batch for CHECKPOINT_IDLE_S — a worker that goes idle is not left behind
    until its next event or its stop."""
    defer(monkeypatch, idle_s=0.05)
    await publish(js, [msg(i) for i in range(1, 21)])
    loop = loop_of(js)
    task = asyncio.create_task(loop.run())
    try:
        await wait_for(lambda: _eq(checkpoint(js), 20), within=20)  # on main: the first batch's, until the stop
        assert await tally(js) == [f"e{i}" for i in range(1, 21)]
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)


async def test_a_trigger_applied_while_another_agents_older_event_is_held_is_written_when_passed(
    nc: Client, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Agents take turns: a session start of one agent is applied ahead of another agent's older
    events, so that batch's checkpoint stops below it. The trigger is remembered from when it was
    read, and the later batch whose checkpoint passes it writes at once (interval and idle far
    away) — not left to the interval because that batch holds no trigger of its own."""
    defer(monkeypatch)
    js = await with_sessions(nc)
    handler = Recorder(js, hold=1)  # the first event's apply waits while the rest arrive
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler,
                       config=msgspec.structs.replace(CONFIG, batch_size=2, fetch_timeout_s=30.0),
                       health=Health("tally"))
    task = asyncio.create_task(loop.run())
    try:
        await publish(js, [msg(0)])
        await asyncio.wait_for(handler.holding.wait(), timeout=10)
        await publish(js, [msg(1, agent="b"), msg(2, agent="b"), msg(3, agent="b"), session_start(4)])

        async def delivered() -> bool:  # all of them read ahead before the first batch ends
            return (await js.consumer_info(EVENTS_STREAM, "tally")).delivered.stream_seq == 5

        await wait_for(delivered, within=10)
        handler.gate.set()
        await wait_for(lambda: _eq(checkpoint(js), 5), within=10)  # written at the third batch
        # the second batch took b's first event and main's session start: its checkpoint (2) stayed deferred
        assert handler.order == [("main", 1), ("b", 2), ("main", 5), ("b", 3), ("b", 4)]
        assert await _checkpoint_writes(js) == 2
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=15)


class Slow(Faulty):
    """Each message costs ``burn_s`` of CPU and gives the event loop no turn (a slow handler, a starved
    CPU); ``batches`` holds each commit's (messages, seconds from its batch's first apply)."""

    def __init__(self, js: JetStreamContext, burn_s: float) -> None:
        super().__init__(js)
        self.burn_s = burn_s
        self.batches: list[tuple[int, float]] = []
        self._n = 0
        self._first: float | None = None

    async def apply(self, env: Envelope) -> bool:
        began = time.perf_counter()
        self._first = began if self._first is None else self._first
        while time.perf_counter() < began + self.burn_s:
            pass
        self._n += 1
        return await super().apply(env)

    async def commit(self) -> None:
        self.batches.append((self._n, time.perf_counter() - (self._first or 0.0)))
        self._n, self._first = 0, None
        await super().commit()


async def test_a_batch_longer_than_the_lease_fence_keeps_the_lease_and_commits(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    """A batch gives the event loop a turn at least every ``BATCH_TURN_EVERY_S``: the lease's keeper
    renews while a long batch is applied, and the fence before its commit finds the lease held.
    (Before, a batch longer than the fence — a slow handler, a starved CPU — lost the lease every
    time and was applied again from the rewind, by a worker that had lost nothing.)"""
    lease = Lease(js, "tally", "test-slow", ttl_s=1)  # the fence closes 0.8 s after a renewal
    assert await lease.acquire(asyncio.Event())
    await publish(js, [msg(i) for i in range(1, 101)])
    handler = Slow(js, burn_s=0.01)  # a hundred messages in one batch: 1 s, longer than the fence
    loop = ConsumeLoop(js, worker="tally", consumer="tally", handler=handler,
                       config=msgspec.structs.replace(CONFIG, batch_size=100), health=Health("tally"),
                       fence=lease.check)
    keeper = asyncio.create_task(lease.keep_alive(loop.stop))
    task = asyncio.create_task(loop.run())

    async def settled() -> bool:
        return task.done() or await checkpoint(js) == 100

    try:
        await wait_for(settled, within=30)
    finally:
        loop.stop()
        try:
            await asyncio.wait_for(task, timeout=15)  # raises the LeaseLost of a fence that found it lapsed
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
    assert max(seconds for _, seconds in handler.batches) > 0.85, handler.batches  # a batch past the fence
    assert lease.held
    assert await tally(js) == [f"e{i}" for i in range(1, 101)]
    assert handler.attempts == {f"e{i}": 1 for i in range(1, 101)}  # applied once: no lease lost, no rewind
