"""The workers a command runs (``cortex up``, ``worker``, ``demo``, ``replay``, the
briefing eval): chosen by name from the registry, their streams and consumers provisioned."""

from __future__ import annotations

from shared.config import Settings
from shared.runtime import WorkerSpec
from workers.cli.base import CliError
from workers.cli.common import connected
from workers.registry import all_specs, consumer_specs, doc_buckets


def select_specs(names: str | None) -> list[WorkerSpec]:
    specs = all_specs()
    if not names:
        return list(specs.values())
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in specs]
    if unknown:
        raise CliError(f"unknown worker(s) {', '.join(unknown)} (known: {', '.join(specs)})")
    return [specs[n] for n in wanted]


async def provision_all(settings: Settings, url: str) -> None:
    from shared.provision import provision

    async with connected(settings, url) as nc:
        await provision(nc.jetstream(), settings, consumer_specs(settings.mode == "shadow", settings.partitions),
                        doc_buckets())
