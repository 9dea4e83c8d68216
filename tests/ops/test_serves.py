"""A worker's API is what its spec declares: ``WorkerSpec.serves`` makes the NATS permissions
(``cortex.api.<service>.*`` and ``$SRV`` discovery of ``cortex-<worker>``), and ``serve``
registers exactly those endpoints (``shared.service.serve_worker`` refuses others)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import msgspec
import nats
import nats.errors
import pytest
from cortex_testkit import wait_for

from shared.config import load_settings
from shared.health import Health
from shared.names import api_endpoint_subject, service_name
from shared.provision import provision
from shared.runtime import WorkerContext, WorkerHost, WorkerSpec
from shared.service import semver, serve_worker
from workers import __version__, registry

SERVING = sorted(name for name, spec in registry.all_specs().items() if spec.serve is not None)


def test_the_shipped_apis_are_served_by_these_workers() -> None:
    assert SERVING == ["api", "boot", "recall"]


@pytest.mark.parametrize("worker", SERVING)
async def test_serve_registers_exactly_the_services_its_spec_declares(worker: str, nats_url: str,
                                                                      tmp_path: Path) -> None:
    # the API alone (recall's, disabled: its engine serves once its consume loop opened the store,
    # through the same check); the registry's specs are the catalog, as under `cortex worker`
    spec = dataclasses.replace(registry.all_specs()[worker], build=None, families=(), feedback_kinds=None, briefing=(),
                               buckets=())
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_RECALL_ENABLED": "false"})
    nc = await nats.connect(nats_url)
    try:
        await provision(nc.jetstream(), settings, registry.consumer_specs(), registry.doc_buckets())
        host = WorkerHost(settings, [spec], __version__, catalog=registry.all_specs().values())
        task = asyncio.create_task(host.run())
        try:
            async def info() -> dict[str, Any] | None:
                try:
                    reply = await nc.request(f"$SRV.INFO.{service_name(worker)}", b"", timeout=2)
                except (nats.errors.NoRespondersError, nats.errors.TimeoutError):
                    return None
                found: dict[str, Any] = msgspec.json.decode(reply.data)
                return found

            found = await wait_for(info, within=30)
        finally:
            host.stop.set()
            await asyncio.wait_for(task, timeout=60)
    finally:
        await nc.close()
    subjects = sorted(e["subject"] for e in found["endpoints"])
    assert subjects == sorted(api_endpoint_subject("cortex", s) for s in spec.serves)
    # what `nats service ls/info` shows (issue 44 item 7): the service once by its name (the queue
    # group was cortex-cortex-<worker>), with the package's version (a literal 0.1.0 before)
    assert found["name"] == f"cortex-{worker}" and found["version"] == semver(__version__)
    assert {e["queue_group"] for e in found["endpoints"]} == {f"cortex-{worker}"}


async def test_an_endpoint_its_spec_does_not_declare_is_refused(nc: nats.NATS, tmp_path: Path) -> None:
    async def serve(ctx: WorkerContext, stop: asyncio.Event) -> None:
        return None

    spec = WorkerSpec(name="probe", families=(), serve=serve, serves=("probe",))
    ctx = WorkerContext(nc=nc, js=nc.jetstream(), settings=load_settings({"CORTEX_DATA_DIR": str(tmp_path)}),
                        worker="probe", consumer="", producer="probe@test", health=Health("probe-api"),
                        catalog={"probe": spec})
    stop = asyncio.Event()
    stop.set()

    async def handle(agent: str, req: Any) -> Any:
        return req

    endpoints: list[Any] = [("probe", msgspec.Struct, handle), ("other", msgspec.Struct, handle)]
    with pytest.raises(ValueError, match=r"serves \['other', 'probe'\], its spec declares \['probe'\]"):
        await serve_worker(ctx, endpoints, stop)
    await serve_worker(ctx, endpoints[:1], stop)  # the declared one: served (until stop, at once)
    await ctx.aclose()
