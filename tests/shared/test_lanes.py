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


def test_with_cuts_each_lanes_share_ends_below_the_first_cut_past_its_front() -> None:
    """A batch across a stream cut wrote each agent's documents at the cut and again at the
    commit; with the cut interval given, each lane gives only its events below the first cut
    past its own front — and a lane whose front is past the others' cut still gets its share."""
    lanes = Lanes()
    for seq in range(5, 35):  # a and b alternate across the cuts at 10, 20, 30
        lanes.add(_held(seq, "a" if seq % 2 else "b"))
    lanes.add(_held(57, "ahead"))  # read past the others (a scout's): its own cut is 60
    lanes.add(_held(58, "ahead"))
    lanes.add(_held(63, "ahead"))
    batch = lanes.take(100, every=10)
    assert [h.seq for h in batch] == [*range(5, 10), 57, 58]
    assert lanes.oldest() == 10
    assert [h.seq for h in lanes.take(100, every=10)] == [*range(10, 20), 63]
    assert [h.seq for h in lanes.take(4, every=10)] == [20, 21, 22, 23]  # the budget still bounds it
    assert [h.seq for h in lanes.take(100, every=10)] == list(range(24, 30))
    assert [h.seq for h in lanes.take(100, every=10)] == list(range(30, 35))
    assert len(lanes) == 0


def test_with_cuts_a_lane_is_never_starved_and_each_agents_order_holds() -> None:
    """Random lanes and cut intervals: every batch takes something while anything is held,
    each agent's events come in stream order, and no agent's part of a batch crosses a cut."""
    import random

    rng = random.Random(39)
    for _ in range(200):
        lanes, every = Lanes(), rng.choice([1, 3, 10, 1000])
        seqs = sorted(rng.sample(range(1, 400), rng.randint(1, 120)))
        agents = {seq: rng.choice(["a", "b", "c", None]) for seq in seqs}
        for seq in seqs:
            lanes.add(_held(seq, agents[seq]))
        seen: list[int] = []
        while len(lanes):
            batch = lanes.take(rng.randint(1, 40), every=every)
            assert batch, "a batch while events are held"
            assert [h.seq for h in batch] == sorted(h.seq for h in batch)
            for agent in {h.lane for h in batch}:
                mine = [h.seq for h in batch if h.lane == agent]
                assert mine[0] // every == mine[-1] // every, (every, mine)  # between two cuts
            seen += [h.seq for h in batch]
        for agent in ("a", "b", "c", None):
            assert [s for s in seen if agents[s] == agent] == [s for s in seqs if agents[s] == agent]
