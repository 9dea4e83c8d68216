"""The one consume loop every worker runs.

Order is part of correctness, so the loop applies each agent's events strictly in stream
order, one batch at a time:

1. read ahead: fetch up to ``read_ahead`` messages (and ``read_ahead_bytes``) past the
   ones applied, decode and validate each once, and file it in its agent's lane
   (``shared.lanes``); an empty fetch is an idle tick. While the read-ahead is full behind
   one agent's backlog, the other agents' events past it are filed too, read with an
   ephemeral consumer that leaves the noisy agent out (``shared.scout``); the durable's own
   delivery of those is acked when they are applied;
2. take a batch: each agent's lane gets a fair share of it, from its front, and the batch
   is applied in stream order — so one agent's backlog takes turns with another agent's
   next event instead of holding it back (with one agent, the batch is the next
   ``batch_size`` messages, as in-order consumption made it — up to the next stream cut
   when the handler writes at cuts: each lane's share ends below the first cut past its
   front, so a batch writes each agent's documents once, ``Lanes.take``);
3. ``handler.apply`` each event in order (bad input is dead-lettered with a reason). A
   transient failure (store or NATS unreachable; never an LLM, whose calls ``shared.llm``
   bounds and lets fall back to the structured path) is retried in place, without limit,
   with capped backoff, while readiness is false —
   the message keeps its place, so nothing after it can overtake it. Any other failure is
   retried ``max_attempts`` times and then dead-lettered (``InvalidEvent``, bad input only
   the handler can tell, at once);
4. ``handler.commit`` writes the batch's documents (compare-and-set, per-agent watermark);
5. the checkpoint (highest contiguous applied stream sequence: just below the oldest
   message still held in a lane) goes to ``cortex_checkpoints`` — at once when it passes a
   trigger (a session's start or end, a compaction: ``shared.names.TRIGGERS``, what the
   composed workers wait for it on), otherwise at most every ``CHECKPOINT_EVERY_S``: a batch
   that comes sooner after the last write leaves its checkpoint to a write that follows when
   that time is up, or as soon as the loop has taken no batch for ``CHECKPOINT_IDLE_S`` (the
   last one of a burst is not left behind), with whatever later batches applied by then
   (every worker wrote one per batch — then one every 20 ms —, a few hundred a second at
   live rates, and each reached the composed workers that watch it);
6. every message of the batch is acked (or termed, for dead letters) — with the loop's next
   write: the next batch's documents or a checkpoint, or alone ``ACKS_WITHIN_S`` after the
   batch when nothing else is sent (at live rates every batch's acks were a write of their
   own to the server, from every worker, for every event). Acks are out of stream order
   across agents; the checkpoint never is.

A checkpoint behind what is applied only makes a restart apply a little more again, which
the documents' watermarks skip (below); what is acked is committed, so a source's ack floor
(``shared.watermarks``) never claims an event that is not in its documents.

On start the durable consumer is rewound to checkpoint + 1. That removes the trap of the
naive design: after a crash the server would redeliver the unacked messages only after
their ack wait, *behind* later messages of the same agent. Rewinding restores stream
order, and the documents' watermarks skip what was applied but not yet checkpointed — an
event applied ahead of another agent's backlog included: a document is one agent's, and
its ``integrity.last_seq`` holds the event.

Events of the OpenClaw store (sourced into the stream without ``Nats-Msg-Id``) are
exactly once by event id too: a copy of one stored at most ``duplicate_window`` sequences
after it is skipped (``shared.duplicates``). So that a restart decides as the first run
did, the consumer is rewound that many sequences further back; messages at or below the
checkpoint only refill the window, they are never applied again.

Partitions (contract: Partitions in the server): the consumer ``<worker>-<k>`` filters on
its slots' stored subjects (``shared.names.consumer_filter_subjects``), so the server
delivers only its agents' events and the loop never sees another partition's — but for
the OpenClaw store's events filed under its session token ``agent`` (OpenClaw 2026.9), whose
agents only their session keys tell: every partition that owns such an agent reads them all
and applies its own agents' (``shared.names.partition_owns``), so each agent's events are
still applied by one consumer, in stream order. The
checkpoint means "every event of this consumer up to this stream sequence is applied";
watermarks wait on it, or on the consumer having nothing pending (``shared.watermarks``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable

import msgspec
import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from shared import metrics
from shared.backoff import backoff_delay
from shared.codec import Envelope, Limits, Rejection, decode_event
from shared.connection import ACK, IN_PROGRESS, TERM, reply_all
from shared.duplicates import DuplicateWindow
from shared.errors import (
    ConsumerLost,
    DocumentCorrupt,
    InvalidEvent,
    LeaseLost,
    RebuildRequired,
    UnwritableDocuments,
    WorkerCannotRun,
    is_transient,
)
from shared.health import Health
from shared.kv import bucket_made_at, checkpoint_value, key_written_at, kv_read
from shared.lanes import LATER, Held, Lanes, Later
from shared.names import (
    BUCKET_CHECKPOINTS,
    DLQ_STREAM,
    EVENTS_STREAM,
    OPENCLAW_SESSION_AGENT,
    TRIGGERS,
    dlq_subject,
    is_session_agent_subject,
    is_store_subject,
    partition_owns,
    published_form,
)
from shared.natsio import max_payload, message_size
from shared.openclaw import filed_agent_of
from shared.pull import PullFetcher, consumer_seq, fetcher_for, pending_after, stream_seq
from shared.repair import first_event_seq
from shared.scout import Passing, Scout
from shared.tasks import cancel_and_wait

log = logging.getLogger(__name__)

# the checkpoint is written at most this often while batches keep coming — but at once when it passes a
# trigger, and as soon as the loop has taken no batch for CHECKPOINT_IDLE_S (the last one of a burst)
CHECKPOINT_EVERY_S = 0.2
CHECKPOINT_IDLE_S = 0.02
ACKS_WITHIN_S = 0.02  # a committed batch's acks wait at most this long for the loop's next write to go with
SCOUT_RECHECK_S = 1.0  # how often an open scout is asked whether a new agent came into a noisy agent's slot
SCOUT_SKIM = 8  # batches of messages the scout sorts out a turn at most (and, passing them all, has on their way)
# A batch's messages are applied without a turn of the event loop unless a handler waits on I/O: a long one (a
# slow handler, a starved CPU) would hold back the lease's keeper past its fence, and the lease would be lost
# to a batch that was only slow. A batch gives the loop a turn at least this often.
BATCH_TURN_EVERY_S = 0.02


class Handler(ABC):
    """What the consume loop drives, per batch: ``apply`` each event in stream order,
    ``commit`` once, then ``on_committed`` after the batch is checkpointed (written, or
    left to the write within ``CHECKPOINT_EVERY_S``) and acked (or its acks left to the loop's
    next write, within ``ACKS_WITHIN_S``); ``reset`` after a failure or
    a lost lease, ``aclose`` when the loop ends (the host calls it). The last two hooks
    default to nothing."""

    # the stream's cut interval at which the handler writes its pending documents
    # (``shared.projection.boundary``; 0: none): the loop keeps each agent's part of a batch
    # between two cuts (``Lanes.take``), so a batch writes each document once
    cut_every: int = 0

    @abstractmethod
    async def apply(self, env: Envelope) -> bool:
        """Apply one event; True when it changed something (the applied-events metric)."""

    @abstractmethod
    async def commit(self) -> None:
        """Make the batch's changes durable; raise ``TransientError`` to be retried."""

    @abstractmethod
    def reset(self) -> None:
        """Forget uncommitted changes (the batch is given back, or the lease was lost)."""

    def follow_backlog(self, waiting: Callable[[], int]) -> None:
        """Given by the loop as it starts: how many messages are read and wait to be applied,
        asked at any moment (at a commit: behind it). A handler may put off, while more
        follow, what only a crash of the machine needs (default: not asked)."""
        return None

    async def on_committed(self, seq: int) -> None:
        """The batch is committed, checkpointed at ``seq`` and acked (the checkpoint and the acks
        written, or on their way with the loop's next write): side effects that must follow
        durability (a workspace file, a published acknowledgement)."""
        return None

    async def aclose(self) -> None:
        """Release what the handler opened (an LLM client, a watermark tracker, a store)."""
        return None


class LoopConfig(msgspec.Struct, frozen=True, kw_only=True):
    prefix: str = "cortex"
    batch_size: int = 500
    fetch_timeout_s: float = 1.0
    ack_wait_s: float = 30.0
    max_attempts: int = 5
    retry_base_s: float = 0.2
    retry_max_s: float = 30.0
    drain_timeout_s: float = 20.0
    limits: Limits = Limits()
    duplicate_window: int = 10_000  # CORTEX_OPENCLAW_DEDUP_WINDOW (shared.duplicates)
    # how far past the messages being applied the loop reads, so agents take turns (shared.lanes):
    # messages (never fewer than a batch) and bytes held (CORTEX_RUNTIME_READ_AHEAD[_MIB])
    read_ahead: int = 5000
    read_ahead_bytes: int = 32 << 20
    # an idle loop's first delivery waits this long for more before its batch is taken (``shared.pull``;
    # the throughput workers': CORTEX_RUNTIME_THROUGHPUT_LINGER_MS); 0: taken at once
    linger_s: float = 0.0
    # core subjects whose publishes end a linger at once (``shared.pull``: the triggers' published
    # subjects, ``shared.projection.trigger_subjects``, for a lingering worker); none: the linger runs out
    wake_on: tuple[str, ...] = ()
    # the document buckets the handler writes (physical names): one made after the checkpoint was
    # written lost every document the checkpoint stands for, and the loop starts over from 1
    buckets: tuple[str, ...] = ()
    # partition k of N (None: the only consumer): the agents whose events the loop applies
    # (``shared.names.partition_owns``)
    partition: int | None = None
    partitions: int = 1


class Interrupted(Exception):
    """Stop was requested while a retry was pending: give the batch back unacked."""


def _clean_header(text: str, limit: int = 1024) -> str:
    return " ".join(text.split())[:limit]


# What JetStream's publish adds to a dead letter's headers (``Nats-Expected-Stream``), with room to spare.
_DLQ_HEADROOM = 128


def dead_letter_message(data: bytes, headers: dict[str, str], limit: int) -> tuple[bytes, dict[str, str]]:
    """The dead letter of an event: the event unchanged with ``headers`` — or, when that would be
    over the server's max payload (an event just under the limit plus ~200 bytes of headers), no
    body and a ``Cortex-Body-Omitted`` header giving its size. The reason and where the original
    is (``Cortex-Original-Subject``, ``Cortex-Stream-Seq``) are always kept; the event itself
    stays in its stream."""
    if message_size(data, headers) + _DLQ_HEADROOM <= limit:
        return data, headers
    return b"", {**headers, "Cortex-Body-Omitted": f"{len(data)} bytes, over the server's max payload of {limit}"}


# a stored subject, <prefix>.<family>.<slot>.<agent>.<kind> (shared.codec.parse_subject): its tokens
_STORED_TOKENS = 5
_FAMILY_TOKEN = 1
_AGENT_TOKEN = 3
_KIND_TOKEN = 4

class Beats:
    """Which held messages a heartbeat marks in progress: those it saw held at the previous beat.

    The server redelivers a message ``ack_wait`` after it sent it unless told it is in progress.
    A message first seen at a beat was read within the last interval (``ack_wait/3``); it is
    marked at the next beat, at most two intervals after it was read — a third of the ack wait
    to spare, as one read just after a beat had before. Marking every held message at every beat
    (a full read-ahead: 5 000 publishes) cost a worker draining a backlog up to 8 % of its CPU,
    and its server as many acks to process, for messages read moments before.

    Compared by identity: a message seen last time is held by this object until the next beat,
    so no other message can take its ``id``."""

    def __init__(self, ack_wait_s: float) -> None:
        self.interval_s = max(0.5, ack_wait_s / 3)
        # a beat longer than a third of the ack wait (a short ack wait): every held message, every beat
        self._every = self.interval_s * 3 > ack_wait_s
        self._seen: dict[int, Msg] = {}
        self.count = 0  # beats so far

    def due(self, held: Iterable[Msg]) -> list[Msg]:
        """The messages of ``held`` to mark now; ``held`` is remembered for the next beat."""
        seen = self._seen
        now = {id(msg): msg for msg in held}
        self._seen = now
        self.count += 1
        if self._every:
            return list(now.values())
        return [msg for key, msg in now.items() if key in seen]


class ConsumeLoop:
    def __init__(
        self,
        js: JetStreamContext,
        *,
        worker: str,
        consumer: str,
        handler: Handler,
        config: LoopConfig,
        health: Health,
        accept: Callable[[Envelope], bool] | None = None,
        fence: Callable[[], None] | None = None,
        label: str | None = None,
    ) -> None:
        self._js = js
        self._checkpoints: KeyValue | None = None  # the bucket's handle, looked up once
        self.worker = worker
        self.consumer = consumer
        self._handler = handler
        self._cfg = config
        self._health = health
        self._accept = accept
        self._fence = fence or (lambda: None)
        self._applied = 0
        self._inflight: list[Msg] = []
        self._lanes = Lanes()  # read ahead, waiting for their agents' turns
        self._sub: PullFetcher | None = None  # the fetcher (a new one after a resync)
        self._read_top = 0  # the highest stream sequence read (every message up to it is held or handled)
        # handled (applied or dead-lettered, committed and acked) past the checkpoint, which another
        # agent's older event still holds back: a redelivered copy of one is acked, never held again
        self._handled_above: set[int] = set()
        self._fetch_failed = False  # the last fetch failed: not ready until one succeeds
        self._stop = asyncio.Event()
        self._drain_deadline = float("inf")
        self._last_info = 0.0
        # gauges describe one consumer (``<worker>-<k>`` when partitioned); counters sum per worker
        self._label = label or worker
        # labelled children resolved once: per-message .labels() lookups cost more than the regexes
        self._m_seconds = metrics.Tally(metrics.HANDLER_SECONDS.labels(worker))  # handed over at ``_export``
        self._m_applied = metrics.EVENTS.labels(worker, "applied")
        self._m_skipped = metrics.EVENTS.labels(worker, "skipped")
        for reason in metrics.DEAD_LETTER_REASONS:  # series at 0 from the start (see metrics)
            metrics.DEAD_LETTERS.labels(worker, reason)
        self._m_last_ts = metrics.LAST_EVENT_TS.labels(self._label)
        self._m_duplicate = metrics.EVENTS.labels(worker, "duplicate")
        self._m_duplicate_event = metrics.EVENTS.labels(worker, "duplicate_event")
        self._m_refill = metrics.EVENTS.labels(worker, "window_refill")
        self._m_foreign = metrics.EVENTS.labels(worker, "other_partition")
        self._rewound_at = 0  # the checkpoint the loop started from
        # per-event counts and the last event time, exported once per batch (``_export``)
        self._n_applied = self._n_skipped = 0
        self._last_ts: float | None = None
        self._duplicates = DuplicateWindow(config.duplicate_window)
        self._next_delivery: int | None = None  # the consumer sequence the next message must have
        # the checkpoint in the bucket (written, or read at the rewind), when it was written, the one
        # to write next, when the last batch ended, and the write that follows (``_checkpoint``)
        self._written = self._wanted = 0
        self._written_at = self._batch_at = float("-inf")
        self._later: asyncio.Task[None] | None = None
        # the stream sequences of the triggers read past the written checkpoint: the checkpoint that
        # reaches one is written at once (a composed worker's wait for the trigger ends on it)
        self._triggers: list[int] = []
        # committed messages not acked yet (message, dead-lettered): they leave with the loop's next
        # write (the next batch's commit, a checkpoint), or alone ``ACKS_WITHIN_S`` after the first
        self._owed: list[tuple[Msg, bool]] = []
        self._owed_since = 0.0
        self._ack_timer: asyncio.TimerHandle | None = None  # when the owed acks are due alone
        self._acking: asyncio.Task[None] | None = None  # sending them, once due
        # past a full read-ahead (shared.scout): the scout, the sequence it may open past (what
        # the last one sorted out), the messages it filed (held or handled, their durable copies
        # not acked yet) and the durable's copies of those still held, acked when they are
        self._scout: Scout | None = None
        self._scout_floor = 0
        self._beyond = 0  # what the consumer had still to deliver after the last message read
        self._scouted: set[int] = set()
        self._copies: dict[int, Msg] = {}
        self._scout_checked = 0.0  # when the open scout was last asked whether it is outdated
        self._skimming = False  # the scout's last read was all passed: it has more on their way
        self._beats = Beats(config.ack_wait_s)  # which held messages the heartbeat marks in progress

    @property
    def checkpoint(self) -> int:
        return self._applied

    @property
    def beats(self) -> int:
        """Heartbeats so far."""
        return self._beats.count

    def stop(self) -> None:
        """Stop fetching; the current batch finishes within the drain limit."""
        if not self._stop.is_set():
            self._drain_deadline = time.monotonic() + self._cfg.drain_timeout_s
            self._stop.set()
            if self._sub is not None:
                self._sub.hurry()  # a fetch lingering for more returns what it holds

    # ------------------------------------------------------------------ start-up

    async def _checkpoint_bucket(self) -> KeyValue:
        """``cortex_checkpoints``, looked up once: each lookup is a stream info request to the
        server, and the checkpoint is written after batches (a bucket gone meanwhile fails
        the write as the lookup did, transiently, until it is back)."""
        if self._checkpoints is None:
            self._checkpoints = await self._js.key_value(BUCKET_CHECKPOINTS)
        return self._checkpoints

    async def _read_checkpoint(self) -> int:
        kv = await self._checkpoint_bucket()
        raw, _ = await kv_read(kv, self.consumer)
        value = checkpoint_value(raw)
        if value is None and raw is not None:
            # garbage in the bucket: start over from the first event, which is always right
            # (every document skips what it holds by its watermark), only slower
            log.error("checkpoint_unreadable", extra={"consumer": self.consumer, "value": raw[:64].hex()})
        return value or 0

    async def _younger_bucket(self) -> str | None:
        """A document bucket made after the checkpoint was last written — deleted (or lost) and
        made again while this consumer was stopped: the documents the checkpoint stands for are
        gone with it. None when every bucket is older (or missing: writing to it fails, not ready)."""
        written = await key_written_at(self._js, BUCKET_CHECKPOINTS, self.consumer)
        for bucket in self._cfg.buckets if written is not None else ():
            made = await bucket_made_at(self._js, bucket)
            if made is not None and written is not None and made > written:
                return bucket
        return None

    async def _rewind(self) -> None:
        """Resume at checkpoint + 1 in stream order, the duplicate window's span earlier (see
        the module docstring) — or at 1 when a bucket it writes came back empty while it was
        stopped (``_younger_bucket``): every document is derived again, as a replay does."""
        self._applied = await self._read_checkpoint()
        if self._applied and (bucket := await self._younger_bucket()) is not None:
            log.warning("rebuilding_documents", extra={
                "worker": self.worker, "from_seq": 1, "reason": f"bucket {bucket} was made after the checkpoint "
                f"({self._applied}): emptied or deleted while the worker was stopped"})
            self._handler.reset()
            await self._write_checkpoint(0)
            self._applied = 0
        self._duplicates = DuplicateWindow(self._cfg.duplicate_window)
        self._rewound_at = self._read_top = self._written = self._wanted = self._applied
        self._handled_above.clear()  # the rewind delivers them again: the watermarks skip them
        self._triggers.clear()  # read again, past the rewind
        self._scout_floor = 0  # the rewind delivers everything past the checkpoint again, in order
        self._next_delivery = None  # deliveries start over
        start = max(1, self._applied + 1 - self._cfg.duplicate_window) if self._applied else 1
        await self._js.reset_consumer(EVENTS_STREAM, self.consumer, seq=start)
        metrics.CHECKPOINT.labels(self._label).set(self._applied)
        log.info("consumer_rewound", extra={"consumer": self.consumer, "seq": self._applied + 1, "from": start})

    # ------------------------------------------------------------------ main loop

    def _waiting(self) -> int:
        """Messages read and not yet taken into a batch: in the lanes, or delivered to the fetcher."""
        return len(self._lanes) + len(self._sub_buffer())

    async def run(self) -> None:
        self._handler.follow_backlog(self._waiting)
        await self._retry_transient("rewind", self._rewind)
        sub = self._sub = fetcher_for(self._js, EVENTS_STREAM, self.consumer, self._cfg.wake_on)
        await sub.start()
        heartbeat = asyncio.create_task(self._heartbeat(), name=f"{self.consumer}-heartbeat")
        self._health.set_ready(True, "consuming")
        try:
            while not self._stop.is_set():
                msgs, behind_a_gap = self._delivered_in_order(await self._read(sub))
                await self._intake(msgs)
                await self._look_past()
                if self._lanes:
                    batch = self._lanes.take(self._cfg.batch_size, self._handler.cut_every)
                    await self._ask_ahead(sub)
                    await self._run_batch(batch)
                if behind_a_gap:
                    sub = await self._resync(sub, behind_a_gap)
                await self._refresh_consumer_info()
        finally:
            await cancel_and_wait(heartbeat)
            await self._close_scout()
            await sub.stop()
            await self._give_back_held(self._lanes.clear())
            await self._settle_later()

    def _room(self) -> int:
        """How many more messages the read-ahead may take."""
        if self._lanes.bytes >= self._cfg.read_ahead_bytes:
            return 0
        return max(self._cfg.batch_size, self._cfg.read_ahead) - len(self._lanes)

    async def _read(self, sub: PullFetcher) -> list[Msg]:
        """The next messages: waited for (an idle tick at most) when nothing is held; else
        only what has arrived, so the held ones are applied without waiting."""
        room = self._room()
        if not self._lanes:
            cfg = self._cfg
            return await self._fetch(sub.fetch(room, cfg.fetch_timeout_s, cfg.linger_s, cfg.batch_size))
        return await self._fetch(sub.poll(room, self._busy_expiry_s)) if room > 0 else []

    @property
    def _busy_expiry_s(self) -> float:
        """How long a pull request made while batches are applied stays open: a batch's length
        at least (what arrives in it is read right after it, not one batch later), no longer
        than the heartbeat that keeps the messages it delivered from their ack wait."""
        return max(self._cfg.fetch_timeout_s, self._cfg.ack_wait_s / 3)

    def _sub_buffer(self) -> list[Msg]:
        return self._sub.buffered() if self._sub is not None else []

    async def _ask_ahead(self, sub: PullFetcher) -> None:
        """Keep a pull request open for the room a batch just made, so what arrives while the
        batch is applied (another agent's next event) is read right after it — for as long as a
        long batch takes while messages are still held (a backlog), for an idle tick when the
        batch was all there was (a stop waits for the open request, at most 2 s). A request that
        cannot be sent now is sent by the next read, which reports why."""
        expiry = self._busy_expiry_s if self._lanes else self._cfg.fetch_timeout_s
        # lingering (``shared.pull``) with nothing held: one message wakes the next read, which asks for the rest
        room = 1 if self._cfg.linger_s and not self._lanes else self._room()
        with contextlib.suppress(nats.errors.Error):
            await sub.ask(room, expiry)

    # ------------------------------------------------------------------ past a full read-ahead

    @property
    def _scouting(self) -> bool:
        """Does the loop look past its read-ahead? Not when it reads no further than a batch
        (``CORTEX_RUNTIME_READ_AHEAD`` at most a batch: the stream's order across agents)."""
        return self._cfg.read_ahead > self._cfg.batch_size

    async def _look_past(self) -> None:
        """While the read-ahead is full, file what the scout finds of the agents that are not
        holding it (``shared.scout``), at most a batch of them at a time; close the scout once
        the loop has caught up with it."""
        scout = self._scout
        if scout is not None and not self._lanes and self._read_top >= scout.passing.top:
            await self._close_scout()
            return
        if scout is not None and await self._outdated(scout):
            await self._close_scout(covered=False)  # the next opens at the consumer's last read, naming it
            scout = None
        if not self._worth_scouting(scout):
            return
        try:
            if scout is None:
                scout = await self._open_scout()
            in_order = scout is not None and await self._sort_out(scout)
        except Exception as exc:  # the scout only saves time: without it the loop is what it was
            log.warning("scout_failed", extra={"consumer": self.consumer, "error": repr(exc)})
            scout, in_order = None, False
        if not in_order:
            # a gap closes it as any close does; nothing to read past the noisy agents, or a failure,
            # is not tried again before the loop has read a read-ahead further
            await self._close_scout(retry_after=0 if scout is not None else self._cfg.read_ahead)

    async def _sort_out(self, scout: Scout) -> bool:
        """File or pass what the scout delivered: up to ``SCOUT_SKIM`` batches of messages a
        turn, never more than a batch filed and waiting; False at a gap. While it passes all
        it reads (a noisy agent under the OpenClaw session token: passed here, not by the
        server) it has as many on their way; else a batch, as the durable reads."""
        batch = self._cfg.batch_size
        budget = SCOUT_SKIM * batch
        while budget > 0 and (room := batch - len(self._scouted)) > 0:
            ahead = SCOUT_SKIM * batch if self._skimming else batch
            msgs = await scout.read(min(room, budget), self._busy_expiry_s, ahead)
            if msgs is None:
                return False
            if not msgs:
                return True
            budget -= len(msgs)
            filed = len(self._scouted)
            for msg in msgs:
                self._scout_file(scout.passing, msg)
            self._skimming = len(self._scouted) == filed
        return True

    def _worth_scouting(self, scout: Scout | None) -> bool:
        """More is waiting past the read-ahead than it has room for, behind a noisy agent's
        backlog (or a scout is open), the last scout's ground is covered, and the scout has
        not filed a batch's worth that waits to be applied."""
        if not self._scouting or self._beyond <= self._room() or self._read_top < self._scout_floor:
            return False
        return len(self._scouted) < self._cfg.batch_size and (scout is not None or bool(self._noisy()))

    def _noisy(self) -> set[str]:
        """The agents whose backlog fills the read-ahead: a batch's worth held, or more."""
        return self._lanes.over(self._cfg.batch_size)

    async def _open_scout(self) -> Scout | None:
        noisy = self._noisy()
        passing = Passing(self._cfg.prefix, self._read_top + 1, self._cfg.batch_size, noisy)
        scout = self._scout = Scout(self._js, EVENTS_STREAM, self.consumer, passing, consumer_seq)
        self._scout_checked = time.monotonic()
        if not await scout.open(noisy):
            return None
        log.info("scout_opened", extra={"consumer": self.consumer, "from_seq": passing.top + 1,
                                        "noisy": sorted(noisy)[:10]})
        return scout

    async def _outdated(self, scout: Scout) -> bool:
        """Has an agent the open scout does not see come into a noisy agent's slot (asked at most
        every ``SCOUT_RECHECK_S``)? A new scout, reading from the consumer's last read, names it:
        sorting everything past that read again, it keeps of each agent only what follows all
        that agent's messages the loop read or filed (those it skips)."""
        now = time.monotonic()
        if now - self._scout_checked < SCOUT_RECHECK_S:
            return False
        self._scout_checked = now
        try:
            outdated = await scout.outdated()
        except Exception as exc:  # the scout only saves time: the next check asks again
            log.warning("scout_check_failed", extra={"consumer": self.consumer, "error": repr(exc)})
            return False
        if outdated:
            log.info("scout_outdated", extra={"consumer": self.consumer, "from_seq": self._read_top + 1})
        return outdated

    async def _close_scout(self, retry_after: int = 0, *, covered: bool = True) -> None:
        """Close the scout: the next may open once the loop has read past what this one sorted
        out (its blocked agents' passed messages are in the lanes then) — at once when it is
        not ``covered`` (an agent it did not see: the next sorts it all again) — and
        ``retry_after`` messages past its last read."""
        scout, self._scout = self._scout, None
        self._scout_floor = max(self._scout_floor, self._read_top + retry_after)
        if scout is not None:
            if covered:
                self._scout_floor = max(self._scout_floor, scout.passing.top)
            await scout.close()

    def _scout_file(self, passing: Passing, msg: Msg) -> None:
        """File a message the scout delivered in its agent's lane, or pass it (``Passing.sort``)."""
        seq = stream_seq(msg)
        agent = passing.sort(msg.subject, seq, self._lanes.held, self._filed_under_session(passing, msg))
        if agent is None or seq <= self._read_top or self._lanes.holds(seq) or seq in self._handled_above:
            return
        # an OpenClaw store event is decided now, in its agent's order (the duplicate window's is
        # per agent): the consumer's copy is only acked, never decided a second time
        decided = self._decide(msg, seq, ahead=True) if is_store_subject(self._cfg.prefix, msg.subject) else LATER
        self._note_trigger(msg.subject, decided, seq)
        self._lanes.add(Held(seq, msg, decided, len(msg.data), agent))
        self._scouted.add(seq)

    def _filed_under_session(self, passing: Passing, msg: Msg) -> str | None:
        """For an OpenClaw store event under the session token, the agent its session key names
        when it is this consumer's (another partition's, or no agent's: None, passed)."""
        if not passing.under_session_token(msg.subject):
            return None
        agent = filed_agent_of(msg.data)
        cfg = self._cfg
        if agent is None or (cfg.partition is not None and not partition_owns(cfg.partition, cfg.partitions, agent)):
            return None
        return agent

    def _durable_copy(self, item: Held) -> Msg | None:
        """The consumer's delivery of a handled message, to ack: the message itself, or for one
        the scout filed, the consumer's copy of it (None: not delivered yet)."""
        if item.seq not in self._scouted:
            return item.msg
        self._scouted.discard(item.seq)
        return self._copies.pop(item.seq, None)

    async def _give_back_held(self, items: list[Held]) -> None:
        """Give back held messages not handled: the consumer's copies (the scout's acks nothing)."""
        msgs = [msg for item in items if (msg := self._durable_copy(item)) is not None]
        await self._give_back(msgs)

    async def _intake(self, msgs: list[Msg]) -> None:
        """File each message in its agent's lane, decided once, in stream order (what the
        duplicate window needs); those applied and checkpointed before only refill the window.

        A copy of a message handled or held already — the server redelivers what it lost
        track of (its ack wait passed, or a broker restart forgot deliveries and acks it had
        not written down) — is not held again: the server acks by stream sequence, so the
        first copy's ack was, or will be, the copy's too. Held twice, the second copy kept the
        checkpoint below it after the server showed nothing pending and nothing unacked."""
        done = []
        if msgs:
            self._beyond = pending_after(msgs[-1])
        for msg in msgs:
            seq = stream_seq(msg)
            self._read_top = max(self._read_top, seq)
            if seq <= self._applied:
                self._refill(msg, seq)
                done.append(msg)
            elif seq in self._scouted and seq not in self._copies:
                self._copies[seq] = msg  # the scout filed it: acked when it is applied
            elif seq in self._handled_above or self._lanes.holds(seq):
                self._m_duplicate.inc()
                if seq in self._handled_above:
                    done.append(msg)
            else:
                self._lanes.add(self._file(msg, seq))
        for msg in done:
            with contextlib.suppress(Exception):
                await msg.ack()

    @staticmethod
    async def _give_back(msgs: list[Msg]) -> None:
        for msg in msgs:
            with contextlib.suppress(Exception):
                await msg.nak()

    def _delivered_in_order(self, msgs: list[Msg]) -> tuple[list[Msg], list[Msg]]:
        """The messages up to the first delivery that did not reach this loop, and the rest.

        The server numbers every message it hands this consumer; a number skipped is a
        message delivered but lost on the way (its node or the connection died with it in
        flight, or a deposed instance's open pull took it). The server redelivers it after
        its ack wait — behind later messages of the same agents, which the loop would have
        applied by then, so it would be taken for a redelivery of an applied one and never
        applied. The messages behind such a gap are not applied; the loop rewinds instead."""
        for i, msg in enumerate(msgs):
            delivery = consumer_seq(msg)
            if self._next_delivery is not None and delivery > self._next_delivery:
                return msgs[:i], msgs[i:]
            self._next_delivery = delivery + 1
        return msgs, []

    async def _resync(self, sub: PullFetcher, behind: list[Msg]) -> PullFetcher:
        """Restore stream order after a delivery gap: give back what came after it, rewind
        the consumer to the checkpoint + 1 (as at start), and fetch with a fresh request."""
        metrics.RETRIES.labels(self.worker, "resync").inc()
        log.warning("consumer_resync", extra={"consumer": self.consumer, "checkpoint": self._applied,
                                              "next_seq": stream_seq(behind[0]), "missing": consumer_seq(behind[0])
                                              - (self._next_delivery or 0)})
        await self._give_back(behind)
        await self._close_scout()
        await sub.stop()
        await self._give_back_held(self._lanes.clear())  # the rewind delivers them again, in order
        await self._write_deferred()  # the rewind starts from the bucket's checkpoint: bring it up to date
        await self._retry_transient("rewind", self._rewind)
        fresh = self._sub = fetcher_for(self._js, EVENTS_STREAM, self.consumer, self._cfg.wake_on)
        await fresh.start()
        return fresh

    async def _fetch(self, fetching: Awaitable[list[Msg]]) -> list[Msg]:
        """The messages ``fetching`` (a fetch or a poll of the fetcher) returns; none on a
        timeout, and none, not ready, while NATS cannot be reached."""
        try:
            msgs = await fetching
        except (TimeoutError, nats.errors.TimeoutError):
            msgs = []  # idle tick
        except (nats.errors.ConnectionClosedError, nats.errors.ConnectionReconnectingError,
                nats.errors.NoRespondersError, nats.js.errors.ServiceUnavailableError) as exc:
            self._fetch_failed = True
            self._last_info = 0.0  # is the consumer still there? asked at the loop's next turn
            self._health.set_ready(False, f"fetch failed: {exc!r}")
            await self._sleep(self._cfg.retry_base_s)
            return []
        if self._fetch_failed:  # fetching again: ready again (it stayed "fetch failed" for ever before)
            self._fetch_failed = False
            self._health.set_ready(True, "consuming")
        return msgs

    async def _run_batch(self, batch: list[Held]) -> None:
        started = time.perf_counter()
        self._inflight = [h.msg for h in batch if h.seq not in self._scouted]
        handled: list[tuple[Held, bool]] = []  # (message, dead-lettered)
        turn_at = started + BATCH_TURN_EVERY_S
        try:
            for item in batch:
                if self._stop.is_set() and time.monotonic() > self._drain_deadline:
                    break
                handled.append((item, await self._handle(item)))
                if (now := time.perf_counter()) >= turn_at:
                    await asyncio.sleep(0)  # the keeper renews, acks and the connection's reads go on
                    turn_at = now + BATCH_TURN_EVERY_S
            if handled:
                await self._finish(handled, self._still_held(batch[len(handled):]))
        except Interrupted:
            self._handler.reset()
            handled = []
        except RebuildRequired as exc:
            await self._rebuild(exc)
            raise
        finally:
            self._inflight = []
        await self._give_back_held(batch[len(handled):])  # stopping: the rewind restores the order
        self._export()
        metrics.BATCH_SECONDS.labels(self.worker).observe(time.perf_counter() - started)

    def _export(self) -> None:
        self._m_seconds.flush()
        if self._n_applied:
            self._m_applied.inc(self._n_applied)
        if self._n_skipped:
            self._m_skipped.inc(self._n_skipped)
        if self._last_ts is not None:
            self._m_last_ts.set(self._last_ts)
        self._n_applied = self._n_skipped = 0
        self._last_ts = None

    def _still_held(self, unhandled: list[Held]) -> int:
        """The oldest stream sequence not handled yet — in a lane, or in a batch cut short —
        or, when everything read is handled, the one after the last read."""
        waiting = [seq for seq in (self._lanes.oldest(), unhandled[0].seq if unhandled else None) if seq is not None]
        # never past the consumer's last read: what the scout filed beyond it leaves unread messages below it
        return min([*waiting, self._read_top + 1])

    async def _finish(self, handled: list[tuple[Held, bool]], held: int) -> None:
        self._fence()
        # the last batch's acks, published at the commit's first turn: a task scheduled before the
        # commit's writes, so that they are in the connection's buffer when its flusher next runs
        # (sent first, the flusher ran before the commit's writes and they went alone)
        riding = asyncio.create_task(self._send_owed()) if self._owed else None
        try:
            await self._retry_transient("commit", self._handler.commit)
        except UnwritableDocuments as exc:
            handled = await self._dead_letter_unwritable(handled, exc)
        # every message below the oldest one held is handled: that is the checkpoint (never
        # moved back, and never past a message of another agent still waiting for its turn)
        last = max(self._applied, held - 1)
        if riding is not None:
            await riding
        # read ahead by the scout and not delivered by the consumer yet (no copy): acked when it is
        self._owe([(msg, dead) for item, dead in handled if (msg := self._durable_copy(item)) is not None])
        await self._checkpoint(last)
        self._applied = max(self._applied, last)
        self._note_handled(handled)
        metrics.CHECKPOINT.labels(self._label).set(self._applied)
        await self._handler.on_committed(self._applied)

    def _note_handled(self, handled: list[tuple[Held, bool]]) -> None:
        """Remember what was handled past the checkpoint; forget what the checkpoint now covers."""
        above = self._handled_above
        above.update(item.seq for item, _ in handled if item.seq > self._applied)
        if above and min(above) <= self._applied:
            self._handled_above = {seq for seq in above if seq > self._applied}

    async def _dead_letter_unwritable(self, handled: list[tuple[Held, bool]],
                                      exc: UnwritableDocuments) -> list[tuple[Held, bool]]:
        """The events whose documents can never be written (too large for any value) are
        permanent failures: dead letters, like any other, and the batch goes on."""
        out = []
        for item, dead in handled:
            unwritable = not dead and item.seq in exc.failures
            if unwritable:
                await self._dead_letter(item.msg, item.seq, exc.failures[item.seq], "unwritable")
            out.append((item, dead or unwritable))
        return out

    async def _rebuild(self, exc: RebuildRequired) -> None:
        """Documents must be derived again: a bucket came back empty (start over from
        sequence 1), or an agent's unreadable document was deleted (start over from that
        agent's first event; everything before it is applied already). Documents that
        exist skip what they hold by their watermarks; the missing ones are derived again,
        exactly as a replay derives them."""
        first = 1
        if isinstance(exc, DocumentCorrupt):

            async def lookup() -> None:
                nonlocal first
                first = await first_event_seq(self._js, self._cfg.prefix, exc.agent)

            await self._retry_transient("rebuild", lookup)
        resume = min(self._applied, first - 1)
        log.warning("rebuilding_documents", extra={"worker": self.worker, "reason": str(exc)[:300],
                                                   "from_seq": resume + 1})
        self._handler.reset()
        await self._drop_later()  # a deferred write must not land after the rebuild's
        await self._drop_acks(send=False)  # the rewind delivers them again
        await self._retry_transient("rebuild", lambda: self._write_checkpoint(resume))
        # the host starts a fresh loop, which rewinds the consumer to the checkpoint + 1

    async def _write_checkpoint(self, seq: int) -> None:
        kv = await self._checkpoint_bucket()
        await kv.put(self.consumer, str(seq).encode())
        self._written, self._written_at = seq, time.monotonic()
        if self._triggers:
            self._triggers = [t for t in self._triggers if t > seq]

    async def _write_checkpoint_with_acks(self) -> None:
        """The wanted checkpoint, the owed acks ahead of it in the same write (both follow the commit)."""
        await self._send_owed()
        await self._write_checkpoint(self._wanted)

    # ------------------------------------------------------------------ acks

    def _owe(self, msgs: list[tuple[Msg, bool]]) -> None:
        """Committed messages to ack (or term, the dead-lettered): with the loop's next write, or
        alone within ``ACKS_WITHIN_S``. At live rates each batch holds an event or two and its acks
        were a write of their own, to every consumer, for every event: the server's read of each
        cost about what its part of a document's round trip does (docs/BENCHMARKS.md, eighth round).
        Acked later, never earlier: what is acked is committed."""
        if not msgs:
            return
        if not self._owed:
            self._owed_since = time.monotonic()
        self._owed.extend(msgs)
        if self._ack_timer is None:  # a timer, not a task asleep: one a batch at live rates, mostly needless
            self._ack_timer = asyncio.get_running_loop().call_later(ACKS_WITHIN_S, self._acks_due)

    def _acks_due(self) -> None:
        """The timer: acks no write took along are sent alone, ``ACKS_WITHIN_S`` after the first
        of them was owed (owed since a later batch: the timer is set again for the rest)."""
        self._ack_timer = None
        if not self._owed:
            return
        delay = self._owed_since + ACKS_WITHIN_S - time.monotonic()
        if self._acking is not None:  # the last send has not ended (its flush is waited for): look again
            delay = max(delay, ACKS_WITHIN_S)
        if delay > 0:
            self._ack_timer = asyncio.get_running_loop().call_later(delay, self._acks_due)
        else:
            self._acking = asyncio.create_task(self._ack_later(), name=f"{self.consumer}-acks")

    async def _send_owed(self) -> None:
        """Hand the owed acks to the connection now: they leave with whatever else is published
        before the loop next waits (nats-py writes what was published in one turn together). One
        that fails (the connection gone) is delivered again — after its ack wait, or by the next
        start's rewind — and acked then: it is applied already."""
        owed, self._owed = self._owed, []
        await reply_all([(msg, TERM if dead else ACK) for msg, dead in owed])  # one write for all

    async def _ack_later(self) -> None:
        """The owed acks, sent alone (fenced as a batch's writes are)."""
        try:
            self._fence()
            await self._send_owed()
        except LeaseLost as exc:
            self._owed = []  # the rewind of whoever holds the lease delivers them again: skipped by the watermarks
            log.info("acks_dropped", extra={"consumer": self.consumer, "reason": repr(exc)})
        finally:
            self._acking = None

    async def _drop_acks(self, *, send: bool) -> None:
        """The loop ends (or resyncs): the owed acks sent now (``send``) or dropped."""
        timer, self._ack_timer = self._ack_timer, None
        if timer is not None:
            timer.cancel()
        acking, self._acking = self._acking, None
        if acking is not None:
            await cancel_and_wait(acking)
        if send:
            await self._send_owed()
        self._owed = []

    async def _checkpoint(self, seq: int) -> None:
        """Write ``seq`` as the checkpoint now when it passes a trigger read (a composed worker
        waits for that trigger on it) or ``CHECKPOINT_EVERY_S`` has passed since the last write;
        else leave it to a write that follows (``_write_later``; one already waiting takes it)."""
        self._wanted = max(self._wanted, seq)
        self._batch_at = now = time.monotonic()
        if self._wanted <= self._written:
            return
        # passing a trigger, written now (a write waiting meanwhile looks again when it wakes)
        if not (self._triggers and min(self._triggers) <= self._wanted):
            if self._later is not None:  # it takes this one
                return
            if now - self._written_at < CHECKPOINT_EVERY_S:
                self._later = asyncio.create_task(self._write_later(), name=f"{self.consumer}-checkpoint")
                return
        await self._retry_transient("checkpoint", self._write_checkpoint_with_acks)

    def _later_due(self) -> float:
        """When the deferred write is due: ``CHECKPOINT_EVERY_S`` after the last write, or the loop
        idle — no batch for ``CHECKPOINT_IDLE_S`` — if sooner (``time.monotonic()``)."""
        return min(self._written_at + CHECKPOINT_EVERY_S, self._batch_at + CHECKPOINT_IDLE_S)

    async def _write_later(self) -> None:
        """The deferred checkpoint write: what is wanted when it is due (``_later_due``, looked at
        again when it wakes: a batch since moves it), fenced as a batch's is. Failing (the lease
        lost, stopped while the store is away), it is left to the next batch — or to the rewind
        of the next start, which a lower checkpoint only makes longer."""
        try:
            while self._wanted > self._written:
                if (wait := self._later_due() - time.monotonic()) > 0:
                    await asyncio.sleep(wait)
                    continue
                self._fence()
                await self._retry_transient("checkpoint", self._write_checkpoint_with_acks)
        except (LeaseLost, Interrupted) as exc:
            log.info("checkpoint_deferred_dropped", extra={"consumer": self.consumer, "reason": repr(exc)})
        finally:
            self._later = None

    async def _settle_later(self) -> None:
        """The loop ends: a deferred write is dropped — and, when the loop was asked to stop,
        made now (fenced; a transient failure — an election — tried again until the drain
        deadline; failing past it, the next start rewinds a little further). Ending otherwise
        (a lost lease, a failure), nothing more is written."""
        await self._drop_later()
        await self._drop_acks(send=self._stop.is_set())
        if self._stop.is_set() and self._wanted > self._written:
            await self._write_last_checkpoint()

    async def _write_last_checkpoint(self) -> None:
        """The stop's checkpoint write. Before, one attempt with every failure ignored: a replay whose
        stream leader was killed under it ended 0 with a checkpoint thousands of events behind."""
        failures = 0
        while True:
            try:
                self._fence()
                await self._write_checkpoint(self._wanted)
                return
            except Exception as exc:
                failures += 1
                if isinstance(exc, LeaseLost) or not is_transient(exc) or time.monotonic() >= self._drain_deadline:
                    log.warning("checkpoint_not_written_at_stop", extra={
                        "consumer": self.consumer, "checkpoint": self._written, "applied": self._wanted,
                        "failures": failures, "error": repr(exc)})
                    return
                await asyncio.sleep(min(backoff_delay(failures, self._cfg.retry_base_s, self._cfg.retry_max_s),
                                        max(0.0, self._drain_deadline - time.monotonic())))

    async def _write_deferred(self) -> None:
        """A deferred checkpoint written now (the loop goes on: a failure is retried as a batch's is)."""
        await self._drop_later()
        await self._drop_acks(send=True)
        if self._wanted > self._written:
            self._fence()
            await self._retry_transient("checkpoint", lambda: self._write_checkpoint(self._wanted))

    async def _drop_later(self) -> None:
        later, self._later = self._later, None
        if later is not None:
            await cancel_and_wait(later)

    # ------------------------------------------------------------------ one message

    def _file(self, msg: Msg, seq: int) -> Held:
        """A message read ahead, filed in its agent's lane. Decided now only where the stream's
        order decides (an OpenClaw store event: the duplicate window, the session token's agent)
        or the subject names no agent; any other is decided at its turn — the same decision, it
        depends on the message alone — so filing is a split of its subject, and a quiet agent's
        event behind a long burst is reached without decoding the whole burst first."""
        tokens = msg.subject.split(".")
        if len(tokens) == _STORED_TOKENS and not is_store_subject(self._cfg.prefix, msg.subject):
            if (tokens[_FAMILY_TOKEN], tokens[_KIND_TOKEN]) in TRIGGERS:
                self._triggers.append(seq)
            return Held(seq, msg, LATER, len(msg.data), tokens[_AGENT_TOKEN])
        decided = self._decide(msg, seq)
        self._note_trigger(msg.subject, decided, seq)
        return Held(seq, msg, decided, len(msg.data), decided.agent if isinstance(decided, Envelope) else None)

    def _note_trigger(self, subject: str, decided: Envelope | Rejection | Later | None, seq: int) -> None:
        """Remember a trigger read (decided, or a contract subject decided at its turn): the
        checkpoint that reaches it is written at once (``_checkpoint``)."""
        if isinstance(decided, Envelope):
            trigger = (decided.family, decided.kind) in TRIGGERS
        elif decided is LATER:
            tokens = subject.split(".")
            trigger = len(tokens) == _STORED_TOKENS and (tokens[_FAMILY_TOKEN], tokens[_KIND_TOKEN]) in TRIGGERS
        else:
            trigger = False
        if trigger:
            self._triggers.append(seq)

    def _decide(self, msg: Msg, seq: int, *, ahead: bool = False) -> Envelope | Rejection | None:
        """A message read ahead: the event to apply, bad input to dead-letter, or None when
        there is nothing to do. Decided in its agent's stream order, as it is read (the
        duplicate window compares an event with its agent's earlier ones only:
        ``shared.duplicates``); ``ahead``: read by the scout, ahead of older messages of other
        agents still to be read."""
        decoded = decode_event(self._cfg.prefix, msg.subject, seq, msg.data, self._cfg.limits)
        if not self._owns(decoded):
            self._m_foreign.inc()
            return None  # an OpenClaw store event under its session token, of another partition's agent
        if isinstance(decoded, Rejection):
            return decoded
        if decoded.duplicate_key is not None and self._duplicates.seen(decoded.duplicate_key, seq, ahead=ahead):
            self._m_duplicate_event.inc()
            return None  # a second copy of an OpenClaw store event (shared.duplicates)
        if self._accept is not None and not self._accept(decoded):
            metrics.EVENTS.labels(self.worker, "ignored").inc()
            return None
        return decoded

    async def _handle(self, item: Held) -> bool:
        """Apply one message, at its agent's turn; True when it was dead-lettered."""
        decoded = self._decide(item.msg, item.seq) if item.decoded is LATER else item.decoded
        if isinstance(decoded, Rejection):
            await self._dead_letter(item.msg, item.seq, decoded.reason, "invalid")
            return True
        if not isinstance(decoded, Envelope):
            return False
        return await self._apply_with_retries(item.msg, decoded)

    def _owns(self, decoded: Envelope | Rejection) -> bool:
        """Is this event this partition's to apply (or dead-letter)? Always, but for the OpenClaw
        store's events filed under its session token, which every partition reads: an event is
        its agent's partition's, one that names no agent the session token's own partition's, so
        each is applied, or dead-lettered, exactly once."""
        cfg = self._cfg
        if cfg.partition is None or not is_session_agent_subject(cfg.prefix, decoded.subject):
            return True  # the server's filter decided it
        agent = decoded.agent if isinstance(decoded, Envelope) else OPENCLAW_SESSION_AGENT
        return partition_owns(cfg.partition, cfg.partitions, agent)

    def _refill(self, msg: Msg, seq: int) -> None:
        """An already-applied message: its only use is the duplicate window's (an OpenClaw
        store event's key, decoded exactly as when it was applied)."""
        (self._m_refill if seq <= self._rewound_at and msg.metadata.num_delivered == 1 else self._m_duplicate).inc()
        if is_store_subject(self._cfg.prefix, msg.subject):
            decoded = decode_event(self._cfg.prefix, msg.subject, seq, msg.data, self._cfg.limits)
            if isinstance(decoded, Envelope) and decoded.duplicate_key is not None:
                self._duplicates.seen(decoded.duplicate_key, seq)

    async def _apply_with_retries(self, msg: Msg, env: Envelope) -> bool:
        failures = 0
        while True:
            started = time.perf_counter()
            try:
                changed = await self._handler.apply(env)
            except (RebuildRequired, WorkerCannotRun):  # a cut's writes may meet them too
                raise
            except InvalidEvent as exc:  # bad input the handler found: no retry can change it
                await self._dead_letter(msg, env.seq, str(exc), "invalid")
                return True
            except Exception as exc:
                if is_transient(exc):
                    await self._transient_pause("apply", exc, failures := failures + 1)
                    continue
                failures += 1
                metrics.RETRIES.labels(self.worker, "apply").inc()
                if failures >= self._cfg.max_attempts:
                    reason = f"handler failed {failures} times: {type(exc).__name__}: {exc}"
                    log.error("handler_failed", extra={"worker": self.worker, "seq": env.seq, "error": reason})
                    await self._dead_letter(msg, env.seq, reason, "handler")
                    return True
                await self._sleep(backoff_delay(failures, self._cfg.retry_base_s, self._cfg.retry_max_s))
                continue
            self._m_seconds.observe(time.perf_counter() - started)
            if changed:
                self._n_applied += 1
            else:
                self._n_skipped += 1
            self._last_ts = env.event.ts.timestamp()
            if failures:
                self._health.set_ready(True, "consuming")
            return False

    async def _dead_letter(self, msg: Msg, seq: int, reason: str, kind: str) -> None:
        self._export()  # what was applied before it shows before it (rare: no cost worth batching)
        headers = {
            "Cortex-Error": _clean_header(reason),
            "Cortex-Original-Subject": published_form(self._cfg.prefix, msg.subject),
            "Cortex-Stream-Seq": str(seq),
            "Nats-Msg-Id": f"dlq:{self.worker}:{seq}",
        }
        subject = dlq_subject(self._cfg.prefix, self.worker)
        limit = max_payload(self._js, 1 << 20)

        async def publish() -> None:
            data, fitted = dead_letter_message(msg.data, headers, limit)
            try:
                await self._js.publish(subject, data, headers=fitted, stream=DLQ_STREAM)
            except nats.errors.MaxPayloadError:  # a server whose limit shrank since we connected
                data, fitted = dead_letter_message(msg.data, headers, 0)
                await self._js.publish(subject, data, headers=fitted, stream=DLQ_STREAM)

        await self._retry_transient("dead_letter", publish)
        metrics.DEAD_LETTERS.labels(self.worker, kind).inc()
        metrics.EVENTS.labels(self.worker, "dead_lettered").inc()
        log.warning("dead_lettered", extra={"worker": self.worker, "seq": seq, "reason": reason[:300]})

    # ------------------------------------------------------------------ retries

    async def _retry_transient(self, what: str, action: Callable[[], Awaitable[None]]) -> None:
        failures = 0
        while True:
            try:
                await action()
                if failures:
                    self._health.set_ready(True, "consuming")
                return
            except (LeaseLost, RebuildRequired):
                raise
            except Exception as exc:
                if not is_transient(exc):
                    raise
                await self._transient_pause(what, exc, failures := failures + 1)

    async def _transient_pause(self, what: str, exc: BaseException, failures: int) -> None:
        self._fence()
        metrics.RETRIES.labels(self.worker, what).inc()
        self._health.set_ready(False, f"{what} failing: {exc}")
        if failures == 1 or failures % 10 == 0:
            log.warning("transient_failure", extra={"worker": self.worker, "what": what,
                                                    "failures": failures, "error": repr(exc)})
        if self._stop.is_set():
            raise Interrupted(what)
        await self._sleep(backoff_delay(failures, self._cfg.retry_base_s, self._cfg.retry_max_s))
        if self._stop.is_set():
            raise Interrupted(what)

    async def _sleep(self, seconds: float) -> None:
        """Sleep, but wake as soon as stop is requested."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stop.wait(), timeout=seconds)

    # ------------------------------------------------------------------ housekeeping

    async def _heartbeat(self) -> None:
        """Tell the server that a long batch, and what is read ahead, are still being worked on:
        every ``ack_wait/3``, the messages held since the last beat (``Beats``)."""
        interval = self._beats.interval_s
        while True:
            await asyncio.sleep(interval)
            await self._beat()

    async def _beat(self) -> None:
        held = (h.msg for h in self._lanes if h.seq not in self._scouted)
        owed = (msg for msg, _ in self._owed)
        due = self._beats.due([*self._inflight, *held, *owed, *self._copies.values(), *self._sub_buffer()])
        await reply_all([(msg, IN_PROGRESS) for msg in due])

    async def _refresh_consumer_info(self) -> None:
        now = time.monotonic()
        if now - self._last_info < 5.0:
            return
        self._last_info = now
        try:
            info = await self._js.consumer_info(EVENTS_STREAM, self.consumer)
        except nats.js.errors.NotFoundError as exc:
            # deleted, or a consumer kept in memory by a server that restarted: nothing would ever be
            # delivered again (the loop would wait out "fetch failed" for ever); the worker creates it
            # again and rewinds it to the checkpoint (``shared.runtime``)
            raise ConsumerLost(f"consumer {self.consumer} is gone from the server: {exc}") from exc
        except Exception:  # metrics only; the next tick tries again
            return
        metrics.CONSUMER_PENDING.labels(self._label).set(info.num_pending or 0)
        metrics.CONSUMER_ACK_PENDING.labels(self._label).set(info.num_ack_pending or 0)
        metrics.CONSUMER_REDELIVERED.labels(self._label).set(info.num_redelivered or 0)
