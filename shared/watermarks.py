"""Watermarks of other workers, for composed documents (snapshot, narrative, boot).

A composed document made for the event at stream sequence S must reflect every event
before S. Source worker W has applied all of them when either

* its checkpoint (highest contiguous applied sequence, ``cortex_checkpoints``) is ≥ the
  sequence we need, or
* its consumer has nothing left: no pending and no unacked messages. That second rule is
  what keeps a worker which never sees the trigger's kind of event (its filter excludes
  it, so its checkpoint stops at its own last event) from making every boot wait out the
  bound.

Checkpoints are followed with a KV watch, so the common case costs no request at all: a
watch of each checkpoint the tracker is asked about, so the server sends a process only the
checkpoints it waits on — every worker writes one per batch, and a watch of the whole bucket
received them all, in every composed worker (the recall worker waits on one source of ten).
Past ``MAX_KEY_WATCHES`` consumers (many partitions) it watches the whole bucket instead.

Above what the machine sustains, a source falls behind for good (the recall worker at the
pipeline's capacity): waiting for it would hold every briefing for the whole bound, and
the waits queue up behind one another in the composed worker's loop. So the tracker also
keeps each consumer's recent *pace* (stream sequences per second over the last few
seconds) and does not wait for a source whose pace says it will not reach the trigger
within ``CATCH_UP_S`` (or the bound's rest, if shorter): it is reported lagging at once,
the document shows it as of its last cut, and the document is completed when it catches
up. A source whose pace is not known yet (it has just started, or has been idle) is waited
for as before.

With partitions, the consumer to wait on is the source's consumer of the agent's
partition (``<worker>-<k>``, ``shared.inputs.Inputs.consumer``): it reads only its
slots' events (the server filters), so its checkpoint stops at its own last event and the
second rule (nothing pending) is what says it has caught up with the rest of the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import NamedTuple

import nats.js.errors
from nats.js.client import JetStreamContext

from shared.consume import CHECKPOINT_EVERY_S
from shared.names import BUCKET_CHECKPOINTS, EVENTS_STREAM
from shared.natsio import consumer_state
from shared.tasks import cancel_and_wait

log = logging.getLogger(__name__)

STALLED_LAG = 1000  # events short of a missed sequence past which a consumer counts as stalled
CATCH_UP_S = 0.5  # a source its pace says is further than this from the trigger is not waited for
PACE_WINDOW_S = 5.0  # the checkpoint moves a consumer's pace is measured over
PACE_MIN_SPAN_S = 1.0  # a pace needs this much history (one batch says nothing)
MAX_KEY_WATCHES = 16  # checkpoints watched one by one; past this many, the whole bucket is watched
# a consumer's state is asked of the server at most this often (every wait of the process shares
# the answer): the checkpoint watch says when it moved; the server's view is for a watch fallen
# silent and for a consumer with nothing left to apply. Asked at every poll of every wait, it
# was most of the boot worker's CPU above capacity (docs/BENCHMARKS.md, issue 39, "Eighth round").
SERVER_EVERY_S = 0.1
# a wait looks at a source's proof (its document's head: a KV read of the whole document) at most
# this often, however often checkpoints move meanwhile (every move wakes every wait)
PROOF_EVERY_S = 0.05
_ALL = ">"  # the key filter of a watch of the whole bucket


# Another way to know a consumer has applied what a wait needs (the agent's document of the
# source already holds the event before the trigger or a later one: ``shared.asof.DocReader.final_before``)
Proof = Callable[[], Awaitable[bool]]


class _Asked(NamedTuple):
    """The server's view of a consumer (``consumer_info``), asked at ``at`` (``time.monotonic()``)."""

    at: float
    applied: int  # its ack floor: every message up to it is applied (acked once its batch is committed)
    drained: bool  # nothing pending or unacked then: everything stored before ``at`` is applied
    exists: bool = True  # False: no such consumer (nothing says it applied anything)
    left: int = 0  # its pending and unacked messages then: what it still had to apply


class Drained(NamedTuple):
    """Whether a consumer had nothing left (``drained``), asked at ``at`` (``time.monotonic()``)
    while its checkpoint was ``checkpoint`` (``lagging_now``'s cache)."""

    at: float
    checkpoint: int
    drained: bool


class _Missed(NamedTuple):
    seq: int  # the highest sequence the consumer missed at a bound
    patience_until: float  # monotonic time after which it is no longer waited for while short of ``seq``


class WatermarkTracker:
    """Follows the source workers' checkpoints; ``wait`` holds a composed document until
    its sources reached its sequence, at most a bound.

    A source that missed a bound is given one more bound of *patience* (``patience_s``,
    by default the bound it missed): triggers in that time still wait for it (a merely
    slow source — one long batch — catches up and nothing is marked lagging). After that,
    and while it is still short of what it missed, it is reported lagging at once: a
    source that cannot keep up (the recall worker embedding on a busy machine) must not
    hold every later document for a bound each — they queue up behind one another.
    """

    def __init__(self, js: JetStreamContext, poll_s: float = 0.02, patience_s: float | None = None) -> None:
        self._js = js
        self._checkpoints: dict[str, int] = {}
        self._changed = asyncio.Event()  # set (and replaced) at every checkpoint change
        self._watches: dict[str, asyncio.Task[None]] = {}  # key filter (a consumer, or _ALL) → its watch
        self._poll_s = poll_s
        self._patience_s = patience_s
        self._idle_cache: dict[str, Drained] = {}
        self._behind: dict[str, _Missed] = {}
        self._moves: dict[str, deque[tuple[float, int]]] = {}  # consumer -> (monotonic time, checkpoint)
        self._asked: dict[str, _Asked] = {}  # consumer -> the server's last answer
        self._asking: dict[str, tuple[float, asyncio.Task[_Asked]]] = {}  # consumer -> the request on its way

    async def start(self) -> None:
        """Follow every consumer's checkpoint now (one watch of the whole bucket); without it
        the tracker follows each consumer it is asked about from the first time it is asked."""
        await self._stop_watches()
        kv = await self._js.key_value(BUCKET_CHECKPOINTS)
        watcher = await kv.watchall()
        self._watches[_ALL] = asyncio.create_task(self._follow(watcher), name="checkpoint-watch")

    def follow(self, consumers: Iterable[str]) -> None:
        """Watch these consumers' checkpoints, from now on (the first value arrives with the
        watch: until then ``checkpoint`` says 0 and a wait asks the server, as for a watch that
        fell silent). Past ``MAX_KEY_WATCHES`` keys, one watch of the whole bucket replaces them."""
        watches = self._watches
        for key in [key for key, task in watches.items() if task.done()]:
            del watches[key]  # it could not start, or ended (NATS went away): made again from now on
        if _ALL in watches:
            return
        new = [c for c in consumers if c not in watches]
        if not new:
            return
        if len(watches) + len(new) > MAX_KEY_WATCHES:
            for task in watches.values():
                task.cancel()
            watches.clear()
            new = [_ALL]
        for key in new:
            watches[key] = asyncio.create_task(self._watch(key), name=f"checkpoint-watch-{key}")

    async def _watch(self, key: str) -> None:
        try:
            kv = await self._js.key_value(BUCKET_CHECKPOINTS)
            watcher = await kv.watch(key)
        except Exception as exc:  # waits ask the server instead (``reached``), as when a watch falls silent
            log.warning("checkpoint_watch_failed", extra={"key": key, "error": repr(exc)})
            return
        await self._follow(watcher)

    async def _follow(self, watcher: object) -> None:
        try:
            async for entry in watcher:  # type: ignore[attr-defined]
                if entry is None or entry.value is None or entry.key is None:
                    continue
                with contextlib.suppress(ValueError):
                    self._checkpoints[entry.key] = int(entry.value)
                    self._moved(entry.key, int(entry.value))
                    # every waiter holds the event of the moment it looked: set it, hand out a new one
                    self._changed.set()
                    self._changed = asyncio.Event()
        finally:
            with contextlib.suppress(Exception):
                await watcher.stop()  # type: ignore[attr-defined]

    async def stop(self) -> None:
        await self._stop_watches()

    async def _stop_watches(self) -> None:
        tasks, self._watches = list(self._watches.values()), {}
        for task in tasks:
            await cancel_and_wait(task)

    def changed(self) -> asyncio.Event:
        """An event set at the next checkpoint change (take it before looking, then wait on it)."""
        return self._changed

    def checkpoint(self, consumer: str) -> int:
        """The consumer's checkpoint as the watch last said (0 before its first value, or when
        nothing follows it: ``follow``, which every wait does for its consumers)."""
        return self._checkpoints.get(consumer, 0)

    def _moved(self, consumer: str, seq: int) -> None:
        moves = self._moves.setdefault(consumer, deque())
        now = time.monotonic()
        moves.append((now, seq))
        while len(moves) > 2 and now - moves[1][0] > PACE_WINDOW_S:
            moves.popleft()

    def pace(self, consumer: str) -> float | None:
        """Stream sequences a second the consumer's checkpoint moved over the last few
        seconds (until now: a consumer that stopped moving slows down), or None when it has
        not moved for long enough to say."""
        moves = self._moves.get(consumer)
        if not moves or len(moves) < 2:
            return None
        (first_t, first_seq), (last_t, last_seq) = moves[0], moves[-1]
        now = time.monotonic()
        if last_t - first_t < PACE_MIN_SPAN_S or now - last_t > PACE_WINDOW_S:
            return None
        return (last_seq - first_seq) / (now - first_t)

    def _out_of_reach(self, consumer: str, seq: int, remaining_s: float) -> bool:
        """Its pace says it will not reach ``seq`` within ``CATCH_UP_S`` (or what is left of
        the bound): waiting would only delay the document."""
        pace = self.pace(consumer)
        if pace is None:
            return False
        return seq - self._position(consumer, pace) > pace * min(remaining_s, CATCH_UP_S)

    def _position(self, consumer: str, pace: float) -> float:
        """Where a consumer moving at ``pace`` is by now: a moving consumer writes its checkpoint
        at most every ``CHECKPOINT_EVERY_S`` (``shared.consume``; at once only at a trigger), so
        the last one seen is up to that long's events behind it — not a sign it is slow."""
        at, seq = self._moves[consumer][-1]
        return seq + pace * min(time.monotonic() - at, CHECKPOINT_EVERY_S)

    async def drained(self, consumer: str) -> bool:
        """True when the consumer has no pending or unacked messages right now."""
        try:
            state = await consumer_state(self._js, EVENTS_STREAM, consumer)
        except nats.js.errors.NotFoundError:
            return False
        return not state.num_pending and not state.num_ack_pending

    async def reached(self, consumer: str, seq: int, since: float | None = None) -> bool:
        """The consumer applied everything up to ``seq``: its checkpoint (the watch) says so, or
        the server does — its ack floor (a message is acked once its batch is committed) is there, or
        nothing is left for it. The server's view keeps this right when the watch fell silent
        (a NATS restart can end its ordered consumer without a word): every trigger of every
        composed worker then waited out its bound.

        ``since``: a ``time.monotonic()`` after ``seq`` was stored (a wait's start): an answer
        the server gave after it is as good as a new one (``_server``). None: asked now."""
        self.follow((consumer,))
        if self.checkpoint(consumer) >= seq:
            return True
        asked = await self._server(consumer, time.monotonic() if since is None else since)
        return asked.exists and (asked.applied >= seq or asked.drained)

    async def left(self, consumer: str) -> int | None:
        """How many messages the consumer still had to apply (pending and unacked: the server's
        count, of every agent of its filter) — as the server said less than ``SERVER_EVERY_S``
        ago, the answer every wait shares (``_server``); None: no such consumer."""
        self.follow((consumer,))
        asked = await self._server(consumer, 0.0)
        return asked.left if asked.exists else None

    async def _server(self, consumer: str, since: float) -> _Asked:
        """The server's view of the consumer, asked at or after ``since`` — and less than
        ``SERVER_EVERY_S`` ago, or asked again (shared by every wait: one request on its way at
        a time). "Nothing left" is only an answer for what was stored before it was asked."""
        now = time.monotonic()
        fresh = max(since, now - SERVER_EVERY_S)
        asking = self._asking.get(consumer)
        if asking is not None and not asking[1].done() and asking[0] >= fresh:  # a failed one is asked again
            return await asyncio.shield(asking[1])
        asked = self._asked.get(consumer)
        if asked is not None and asked.at >= fresh:
            return asked
        task = asyncio.create_task(self._ask(consumer, now), name=f"consumer-info-{consumer}")
        self._asking[consumer] = (now, task)
        try:
            return await asyncio.shield(task)
        finally:
            if task.done() and self._asking.get(consumer, (0.0, None))[1] is task:
                del self._asking[consumer]

    async def _ask(self, consumer: str, at: float) -> _Asked:
        try:  # the fields read here only (``consumer_state``), not nats-py's whole ``ConsumerInfo``
            state = await consumer_state(self._js, EVENTS_STREAM, consumer)
        except nats.js.errors.NotFoundError:
            asked = _Asked(at, 0, False, exists=False)
        else:
            left = state.num_pending + state.num_ack_pending
            asked = _Asked(at, state.acked, not left, left=left)
        self._asked[consumer] = asked
        return asked

    def _stalled(self, consumer: str) -> bool:
        """Short of a sequence it missed at an earlier bound, and either its patience has
        run out or it is more than ``STALLED_LAG`` events short: waiting again would only
        hold every later document for the whole bound."""
        missed = self._behind.get(consumer)
        if missed is None:
            return False
        now = self.checkpoint(consumer)
        if now >= missed.seq:
            del self._behind[consumer]
            return False
        return missed.seq - now > STALLED_LAG or time.monotonic() >= missed.patience_until

    def _missed(self, consumer: str, seq: int, bound_s: float) -> None:
        before = self._behind.get(consumer)
        if before is None:
            patience = self._patience_s if self._patience_s is not None else bound_s
            self._behind[consumer] = _Missed(seq, time.monotonic() + patience)
        else:
            self._behind[consumer] = before._replace(seq=max(seq, before.seq))

    def _patience_left(self, pending: Iterable[str]) -> float:
        """Until the next patience of a pending consumer runs out (inf: none is running)."""
        now = time.monotonic()
        ends = [m.patience_until for c in pending if (m := self._behind.get(c)) is not None and m.patience_until > now]
        return min(ends) - now if ends else float("inf")

    async def wait(self, needs: dict[str, int], bound_s: float, proofs: Mapping[str, Proof] | None = None,
                   until: float | None = None) -> list[str]:
        """Wait until every consumer reached its sequence, at most ``bound_s`` — and not past
        ``until`` (a ``time.monotonic()``; None: no such end), the caller's own budget.

        Returns the consumers still lagging at the bound (empty when all caught up). A
        consumer that missed an earlier bound is waited for during its patience only, or
        not at all when it is stalled (see ``_stalled``), nor one whose pace says it will not
        arrive in time (``_out_of_reach``): it is reported lagging at once, until it
        reaches what it missed.

        ``proofs``: per consumer, another way to know it got there, looked at every
        ``PROOF_EVERY_S`` while it is short — the agent's document of the source holding the event
        before the trigger or a later one (a source writes the document made for a trigger at
        once, its checkpoint only after the rest of its batch is applied and committed).

        A wait ended by ``until`` before its bound is not a bound missed: what the sources
        did is no reason to wait less for them next time (no patience starts, ``_stalled``).
        """
        self.follow(needs)
        started = time.monotonic()
        bound_end = started + bound_s
        deadline = bound_end if until is None else min(bound_end, until)
        pending = dict(needs)
        proofs = proofs or {}
        proved: dict[str, float] = {}  # consumer -> when its proof was last looked at
        while True:
            changed = self._changed  # taken before looking: a change after that sets it
            looked = time.monotonic()
            due = {c: proofs[c] for c in pending if c in proofs and looked - proved.get(c, -1.0) >= PROOF_EVERY_S}
            proved.update(dict.fromkeys(due, looked))
            results = await asyncio.gather(*(self._arrived(c, s, due.get(c), started) for c, s in pending.items()))
            pending = {c: s for (c, s), ok in zip(pending.items(), results, strict=True) if not ok}
            now = time.monotonic()
            remaining = deadline - now
            hopeless = all(self._stalled(c) or self._out_of_reach(c, s, remaining) for c, s in pending.items())
            if not pending or remaining <= 0 or hopeless:
                if remaining > 0 or now >= bound_end:  # a bound missed (or given up on): not a budget spent
                    for consumer, seq in pending.items():
                        self._missed(consumer, seq, bound_s)
                return sorted(pending)
            poll = max(self._poll_s, PROOF_EVERY_S) if any(c in proofs for c in pending) else self._poll_s * 5
            timeout = min(poll, remaining, self._patience_left(pending))
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(changed.wait(), timeout=timeout)

    async def _arrived(self, consumer: str, seq: int, proof: Proof | None, since: float) -> bool:
        """``reached`` (the server asked after ``since``, the wait's start), or its proof says so
        (looked at before the server is asked)."""
        if self.checkpoint(consumer) >= seq:
            return True
        if proof is not None and await proof():
            return True
        return await self.reached(consumer, seq, since)

    async def lagging_now(self, needs: dict[str, int], cache_s: float = 0.5,
                          cache: dict[str, Drained] | None = None) -> list[str]:
        """Lag without waiting (for requests): cached consumer state, refreshed every ``cache_s``
        — and as soon as the consumer's checkpoint has moved since (a source busy a moment ago
        that has applied its batch since is asked again, not named lagging for the rest of it).

        ``cache``: the caller's own (requests must not see an answer up to ``cache_s`` old that
        another user of the tracker — boot's completer polling a lagging source — looked up)."""
        self.follow(needs)
        out = []
        now = time.monotonic()
        idle = self._idle_cache if cache is None else cache
        for consumer, seq in needs.items():
            checkpoint = self.checkpoint(consumer)
            if checkpoint >= seq:
                continue
            cached = idle.get(consumer)
            if cached is None or now - cached.at > cache_s or cached.checkpoint != checkpoint:
                cached = Drained(now, checkpoint, await self.drained(consumer))
                idle[consumer] = cached
            if not cached.drained:
                out.append(consumer)
        return sorted(out)
