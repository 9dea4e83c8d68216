"""Which changes make a briefing: the boot worker's change throttle, a pure function.

A message or feedback (a "change") makes a BootDoc only when a stream cut (every
``runtime.cut_every`` sequences, ``shared.projection.boundary``) lies between it and the
agent's last document, and it comes ``boot.change_interval_ms`` of *event* time after that
document; the document shows the sources as they were at that cut. Both depend on events
only — sequences, event times and the stored document — so any replay, however batched,
makes the same documents. A session's end always makes one (``BootHandler`` decides that).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

from shared.projection import boundary


class Made(NamedTuple):
    """The agent's last document: the sequence and the event time it was made for."""

    seq: int
    ts: datetime


def change_due(seq: int, ts: datetime, last: Made | None, every: int, interval: timedelta | None) -> bool:
    """Whether the change at ``seq`` (event time ``ts``) makes a document, after ``last``
    (made by an earlier change of the batch, or stored; None: the agent has none yet), with
    a stream cut every ``every`` sequences and at least ``interval`` of event time between
    documents (None: no minimum)."""
    cut = boundary(seq, every)
    if cut == 0:
        return False  # no cut yet: nothing to show as of one
    if last is None:
        return True
    if cut <= boundary(last.seq, every):
        return False  # the last document already shows this cut or a later state
    return interval is None or ts - last.ts >= interval
