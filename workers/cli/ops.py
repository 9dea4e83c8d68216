"""``cortex init``, ``cortex status``, ``cortex backup|restore`` (and registers ``cortex publish``)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

import msgspec
import nats.js.errors
from nats.js import api

from shared.config import Settings
from shared.kv import kv_count, kv_keys, kv_read
from shared.llm.availability import LlmHealth
from shared.names import BUCKET_CHECKPOINTS, BUCKET_LLM_CACHE, DLQ_STREAM, EVENTS_STREAM, NOTES_STREAM, llm_health_key
from shared.provision import LayoutError, buckets_for, consumer_replicas, provision
from workers.cli.base import CliError
from workers.cli.common import NATS_URL_HELP, add_json_flag, connected, print_json
from workers.cli.publish import register as register_publish
from workers.cli.sources import print_sources
from workers.registry import consumer_specs, doc_buckets


def register(sub: Any) -> None:
    init = sub.add_parser("init", help="create or update streams, buckets and consumers (idempotent)")
    init.add_argument("--nats-url", help=NATS_URL_HELP)
    init.add_argument("--migrate", action="store_true",
                      help="move an existing CORTEX_EVENTS to the slot layout (workers stopped; sequences kept)")
    init.set_defaults(handler=cmd_init)

    register_publish(sub)

    status = sub.add_parser("status", help="streams, consumers and their lag, buckets")
    add_json_flag(status, "the streams', consumers' and buckets' state as the JetStream API returned it")
    status.add_argument("--nats-url", help=NATS_URL_HELP)
    status.set_defaults(handler=cmd_status)


async def cmd_init(args: argparse.Namespace, settings: Settings) -> int:
    from shared.migrate import MigrationError, migrate

    async with connected(settings, args.nats_url) as nc:
        consumers = consumer_specs(settings.mode == "shadow", settings.partitions)
        js = nc.jetstream()
        try:
            if args.migrate and not await migrate(js, settings, lambda line: print(line, file=sys.stderr)):
                print("migrate: nothing to migrate (CORTEX_EVENTS is absent, empty or in the slot layout already)",
                      file=sys.stderr)
            report = await provision(js, settings, consumers, doc_buckets())
        except (LayoutError, MigrationError) as exc:
            raise CliError(str(exc)) from exc
    for what, outcome in report.items():
        print(f"{outcome:<9} {what}")
    return 0


async def cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    async with connected(settings, args.nats_url) as nc:
        js = nc.jetstream()
        if args.json:
            from workers.cli.statusjson import status_report

            print_json(await status_report(js, settings))
            return 0
        print("STREAMS")
        for name in (EVENTS_STREAM, NOTES_STREAM, DLQ_STREAM):
            try:
                info = await js.stream_info(name)
            except nats.js.errors.NotFoundError:
                print(f"  {name:<16} missing (run `cortex init`)")
                continue
            st = info.state
            print(f"  {name:<16} messages={st.messages} bytes={st.bytes} "
                  f"first_seq={st.first_seq} last_seq={st.last_seq} "
                  f"{replication(info.config.num_replicas or 1, info.cluster)}")
        await _print_consumers(js)
        await print_sources(js, settings)
        await _print_buckets(js, settings)
        await _print_llm(js)
    return 0


def llm_lines(states: dict[str, LlmHealth]) -> list[str]:
    """One line per worker consumer that calls a model (``health.<consumer>``): whether its
    model answers, and since when it takes the structured path when it does not."""
    if not states:
        return ["  (no worker has reported: no model configured, or none called yet)"]
    lines = []
    for name, health in sorted(states.items()):
        since = health.since.strftime("%Y-%m-%d %H:%M:%S %Z")
        waiting = f"; {health.deferred} calls to ask again" if health.deferred else ""
        if health.state == "unreachable":
            lines.append(f"  {name:<20} LLM: unreachable since {since} ({health.cause}), structured fallback{waiting}")
        else:
            lines.append(f"  {name:<20} LLM: ok ({health.provider} {health.model}){waiting}")
    return lines


async def _print_llm(js: Any) -> None:
    print("LLM")
    try:
        keys = await kv_keys(js, BUCKET_LLM_CACHE, llm_health_key())
        kv = await js.key_value(BUCKET_LLM_CACHE)
    except nats.js.errors.NotFoundError:
        print("  (missing: run `cortex init`)")
        return
    states = {}
    for key in keys:
        raw, _ = await kv_read(kv, key)
        try:
            states[key.removeprefix(llm_health_key() + ".")] = msgspec.json.decode(raw or b"", type=LlmHealth)
        except msgspec.DecodeError:
            continue  # not a health report: nothing to show of it
    for line in llm_lines(states):
        print(line)


def replication(replicas: int, cluster: api.ClusterInfo | None) -> str:
    """``replicas=3 leader=n1 lagging=n2(offline),n3(lag 40)`` — how many copies, which server
    leads (``none`` while one is elected), and the peers that are not current. A single
    server: ``replicas=1 leader=<it>``; ``lagging=-`` when every peer is current."""
    leader = (cluster.leader if cluster is not None else None) or ("none" if replicas > 1 else "-")
    lagging = []
    for peer in (cluster.replicas if cluster is not None else None) or []:
        if peer.offline:
            lagging.append(f"{peer.name}(offline)")
        elif not peer.current:
            lagging.append(f"{peer.name}(lag {peer.lag or 0})")
    return f"replicas={replicas} leader={leader} lagging={','.join(lagging) or '-'}"


async def _print_consumers(js: Any) -> None:
    print("CONSUMERS")
    try:
        consumers = await js.consumers_info(EVENTS_STREAM)
        checkpoints = await js.key_value(BUCKET_CHECKPOINTS)
    except nats.js.errors.NotFoundError:
        print("  (none)")
        return
    for info in sorted(consumers, key=lambda c: c.name):
        raw, _ = await kv_read(checkpoints, info.name)
        print(f"  {info.name:<20} pending={info.num_pending} ack_pending={info.num_ack_pending} "
              f"redelivered={info.num_redelivered} checkpoint={raw.decode() if raw else 0} "
              f"{replication(consumer_replicas(info), info.cluster)}")


async def _print_buckets(js: Any, settings: Settings) -> None:
    print("BUCKETS")
    for bucket, _, _ in buckets_for(settings, doc_buckets()):
        try:
            kv = await js.key_value(bucket)
            st = await kv.status()
        except nats.js.errors.BucketNotFoundError:
            print(f"  {bucket:<22} missing")
            continue
        keys = await kv_count(js, bucket)
        print(f"  {bucket:<22} keys={keys} bytes={st.stream_info.state.bytes} "
              f"{replication(st.stream_info.config.num_replicas or 1, st.stream_info.cluster)}")


def register_backup(sub: Any) -> None:
    backup = sub.add_parser("backup", help="write every document bucket's current state to a file (JSON lines)")
    backup.add_argument("file", help="where to write it; '-' writes to stdout")
    backup.add_argument("--nats-url", help=NATS_URL_HELP)
    backup.set_defaults(handler=cmd_backup)
    restore = sub.add_parser("restore", help="load a `cortex backup` file into (fresh) buckets")
    restore.add_argument("file", help="a `cortex backup` file; '-' reads stdin")
    restore.add_argument("--nats-url", help=NATS_URL_HELP)
    restore.set_defaults(handler=cmd_restore)


def _write(path: str, data: bytes) -> None:
    """``data`` to the file ``path`` (``-``: stdout), or one line saying why not."""
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise CliError(f"cannot write the backup to {path}: {exc.strerror or exc}") from exc


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from exc


async def cmd_backup(args: argparse.Namespace, settings: Settings) -> int:
    from shared.backup import dump_lines, export_buckets

    async with connected(settings, args.nats_url) as nc:
        records = await export_buckets(nc.jetstream(), doc_buckets())
    await asyncio.to_thread(_write, args.file, b"".join(dump_lines(records)))
    # the report goes to stderr when the backup itself is on stdout
    print(f"backed up {len(records)} documents to {'stdout' if args.file == '-' else args.file}",
          file=sys.stderr if args.file == "-" else sys.stdout)
    return 0


async def cmd_restore(args: argparse.Namespace, settings: Settings) -> int:
    from shared.backup import import_buckets, load_lines

    raw = await asyncio.to_thread(_read, args.file)
    try:
        records = load_lines(raw.splitlines())
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise CliError(f"{args.file} is not a `cortex backup` file: {exc}") from exc
    async with connected(settings, args.nats_url) as nc:
        js = nc.jetstream()
        await provision(js, settings, consumer_specs(settings.mode == "shadow", settings.partitions), doc_buckets())
        count = await import_buckets(js, records)
    print(f"restored {count} documents from {'stdin' if args.file == '-' else args.file}")
    return 0
