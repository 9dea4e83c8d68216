"""The read-ahead's lanes (shared.lanes): fair shares of a batch, each agent's order kept."""

from __future__ import annotations

import msgspec
import pytest

from schemas.events import MessageEvent
from shared.codec import Envelope, Rejection
from shared.lanes import Held, Lanes, shares


@pytest.mark.parametrize(("lengths", "budget", "expected"), [
    ([2000, 1], 50, [49, 1]),  # a quiet agent's one event goes beside the burst
    ([1, 2000], 50, [1, 49]),
    ([10, 10, 10], 50, [10, 10, 10]),  # everything fits: everything taken
    ([100, 100], 50, [25, 25]),
    ([3, 100, 100], 50, [3, 24, 23]),  # the short lane whole, the rest split (rounding to the first)
    ([1, 1, 1], 2, [1, 1, 0]),  # more lanes than budget: the oldest lanes first
    ([], 50, []),
])
def test_a_batch_is_shared_max_min_fairly(lengths: list[int], budget: int, expected: list[int]) -> None:
    assert shares(lengths, budget) == expected
    assert sum(expected) == min(budget, sum(lengths))


def _held(seq: int, agent: str | None) -> Held:
    decoded: Envelope | Rejection
    if agent is None:
        decoded = Rejection(seq=seq, subject="cortex.msg.0.x.received", reason="bad")
    else:
        event = msgspec.convert({"id": f"e{seq}", "agent": agent, "session": "s", "ts": "2026-02-17T10:00:00Z",
                                 "role": "user", "content": "hi"}, MessageEvent)
        decoded = Envelope(seq=seq, subject=f"cortex.msg.0.{agent}.received", family="msg", kind="received",
                           agent=agent, event=event)
    return Held(seq, None, decoded, 10, agent)  # type: ignore[arg-type]  # no message: the lanes never touch it


def test_a_batch_takes_each_agents_prefix_and_is_applied_in_stream_order() -> None:
    lanes = Lanes()
    for seq in range(1, 101):
        lanes.add(_held(seq, "noisy"))
    lanes.add(_held(101, "quiet"))
    lanes.add(_held(102, None))  # bad input: its own lane
    assert (len(lanes), lanes.bytes, lanes.oldest()) == (102, 1020, 1)
    batch = lanes.take(10)
    assert [h.seq for h in batch] == [*range(1, 9), 101, 102]
    assert lanes.oldest() == 9  # the checkpoint stays below noisy's oldest event still waiting
    rest = lanes.take(1000)
    assert [h.seq for h in rest] == list(range(9, 101))
    assert (len(lanes), lanes.bytes, lanes.oldest()) == (0, 0, None)


def test_one_agent_takes_the_batch_as_in_order_consumption_did() -> None:
    lanes = Lanes()
    for seq in range(1, 31):
        lanes.add(_held(seq, "main"))
    assert [h.seq for h in lanes.take(20)] == list(range(1, 21))
    assert [h.seq for h in lanes.clear()] == list(range(21, 31))
    assert len(lanes) == 0


def test_the_lanes_know_which_stream_sequences_they_hold_until_taken_or_cleared() -> None:
    """What the loop asks before holding a redelivered copy: held until its batch takes it."""
    lanes = Lanes()
    for seq, agent in [(1, "noisy"), (2, "noisy"), (3, "quiet"), (4, None)]:
        lanes.add(_held(seq, agent))
    assert [lanes.holds(seq) for seq in (1, 2, 3, 4, 5)] == [True, True, True, True, False]
    taken = lanes.take(3)  # one of noisy's, quiet's, the rejection
    assert [lanes.holds(h.seq) for h in taken] == [False] * 3
    assert lanes.holds(2)
    lanes.clear()
    assert not lanes.holds(2)
