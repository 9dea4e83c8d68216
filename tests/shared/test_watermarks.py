"""WatermarkTracker against a real nats-server: waits end when a consumer's checkpoint
reaches the sequence; a consumer far behind a sequence it missed is reported at once
instead of being waited out again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

import msgspec
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from shared import watermarks
from shared.config import load_settings
from shared.names import BUCKET_CHECKPOINTS
from shared.provision import ConsumerSpec, provision
from shared.watermarks import CATCH_UP_S, MAX_KEY_WATCHES, PACE_WINDOW_S, STALLED_LAG, WatermarkTracker

WaitFor = Callable[..., Awaitable[Any]]


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    js = nc.jetstream()
    await provision(js, load_settings({}), [ConsumerSpec(name="slow", families=("msg",))])
    payload = {"id": "e1", "agent": "a", "session": "s", "ts": "2026-03-01T10:00:00Z", "role": "user", "content": "x"}
    await js.publish("cortex.msg.a.received", msgspec.json.encode(payload))  # "slow" never drains
    return js


async def set_checkpoint(js: JetStreamContext, consumer: str, seq: int) -> None:
    await (await js.key_value(BUCKET_CHECKPOINTS)).put(consumer, str(seq).encode())


async def test_a_consumer_far_behind_what_it_missed_is_reported_at_once(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    tracker = WatermarkTracker(js, patience_s=600)  # patience never runs out here: see the next test
    await tracker.start()
    try:
        await set_checkpoint(js, "slow", 10)
        await wait_for(lambda: _true(tracker.checkpoint("slow") == 10))
        assert await tracker.wait({"slow": 5}, bound_s=30) == []  # reached
        assert await tracker.wait({"slow": 20}, bound_s=0.3) == ["slow"]  # the bound passes
        # a little behind what it missed (a slow batch, say): waited for again, and
        # reaching the sequence ends the wait
        waiting = asyncio.create_task(tracker.wait({"slow": 22}, bound_s=300))
        await set_checkpoint(js, "slow", 15)
        await wait_for(lambda: _true(tracker.checkpoint("slow") == 15))
        assert not waiting.done()
        await set_checkpoint(js, "slow", 22)
        assert await asyncio.wait_for(waiting, timeout=30) == []
        # far behind a sequence it missed: reported at once while it stays that far behind
        far = 30 + STALLED_LAG * 2
        assert await tracker.wait({"slow": far}, bound_s=0.3) == ["slow"]
        assert await asyncio.wait_for(tracker.wait({"slow": far + 1}, bound_s=300), timeout=30) == ["slow"]
        await set_checkpoint(js, "slow", 25)
        await wait_for(lambda: _true(tracker.checkpoint("slow") == 25))
        assert await asyncio.wait_for(tracker.wait({"slow": far + 2}, bound_s=300), timeout=30) == ["slow"]
        # close to it again: waited for
        await set_checkpoint(js, "slow", far - 10)
        await wait_for(lambda: _true(tracker.checkpoint("slow") == far - 10))
        waiting = asyncio.create_task(tracker.wait({"slow": far + 3}, bound_s=300))
        await set_checkpoint(js, "slow", far + 3)
        assert await asyncio.wait_for(waiting, timeout=30) == []
    finally:
        await tracker.stop()


async def _true(value: bool) -> bool:
    return value


async def test_after_its_patience_a_source_short_of_what_it_missed_is_reported_at_once(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    """A source that cannot keep up must not hold every later trigger for a bound each."""
    tracker = WatermarkTracker(js, patience_s=0.5)
    await tracker.start()
    try:
        await set_checkpoint(js, "lagger", 10)
        await wait_for(lambda: _true(tracker.checkpoint("lagger") == 10))
        assert await tracker.wait({"lagger": 20}, bound_s=0.2) == ["lagger"]  # missed at the bound
        # within its patience it is still waited for: reaching the sequence ends the wait
        waiting = asyncio.create_task(tracker.wait({"lagger": 12}, bound_s=300))
        await set_checkpoint(js, "lagger", 12)
        assert await asyncio.wait_for(waiting, timeout=30) == []
        # patience over and still short of 20: lagging at once, however long the bound
        # (a wait of the whole bound would need 300 s; the test's timeout is 30 s)
        assert await asyncio.wait_for(tracker.wait({"lagger": 30}, bound_s=300), timeout=30) == ["lagger"]
        assert await asyncio.wait_for(tracker.wait({"lagger": 40}, bound_s=300), timeout=30) == ["lagger"]
        # once it reaches the highest sequence it missed (40), it is waited for again
        await set_checkpoint(js, "lagger", 40)
        await wait_for(lambda: _true(tracker.checkpoint("lagger") == 40))
        waiting = asyncio.create_task(tracker.wait({"lagger": 45}, bound_s=300))
        await set_checkpoint(js, "lagger", 45)
        assert await asyncio.wait_for(waiting, timeout=30) == []
    finally:
        await tracker.stop()


async def test_a_wait_the_callers_budget_ends_is_no_bound_missed(js: JetStreamContext, wait_for: WaitFor) -> None:
    """``until`` (the early briefing's budget from the trigger's storing) ends a wait whatever the
    bound, and is not held against the source: a wait the bound ends is (far behind what it
    missed, it is then reported at once), one the budget ends is not."""
    tracker = WatermarkTracker(js, patience_s=600)
    await tracker.start()
    try:
        await set_checkpoint(js, "slow", 10)
        await wait_for(lambda: _true(tracker.checkpoint("slow") == 10))
        far = 10 + STALLED_LAG * 2
        # the budget spent already: reported at once, however long the bound (300 s; the timeout is 30 s)
        spent = tracker.wait({"slow": far}, bound_s=300, until=time.monotonic())
        assert await asyncio.wait_for(spent, timeout=30) == ["slow"]
        assert not tracker._stalled("slow")  # the next trigger still waits for it
        waiting = asyncio.create_task(tracker.wait({"slow": 12}, bound_s=300, until=time.monotonic() + 300))
        await set_checkpoint(js, "slow", 12)
        assert await asyncio.wait_for(waiting, timeout=30) == []  # a budget left: waited for, and reached
        assert await tracker.wait({"slow": far}, bound_s=0.05) == ["slow"]  # the bound passes: missed
        assert tracker._stalled("slow")
    finally:
        await tracker.stop()


async def test_concurrent_waits_share_the_servers_answer_and_none_older_than_the_wait(
    js: JetStreamContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every trigger waiting on a source asked the server for its consumer at every poll: most
    of the boot worker's CPU above capacity. One answer now serves every wait of the process for
    ``SERVER_EVERY_S`` — but never one asked before a wait began: "nothing left" then says
    nothing of an event stored after it."""
    await provision(js, load_settings({}), [ConsumerSpec(name="idle", families=("feedback",))])
    asked = 0
    state_of = watermarks.consumer_state

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal asked
        asked += 1
        return await state_of(*args, **kwargs)

    monkeypatch.setattr(watermarks, "consumer_state", counted)
    tracker = WatermarkTracker(js)
    try:
        waits = [tracker.wait({"slow": 5}, bound_s=0.3) for _ in range(20)]
        assert await asyncio.gather(*waits) == [["slow"]] * 20
        assert 0 < asked < 20  # each of the 20 waits polled it several times
        assert await tracker.reached("idle", 3)  # nothing left for it: everything stored so far is applied
        feedback = {"id": "f1", "agent": "a", "ts": "2026-03-01T10:00:00Z", "kind": "fact_access", "value": ["x"]}
        seq = (await js.publish("cortex.feedback.a.fact_access", msgspec.json.encode(feedback))).seq
        assert not await tracker.reached("idle", seq + 1)  # the answer before it is not taken
    finally:
        await tracker.stop()


async def test_a_requests_cached_lag_is_asked_again_once_the_consumer_has_moved(
    js: JetStreamContext, wait_for: WaitFor
) -> None:
    """A request's briefing named a source lagging for as long as the answer was cached
    (``lagging_now``), although the source had applied its batch meanwhile: a briefing asked
    for right after a settled pipeline said "the recall worker is lagging"."""
    await provision(js, load_settings({}), [ConsumerSpec(name="busy", families=("feedback",))])
    feedback = {"id": "f1", "agent": "a", "ts": "2026-03-01T10:00:00Z", "kind": "fact_access", "value": ["x"]}
    seq = (await js.publish("cortex.feedback.a.fact_access", msgspec.json.encode(feedback))).seq
    tracker = WatermarkTracker(js)
    cache: dict[str, Any] = {}
    try:
        assert await tracker.lagging_now({"busy": 2**62}, cache_s=600, cache=cache) == ["busy"]  # not applied
        sub = await js.pull_subscribe_bind("busy", stream="CORTEX_EVENTS")
        for msg in await sub.fetch(1, timeout=10):  # the worker applies it ...
            await msg.ack_sync()
        await set_checkpoint(js, "busy", seq)  # ... and writes its checkpoint
        await wait_for(lambda: _true(tracker.checkpoint("busy") == seq))
        assert await tracker.lagging_now({"busy": 2**62}, cache_s=600, cache=cache) == []  # asked again
    finally:
        await tracker.stop()


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_source_whose_pace_cannot_reach_the_trigger_in_time_is_not_waited_for(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above capacity: 100 sequences a second and 500 short of the trigger is 5 s away —
    more than CATCH_UP_S, so a briefing does not wait for it; 20 short it is waited for."""
    clock = _Clock()
    monkeypatch.setattr("shared.watermarks.time.monotonic", clock)
    tracker = WatermarkTracker(cast(JetStreamContext, None))
    assert tracker.pace("recall") is None
    for _ in range(4):  # one checkpoint a second, 100 sequences each
        tracker._checkpoints["recall"] = seq = tracker.checkpoint("recall") + 100
        tracker._moved("recall", seq)
        clock.now += 1.0
    assert tracker.pace("recall") == pytest.approx(300 / 4.0)
    assert tracker._out_of_reach("recall", 400 + 500, remaining_s=2.0)
    assert not tracker._out_of_reach("recall", 400 + 20, remaining_s=2.0)
    assert CATCH_UP_S * 75.0 < 500  # (the budget the rule reads)
    clock.now += PACE_WINDOW_S + 1  # stopped moving for long: its pace is unknown, it is waited for again
    assert tracker.pace("recall") is None
    assert not tracker._out_of_reach("recall", 400 + 500, remaining_s=2.0)


def test_one_quick_batch_says_nothing_about_a_pace(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr("shared.watermarks.time.monotonic", clock)
    tracker = WatermarkTracker(cast(JetStreamContext, None))
    tracker._moved("threads", 10)
    clock.now += 0.05
    tracker._moved("threads", 11)
    assert tracker.pace("threads") is None
    assert not tracker._out_of_reach("threads", 5000, remaining_s=2.0)


async def test_a_tracker_receives_only_the_checkpoints_it_waits_on(js: JetStreamContext, wait_for: WaitFor) -> None:
    """Every worker writes its checkpoint after every batch; a composed worker waits on a few
    of them (recall on one). Not started on the whole bucket, the tracker watches each consumer
    it is asked about, so the server sends it no other worker's checkpoint — until it is asked
    about more than MAX_KEY_WATCHES, when one watch of the whole bucket replaces them."""
    tracker = WatermarkTracker(js)
    try:
        assert await tracker.wait({"slow": 3}, bound_s=0.1) == ["slow"]  # follows "slow" from now on
        await set_checkpoint(js, "other", 7)  # written first: a whole-bucket watch would see it first
        await set_checkpoint(js, "slow", 5)
        await wait_for(lambda: _true(tracker.checkpoint("slow") == 5))
        assert tracker.checkpoint("other") == 0
        assert await tracker.wait({"slow": 5}, bound_s=30) == []
        tracker.follow(f"w{i}" for i in range(MAX_KEY_WATCHES))  # too many one by one: the whole bucket
        await wait_for(lambda: _true(tracker.checkpoint("other") == 7))
        await set_checkpoint(js, "unasked", 9)
        await wait_for(lambda: _true(tracker.checkpoint("unasked") == 9))
        assert tracker.checkpoint("slow") == 5
    finally:
        await tracker.stop()


async def test_a_checkpoint_watch_that_failed_is_made_again_when_the_consumer_is_next_asked_about(
    nc: Client, wait_for: WaitFor
) -> None:
    """A watch of one consumer's checkpoint that could not start (the bucket not there yet, NATS
    away) or that ended is made again the next time the consumer is asked about: left dead, the
    tracker said checkpoint 0 for it for good, and a wait given up at 0 was never made again."""
    js = nc.jetstream()
    tracker = WatermarkTracker(js)
    try:
        tracker.follow(["slow"])  # no checkpoints bucket yet: the watch fails
        await wait_for(lambda: _true(all(task.done() for task in tracker._watches.values())))
        await provision(js, load_settings({}), [ConsumerSpec(name="slow", families=("msg",))])
        await set_checkpoint(js, "slow", 5)
        tracker.follow(["slow"])
        await wait_for(lambda: _true(tracker.checkpoint("slow") == 5))
    finally:
        await tracker.stop()


def test_a_moving_consumer_is_not_taken_for_out_of_reach_for_its_checkpoints_interval(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source moving at 400 events a second writes its checkpoint every CHECKPOINT_EVERY_S:
    the last one seen is up to that long's events behind it. Short of the trigger by what it
    covers in CATCH_UP_S, counted from where its pace says it is, it is waited for; stopped for
    seconds, it is not (the extrapolation stops at one interval)."""
    clock = [1000.0]
    monkeypatch.setattr("shared.watermarks.time.monotonic", lambda: clock[0])
    monkeypatch.setattr("shared.watermarks.CHECKPOINT_EVERY_S", 0.2)
    tracker = WatermarkTracker(cast(JetStreamContext, None))
    for k in range(6):  # 0 .. 400, a write every 0.2 s
        tracker._checkpoints["recall"] = 80 * k
        tracker._moved("recall", 80 * k)
        clock[0] += 0.2
    clock[0] -= 0.01  # 0.19 s after the last write
    pace = tracker.pace("recall")
    assert pace is not None and pace * CATCH_UP_S < 200
    assert not tracker._out_of_reach("recall", 400 + 200, remaining_s=2.0)  # on main: out of reach
    clock[0] += 3.0  # stopped since
    assert tracker._out_of_reach("recall", 400 + 200, remaining_s=2.0)
