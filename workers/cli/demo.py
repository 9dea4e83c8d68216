"""``cortex demo``: the whole pipeline on embedded defaults, end to end, for real."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from importlib import resources

import msgspec

from schemas.api import BootRequest
from schemas.docs import BootDoc
from shared.config import Settings
from shared.embedded import EmbeddedNats
from shared.kv import kv_read
from shared.names import BUCKET_CHECKPOINTS, EVENTS_STREAM, api_subject, consumers_of
from shared.runtime import WorkerHost
from workers import __version__
from workers.cli.base import CliError, stop_in_process
from workers.cli.common import connected
from workers.cli.query import request_api
from workers.cli.specs import provision_all
from workers.registry import all_specs, doc_buckets

DEMO_AGENT = "main"
NEXT_STEPS = (
    f"\ncortex demo: that is the briefing agent {DEMO_AGENT!r} wakes up with. For your own agents: "
    "`cortex init` and `cortex up` against your NATS server (CORTEX_NATS_URL; an OpenClaw gateway's event "
    "store: CORTEX_OPENCLAW_STREAM), then `cortex boot AGENT` for a briefing and `cortex mcp --agent AGENT` "
    "for the agent's tools (docs/integration.md)."
)


def demo_events() -> list[bytes]:
    text = resources.files("workers.demo").joinpath("conversation.jsonl").read_text(encoding="utf-8")
    return [line.encode() for line in text.splitlines() if line.strip()]


async def publish_demo(settings: Settings, url: str) -> int:
    """Publish the bundled conversation; returns the stream's last sequence."""
    from workers.cli.publish import PublishReport, prepare_lines

    report = PublishReport()
    async with connected(settings, url) as nc:
        js = nc.jetstream()
        for _, subject, data, event_id in prepare_lines(demo_events(), settings, report):
            await js.publish(subject, data, headers={"Nats-Msg-Id": event_id})
        if report.rejected:
            raise CliError(f"bundled demo conversation rejected: {report.rejected}")
        return int((await js.stream_info(EVENTS_STREAM)).state.last_seq)


async def wait_caught_up(settings: Settings, url: str, consumers: list[str], limit_s: float = 60.0) -> None:
    """Wait until every consumer has acked everything it was given (no sleeps as sync)."""
    deadline = time.monotonic() + limit_s
    async with connected(settings, url) as nc:
        js = nc.jetstream()
        ckpt = await js.key_value(BUCKET_CHECKPOINTS)
        while time.monotonic() < deadline:
            done = 0
            for name in consumers:
                info = await js.consumer_info(EVENTS_STREAM, name)
                raw, _ = await kv_read(ckpt, name)
                if info.num_pending == 0 and info.num_ack_pending == 0 and raw is not None:
                    done += 1
            if done == len(consumers):
                return
            await asyncio.sleep(0.1)
    raise CliError(f"workers did not catch up within {limit_s:.0f}s")


async def render_documents(settings: Settings, url: str) -> str:
    """The BOOTSTRAP document when the boot worker exists, else every derived document."""
    async with connected(settings, url) as nc:
        js = nc.jetstream()
        boot = await js.key_value("cortex_boot")
        raw, _ = await kv_read(boot, DEMO_AGENT)
        if raw is not None:
            # Every worker has caught up: a fresh assembly shows them all, where the stored
            # document is as of the last event boot saw (maybe before a slow worker finished).
            with contextlib.suppress(CliError):
                fresh = await request_api(nc, api_subject(settings.prefix, "boot", DEMO_AGENT),
                                          msgspec.json.encode(BootRequest()))
                return msgspec.json.decode(fresh, type=BootDoc).markdown
            return msgspec.json.decode(raw, type=BootDoc).markdown
        parts = []
        for bucket in doc_buckets():
            kv = await js.key_value(bucket)
            raw, _ = await kv_read(kv, DEMO_AGENT)
            if raw is not None:
                pretty = msgspec.json.format(raw, indent=2).decode()
                parts.append(f"## {bucket}/{DEMO_AGENT}\n{pretty}")
        return "\n\n".join(parts) or "(no documents were derived)"


async def serve_demo_web(settings: Settings, url: str, listen: str) -> None:
    """``cortex demo --web``: the demo's pipeline stays up and ``cortex web`` serves its data
    (a correction made in the page is applied as it would be live) until Ctrl-C."""
    from workers.cli.web import open_socket, page_url, serve_web

    sock = open_socket(listen, None)
    print(f"\ncortex demo: the demo's data in a browser at {page_url(sock)}agents/{DEMO_AGENT}/briefing — the "
          "workers keep running; Ctrl-C to stop", flush=True)
    await serve_web(msgspec.structs.replace(settings, nats_url=url), sock, None, 10.0)


async def run_demo(settings: Settings, web: str | None = None) -> int:
    from workers.recall.spec import missing_stack

    specs = list(all_specs().values())
    if settings.recall.enabled and (missing := missing_stack()) is not None:
        # an install without the recall extra: the demo runs the rest (recall consumes, inert)
        print(f"cortex demo: no recall memories: {missing}", flush=True)
        settings = msgspec.structs.replace(settings, recall=msgspec.structs.replace(settings.recall, enabled=False))
    with tempfile.TemporaryDirectory(prefix="cortex-demo-") as tmp:
        settings = msgspec.structs.replace(settings, data_dir=tmp, nats_url=None, workspace=None,
                                           metrics_port=None)
        with EmbeddedNats(tmp) as server:
            print(f"cortex demo: embedded nats-server on {server.url}; workers: "
                  f"{', '.join(s.name for s in specs)}", flush=True)
            await provision_all(settings, server.url)
            host = WorkerHost(msgspec.structs.replace(settings, nats_url=server.url), specs, __version__)
            task = asyncio.create_task(host.run())
            try:
                last = await publish_demo(settings, server.url)
                print(f"cortex demo: published {len(demo_events())} events (stream seq {last}); deriving…",
                      flush=True)
                shadow = settings.mode == "shadow"
                await wait_caught_up(settings, server.url, [c for s in specs if s.build
                                                            for c in consumers_of(s.name, settings.partitions, shadow)])
                print(await render_documents(settings, server.url))
                if web is None:
                    print(NEXT_STEPS, flush=True)
                else:
                    await serve_demo_web(settings, server.url, web)
            finally:
                await stop_in_process(host, task, within_s=30)
    return 0
