"""Capped exponential backoff, and jitter for retries many processes make at once: pure
functions (the random draw is an argument), so tests can check them without sleeping."""

from __future__ import annotations


def backoff_delay(attempt: int, base_s: float, cap_s: float) -> float:
    """Delay before retry number ``attempt`` (1-based): base·2^(attempt-1), capped.

    Deterministic (no jitter): one active instance per consumer means no thundering herd.
    """
    if attempt < 1:
        return 0.0
    return float(min(cap_s, base_s * (2 ** min(attempt - 1, 30))))


def jittered(delay_s: float, spread: float, draw: float) -> float:
    """``delay_s`` moved by up to ±``spread`` of itself, ``draw`` a uniform number in [0, 1)
    (``random.random()``): the connect retries of every pod that lost the same server do not
    arrive at the server in step."""
    return delay_s * (1.0 - spread + 2.0 * spread * draw)
