"""Sizes and switches of one benchmark run.

The defaults finish in a few minutes on a 2-core machine; ``QUICK`` finishes in well
under a minute (CI smoke: it checks that the harness runs, never a speed).
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

PHASES: Final = ("hostile", "limit", "workers", "freshness", "capacity", "api", "mcp", "plugin", "recall", "scaleout",
                  "ingest", "fairness")
REGEX_WORKERS: Final = ("threads", "decisions", "channels", "knowledge")


class BenchConfig(msgspec.Struct, frozen=True, kw_only=True):
    events: int = 50_000  # backlog size for the limit and the per-worker throughput
    agents: int = 50
    limit_runs: int = 3  # the bare consume is cheap: take the median of a few runs
    rates: tuple[int, ...] = (50, 100, 200, 500, 1000)  # freshness publish rates, msg/s
    duration_s: float = 10.0  # per freshness rate
    boot_every: int = 100  # one session start per this many events published in freshness
    api_requests: int = 300  # per API endpoint
    mcp_calls: int = 200  # per MCP tool, each beside its direct NATS round trip
    plugin_turns: int = 200  # OpenClaw plugin turns per kind, each beside its bare NATS request
    hostile_reps: int = 20  # timed repetitions per pathological message
    recall_messages: int = 1000  # messages indexed before recall queries (when recall exists)
    recall_limit_s: float = 60.0  # index for at most this long, then measure on what was indexed
    recall_scale: int = 100_000  # memories of one agent the recall query is measured at (0: not measured)
    capacity_duration_s: float = 30.0  # how long a capacity probe publishes at its rate
    capacity_start: int = 50  # the first rate probed (msg/s); doubled while it holds
    capacity_max: int = 3200  # no rate above this is probed
    capacity_bisections: int = 3  # probes between the last rate that held and the first that did not
    fairness_burst: int = 5000  # the noisy agent's burst beside which the quiet agent's latency is measured
    fairness_quiet: int = 20  # the quiet agent's messages per fairness run
    fairness_interval_s: float = 0.1  # between the quiet agent's messages
    # the recall worker's row (0: not run): its burst, and the read-ahead it runs with — lower than the
    # default 20 000, so the burst lies well past it at recall's pace (~150-300 events/s)
    fairness_recall_burst: int = 3000
    fairness_recall_read_ahead: int = 1000
    # the channels row with both agents on an OpenClaw event store (the plugin's stream, sourced into
    # CORTEX_EVENTS; 0: not run): its burst — past the default read-ahead of 20 000 — and its read-ahead
    # (0: the worker's default)
    fairness_store_burst: int = 25_000
    fairness_store_read_ahead: int = 0
    seed: int = 7
    phases: tuple[str, ...] = PHASES
    workers: tuple[str, ...] = REGEX_WORKERS  # measured alone on the backlog
    pipeline: tuple[str, ...] = ()  # workers running for freshness and API (empty: every registered one)
    drain_limit_s: float = 30.0  # after each freshness rate, wait at most this long for the backlog
    # then, at most this long more for every session start's complete BootDoc (a source lagging above
    # capacity, recall, completes it when it catches up): "none missing" counts only those still
    # incomplete after it, and the next rate starts from a caught-up pipeline (0: not waited for)
    complete_limit_s: float = 120.0
    nats_url: str | None = None
    reset: bool = False  # allow wiping Cortex's streams and buckets on a given server
    out: str = "bench-results.json"
    workdir: str | None = None  # keep worker logs here (default: a temporary directory)
    profile_dir: str | None = None  # workers under cProfile (CPU clock), output here (pipeline/: the pipeline's)
    # boot at DEBUG with JSON logs (its ``trigger_stages`` lines) and each freshness rate's session
    # starts written to the work dir: ``python -m workers.bench.bootstages WORKDIR`` joins them
    boot_trace: bool = False
    plugin_dir: str | None = None  # deploy/openclaw-plugin of a checkout (default: found, workers.bench.pluginlatency)
    quick: bool = False


# Lean enough to finish within the CI test's 230 s on a loaded shared machine (load 20-25
# on 2 cores: 269 s with 4 000 events and 1 000 msg/s, whose recall backlog slowed every later phase)
QUICK: Final[dict[str, Any]] = {
    "events": 1500,
    "limit_runs": 1,
    "rates": (200,),
    "duration_s": 2.0,
    "boot_every": 50,
    "api_requests": 30,
    "mcp_calls": 5,
    "plugin_turns": 5,
    "hostile_reps": 3,
    "recall_messages": 30,
    "recall_limit_s": 15.0,
    "recall_scale": 2000,
    "capacity_duration_s": 2.0,
    "capacity_max": 100,
    "capacity_bisections": 1,
    "drain_limit_s": 3.0,
    "complete_limit_s": 0.0,
    "fairness_burst": 2000,  # more than a batch (1000), so the quiet agent has a backlog to get past
    "fairness_quiet": 5,
    "fairness_interval_s": 0.05,
    "fairness_recall_burst": 0,  # recall's model load and pace: not in the quick run
    "fairness_store_burst": 2000,  # past a read-ahead of 1 500 (more than a batch): the look past it
    "fairness_store_read_ahead": 1500,
}


def make_config(quick: bool, **explicit: Any) -> BenchConfig:
    """Defaults (or the quick sizes), then every explicitly given value on top."""
    base = BenchConfig(quick=quick, **(QUICK if quick else {}))
    given = {k: v for k, v in explicit.items() if v is not None}
    return msgspec.structs.replace(base, **given)
