"""Names of the contract: streams, subjects, buckets, consumers, partitions.

The stored layout (contract: Partitions in the server, layout version 2): producers publish
``<prefix>.<family>.<agent>.<kind>``; the stream's one subject transform
(``slot_transform``) stores every event as ``<prefix>.<family>.<slot>.<agent>.<kind>`` with
``slot`` = FNV-1a(agent) mod 64, computed by the server. The OpenClaw store's events,
sourced as ``<prefix>.openclaw.<agent>.<type token>``, pass the same transform. Every
subject Cortex builds or filters on comes from this module; every stored subject is parsed
by ``shared.codec.parse_subject``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import get_args

from schemas.types import FeedbackKind

EVENTS_STREAM = "CORTEX_EVENTS"
DLQ_STREAM = "CORTEX_DLQ"

FAMILIES = ("msg", "session", "compaction", "notes", "feedback", "tool", "run")
# Allowed last token per family.
KINDS: dict[str, frozenset[str]] = {
    "msg": frozenset({"received", "sent"}),
    "session": frozenset({"start", "end"}),
    "compaction": frozenset({"before", "after"}),
    "notes": frozenset({"section"}),  # layout 2: a kind token, so that one transform covers every family
    "feedback": frozenset(get_args(FeedbackKind)),  # the one list: schemas.types.FeedbackKind
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
# The events composed documents (snapshot, narrative, boot) are made for: (family, kind). A consume
# loop writes its checkpoint at once when it passes one (``shared.consume``: the composed workers wait on it).
TRIGGERS = frozenset({("session", "start"), ("session", "end"), ("compaction", "before")})
# Not conversation: stored with the rest, read by no worker, counted (`cortex status`, metrics).
OPENCLAW_IGNORED = frozenset({"msg_sending", "llm_input", "llm_output", "gateway_start", "gateway_stop"})
# OpenClaw 2026.9 names its sessions `agent:<id>:<rest>`, and the store (0.2.x) names the agent of
# a hook whose context carries no agent id but `main` (every message hook's) by the session key's
# first segment: it files those events of every agent of a gateway under this one token. Cortex
# files each under the `<id>` its session key names (shared.openclaw.filed_agent); the token's
# events share its slot, so a partition that owns one of those agents reads them too
# (consumer_filter_subjects) and applies its own agents' of them only (shared.consume).
OPENCLAW_SESSION_AGENT = "agent"

BUCKET_THREADS = "cortex_threads"
BUCKET_DECISIONS = "cortex_decisions"
BUCKET_COMMITMENTS = "cortex_commitments"
BUCKET_SNAPSHOTS = "cortex_snapshots"
BUCKET_NARRATIVES = "cortex_narratives"
BUCKET_BOOT = "cortex_boot"
BUCKET_KNOWLEDGE = "cortex_knowledge"
BUCKET_CHANNELS = "cortex_channels"
BUCKET_RECALL = "cortex_recall"  # beyond the contract: the recall worker's per-agent summary for boot
BUCKET_TRACES = "cortex_traces"
BUCKET_OPERATIONS = "cortex_operations"
BUCKET_CHECKPOINTS = "cortex_checkpoints"
BUCKET_LEASES = "cortex_leases"
BUCKET_LLM_CACHE = "cortex_llm_cache"  # keys: llm_answer_key, llm_usage_key, llm_pending_key, llm_health_key
BUCKET_FORGETS = "cortex_forgets"  # beyond the contract: the status of each agent's last `cortex forget`
BUCKET_EXTRACTION = "cortex_extraction"  # beyond the contract: what a model read beyond the patterns

# The runtime's own buckets: every consumer's checkpoint and lease, the LLM's answers. The
# workers' document buckets are declared by their owners (``WorkerSpec.buckets``; every one:
# ``workers.registry.doc_buckets``), so a new worker adds its bucket without an edit here.
RUNTIME_BUCKETS = (BUCKET_CHECKPOINTS, BUCKET_LEASES, BUCKET_LLM_CACHE)

QDRANT_COLLECTION = "cortex_memories"  # shadow mode: memory_collection(True), cortex_shadow_memories


# ---------------------------------------------------------------------------- the stored layout

SLOTS = 64  # contract: Partitions in the server
LAYOUT = 2  # 1: stored subjects as published (no slot token); 2: with the slot token
LAYOUT_METADATA = "cortex_layout"  # the stream's metadata key naming its layout
NOTES_KIND = "section"
# The contract's notes subject, `<prefix>.notes.<agent>`, has three tokens where every other
# family has four, and a stream has one subject transform: CORTEX_NOTES captures it and the
# server copies each note into CORTEX_EVENTS as `<prefix>.notes.<agent>.section` (a stream
# source with a subject transform), where the slot transform stores it like every other event.
NOTES_STREAM = "CORTEX_NOTES"


def notes_subject(prefix: str, agent: str = "*") -> str:
    """The contract's notes subject (what CORTEX_NOTES captures with ``*``)."""
    return f"{prefix}.notes.{agent}"


def notes_transform(prefix: str) -> tuple[str, str]:
    """(src, dest) of the transform that copies CORTEX_NOTES into CORTEX_EVENTS's notes family."""
    return notes_subject(prefix), f"{prefix}.notes.{{{{wildcard(1)}}}}.{NOTES_KIND}"


def event_subjects(prefix: str) -> list[str]:
    """What CORTEX_EVENTS captures: ``<prefix>.<family>.<agent>.<kind>`` (exactly four tokens,
    so the slot transform applies to every captured event; the contract's three-token
    ``<prefix>.notes.<agent>`` reaches it through CORTEX_NOTES, ``notes_transform``)."""
    return [f"{prefix}.{family}.*.*" for family in FAMILIES]


def slot_transform(prefix: str) -> tuple[str, str]:
    """(src, dest) of the stream's subject transform that puts the slot into stored subjects."""
    return (f"{prefix}.*.*.*",
            f"{prefix}.{{{{wildcard(1)}}}}.{{{{partition({SLOTS},2)}}}}.{{{{wildcard(2)}}}}.{{{{wildcard(3)}}}}")


def published_subject(prefix: str, family: str, agent: str, kind: str) -> str:
    return f"{prefix}.{family}.{agent}.{kind}"


def stored_subject(prefix: str, family: str, agent: str, kind: str) -> str:
    """The subject the stream stores a publish to ``published_subject`` under."""
    return f"{prefix}.{family}.{slot_of(agent)}.{agent}.{kind}"


def stored_form(prefix: str, subject: str) -> str:
    """What the stream's slot transform makes of a published subject (``cortex publish``
    validates with the workers' decoder, which reads stored subjects): the slot after the
    family of a four-token subject, a three-token notes subject as CORTEX_NOTES's copy is
    stored; any other subject unchanged (no stream captures it)."""
    tokens = subject.split(".")
    if len(tokens) == 3 and tokens[0] == prefix and tokens[1] == "notes":
        tokens.append(NOTES_KIND)  # CORTEX_NOTES's copy (notes_transform)
    if len(tokens) != 4 or tokens[0] != prefix:
        return subject
    return f"{prefix}.{tokens[1]}.{slot_of(tokens[2])}.{tokens[2]}.{tokens[3]}"


def published_form(prefix: str, subject: str) -> str:
    """A stored subject as it was published (the slot token taken out): a dead letter's
    ``Cortex-Original-Subject``, which can be published again as it is. A note is named by
    the contract's notes subject, ``<prefix>.notes.<agent>`` (what CORTEX_NOTES captures),
    not its copy's ``….section``, which no producer publishes."""
    tokens = subject.split(".")
    if len(tokens) != 5 or tokens[0] != prefix or not tokens[2].isdigit():
        return subject
    if tokens[1] == "notes" and tokens[4] == NOTES_KIND:
        return notes_subject(prefix, tokens[3])
    return ".".join((tokens[0], tokens[1], *tokens[3:]))


def agent_filter(prefix: str, agent: str) -> str:
    """Every stored event of one agent, of every family (the OpenClaw store's included) — but
    those the OpenClaw store filed under its session token (``session_agent_filter``)."""
    return f"{prefix}.*.{slot_of(agent)}.{agent}.*"


def session_agent_filter(prefix: str) -> str:
    """Every stored event the OpenClaw store filed under ``OPENCLAW_SESSION_AGENT``: those of any
    agent of an OpenClaw 2026.9 gateway, told apart by their session keys only."""
    return f"{prefix}.{OPENCLAW_FAMILY}.{slot_of(OPENCLAW_SESSION_AGENT)}.{OPENCLAW_SESSION_AGENT}.*"


def is_session_agent_subject(prefix: str, subject: str) -> bool:
    """Is this stored subject one the OpenClaw store filed under ``OPENCLAW_SESSION_AGENT``?"""
    return subject.startswith(session_agent_filter(prefix)[:-1])


def openclaw_tokens(family: str) -> list[str]:
    """The OpenClaw store's type tokens that become events of ``family``."""
    return sorted(token for token, (fam, _) in OPENCLAW_TYPES.items() if fam == family)


def consumer_filter_subjects(prefix: str, families: tuple[str, ...] | list[str], partition: int | None = None,
                             partitions: int = 1, feedback_kinds: Collection[str] | None = None) -> list[str]:
    """The filter subjects of a consumer of ``families``: the one place a consumer's view of
    the stream is decided. Partition k of N (``partition`` given, N > 1) reads the slots s
    with s mod N = k — the server filters, the worker never sees another partition's event;
    otherwise every slot (``*``). For each slot: the contract subjects of each family and
    the OpenClaw store's events of that family (``<prefix>.openclaw.<slot>.*.<token>``,
    present once a source is wired); a partition also reads the store's events filed under
    its session token (``OPENCLAW_SESSION_AGENT``), whose agents may be any partition's, and
    applies only its own of them (``partition_owns``). ``feedback_kinds`` (a worker that applies a few kinds of
    FeedbackEvent) narrows the feedback family to those kinds' subjects, so that a kind it
    ignores — a ``remember``, a ``recall_access`` — does not wake it at all; None: every kind."""
    slots = ["*"] if partition is None or partitions <= 1 else [str(s) for s in partition_slots(partition, partitions)]
    filters = [subject for slot in slots for family in families
               for subject in _family_filters(prefix, family, f"{slot}.*", feedback_kinds)]
    shared_slot = str(slot_of(OPENCLAW_SESSION_AGENT))
    if slots != ["*"] and shared_slot not in slots:  # the store's session token: any partition's agents
        filters += [f"{prefix}.{OPENCLAW_FAMILY}.{shared_slot}.{OPENCLAW_SESSION_AGENT}.{token}"
                    for family in families for token in openclaw_tokens(family)]
    if not partition:  # the only consumer, or partition 0: also what the stream stored without a slot
        filters += unslotted_filter_subjects(prefix, families, feedback_kinds)
    return filters


def unslotted_filter_subjects(prefix: str, families: tuple[str, ...] | list[str],
                              feedback_kinds: Collection[str] | None = None) -> list[str]:
    """A publish with a wildcard token (``cortex.msg.*.received``) is captured but not
    transformed: it is stored without a slot. No event can be stored so, so partition 0
    reads these four-token subjects too and dead-letters them (``parse_subject``)."""
    return [subject for family in families for subject in _family_filters(prefix, family, "*", feedback_kinds)]


def _family_filters(prefix: str, family: str, middle: str, feedback_kinds: Collection[str] | None) -> list[str]:
    """One family's filters with ``middle`` between family and kind (``<slot>.*``, or ``*``
    where no slot was stored): its kinds' subjects (all, or the feedback kinds read) and the
    OpenClaw store's events of the family."""
    kinds = sorted(feedback_kinds) if family == "feedback" and feedback_kinds is not None else ["*"]
    return [*(f"{prefix}.{family}.{middle}.{kind}" for kind in kinds),
            *(f"{prefix}.{OPENCLAW_FAMILY}.{middle}.{t}" for t in openclaw_tokens(family))]


def is_store_subject(prefix: str, subject: str) -> bool:
    """Is this stored subject an event of the OpenClaw store (``<prefix>.openclaw.…``)?"""
    return subject.startswith(f"{prefix}.{OPENCLAW_FAMILY}.")


def store_filter(prefix: str) -> str:
    """Every stored event of the OpenClaw store (``is_store_subject``)."""
    return f"{prefix}.{OPENCLAW_FAMILY}.>"


def openclaw_transform(prefix: str, source_prefix: str) -> tuple[str, str]:
    """(src, dest) of the subject transform that brings the store's events into CORTEX_EVENTS."""
    return f"{source_prefix}.*.*", f"{prefix}.{OPENCLAW_FAMILY}.{{{{wildcard(1)}}}}.{{{{wildcard(2)}}}}"


def agent_event_filters(prefix: str, agent: str) -> tuple[str, ...]:
    """Subject filters that match every stored event of ``agent`` (in layout 2 one: every
    family's, the notes' and the OpenClaw store's events share the agent's slot)."""
    return (agent_filter(prefix, agent),)


def dlq_subject(prefix: str, worker: str) -> str:
    return f"{prefix}.dlq.{worker}"


def api_subject(prefix: str, service: str, agent: str) -> str:
    """One agent's request subject of an API service (``*`` for either: a permission)."""
    return f"{prefix}.api.{service}.{agent}"


def service_name(worker: str, shadow: bool = False) -> str:
    """A worker's NATS micro service: what ``$SRV.*.<name>`` discovers (its permissions);
    ``cortex-<worker>-shadow`` in shadow mode (its own queue group)."""
    return f"cortex-{shadow_service(worker) if shadow else worker}"


def api_endpoint_subject(prefix: str, service: str) -> str:
    """What a service's endpoint subscribes to: its requests for every agent."""
    return api_subject(prefix, service, "*")


def feedback_subject(prefix: str, agent: str, kind: str) -> str:
    """Where a FeedbackEvent of ``kind`` about ``agent`` is published."""
    return published_subject(prefix, "feedback", agent, kind)


def llm_answer_key(agent: str, digest: str = "") -> str:
    """A cached LLM answer in ``cortex_llm_cache``: ``answer.<agent>.<digest>`` (the digest:
    sha256 of model, purpose, system and prompt). Every LLM call is made on behalf of one
    agent and its prompt holds her text, so `cortex forget` purges her answers by this prefix
    (``digest`` empty: the prefix itself). The agent is the second token, as in
    ``usage.<agent>.<day>``: no agent id can name another's keys or the usage counters."""
    return f"answer.{agent}.{digest}" if digest else f"answer.{agent}"


def llm_usage_key(agent: str, day: str = "") -> str:
    """The agent's LLM token count of one day of event time (``day`` empty: the prefix)."""
    return f"usage.{agent}.{day}" if day else f"usage.{agent}"


def llm_pending_key(agent: str, worker: str = "", digest: str = "") -> str:
    """A call that fell back to the structured path, to be asked again once the model
    answers: ``pending.<agent>.<worker>.<digest>`` (``worker`` empty: the agent's prefix, which
    `cortex forget` purges; the agent is the second token, as in the other keys)."""
    return f"pending.{agent}.{worker}.{digest}" if worker else f"pending.{agent}"


def llm_health_key(client: str = "") -> str:
    """Whether a worker's model answers (``shared.llm.availability``): ``health.<consumer>``
    (``client`` empty: the prefix, which ``cortex status`` lists)."""
    return f"health.{client}" if client else "health"


def shadow_bucket(bucket: str) -> str:
    return "cortex_shadow_" + bucket.removeprefix("cortex_")


def memory_collection(shadow: bool = False) -> str:
    """The recall worker's Qdrant collection: ``cortex_memories``, or in shadow mode its twin
    named like the shadow buckets (``cortex_shadow_memories``), so that a shadow worker
    sharing the store with the live one never reads or writes the live memories."""
    return shadow_bucket(QDRANT_COLLECTION) if shadow else QDRANT_COLLECTION


def shadow_service(service: str) -> str:
    """The API a worker in shadow mode serves instead of ``service`` (``recall-shadow``:
    ``<prefix>.api.recall-shadow.<agent>``), so that a live request is never answered from
    shadow state; named like the shadow consumers."""
    return f"{service}-shadow"


def consumer_name(worker: str, partition: int | None = None, shadow: bool = False) -> str:
    """``<worker>[-shadow][-<k>]`` (contract: Consumers, partitions, instances)."""
    name = f"{worker}-shadow" if shadow else worker
    return name if partition is None else f"{name}-{partition}"


def early_consumer(consumer: str) -> str:
    """The ephemeral consumer with which the boot worker's ``consumer`` reads its triggers
    (session starts, compactions) ahead of its loop (``workers.boot.early``)."""
    return f"{consumer}-early"


def scout_consumer(consumer: str) -> str:
    """The ephemeral consumer with which ``consumer``'s loop reads past its read-ahead (``shared.scout``)."""
    return f"{consumer}-scout"


def fnv1a_32(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def slot_of(agent: str) -> int:
    """The agent's slot: FNV-1a 32-bit of the agent id modulo 64 (NATS's ``partition()``)."""
    return fnv1a_32(agent.encode()) % SLOTS


def partition_of(agent: str, partitions: int) -> int:
    """The agent's partition of N: its slot modulo N."""
    return slot_of(agent) % partitions if partitions > 1 else 0


def partition_owns(partition: int | None, partitions: int, agent: str) -> bool:
    """Does partition k of N apply ``agent``'s events? (None: the only consumer, every agent.)
    The server's filter decides it for every stored subject but the OpenClaw store's session
    token, which names no agent of its own (``OPENCLAW_SESSION_AGENT``)."""
    return partition is None or partition_of(agent, partitions) == partition


def partition_slots(partition: int, partitions: int) -> list[int]:
    """The slots partition k of N reads: s with s mod N = k (every slot when N is 1)."""
    if partitions <= 1:
        return list(range(SLOTS))
    if not 0 <= partition < partitions <= SLOTS:
        raise ValueError(f"partition {partition} is not one of 0..{partitions - 1} (at most {SLOTS} partitions)")
    return list(range(partition, SLOTS, partitions))


def partition_ids(partitions: int) -> list[int | None]:
    """Every partition of a worker: ``[None]`` (the unsuffixed consumer) when N is 1."""
    return [None] if partitions <= 1 else list(range(partitions))


def consumers_of(worker: str, partitions: int, shadow: bool = False) -> list[str]:
    """Every consumer of a worker: ``<worker>`` or ``<worker>-0`` … ``<worker>-<N-1>``."""
    return [consumer_name(worker, k, shadow) for k in partition_ids(partitions)]


def agent_consumer(worker: str, agent: str, partitions: int, shadow: bool = False) -> str:
    """The consumer of ``worker`` that applies ``agent``'s events."""
    return consumer_name(worker, partition_of(agent, partitions) if partitions > 1 else None, shadow)
