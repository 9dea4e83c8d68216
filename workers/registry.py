"""Every worker Cortex knows, by name (``cortex worker NAME``)."""

from __future__ import annotations

from shared.provision import ConsumerSpec
from shared.runtime import WorkerSpec
from workers.api.worker import SPEC as API
from workers.boot.worker import SPEC as BOOT
from workers.channels.worker import SPEC as CHANNELS
from workers.decisions.worker import SPEC as DECISIONS
from workers.knowledge.worker import SPEC as KNOWLEDGE
from workers.narrative.worker import SPEC as NARRATIVE
from workers.recall.spec import SPEC as RECALL  # the engine (and its stack) only when it runs
from workers.snapshot.worker import SPEC as SNAPSHOT
from workers.threads.worker import SPEC as THREADS
from workers.traces.worker import SPEC as TRACES


def all_specs() -> dict[str, WorkerSpec]:
    specs = [THREADS, DECISIONS, KNOWLEDGE, CHANNELS, TRACES, RECALL, SNAPSHOT, NARRATIVE, BOOT, API]
    return {s.name: s for s in specs}


def consumer_specs(prefix_shadow: bool = False, partitions: int = 1) -> list[ConsumerSpec]:
    """Every consuming worker's durable consumers: ``<worker>[-shadow]``, or one per partition
    ``<worker>[-shadow]-<k>`` when ``partitions`` > 1."""
    from shared.names import consumer_name, partition_ids

    return [ConsumerSpec(name=consumer_name(s.name, k, prefix_shadow), families=s.families, partition=k,
                         partitions=partitions)
            for s in all_specs().values() if s.build is not None
            for k in partition_ids(partitions)]


def consuming_workers() -> list[str]:
    """The workers that consume events (each has durable consumers and leases)."""
    return [name for name, spec in all_specs().items() if spec.build is not None]
