"""``cortex init``, ``cortex publish``, ``cortex status``."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
import nats.js.errors
import orjson
from nats.js import api

from shared.codec import Limits, Rejection, decode_event, event_limits, event_subject, nesting_depth, rejection_reason
from shared.config import Settings
from shared.kv import kv_count, kv_keys, kv_read
from shared.llm.availability import LlmHealth
from shared.names import (
    BUCKET_CHECKPOINTS,
    BUCKET_LLM_CACHE,
    DLQ_STREAM,
    EVENTS_STREAM,
    NOTES_STREAM,
    llm_health_key,
    stored_form,
)
from shared.provision import LayoutError, buckets_for, consumer_replicas, provision
from workers.cli.base import CliError
from workers.cli.common import connected
from workers.cli.sources import print_sources
from workers.registry import consumer_specs, doc_buckets


def register(sub: Any) -> None:
    init = sub.add_parser("init", help="create or update streams, buckets and consumers (idempotent)")
    init.add_argument("--nats-url")
    init.add_argument("--migrate", action="store_true",
                      help="move an existing CORTEX_EVENTS to the slot layout (workers stopped; sequences kept)")
    init.set_defaults(handler=cmd_init)

    pub = sub.add_parser("publish", help="publish events from a JSON-lines file (- for stdin)")
    pub.add_argument("file", help="JSON lines, one event per line; '-' reads stdin")
    pub.add_argument("--nats-url")
    pub.set_defaults(handler=cmd_publish)

    status = sub.add_parser("status", help="streams, consumers and their lag, buckets")
    status.add_argument("--nats-url")
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


class PublishReport(msgspec.Struct, kw_only=True):
    published: int = 0
    duplicates: int = 0
    rejected: list[tuple[int, str]] = msgspec.field(default_factory=list)


def _open(path: str) -> BinaryIO:
    """The file as bytes: a line that is not UTF-8 is that line's problem, not the file's."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from exc


def _prepare_line(line: bytes, settings: Settings, limits: Limits) -> tuple[str, bytes, str] | str:
    """``(subject, payload, event id)`` for one line, or why it is rejected."""
    depth = nesting_depth(line)
    if depth > limits.max_depth:
        return f"JSON nested too deeply: {depth} levels > {limits.max_depth}"
    line.decode()  # invalid UTF-8 raises here, with the byte it is at
    payload = orjson.loads(line)
    if not isinstance(payload, dict):
        return "not a JSON object"
    subject = payload.pop("subject", None) or event_subject(settings.prefix, payload)
    if not isinstance(subject, str):
        return "cannot tell the subject: add \"type\" (e.g. \"msg.received\")"
    data = orjson.dumps(payload)
    decoded = decode_event(settings.prefix, stored_form(settings.prefix, subject), 0, data, limits)
    if isinstance(decoded, Rejection):
        return decoded.reason
    return subject, data, decoded.event.id


def prepare_lines(
    lines: Iterable[bytes], settings: Settings, report: PublishReport
) -> Iterator[tuple[int, str, bytes, str]]:
    """Validate each line with the workers' own decoder; yield (line, subject, payload, id).

    Total per line: whatever a line holds (invalid UTF-8, nesting 1000 deep, a field over
    its limit) it is reported as rejected with a reason and the next line is read."""
    limits = event_limits(settings)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            prepared = _prepare_line(line, settings, limits)
        except orjson.JSONDecodeError as exc:
            prepared = f"malformed JSON: {exc}"
        except Exception as exc:  # untrusted input: every failure is this line's
            prepared = rejection_reason(exc)
        if isinstance(prepared, str):
            report.rejected.append((number, prepared))
            continue
        yield number, *prepared


async def cmd_publish(args: argparse.Namespace, settings: Settings) -> int:
    report = PublishReport()
    stream = _open(args.file)
    try:
        async with connected(settings, args.nats_url) as nc:
            js = nc.jetstream()
            pending: list[tuple[int, asyncio.Future[Any]]] = []
            for number, subject, data, event_id in prepare_lines(iter(stream), settings, report):
                fut = await js.publish_async(subject, data, headers={"Nats-Msg-Id": event_id})
                pending.append((number, fut))
                if len(pending) >= 1000:
                    await _settle(pending, report)
            await _settle(pending, report)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    for number, reason in report.rejected:
        print(f"line {number}: rejected: {reason}", file=sys.stderr)
    print(f"published {report.published}, duplicates {report.duplicates}, rejected {len(report.rejected)}"
          + (f" (lines {', '.join(str(n) for n, _ in report.rejected)})" if report.rejected else ""))
    return 1 if report.rejected else 0


async def _settle(pending: list[tuple[int, asyncio.Future[Any]]], report: PublishReport) -> None:
    for number, fut in pending:
        try:
            ack = await fut
        except nats.js.errors.NoStreamResponseError as exc:
            raise CliError("no stream for cortex events: run `cortex init` first") from exc
        except Exception as exc:
            report.rejected.append((number, f"publish failed: {exc}"))
            continue
        if ack.duplicate:
            report.duplicates += 1
        else:
            report.published += 1
    pending.clear()


async def cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    async with connected(settings, args.nats_url) as nc:
        js = nc.jetstream()
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
    backup.add_argument("file")
    backup.add_argument("--nats-url")
    backup.set_defaults(handler=cmd_backup)
    restore = sub.add_parser("restore", help="load a `cortex backup` file into (fresh) buckets")
    restore.add_argument("file")
    restore.add_argument("--nats-url")
    restore.set_defaults(handler=cmd_restore)


async def cmd_backup(args: argparse.Namespace, settings: Settings) -> int:
    from shared.backup import dump_lines, export_buckets

    async with connected(settings, args.nats_url) as nc:
        records = await export_buckets(nc.jetstream(), doc_buckets())
    data = b"".join(dump_lines(records))
    await asyncio.to_thread(Path(args.file).write_bytes, data)
    print(f"backed up {len(records)} documents to {args.file}")
    return 0


async def cmd_restore(args: argparse.Namespace, settings: Settings) -> int:
    from shared.backup import import_buckets, load_lines

    try:
        raw = await asyncio.to_thread(Path(args.file).read_bytes)
    except OSError as exc:
        raise CliError(f"cannot read {args.file}: {exc.strerror}") from exc
    records = load_lines(raw.splitlines())
    async with connected(settings, args.nats_url) as nc:
        js = nc.jetstream()
        await provision(js, settings, consumer_specs(settings.mode == "shadow", settings.partitions), doc_buckets())
        count = await import_buckets(js, records)
    print(f"restored {count} documents from {args.file}")
    return 0
