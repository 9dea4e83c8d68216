"""The knowledge facts as of the session starts recall has not reached yet, read as soon as the
knowledge worker has passed them (issue 39, twenty-fifth round, docs/BENCHMARKS.md).

A session start's facts are the agent's KnowledgeDoc as of the start (``RecallProjection.
_mirror_facts``: ``Inputs.patiently`` then ``Inputs.at_trigger``, which reads the newest revision
below the start, ``shared.asof``). The knowledge worker is cheap and runs ahead; when recall is
behind (the fleet at 400 msg/s), knowledge has written more than ``DOC_HISTORY`` (16) revisions
of the agent by the time recall reaches the start, and the read derives the document from the
agent's events instead (``shared.derive``: exact, but ~18 ms a start, 57 % of the starts in the
twenty-fourth round's run — a quarter of recall's CPU when behind).

So recall reads it earlier: as knowledge's checkpoint moves (while knowledge is well ahead of
recall) it looks in the stream, from where it last looked, for the session starts the knowledge
worker has applied everything before (its checkpoint at or past the start — what ``at_trigger``
waits for), and runs the same read for each of them then, while the revision below the start is
still in the bucket's history; the reading is kept until the
batch that holds the start takes it. It is the same function of the same stored revisions, only
sooner: the facts are the same bytes (a reading whose knowledge consumer lagged is not kept:
the start reads again, as before). A start not found ahead (recall caught up, another subject,
a reading failed) reads as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from nats.js.client import JetStreamContext

from shared.codec import Envelope, Rejection, decode_event, event_limits
from shared.config import Settings
from shared.inputs import Inputs, Reading
from shared.names import EVENTS_STREAM
from shared.natsio import direct_range
from shared.tasks import cancel_and_wait
from workers.recall.sources import KNOWLEDGE

log = logging.getLogger(__name__)

# readings kept ahead at most (a KnowledgeDoc each): a recall far behind (a rebuild) reads no
# further ahead than this many starts, and goes on as it reaches them — the starts past it then
# read at their batch, as before (derived, when knowledge's history has moved past them). The
# lag's window of starts: recall 15 000 events behind in the bench at 400 msg/s (a start in
# 100 events) held ~150; 64 stopped the look there and left 41 of 80 starts derived
AHEAD_STARTS = 256
# recall looks ahead while knowledge's checkpoint is more than this many events past what recall
# reached (closer, the start's revision is still in the history when recall reaches it — and a
# recall that keeps up makes no request a checkpoint move)
LOOK_GAP = 100
# and once knowledge has applied this many events since the last look, not at every move of its
# checkpoint (~30 a second at 400 msg/s: a look is a request, ~1–2 ms of the loop): a start is read
# at most this many events after knowledge passed it — a few of the agent's 16 revisions
LOOK_STEP = 50
# readings (and starts read) this many sequences below the furthest recall prepared are dropped:
# a deferred batch holds an agent's events until its next cut, so recall prepares the agent's
# start up to a few thousand sequences after another agent's later event (1 300 then 1 200 at
# 400 msg/s in the bench), never this far
DROP_BEHIND = 20_000
_READ_BATCH = 256  # session events a request of the look (a batched direct get)
_GET_TIMEOUT_S = 5.0

Read = Callable[[Envelope], Awaitable[Reading]]


class FactsAhead:
    """The readings of the session starts ahead of recall, by (agent, sequence). One per
    recall projection; with partitions (one consumer of knowledge per partition) it reads
    nothing ahead (``enabled``)."""

    def __init__(self, js: JetStreamContext, settings: Settings, inputs: Inputs, read: Read) -> None:
        self._js = js
        self._prefix = settings.prefix
        self._limits = event_limits(settings)
        self._inputs = inputs
        self._read = read
        self.enabled = settings.partitions <= 1
        self._reached = 0  # the furthest sequence recall has prepared
        self._scanned = 0  # every start below this was looked for (0: recall prepared nothing yet)
        self._done: set[tuple[str, int]] = set()  # the starts recall has read (with a reading or not)
        self._readings: dict[tuple[str, int], asyncio.Future[Reading]] = {}
        self._task: asyncio.Task[None] | None = None
        self._looking = asyncio.Lock()
        self.read = 0  # starts read ahead
        self.taken = 0  # readings a start took

    def reached(self, first: int, last: int) -> None:
        """Recall prepares the events from ``first`` to ``last`` (a deferred batch: not in stream
        order across agents — an agent's events wait for its next cut): the readings of starts
        ``DROP_BEHIND`` below the furthest it reached that nothing took are dropped (a start it
        never prepares: a dead letter), and the looks begin with the first batch."""
        if not self._scanned:
            self._scanned = first
        self._reached = max(self._reached, last)
        below = self._reached - DROP_BEHIND
        for key in [key for key in self._readings if key[1] < below]:
            future = self._readings.pop(key)
            if not future.done():
                future.cancel()
        self._done = {key for key in self._done if key[1] >= below}
        if self.enabled and self._task is None:
            self._task = asyncio.create_task(self._run(), name="recall-facts-ahead")

    async def take(self, start: Envelope) -> Reading | None:
        """The reading of ``start`` made ahead (waited for while it is being made), or None:
        none was, it failed, or its knowledge consumer lagged — the start reads itself."""
        self._done.add((start.agent, start.seq))
        future = self._readings.pop((start.agent, start.seq), None)
        if future is None:
            return None
        try:
            reading = await asyncio.shield(future)
        except asyncio.CancelledError:
            if future.cancelled():  # the look was stopped (closing): not this task
                return None
            raise
        except Exception:
            return None
        if reading.lagging:
            return None
        self.taken += 1
        return reading

    async def look(self) -> int:
        """One look ahead: the session starts stored after what recall reached that the knowledge
        worker has passed, each read in stream order (a derivation, when one is needed, goes on
        from the last). Returns how many were read."""
        async with self._looking:
            return await self._look()

    async def _look(self) -> int:
        tracker = await self._inputs.tracker()
        consumer = self._inputs.consumer(KNOWLEDGE.worker, "")  # one partition: one consumer for every agent
        tracker.follow([consumer])
        passed = tracker.checkpoint(consumer)
        begin = self._scanned
        if not begin or passed < begin or len(self._readings) >= AHEAD_STARTS:
            return 0
        found = await direct_range(self._js, EVENTS_STREAM, f"{self._prefix}.session.>", begin, passed + 1,
                                   _GET_TIMEOUT_S, _READ_BATCH)
        loop = asyncio.get_running_loop()
        count = 0
        for seq, msg in found:
            subject = (msg.headers or {}).get("Nats-Subject", "")
            if not subject.endswith(".start"):
                continue  # an end
            env = decode_event(self._prefix, subject, seq, msg.data, self._limits)
            if isinstance(env, Rejection) or (env.family, env.kind) != ("session", "start"):
                continue
            if (env.agent, seq) in self._readings or (env.agent, seq) in self._done:
                continue  # read at a look that failed further on; or recall got there: it read the start itself
            if len(self._readings) >= AHEAD_STARTS:
                self._scanned = seq  # the rest at a later look
                return count
            future: asyncio.Future[Reading] = loop.create_future()
            self._readings[(env.agent, seq)] = future
            try:
                reading = await self._read(env)
            except asyncio.CancelledError:
                future.cancel()
                raise
            except Exception as exc:  # the start reads itself, as before
                log.info("recall_facts_ahead_failed", extra={"agent": env.agent, "seq": seq, "error": repr(exc)})
                future.cancel()
                self._readings.pop((env.agent, seq), None)
                continue
            if not future.done():  # dropped meanwhile: cancelled
                future.set_result(reading)
            self.read += 1
            count += 1
        self._scanned = passed + 1
        return count

    async def _run(self) -> None:
        """A look at a move of knowledge's checkpoint while it is more than ``LOOK_GAP`` ahead of
        what recall reached (``LOOK_STEP`` events after the last look at the earliest): soon
        after knowledge passes a start, not at recall's next batch (a recall starved of CPU
        takes one every few seconds, and knowledge writes past a start's history meanwhile)."""
        tracker = await self._inputs.tracker()
        consumer = self._inputs.consumer(KNOWLEDGE.worker, "")
        tracker.follow([consumer])
        while True:
            changed = tracker.changed()  # taken before looking: a move after that sets it
            passed = tracker.checkpoint(consumer)
            if passed - self._reached > LOOK_GAP and passed - self._scanned >= LOOK_STEP:
                try:
                    await self.look()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the starts read themselves, as before
                    log.info("recall_facts_ahead_failed", extra={"error": repr(exc)})
            await changed.wait()

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)
        for future in self._readings.values():
            if not future.done():
                future.cancel()
        self._readings.clear()
