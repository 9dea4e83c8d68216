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
from workers.recall.worker import SPEC as RECALL
from workers.snapshot.worker import SPEC as SNAPSHOT
from workers.threads.worker import SPEC as THREADS


def all_specs() -> dict[str, WorkerSpec]:
    specs = [THREADS, DECISIONS, KNOWLEDGE, CHANNELS, RECALL, SNAPSHOT, NARRATIVE, BOOT, API]
    return {s.name: s for s in specs}


def consumer_specs(prefix_shadow: bool = False) -> list[ConsumerSpec]:
    from shared.names import consumer_name

    return [ConsumerSpec(name=consumer_name(s.name, None, prefix_shadow), families=s.families)
            for s in all_specs().values() if s.build is not None]
