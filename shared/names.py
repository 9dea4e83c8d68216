"""Names of the contract: streams, subjects, buckets, consumers, partitions."""

from __future__ import annotations

EVENTS_STREAM = "CORTEX_EVENTS"
DLQ_STREAM = "CORTEX_DLQ"

FAMILIES = ("msg", "session", "compaction", "notes", "feedback", "tool", "run")
# Allowed last token per family (None: the subject ends at the agent token).
KINDS: dict[str, frozenset[str] | None] = {
    "msg": frozenset({"received", "sent"}),
    "session": frozenset({"start", "end"}),
    "compaction": frozenset({"before", "after"}),
    "notes": None,
    "feedback": frozenset(
        {"recall_access", "thread_close", "thread_priority", "commitment_done", "memory_pin", "memory_forget",
         "remember", "fact_access", "operation_seen"}
    ),
    "tool": frozenset({"call", "result"}),
    "run": frozenset({"start", "end", "error"}),
}

# The OpenClaw NATS event store (`@vainplex/nats-eventstore`, contract: Sources). CORTEX_EVENTS
# sources its stream with one subject transform, so the server stores each of its events,
# payload unchanged, as `<prefix>.openclaw.<agent>.<type token>` (the store's type with dots
# as underscores: `msg_in`, `session_compaction_start`, `conversation_message_out`, …).
OPENCLAW_FAMILY = "openclaw"
OPENCLAW_STREAM_DEFAULT = "openclaw-events"
OPENCLAW_PREFIX_DEFAULT = "openclaw.events"
# type token → the contract (family, kind) it becomes; the one table of the mapping: consumer
# filters, the decoder and `cortex status` all read it.
OPENCLAW_TYPES: dict[str, tuple[str, str]] = {
    "msg_in": ("msg", "received"),
    "msg_out": ("msg", "sent"),
    "conversation_message_in": ("msg", "received"),  # session-sync
    "conversation_message_out": ("msg", "sent"),
    "session_start": ("session", "start"),
    "session_end": ("session", "end"),
    "session_reset": ("session", "end"),
    "session_compaction_start": ("compaction", "before"),
    "session_compaction_end": ("compaction", "after"),
    "tool_call": ("tool", "call"),
    "tool_result": ("tool", "result"),
    "conversation_tool_call": ("tool", "call"),
    "conversation_tool_result": ("tool", "result"),
    "run_start": ("run", "start"),
    "run_end": ("run", "end"),
    "run_error": ("run", "error"),
}
# Not conversation: stored with the rest, read by no worker, counted (`cortex status`, metrics).
OPENCLAW_IGNORED = frozenset({"msg_sending", "llm_input", "llm_output", "gateway_start", "gateway_stop"})

BUCKET_THREADS = "cortex_threads"
BUCKET_DECISIONS = "cortex_decisions"
BUCKET_COMMITMENTS = "cortex_commitments"
BUCKET_SNAPSHOTS = "cortex_snapshots"
BUCKET_NARRATIVES = "cortex_narratives"
BUCKET_BOOT = "cortex_boot"
BUCKET_KNOWLEDGE = "cortex_knowledge"
BUCKET_CHANNELS = "cortex_channels"
BUCKET_RECALL = "cortex_recall"  # beyond the contract: the recall worker's per-agent summary for boot
BUCKET_CHECKPOINTS = "cortex_checkpoints"
BUCKET_LEASES = "cortex_leases"
BUCKET_LLM_CACHE = "cortex_llm_cache"
BUCKET_FORGETS = "cortex_forgets"  # beyond the contract: the status of each agent's last `cortex forget`

# Buckets whose values are per-agent documents (shadow mode writes cortex_shadow_<name>).
DOC_BUCKETS = (
    BUCKET_THREADS, BUCKET_DECISIONS, BUCKET_COMMITMENTS, BUCKET_SNAPSHOTS,
    BUCKET_NARRATIVES, BUCKET_BOOT, BUCKET_KNOWLEDGE, BUCKET_CHANNELS, BUCKET_RECALL,
)
ALL_BUCKETS = (*DOC_BUCKETS, BUCKET_CHECKPOINTS, BUCKET_LEASES, BUCKET_LLM_CACHE)

QDRANT_COLLECTION = "cortex_memories"


def event_subjects(prefix: str) -> list[str]:
    return [f"{prefix}.{family}.>" for family in FAMILIES]


def openclaw_tokens(family: str) -> list[str]:
    """The OpenClaw store's type tokens that become events of ``family``."""
    return sorted(token for token, (fam, _) in OPENCLAW_TYPES.items() if fam == family)


def family_filter_subjects(prefix: str, family: str) -> list[str]:
    """What a consumer of ``family`` reads: the contract subjects and the OpenClaw store's
    events of that family (`<prefix>.openclaw.*.<token>`, present once a source is wired)."""
    return [f"{prefix}.{family}.>", *(f"{prefix}.{OPENCLAW_FAMILY}.*.{t}" for t in openclaw_tokens(family))]


def is_store_subject(prefix: str, subject: str) -> bool:
    """Is this stored subject an event of the OpenClaw store (``<prefix>.openclaw.…``)?"""
    return subject.startswith(f"{prefix}.{OPENCLAW_FAMILY}.")


def openclaw_transform(prefix: str, source_prefix: str) -> tuple[str, str]:
    """(src, dest) of the subject transform that brings the store's events into CORTEX_EVENTS."""
    return f"{source_prefix}.*.*", f"{prefix}.{OPENCLAW_FAMILY}.{{{{wildcard(1)}}}}.{{{{wildcard(2)}}}}"


def agent_event_filters(prefix: str, agent: str) -> tuple[str, str]:
    """Subject filters that match every stored event of ``agent`` (each family, the notes)."""
    return f"{prefix}.*.{agent}.>", f"{prefix}.notes.{agent}"


def dlq_subject(prefix: str, worker: str) -> str:
    return f"{prefix}.dlq.{worker}"


def api_subject(prefix: str, service: str, agent: str) -> str:
    return f"{prefix}.api.{service}.{agent}"


def shadow_bucket(bucket: str) -> str:
    return "cortex_shadow_" + bucket.removeprefix("cortex_")


def consumer_name(worker: str, partition: int | None = None, shadow: bool = False) -> str:
    """``<worker>[-shadow][-<k>]`` (contract: Consumers, partitions, instances)."""
    name = f"{worker}-shadow" if shadow else worker
    return name if partition is None else f"{name}-{partition}"


def fnv1a_32(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def partition_of(agent: str, partitions: int) -> int:
    """The agent's partition: FNV-1a 32-bit of the agent id modulo N (NATS's partition function)."""
    return fnv1a_32(agent.encode()) % partitions if partitions > 1 else 0


def partition_ids(partitions: int) -> list[int | None]:
    """Every partition of a worker: ``[None]`` (the unsuffixed consumer) when N is 1."""
    return [None] if partitions <= 1 else list(range(partitions))


def consumers_of(worker: str, partitions: int, shadow: bool = False) -> list[str]:
    """Every consumer of a worker: ``<worker>`` or ``<worker>-0`` … ``<worker>-<N-1>``."""
    return [consumer_name(worker, k, shadow) for k in partition_ids(partitions)]


def agent_consumer(worker: str, agent: str, partitions: int, shadow: bool = False) -> str:
    """The consumer of ``worker`` that applies ``agent``'s events."""
    return consumer_name(worker, partition_of(agent, partitions) if partitions > 1 else None, shadow)


def subject_agent(subject: str) -> str:
    """The agent token of an event subject (``<prefix>.<family>.<agent>[.<kind>]``; the
    prefix is one token), or "" when there is none."""
    tokens = subject.split(".", 3)
    return tokens[2] if len(tokens) > 2 else ""


class PartitionFilter:
    """Does an event belong to partition k of N? Decided from the subject's agent token
    alone (no decode), with the agents' partitions remembered (bounded)."""

    MAX_CACHED = 100_000

    def __init__(self, partition: int, partitions: int) -> None:
        if not 0 <= partition < partitions:
            raise ValueError(f"partition {partition} is not one of 0..{partitions - 1}")
        self.partition = partition
        self.partitions = partitions
        self._cache: dict[str, bool] = {}

    def __call__(self, subject: str) -> bool:
        agent = subject_agent(subject)
        owned = self._cache.get(agent)
        if owned is None:
            if len(self._cache) >= self.MAX_CACHED:
                self._cache.clear()
            owned = self._cache[agent] = partition_of(agent, self.partitions) == self.partition
        return owned
