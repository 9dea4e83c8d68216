"""Plumbing shared by composed workers: which consumer holds a source, and waiting on it."""

from __future__ import annotations

from shared.names import agent_consumer
from shared.runtime import WorkerContext


def source_consumer(ctx: WorkerContext, worker: str, agent: str) -> str:
    """The consumer of ``worker`` that applies ``agent``'s events: with partitions, the
    source's consumer of the agent's partition (``<worker>-<k>``), whose watermark is the
    one that says whether the agent's events before a sequence are applied."""
    return agent_consumer(worker, agent, ctx.settings.partitions, ctx.shadow)


def wait_bound_s(ctx: WorkerContext) -> float:
    return ctx.settings.boot.wait_ms / 1000
