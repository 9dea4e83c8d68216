"""Fair turns between the agents of one consumer: the consume loop's read-ahead.

A durable consumer hands a worker its events in stream order, so one agent's burst of
thousands of events would hold every other agent's next event behind it for as long as
the burst takes to apply. The consume loop therefore reads ahead — up to a bounded number
of messages (and bytes) past the ones it applies — and files what it read in one *lane*
per agent. Each batch takes turns: every lane with events gets a max-min fair share of the
batch (``shares``), so a quiet agent's single event goes into the next batch beside the
noisy agent's next few hundred, and is applied within one batch of its arrival in the
read-ahead.

What this keeps:

* **each agent's order**: a lane is a queue in stream order and a batch takes a prefix of
  each; the batch itself is applied in stream order (the prefixes merged by sequence), so
  with one agent — the common path — a batch is exactly what in-order consumption made
  (ended at the stream's next cut when the handler writes at cuts, ``take``);
* **the checkpoint**: it stays "every event of this consumer up to here is applied", the
  sequence just below the oldest message still held (``Lanes.oldest``): a quiet agent's
  later event applied early does not move it, and a restart rewinds to it and lets the
  documents' per-agent watermarks skip what was applied past it;
* **bounded memory**: the loop reads ahead only while the lanes hold fewer than its limits;
* **filing is cheap**: a message is filed by its subject's agent token and decoded at its
  turn (``LATER``), so reaching a quiet agent's event behind a burst of thousands costs a
  string split per message, not a decode (the OpenClaw store's events, whose duplicate
  window decides in stream order, are decoded as they are read).

Pure: no I/O here, the loop does it.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Iterator
from typing import NamedTuple

from nats.aio.msg import Msg

from shared.codec import Envelope, Rejection


class Later:
    """A message decided when its turn comes (``LATER``), not when it is read."""

    def __repr__(self) -> str:
        return "LATER"


LATER = Later()


class Held(NamedTuple):
    """A message read ahead, decided once, waiting for its agent's turn."""

    seq: int
    msg: Msg
    # None: nothing to apply (decided when it was read); LATER: decided at its turn
    decoded: Envelope | Rejection | Later | None
    size: int  # bytes held (the read-ahead's byte limit)
    lane: str | None  # its agent (None: bad input and messages with nothing to apply)


def shares(lengths: list[int], budget: int) -> list[int]:
    """How many of each lane's events a batch of ``budget`` takes: max-min fair.

    The shortest lanes are served whole first, then what is left is split evenly over the
    longer ones (rounded up, so a lane is never starved by rounding while any budget is
    left; when there are more lanes than budget, the lanes listed first — the oldest —
    go first)."""
    out = [0] * len(lengths)
    left = budget
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    for served, lane in enumerate(order):
        if left <= 0:
            break
        fair = -(-left // (len(order) - served))  # ceil
        out[lane] = min(lengths[lane], fair, left)
        left -= out[lane]
    return out


class Lanes:
    """The read-ahead: one queue per agent (``None``: bad input and messages with nothing to apply)."""

    def __init__(self) -> None:
        self._lanes: dict[str | None, deque[Held]] = {}
        self._seqs: set[int] = set()  # the stream sequences held: a redelivered copy is not held twice
        self.count = 0
        self.bytes = 0

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Held]:
        for lane in self._lanes.values():
            yield from lane

    def holds(self, seq: int) -> bool:
        return seq in self._seqs

    def held(self, agent: str | None) -> int:
        """How many of ``agent``'s messages are held."""
        lane = self._lanes.get(agent)
        return len(lane) if lane is not None else 0

    def over(self, limit: int) -> set[str]:
        """The agents holding ``limit`` messages or more (a backlog: the noisy ones)."""
        return {agent for agent, lane in self._lanes.items() if agent is not None and len(lane) >= limit}

    def add(self, item: Held) -> None:
        lane = self._lanes.get(item.lane)
        if lane is None:
            lane = self._lanes[item.lane] = deque()
        lane.append(item)
        self._seqs.add(item.seq)
        self.count += 1
        self.bytes += item.size

    def take(self, budget: int, every: int = 0) -> list[Held]:
        """A batch of at most ``budget`` messages, each lane's share from its front, in stream order.

        ``every``: the stream's cut interval (``shared.projection.boundary``; 0: none). A lane
        then gives only its events below the first cut past its front: each agent's part of a
        batch lies between two cuts, so its documents are written once a batch — at the cut the
        batch crosses after them, or at the commit — not at the cut and again at the commit
        for its events past it (what a batch across a cut made of every agent's documents)."""
        lanes = list(self._lanes.items())
        lengths = [len(q) for _, q in lanes] if not every else [_before_cut(q, every) for _, q in lanes]
        taken: list[Held] = []
        for (key, lane), share in zip(lanes, shares(lengths, budget), strict=True):
            taken.extend(lane.popleft() for _ in range(share))
            if not lane:
                del self._lanes[key]
        self._seqs.difference_update(h.seq for h in taken)
        self.count -= len(taken)
        self.bytes -= sum(h.size for h in taken)
        if len(lanes) > 1:
            taken.sort(key=_seq)
        return taken

    def oldest(self) -> int | None:
        """The lowest stream sequence held (every lane's front is its oldest), None when empty."""
        return min((lane[0].seq for lane in self._lanes.values()), default=None)

    def clear(self) -> list[Held]:
        """Everything held, in stream order; the lanes are empty after."""
        held = sorted(self, key=_seq)
        self._lanes.clear()
        self._seqs.clear()
        self.count = self.bytes = 0
        return held


def _seq(item: Held) -> int:
    return item.seq


def _before_cut(lane: deque[Held], every: int) -> int:
    """How many of the lane's events lie below the first cut past its front (never none)."""
    cut = lane[0].seq // every * every + every
    if lane[-1].seq < cut:
        return len(lane)
    return bisect.bisect_left(lane, cut, key=_seq)
