"""``cortex bench``: the benchmark harness of the performance budget (issue 9).

One run against one nats-server measures the bare-consume limit, each regex worker's
sustained throughput and peak RSS, freshness latency at fixed publish rates, API latency
on a full-size state, recall, the cost of pathological input and scale-out, and compares
every number with the budget (pass / miss; it never asserts speed).
"""

from workers.bench.config import BenchConfig, make_config
from workers.bench.harness import BenchError, run_bench
from workers.bench.results import REPORT_KEYS, Report

__all__ = ["REPORT_KEYS", "BenchConfig", "BenchError", "Report", "make_config", "run_bench"]
