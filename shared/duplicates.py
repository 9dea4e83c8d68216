"""Exactly once by event id for the OpenClaw store's events.

The event store's plugin publishes without ``Nats-Msg-Id``, so the stream cannot drop a
second copy of an event (a re-fired hook, an operator's re-import): CORTEX_EVENTS may hold
the same event twice, at two sequences. The rule that decides, for every consumer alike:

    an OpenClaw event is a duplicate when a copy of it (same agent, type, id, payload and scope:
    ``shared.openclaw.duplicate_key``) is stored at most ``span`` sequences before it.

It depends on the stream's content only, so a replay, a restart, a redelivery and a backfill
of months of history all make the same decision, and it needs no state outside the stream:
a consume loop that starts at checkpoint C rewinds its consumer ``span`` sequences further
back and feeds those already-applied messages to its window without applying them
(``shared.consume``). Contract events are not concerned: their publishers send the event id
as ``Nats-Msg-Id`` and the stream's duplicate window drops a second copy.

The key names the agent Cortex files the event under (the subject's, or for an event under
the store's session token the one its session key names), so a copy is always of the same
agent: the decision on an event depends on that agent's earlier events alone, and a
window fed each agent's events in that agent's stream order decides exactly as one fed the
whole stream in order. The consume loop's scout relies on it (``shared.scout``): it decides a
quiet agent's events ahead of another agent's older ones (``seen(..., ahead=True)``), which
therefore must not make the window forget what those older ones are still compared with.
"""

from __future__ import annotations

import heapq


class DuplicateWindow:
    """The keys of the store events among the last ``span`` stream sequences seen."""

    def __init__(self, span: int) -> None:
        self.span = span
        self._last: dict[bytes, int] = {}  # key → the highest sequence it was seen at
        self._order: list[tuple[int, bytes]] = []  # a heap: (sequence, key), the oldest first

    def __len__(self) -> int:
        return len(self._last)

    def seen(self, key: bytes, seq: int, *, ahead: bool = False) -> bool:
        """Record ``key`` at ``seq``; True when an earlier copy lies within the window.

        The same message again (a redelivery: same key, same sequence) is not a duplicate.
        Each key's copies must come in stream order; ``ahead``: messages before ``seq`` of other
        keys are still to come (the scout's), so nothing is forgotten for it.
        """
        if self.span <= 0:
            return False
        if not ahead:
            self._forget_before(seq - self.span)
        last = self._last.get(key)
        if last is not None and last >= seq:
            return False
        self._last[key] = seq
        heapq.heappush(self._order, (seq, key))
        return last is not None and last >= seq - self.span

    def _forget_before(self, oldest: int) -> None:
        """Drop what no message from here on can be a copy of (memory only: ``seen`` compares)."""
        order = self._order
        while order and order[0][0] < oldest:
            old_seq, old_key = heapq.heappop(order)
            if self._last.get(old_key) == old_seq:
                del self._last[old_key]
