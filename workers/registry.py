"""Every worker Cortex knows, by name (``cortex worker NAME``)."""

from __future__ import annotations

from shared.provision import ConsumerSpec
from shared.runtime import WorkerSpec
from workers.channels.worker import SPEC as CHANNELS


def all_specs() -> dict[str, WorkerSpec]:
    specs = [CHANNELS]
    return {s.name: s for s in specs}


def consumer_specs(prefix_shadow: bool = False) -> list[ConsumerSpec]:
    from shared.names import consumer_name

    return [ConsumerSpec(name=consumer_name(s.name, None, prefix_shadow), families=s.families)
            for s in all_specs().values() if s.build is not None]
