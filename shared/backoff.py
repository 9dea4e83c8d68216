"""Capped exponential backoff: a pure function, so tests can check it without sleeping."""

from __future__ import annotations


def backoff_delay(attempt: int, base_s: float, cap_s: float) -> float:
    """Delay before retry number ``attempt`` (1-based): base·2^(attempt-1), capped.

    Deterministic (no jitter): one active instance per consumer means no thundering herd.
    """
    if attempt < 1:
        return 0.0
    return float(min(cap_s, base_s * (2 ** min(attempt - 1, 30))))
