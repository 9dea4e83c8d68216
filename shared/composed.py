"""Plumbing shared by composed workers: which consumer holds a source, and waiting on it."""

from __future__ import annotations

from shared.names import consumer_name
from shared.runtime import WorkerContext


def source_consumer(ctx: WorkerContext, worker: str) -> str:
    return consumer_name(worker, None, ctx.shadow)


def wait_bound_s(ctx: WorkerContext) -> float:
    return ctx.settings.boot.wait_ms / 1000
