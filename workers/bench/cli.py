"""``cortex bench``: the benchmark harness on the command line.

Wired into ``cortex`` through ``register(sub)`` (the pattern of ``workers.cli.ops``), and
runnable on its own as ``python -m workers.bench`` with the same flags.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from typing import Any

from shared.config import Settings, SettingsError, load_settings
from shared.connection import ConnectError
from shared.embedded import EmbeddedError
from workers.bench.config import PHASES, make_config
from workers.bench.harness import BenchError, run_bench
from workers.bench.report import summary, table, write_json
from workers.cli.base import until_interrupted

HELP = "measure throughput, latency, memory and hostile-input cost against the performance budget"


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, not {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, not {text!r}")
    return values


def _names(text: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in text.split(",") if v.strip())


def _phases(text: str) -> tuple[str, ...]:
    names = _names(text)
    unknown = [n for n in names if n not in PHASES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown phase(s) {', '.join(unknown)} (known: {', '.join(PHASES)})")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="small sizes, under a minute (CI smoke)")
    parser.add_argument("--out", default=None, help="JSON results file (default: bench-results.json)")
    parser.add_argument("--nats-url", help="benchmark this server instead of an embedded one")
    parser.add_argument("--reset", action="store_true",
                        help="allow deleting existing Cortex streams and buckets on --nats-url")
    parser.add_argument("--events", type=int, help="backlog size (default 50000; quick 1500)")
    parser.add_argument("--agents", type=int, help="agents in the generated events (default 50)")
    parser.add_argument("--limit-runs", type=int, help="bare-consume runs, median taken (default 3)")
    parser.add_argument("--rates", type=_int_list,
                        help="freshness publish rates in msg/s (default 50,100,200,500,1000)")
    parser.add_argument("--duration", dest="duration_s", type=float, help="seconds per rate (default 10)")
    parser.add_argument("--boot-every", type=int, help="one session start per N freshness events (default 100)")
    parser.add_argument("--drain-limit", dest="drain_limit_s", type=float,
                        help="seconds to wait for the pipeline to drain after each rate (default 30)")
    parser.add_argument("--complete-limit", dest="complete_limit_s", type=float,
                        help="then seconds to wait for every session start's complete BootDoc (a lagging source "
                             "caught up; default 120, quick 0: not waited for)")
    parser.add_argument("--api-requests", type=int, help="requests per API endpoint (default 300)")
    parser.add_argument("--mcp-calls", type=int, help="calls per MCP tool beside its NATS round trip (default 200)")
    parser.add_argument("--plugin-turns", type=int,
                        help="OpenClaw plugin turns of each kind beside their NATS requests (default 200)")
    parser.add_argument("--plugin-dir", help="the OpenClaw plugin's source, a checkout's deploy/openclaw-plugin "
                                             "(default: beside this installation, else under the current directory "
                                             "or one above it)")
    parser.add_argument("--hostile-reps", type=int, help="timed repetitions per pathological message (default 20)")
    parser.add_argument("--recall-messages", type=int, help="events indexed before recall queries (default 1000)")
    parser.add_argument("--recall-limit", dest="recall_limit_s", type=float,
                        help="index for at most this many seconds, then query what was indexed (default 60)")
    parser.add_argument("--recall-scale", type=int,
                        help="memories of one agent the recall query is measured at (default 100000; 0: not measured)")
    parser.add_argument("--capacity-duration", dest="capacity_duration_s", type=float,
                        help="seconds each capacity probe publishes at its rate (default 30)")
    parser.add_argument("--capacity-max", type=int, help="the highest rate the capacity search probes (default 3200)")
    parser.add_argument("--fairness-burst", type=int, help="the noisy agent's burst beside which a quiet agent's "
                                                           "latency is measured (default 5000; quick 2000)")
    parser.add_argument("--fairness-recall-burst", type=int,
                        help="the burst of the fairness phase's recall row, run with a read-ahead of 1000 "
                             "(default 3000; 0: no recall row; quick 0)")
    parser.add_argument("--fairness-store-burst", type=int,
                        help="the burst of the fairness phase's OpenClaw store row: both agents publish to an OpenClaw "
                             "event store (default 25000, past the default read-ahead; 0: no such row; quick 2000 "
                             "with a read-ahead of 1500)")
    parser.add_argument("--workers", type=_names, help="workers measured alone on the backlog "
                                                       "(default threads,decisions,channels,knowledge)")
    parser.add_argument("--pipeline", type=_names, help="workers running for freshness and API (default: all)")
    parser.add_argument("--only", dest="phases", type=_phases, help=f"phases to run (default all: {','.join(PHASES)})")
    parser.add_argument("--seed", type=int, help="event generator seed (default 7)")
    parser.add_argument("--workdir", help="keep worker logs and data here (default: a temporary directory)")
    parser.add_argument("--boot-trace", action="store_true",
                        help="run boot at DEBUG (JSON logs: each trigger's stages) and keep each freshness rate's "
                             "session starts in the work dir (give --workdir); "
                             "`python -m workers.bench.bootstages WORKDIR` tells where their BootDocs' time went")
    parser.add_argument("--profile", dest="profile_dir",
                        help="run the backlog workers under cProfile on their CPU clock, one .prof per worker in "
                             "this directory, and the pipeline's (freshness, capacity, api …) in its pipeline/")


def register(sub: Any) -> None:
    bench = sub.add_parser("bench", help=HELP, description=HELP)
    add_arguments(bench)
    bench.set_defaults(handler=cmd_bench)


_FIELDS = ("events", "agents", "limit_runs", "rates", "duration_s", "boot_every", "drain_limit_s", "complete_limit_s",
           "api_requests",
           "mcp_calls", "plugin_turns", "hostile_reps", "recall_messages", "recall_limit_s", "recall_scale",
           "capacity_duration_s", "capacity_max", "fairness_burst", "fairness_recall_burst", "fairness_store_burst",
           "workers", "pipeline",
           "phases", "seed",
           "workdir", "profile_dir", "plugin_dir", "nats_url", "out", "boot_trace")


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


async def cmd_bench(args: argparse.Namespace, settings: Settings) -> int:
    explicit = {name: getattr(args, name, None) for name in _FIELDS}
    config = make_config(args.quick, reset=args.reset or None, **explicit)
    try:
        rep = await run_bench(config, settings, _progress)
    except BenchError as exc:
        print(f"cortex bench: {exc}", file=sys.stderr)
        return 1
    write_json(rep, config.out)
    print(table(rep.rows))
    cores = f"; regex cores {rep.machine.regex_cores}" if rep.machine is not None else ""
    print(f"\n{summary(rep.rows)} — {rep.duration_s:.0f}s{cores}; results in {config.out}")
    return 1 if any(r.verdict == "failed" for r in rep.rows) else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m workers.bench", description=HELP)
    add_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m workers.bench``: the same command without the ``cortex`` wrapper."""
    from shared.logs import configure

    args = build_parser().parse_args(argv)
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"cortex bench: {exc}", file=sys.stderr)
        return 2
    configure(os.environ.get("CORTEX_LOG_LEVEL", "WARNING"))
    try:
        return asyncio.run(until_interrupted(cmd_bench(args, settings)))  # as under `cortex`
    except KeyboardInterrupt:  # Ctrl-C before the loop took the signal
        return 128 + signal.SIGINT
    except (ConnectError, EmbeddedError) as exc:
        print(f"cortex bench: {exc}", file=sys.stderr)
        return 1
