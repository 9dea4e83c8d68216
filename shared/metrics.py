"""Prometheus collectors shared by every worker (labels from small fixed sets, never ids)."""

from __future__ import annotations

from bisect import bisect_left

from prometheus_client import Counter, Gauge, Histogram

EVENTS = Counter(
    "cortex_events_total", "Events handled, by worker and outcome", ["worker", "outcome"]
)
HANDLER_SECONDS = Histogram(
    "cortex_handler_seconds", "Time to apply one event", ["worker"],
    buckets=(0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0),
)
BATCH_SECONDS = Histogram(
    "cortex_batch_seconds", "Time to apply, commit and ack one fetched batch", ["worker"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
CONSUMER_PENDING = Gauge("cortex_consumer_pending", "Messages not yet delivered to the consumer", ["worker"])
CONSUMER_ACK_PENDING = Gauge("cortex_consumer_ack_pending", "Delivered messages not yet acked", ["worker"])
CONSUMER_REDELIVERED = Gauge("cortex_consumer_redelivered", "Messages redelivered by the server", ["worker"])
CHECKPOINT = Gauge("cortex_checkpoint_seq", "Highest contiguous applied stream sequence", ["worker"])
KV_CONFLICTS = Counter("cortex_kv_conflicts_total", "Compare-and-set conflicts on document writes", ["worker"])
KV_WRITES = Counter("cortex_kv_writes_total", "Document writes", ["worker"])
DEAD_LETTERS = Counter("cortex_dead_letters_total", "Events dead-lettered", ["worker", "reason"])
# Every reason a consume loop dead-letters for. Each worker's series start at 0: an alert on
# increase() sees nothing in a series whose first sample is already 1, so the first dead
# letter of a worker would never fire CortexDeadLetters.
DEAD_LETTER_REASONS = ("invalid", "handler", "unwritable")
RETRIES = Counter("cortex_retries_total", "Retries of a failing apply or commit", ["worker", "kind"])
READY = Gauge("cortex_worker_ready", "1 when the worker is ready", ["worker"])
ACTIVE = Gauge("cortex_worker_active", "1 while this instance holds the consumer's lease", ["worker"])
LAST_EVENT_TS = Gauge("cortex_last_event_timestamp_seconds", "Event time of the last applied event", ["worker"])
DOCUMENTS_REBUILT = Counter(
    "cortex_documents_rebuilt_total",
    "Stored documents their worker could not read (undecodable or invalid): deleted and derived again "
    "from the agent's events in the stream", ["worker", "bucket"])
DOCUMENTS_UNREADABLE = Counter(
    "cortex_documents_unreadable_total",
    "Another worker's stored document a reader (boot, snapshot, narrative, channels, api) could not "
    "decode and treated as missing; its owner rebuilds it", ["bucket"])
DOCUMENTS_CAPPED = Counter(
    "cortex_documents_capped_total",
    "Document writes that had to drop their oldest list items to fit one KV value (below the "
    "server's max payload)", ["worker", "bucket"])
SOURCE_EVENTS = Gauge(
    "cortex_source_events",
    "OpenClaw store events copied into CORTEX_EVENTS, by kind: conversation, tool, run, "
    "not_conversation (llm.*, gateway.*, msg.sending: ignored), unknown (types Cortex does not map)",
    ["source", "kind"],
)
SOURCE_LAG = Gauge("cortex_source_lag", "Store messages the server has not copied into CORTEX_EVENTS yet", ["source"])


class Tally:
    """Observations of one histogram child counted here and handed to it together (``flush``):
    the consume loop times every event (``HANDLER_SECONDS``), and the child's ``observe`` takes
    a lock for the sum and one for the bucket, each call. The same buckets and sum — an
    observation lands in the first bucket whose bound is at or above it, as ``observe``'s —
    visible at the next flush (the loop flushes with its other counters, at each batch's end)."""

    __slots__ = ("_bounds", "_child", "_counts", "_sum")

    def __init__(self, child: Histogram) -> None:
        self._child = child
        self._bounds: list[float] = list(child._upper_bounds)
        self._counts = [0] * len(self._bounds)
        self._sum = 0.0

    def observe(self, amount: float) -> None:
        self._counts[bisect_left(self._bounds, amount)] += 1  # the last bound is +Inf: always in range
        self._sum += amount

    def flush(self) -> None:
        counts = self._counts
        if not any(counts):
            return
        self._child._sum.inc(self._sum)
        for bucket, count in zip(self._child._buckets, counts, strict=True):
            if count:
                bucket.inc(count)
        self._counts = [0] * len(counts)
        self._sum = 0.0
