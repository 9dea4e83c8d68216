"""Percentiles of latency samples (linear interpolation between closest ranks)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from workers.bench.results import Latency


def percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of already sorted samples; linear between closest ranks."""
    if not ordered:
        raise ValueError("no samples")
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def median(samples: Sequence[float]) -> float:
    return percentile(sorted(samples), 0.5)


def summarize(seconds: Sequence[float], lost: int = 0) -> Latency:
    """A ``Latency`` in milliseconds from samples in seconds."""
    if not seconds:
        return Latency(n=0, lost=lost)
    ordered = sorted(s * 1000.0 for s in seconds)
    return Latency(
        n=len(ordered),
        lost=lost,
        p50_ms=round(percentile(ordered, 0.50), 3),
        p95_ms=round(percentile(ordered, 0.95), 3),
        p99_ms=round(percentile(ordered, 0.99), 3),
        max_ms=round(ordered[-1], 3),
        mean_ms=round(sum(ordered) / len(ordered), 3),
    )
