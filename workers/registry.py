"""Every worker Cortex knows, by name (``cortex worker NAME``).

A worker is one line in ``SPECS``: its ``WorkerSpec`` says how it runs and its whole NATS
footprint, and everything else follows from it — ``cortex init`` provisions its consumer
and buckets, ``cortex worker NAME`` runs it, ``deploy/gen_manifests.py`` makes its
StatefulSet and its NATS user's permissions, the status API lists it. No worker imports
this module: a worker that looks at the others gets them from ``WorkerContext.catalog``.
"""

from __future__ import annotations

from shared.provision import ConsumerSpec
from shared.runtime import WorkerSpec, with_briefings
from workers.api.worker import SPEC as API
from workers.boot.worker import SPEC as BOOT
from workers.channels.worker import SPEC as CHANNELS
from workers.decisions.worker import SPEC as DECISIONS
from workers.extraction.worker import SPEC as EXTRACTION
from workers.knowledge.worker import SPEC as KNOWLEDGE
from workers.narrative.worker import SPEC as NARRATIVE
from workers.recall.spec import SPEC as RECALL  # the engine (and its stack) only when it runs
from workers.snapshot.worker import SPEC as SNAPSHOT
from workers.threads.worker import SPEC as THREADS
from workers.traces.worker import SPEC as TRACES

SPECS: list[WorkerSpec] = [THREADS, DECISIONS, KNOWLEDGE, CHANNELS, TRACES, RECALL, SNAPSHOT, NARRATIVE, EXTRACTION,
                           BOOT, API]


def all_specs() -> dict[str, WorkerSpec]:
    """Every worker's spec; a worker that reads the briefing sections (boot) with every
    registered worker's section among its sources (``shared.runtime.with_briefings``)."""
    return {s.name: with_briefings(s, SPECS) for s in SPECS}


def doc_buckets() -> list[str]:
    """Every worker's document buckets (``cortex init`` makes them, with history)."""
    return list(dict.fromkeys(b for s in SPECS for b in s.buckets))


def consumer_specs(prefix_shadow: bool = False, partitions: int = 1) -> list[ConsumerSpec]:
    """Every consuming worker's durable consumers: ``<worker>[-shadow]``, or one per partition
    ``<worker>[-shadow]-<k>`` when ``partitions`` > 1."""
    from shared.names import consumer_name, partition_ids

    return [s.consumer(consumer_name(s.name, k, prefix_shadow), k, partitions)
            for s in all_specs().values() if s.build is not None
            for k in partition_ids(partitions)]


def consuming_workers() -> list[str]:
    """The workers that consume events (each has durable consumers and leases)."""
    return [name for name, spec in all_specs().items() if spec.build is not None]
