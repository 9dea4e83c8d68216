"""What a benchmark run produces: one Struct per measurement, encoded as the JSON report.

Every phase result carries ``skipped`` (a readable reason, or None when it ran), so the
JSON always has the same keys whatever was measured.
"""

from __future__ import annotations

import msgspec


class Latency(msgspec.Struct, kw_only=True):
    """Latencies in milliseconds; ``lost`` samples never completed within the phase."""

    n: int = 0
    lost: int = 0
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    mean_ms: float | None = None


class LimitResult(msgspec.Struct, kw_only=True):
    """Bare nats-py pull consume: fetch batches, msgspec decode, ack each message."""

    skipped: str | None = None
    events: int = 0
    batch: int = 500
    runs_msgs_per_s: list[float] = msgspec.field(default_factory=list)
    msgs_per_s: float | None = None  # median of the runs
    runs_server_cpu_us: list[float] = msgspec.field(default_factory=list)  # the embedded server's, an event


class WorkerResult(msgspec.Struct, kw_only=True):
    """One worker process draining the backlog alone."""

    worker: str
    skipped: str | None = None
    events: int = 0
    seconds: float | None = None  # first delivery → consumer drained
    msgs_per_s: float | None = None
    ratio: float | None = None  # to the limit
    startup_s: float | None = None  # process start → first delivery
    peak_rss_mb: float | None = None
    profile: str | None = None  # cProfile output, when --profile was given
    cpu_s: float | None = None  # the process's CPU time from first delivery to drained (load-independent)
    server_cpu_s: float | None = None  # the embedded nats-server's over the same span (None: a server by URL)
    # per document bucket the worker writes: the values stored over the drain (puts, parts and
    # delete markers: the bucket stream's sequences) and the mean size of the revisions it keeps
    doc_writes: dict[str, int] = msgspec.field(default_factory=dict)
    doc_value_bytes: dict[str, float] = msgspec.field(default_factory=dict)


class RateResult(msgspec.Struct, kw_only=True):
    """One fixed publish rate: publish → document updated, and session start → BootDoc."""

    rate: int
    duration_s: float
    published: int = 0
    achieved_rate: float = 0.0  # what the publisher delivered: events over first send → last acknowledgement
    # achieved_rate within 5 % of the rate asked (workers.bench.publisher); None: a run before the field
    rate_reached: bool | None = None
    publish_sent_s: float | None = None  # the publisher's first send → last send (the rest waited for acks)
    publish_max_lag_ms: float | None = None  # the most an event was sent after its time on the schedule
    threads: Latency = msgspec.field(default_factory=Latency)
    decisions: Latency = msgspec.field(default_factory=Latency)
    boot: Latency = msgspec.field(default_factory=Latency)
    # session start → its BootDoc naming no source behind (completed, or made complete); "lost": not by the end
    boot_complete: Latency = msgspec.field(default_factory=Latency)
    drain_s: float | None = None  # publishing finished → every consumer drained
    undrained: dict[str, int] = msgspec.field(default_factory=dict)  # consumer → pending at the drain limit
    # drained (or the drain limit) → every session start's complete BootDoc seen, waited for at most
    # ``complete_limit_s`` (freshness only; None: not waited for, or not all complete by then)
    completed_s: float | None = None
    # CPU milliseconds per published event (= CPU seconds per 1 000 events), first publish →
    # drained: each worker process, the embedded nats-server, the publisher (its helper) and the harness (watches)
    cpu_ms_per_event: dict[str, float] = msgspec.field(default_factory=dict)


class FreshnessResult(msgspec.Struct, kw_only=True):
    skipped: str | None = None
    workers: list[str] = msgspec.field(default_factory=list)
    rates: list[RateResult] = msgspec.field(default_factory=list)


class CapacityProbe(msgspec.Struct, kw_only=True):
    """One rate the capacity search published at, and whether the pipeline held it."""

    rate: int
    holds: bool
    threads_p99_ms: float | None = None
    decisions_p99_ms: float | None = None
    boot_p99_ms: float | None = None
    lost: int = 0  # documents never seen for a published event (after the drain)
    undrained: dict[str, int] = msgspec.field(default_factory=dict)
    cpu_ms_per_event: dict[str, float] = msgspec.field(default_factory=dict)  # as in RateResult


class CapacityResult(msgspec.Struct, kw_only=True):
    """The highest publish rate the whole pipeline holds within its freshness budget."""

    skipped: str | None = None
    msgs_per_s: int | None = None  # the highest rate that held (None: not even the first)
    agents: int | None = None  # as agents publishing AGENT_EVENTS_PER_MIN events a minute
    duration_s: float = 0.0  # per probe
    probes: list[CapacityProbe] = msgspec.field(default_factory=list)


class ApiResult(msgspec.Struct, kw_only=True):
    skipped: str | None = None
    agent: str = ""
    state: dict[str, int] = msgspec.field(default_factory=dict)  # what the full-size state holds
    boot_chars: int | None = None
    endpoints: dict[str, Latency] = msgspec.field(default_factory=dict)
    errors: dict[str, str] = msgspec.field(default_factory=dict)


class ToolLatency(msgspec.Struct, kw_only=True):
    """One MCP tool: the call through ``cortex mcp``, the same round trip directly on NATS,
    and what MCP adds (the difference of the two percentiles)."""

    mcp: Latency = msgspec.field(default_factory=Latency)
    direct: Latency = msgspec.field(default_factory=Latency)
    added_p50_ms: float | None = None
    added_p99_ms: float | None = None
    # CPU per call, independent of how busy the machine is: the MCP server process's, and the
    # client's for an MCP call beyond its direct call's
    server_cpu_ms: float | None = None
    client_cpu_ms: float | None = None


class BareCalls(msgspec.Struct, kw_only=True):
    """``tools/call``s that a server refuses at its argument check — no NATS, a one-line error
    result, so the client skips its output-schema check too: what the SDK's two ends, the pipes
    and the server's dispatch cost with no work behind them."""

    back_to_back: Latency = msgspec.field(default_factory=Latency)
    # the same calls, each started after the pipeline is found at rest, as the tools' calls are
    # (the server process idle meanwhile: the same plus the machine's cost of waking it)
    at_rest: Latency = msgspec.field(default_factory=Latency)
    server_cpu_ms: float | None = None  # CPU per call, the server process's
    client_cpu_ms: float | None = None  # and the client's


class McpResult(msgspec.Struct, kw_only=True):
    skipped: str | None = None
    agent: str = ""
    transport: str = ""
    client: str = ""  # the host's MCP client: which SDK, which version
    # the floor under every tool's added time: calls that ``cortex mcp`` refuses at Cortex's
    # argument check
    floor: BareCalls = msgspec.field(default_factory=BareCalls)
    # the yardstick: the same calls to the SDK's own server as its documentation shows it
    # (``workers/bench/mcpreference.py``), refused at the SDK's argument check
    reference: BareCalls = msgspec.field(default_factory=BareCalls)
    reference_server: str = ""  # which server, which SDK version
    tools: dict[str, ToolLatency] = msgspec.field(default_factory=dict)
    errors: dict[str, str] = msgspec.field(default_factory=dict)


class PluginCall(msgspec.Struct, kw_only=True):
    """One ask of the OpenClaw plugin (deploy/openclaw-plugin): its prompt hook as the gateway
    calls it, beside the bare NATS request the hook makes, and what the plugin adds."""

    plugin: Latency = msgspec.field(default_factory=Latency)
    direct: Latency = msgspec.field(default_factory=Latency)
    added_p50_ms: float | None = None
    added_p99_ms: float | None = None
    over_default_timeout: int = 0  # hook calls over the plugin's default deadline (they would have gone without)


class PluginResult(msgspec.Struct, kw_only=True):
    skipped: str | None = None
    agent: str = ""
    node: str = ""  # the Node version the hook ran on
    memories: int | None = None  # what a recall of the agent could find
    default_timeout_ms: int | None = None
    boot: PluginCall = msgspec.field(default_factory=PluginCall)  # a session's first turn, recall off
    recall: PluginCall = msgspec.field(default_factory=PluginCall)  # a later turn: the briefing cached
    first_turn: Latency = msgspec.field(default_factory=Latency)  # both asks side by side
    outcomes: dict[str, dict[str, int]] = msgspec.field(default_factory=dict)  # the plugin's own counts


class RecallResult(msgspec.Struct, kw_only=True):
    skipped: str | None = None
    embedder: str = ""
    # cold: a fresh ``cortex worker recall`` process on a fresh store indexing the backlog
    messages: int = 0  # events indexed (messages with their session events)
    memories: int | None = None  # memories stored afterwards (sum of RecallDoc.memories)
    index_msgs_per_s: float | None = None
    # CPU seconds the worker process spent indexing, and events per CPU-second: on a
    # shared machine the wall-clock rate moves with everybody else's load, this much less
    index_cpu_s: float | None = None
    index_msgs_per_cpu_s: float | None = None
    # warm: the same process (same store, its vocabulary learnt), after the queries, indexing a
    # second backlog of as many new events (new ids, the same generator's later sequence)
    warm_messages: int = 0
    warm_memories: int | None = None  # memories stored after both backlogs
    warm_index_msgs_per_s: float | None = None
    warm_index_cpu_s: float | None = None
    warm_index_msgs_per_cpu_s: float | None = None
    warm_skipped: str | None = None  # why the warm backlog was not measured (None: it was)
    query: Latency = msgspec.field(default_factory=Latency)
    peak_rss_mb: float | None = None
    # the query of one agent holding ``scale_memories`` memories (filled through the store layer)
    scale_memories: int | None = None
    scale_fill_s: float | None = None
    scale_index_s: float | None = None  # of the fill: the store's vector index built beside it (store_index)
    scale_query: Latency = msgspec.field(default_factory=Latency)
    scale_query_cpu_ms: float | None = None  # the worker process's CPU per timed query (its search threads too)
    scale_skipped: str | None = None


class HostileVariant(msgspec.Struct, kw_only=True):
    name: str
    bytes: int
    us: float  # median microseconds through the four cores (sum)
    ratio: float  # to the normal 1 KiB message, in the core where it is worst
    core: str | None = None  # that core


class HostileResult(msgspec.Struct, kw_only=True):
    skipped: str | None = None
    normal_bytes: int = 0
    normal_us: float | None = None
    variants: list[HostileVariant] = msgspec.field(default_factory=list)
    worst: str | None = None
    worst_ratio: float | None = None


class MemoryResult(msgspec.Struct, kw_only=True):
    """Peak RSS (VmHWM) in MB per worker process: alone under the backlog, and in the pipeline."""

    backlog: dict[str, float] = msgspec.field(default_factory=dict)
    pipeline: dict[str, float] = msgspec.field(default_factory=dict)


class PartitionRun(msgspec.Struct, kw_only=True):
    """The threads worker draining the backlog with N partitions, one process per partition."""

    partitions: int
    events: int = 0  # the backlog
    applied: list[int] = msgspec.field(default_factory=list)  # events each partition applies (its agents')
    # each partition consumer's pending count before its process starts: what the server delivers to it
    pending: list[int] = msgspec.field(default_factory=list)
    seconds: float | None = None  # first delivery on any partition → every partition drained
    msgs_per_s: float | None = None  # backlog events / seconds
    startup_s: list[float] = msgspec.field(default_factory=list)  # per process: start → first delivery
    peak_rss_mb: list[float | None] = msgspec.field(default_factory=list)


class ScaleoutResult(msgspec.Struct, kw_only=True):
    skipped: str | None = None
    cores: int = 0
    partitions_1_msgs_per_s: float | None = None  # the threads worker, one partition (one process)
    partitions_2_msgs_per_s: float | None = None  # the threads worker, two partitions (two processes)
    partitions_2_ratio: float | None = None  # 2 partitions / 1 partition, measured back to back
    runs: list[PartitionRun] = msgspec.field(default_factory=list)
    # what 2 partitions would give with a free core each (a model, not a measurement): each
    # process is delivered only its agents' events, so the busiest partition sets the pace
    partitions_2_model_ratio: float | None = None
    limit_1_process_msgs_per_s: float | None = None
    limit_2_processes_msgs_per_s: float | None = None  # bare consume, one process per partition's slot filters
    limit_2_ratio: float | None = None


class IngestResult(msgspec.Struct, kw_only=True):
    """The threads worker on the same backlog: contract subjects vs an OpenClaw store (backfill)."""

    skipped: str | None = None
    events: int = 0
    contract_msgs_per_s: float | None = None
    openclaw_msgs_per_s: float | None = None  # the store's events, sourced and decoded from the plugin's envelope
    ratio: float | None = None  # openclaw / contract events per second, both sides at the same time: the median pair
    runs_ratio: list[float] = msgspec.field(default_factory=list)  # every pair's, sorted
    contract_cpu_us: float | None = None  # the worker's CPU per event (median pair)
    openclaw_cpu_us: float | None = None
    copy_seconds: float | None = None  # the server copying the whole store into CORTEX_EVENTS
    copy_msgs_per_s: float | None = None


class FairnessRun(msgspec.Struct, kw_only=True):
    """One run of the fairness phase: the quiet agent's messages, alone or behind a burst."""

    mode: str  # alone | noisy neighbour | noisy neighbour, in order
    worker: str = "channels"  # whose consumer the two agents share
    source: str = "contract"  # how both agents publish: "contract" subjects, or an "OpenClaw store"
    burst: int  # the noisy agent's messages published at once before the quiet agent's
    read_ahead: str  # CORTEX_RUNTIME_READ_AHEAD of the worker ("default", a number, or "1": in stream order)
    quiet: Latency = msgspec.field(default_factory=Latency)  # publish → the quiet agent's document
    drain_s: float | None = None  # the burst's publish → the consumer drained
    cpu_us_per_event: float | None = None  # the worker's CPU time over the run per event published
    # the burst's events applied before the quiet agent's first message (published once the worker
    # takes the burst): the documents' write order, load-independent; in stream order it is the burst
    first_quiet_behind: int | None = None


class FairnessResult(msgspec.Struct, kw_only=True):
    """A quiet agent's latency beside a noisy agent's burst, in one partition (workers.bench.fairness)."""

    skipped: str | None = None
    worker: str = ""
    burst: int = 0
    quiet_messages: int = 0
    interval_s: float = 0.0
    runs: list[FairnessRun] = msgspec.field(default_factory=list)


class Machine(msgspec.Struct, kw_only=True):
    nproc: int
    cpu_model: str
    memory_mb: int
    python: str
    platform: str
    nats_server: str
    nats_py: str
    msgspec_version: str
    server: str  # "embedded" or the URL (redacted)
    load_avg_start: list[float] = msgspec.field(default_factory=list)  # 1, 5, 15 min: was the machine busy?
    load_avg_end: list[float] = msgspec.field(default_factory=list)
    regex_cores: str = ""  # workers.compiled.status(): "compiled (mypyc, …)" or "pure Python"


class Row(msgspec.Struct, kw_only=True):
    """One line of the table: a measured value against its budget."""

    section: str
    name: str
    value: str
    target: str
    verdict: str  # pass | miss | info | n/a | skipped | failed


class Report(msgspec.Struct, kw_only=True):
    version: int = 1
    started: str = ""
    duration_s: float = 0.0
    phase_s: dict[str, float] = msgspec.field(default_factory=dict)  # wall time of each part of the run
    machine: Machine | None = None
    config: dict[str, object] = msgspec.field(default_factory=dict)
    limit: LimitResult = msgspec.field(default_factory=LimitResult)
    workers: dict[str, WorkerResult] = msgspec.field(default_factory=dict)
    freshness: FreshnessResult = msgspec.field(default_factory=FreshnessResult)
    capacity: CapacityResult = msgspec.field(default_factory=CapacityResult)
    api: ApiResult = msgspec.field(default_factory=ApiResult)
    mcp: McpResult = msgspec.field(default_factory=McpResult)  # from the Python SDK's client
    mcp_node: McpResult = msgspec.field(default_factory=McpResult)  # from the TypeScript SDK's client, in Node
    plugin: PluginResult = msgspec.field(default_factory=PluginResult)  # the OpenClaw plugin's prompt hook
    recall: RecallResult = msgspec.field(default_factory=RecallResult)
    hostile: HostileResult = msgspec.field(default_factory=HostileResult)
    memory: MemoryResult = msgspec.field(default_factory=MemoryResult)
    scaleout: ScaleoutResult = msgspec.field(default_factory=ScaleoutResult)
    ingest: IngestResult = msgspec.field(default_factory=IngestResult)
    fairness: FairnessResult = msgspec.field(default_factory=FairnessResult)
    rows: list[Row] = msgspec.field(default_factory=list)


REPORT_KEYS: tuple[str, ...] = tuple(f.name for f in msgspec.structs.fields(Report))
