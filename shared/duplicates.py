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
"""

from __future__ import annotations

from collections import deque


class DuplicateWindow:
    """The keys of the store events among the last ``span`` stream sequences seen."""

    def __init__(self, span: int) -> None:
        self.span = span
        self._last: dict[bytes, int] = {}  # key → the highest sequence it was seen at
        self._order: deque[tuple[int, bytes]] = deque()

    def __len__(self) -> int:
        return len(self._last)

    def seen(self, key: bytes, seq: int) -> bool:
        """Record ``key`` at ``seq``; True when an earlier copy lies within the window.

        The same message again (a redelivery: same key, same sequence) is not a duplicate.
        """
        if self.span <= 0:
            return False
        while self._order and self._order[0][0] < seq - self.span:
            old_seq, old_key = self._order.popleft()
            if self._last.get(old_key) == old_seq:
                del self._last[old_key]
        last = self._last.get(key)
        if last is not None and last >= seq:
            return False
        self._last[key] = seq
        self._order.append((seq, key))
        return last is not None
