"""``cortex up``, ``cortex worker NAME``, ``cortex demo``."""

from __future__ import annotations

import argparse
import logging
import socket
from typing import Any

import msgspec

from shared.config import Settings, resolve_partition
from shared.connection import redact_url
from shared.embedded import NATS_PORT, EmbeddedNats
from shared.priority import prioritize
from shared.runtime import WorkerHost
from workers import __version__
from workers.cli.common import NATS_URL_HELP, resolve_url
from workers.cli.specs import provision_all, select_specs
from workers.registry import all_specs

log = logging.getLogger(__name__)


def register(sub: Any) -> None:
    up = sub.add_parser("up", help="run all (or the named) workers in the foreground")
    up.add_argument("--nats-url", help="NATS server (default: CORTEX_NATS_URL, NATS_URL or the nats CLI's context, "
                    "else an embedded nats-server on 4222, or CORTEX_NATS_PORT)")
    up.add_argument("--workers", help="comma-separated worker names (default: all)")
    up.set_defaults(handler=cmd_up)

    worker = sub.add_parser("worker", help="run one worker process (the Kubernetes entrypoint)")
    worker.add_argument("name", help="worker name: " + ", ".join(all_specs()))
    worker.add_argument("--nats-url", help=NATS_URL_HELP)
    worker.add_argument("--partition", help="with CORTEX_PARTITIONS=N: run partition k (0..N-1), `ordinal` (the host "
                        "name's trailing number mod N) or `all` (default: CORTEX_PARTITION, else all)")
    worker.set_defaults(handler=cmd_worker)

    demo = sub.add_parser("demo", help="run the whole pipeline on embedded defaults and print BOOTSTRAP")
    demo.add_argument("--web", nargs="?", const="127.0.0.1:0", metavar="HOST:PORT",
                      help="then keep the pipeline running and serve `cortex web` on the demo's data (a free "
                           "loopback port unless HOST:PORT is given), printing its URL; Ctrl-C ends it")
    demo.set_defaults(handler=cmd_demo)


def start_embedded(settings: Settings) -> EmbeddedNats:
    """``cortex up``'s own nats-server: on 4222 when that is free (where producers and the
    docs look first), else on a free port; on CORTEX_NATS_PORT when set. Says where."""
    port = NATS_PORT if settings.nats_port is None else settings.nats_port
    embedded = EmbeddedNats(settings.data_path, port, fallback=settings.nats_port is None)
    url = embedded.start()
    left = embedded.left_behind
    if left is not None:
        print(f"cortex: stopped the nats-server (pid {left.server}) that a Cortex no longer running (pid {left.owner}) "
              f"left on {embedded.data_dir}", flush=True)
    if embedded.displaced is not None:
        print(f"cortex: port {embedded.displaced} is taken (another NATS server?); the embedded one listens on "
              f"{url} instead (CORTEX_NATS_PORT chooses a port)", flush=True)
    print(f"cortex: NATS at {url}: an embedded nats-server, data in {settings.data_path}; point producers there "
          "(CORTEX_NATS_URL or NATS_URL); `cortex` commands with this CORTEX_DATA_DIR find it", flush=True)
    return embedded


async def cmd_up(args: argparse.Namespace, settings: Settings) -> int:
    specs = select_specs(args.workers)
    prioritize(specs, settings)  # all of them (a latency worker among them): the niceness it was started with
    url = args.nats_url or settings.nats_url
    embedded = None
    if url is None:
        embedded = start_embedded(settings)
        url = embedded.url
    elif not args.nats_url and settings.nats_origin:
        print(f"cortex: NATS at {redact_url(url)} (from {settings.nats_origin}; CORTEX_NATS_URL names another)",
              flush=True)
    try:
        await provision_all(settings, url)
        host = WorkerHost(msgspec.structs.replace(settings, nats_url=url), specs, __version__,
                      catalog=all_specs().values())
        host.install_signal_handlers()
        print(f"cortex: running {', '.join(s.name for s in specs)}; Ctrl-C to stop", flush=True)
        await host.run()
    finally:
        if embedded is not None:
            embedded.stop()
    log.info("stopped", extra={"workers": ",".join(s.name for s in specs)})
    return 0


async def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    specs = select_specs(args.name)
    prioritize(specs, settings)  # a throughput worker's process yields the cores to the latency ones
    url = resolve_url(settings, args.nats_url)  # as every command: else the `cortex up` under this data dir
    if args.partition is not None:
        partition = resolve_partition(args.partition, settings.partitions, socket.gethostname())
        settings = msgspec.structs.replace(settings, partition=partition)
    host = WorkerHost(msgspec.structs.replace(settings, nats_url=url), specs, __version__,
                      catalog=all_specs().values())
    host.install_signal_handlers()
    await host.run()
    log.info("stopped", extra={"workers": ",".join(s.name for s in specs)})
    return 0


async def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    from workers.cli.demo import run_demo

    return await run_demo(settings, web=args.web)
