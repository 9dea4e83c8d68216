"""``cortex init --migrate``: CORTEX_EVENTS from stored layout 1 (subjects stored as
published) to layout 2 (the slot token, contract: Partitions in the server), every event
keeping its stream sequence — so checkpoints, the documents' watermarks and the dead
letters' ``Cortex-Stream-Seq`` stay valid and nothing has to be replayed.

A stream's stored subjects cannot be changed in place, so the events move through a copy:

1. **freeze** — refused while any worker holds a lease. The old stream stops capturing
   (its subjects are moved to ``<prefix>_layout1.>``, so a producer's publish fails and is
   retried by it rather than lost) and its sources are detached (the OpenClaw store keeps
   what it has; the new stream resumes copying where the old one stopped);
2. **mirror** — ``CORTEX_EVENTS_LAYOUT1``, a server-side mirror, which keeps every sequence
   and every gap; when it has caught up, the old stream is deleted;
3. **copy** — CORTEX_EVENTS is created anew in layout 2, starting at the old first
   sequence, capturing only ``<prefix>_migrating.*`` so that nobody else can publish into
   it; each event is published again in sequence (expected-last-sequence checked by the
   server) and passes the slot transform; a sequence with no event (a gap, or an event
   whose subject no layout-2 consumer could ever read) gets a filler that is deleted at
   once, so the gaps stay gaps;
4. **finish** — counts compared with the mirror, the mirror deleted, the stream given its
   real subjects and its sources back; ``cortex init`` then creates the consumers.

Each step is resumable: running ``cortex init --migrate`` again after an interruption
picks up where it stopped (the states are told apart by which streams exist and by the
stream's ``cortex_migrating`` metadata).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import msgspec
import nats.errors
import nats.js.errors
from nats.js import api
from nats.js.client import JetStreamContext

from shared.config import Settings
from shared.kv import kv_keys
from shared.names import (
    BUCKET_LEASES,
    EVENTS_STREAM,
    FAMILIES,
    LAYOUT,
    LAYOUT_METADATA,
    NOTES_KIND,
    OPENCLAW_FAMILY,
    published_subject,
    slot_transform,
)
from shared.provision import MIGRATING_METADATA, events_stream_config, stream_layout

BACKUP_STREAM = "CORTEX_EVENTS_LAYOUT1"
SOURCES_METADATA = "cortex_sources"  # the old stream's sources, carried to the new one
# the last origin sequence copied from each source: the new stream's sources start after it (the
# server refuses a publish with a Nats-Stream-Source header, so it cannot find that itself)
ORIGINS_METADATA = "cortex_source_seqs"
SOURCE_HEADER = "Nats-Stream-Source"
FILLER_AGENT = "_migration_gap"
BATCH = 500

Say = Callable[[str], None]


class MigrationError(Exception):
    """The migration cannot go on; the message says why and what to do."""


def _staging(prefix: str) -> str:
    return f"{prefix}_migrating"


def _frozen(prefix: str) -> str:
    return f"{prefix}_layout1.>"


def staging_subject(prefix: str, subject: str) -> str | None:
    """Where a layout-1 stored subject is published during the copy (the slot transform of the
    staging stream stores it as ``<prefix>.<family>.<slot>.<agent>.<kind>``), or None for a
    subject no layout-2 consumer reads (it was a dead letter already)."""
    tokens = subject.split(".")
    if len(tokens) < 3 or tokens[0] != prefix or tokens[1] not in (*FAMILIES, OPENCLAW_FAMILY):
        return None
    if tokens[1] == "notes" and len(tokens) == 3:
        tokens.append(NOTES_KIND)
    if len(tokens) != 4:
        return None
    return ".".join([_staging(prefix), *tokens[1:]])


async def _info(js: JetStreamContext, name: str) -> api.StreamInfo | None:
    try:
        return await js.stream_info(name)
    except nats.js.errors.NotFoundError:
        return None


def _migrating(info: api.StreamInfo | None) -> bool:
    return info is not None and bool((info.config.metadata or {}).get(MIGRATING_METADATA))


def _sources_json(sources: list[api.StreamSource] | None) -> str:
    return msgspec.json.encode([s.as_dict() for s in sources or []]).decode()


def _origins(metadata: dict[str, str] | None) -> dict[str, int]:
    return msgspec.json.decode((metadata or {}).get(ORIGINS_METADATA) or "{}", type=dict[str, int])


def _sources_from(metadata: dict[str, str] | None) -> list[api.StreamSource]:
    """The old stream's sources, each resuming after the last of its messages that was copied."""
    raw = (metadata or {}).get(SOURCES_METADATA) or "[]"
    origins = _origins(metadata)
    sources = [api.StreamSource.from_response(s) for s in msgspec.json.decode(raw)]
    for source in sources:
        if source.name in origins:
            source.opt_start_seq = origins[source.name] + 1
    return sources


def _origin(headers: dict[str, str] | None) -> tuple[str, int] | None:
    """(source stream, its sequence) of a message the server copied from a source."""
    parts = (headers or {}).get(SOURCE_HEADER, "").split()
    return (parts[0], int(parts[1])) if len(parts) >= 2 and parts[1].isdigit() else None


async def migrate(js: JetStreamContext, settings: Settings, say: Say) -> bool:
    """Bring CORTEX_EVENTS to the slot layout; False when there was nothing to migrate."""
    events, backup = await _info(js, EVENTS_STREAM), await _info(js, BACKUP_STREAM)
    if events is not None and not _migrating(events):
        frozen = events.config.subjects == [_frozen(settings.prefix)]
        if backup is not None and not frozen:
            raise MigrationError(f"both CORTEX_EVENTS and {BACKUP_STREAM} exist and no migration is under way: "
                                 f"check {BACKUP_STREAM} (`nats stream info {BACKUP_STREAM}`), delete it, run again")
        if not frozen and (stream_layout(events.config, settings.prefix) == LAYOUT or not events.state.messages):
            return False  # already layout 2, or empty: `cortex init` configures it in place
        if not frozen:
            await _refuse_if_running(js)
        backup = await _freeze_and_mirror(js, settings, events, backup is not None, say)
        events = None
    if events is None:
        if backup is None:
            return False  # no stream at all: `cortex init` creates it
        events = await _create_staging(js, settings, backup)
    if backup is not None:
        await _copy(js, settings, backup, say)
        await _verify(js, backup)
        await js.delete_stream(BACKUP_STREAM)
    await _finish(js, settings, say)
    return True


async def _refuse_if_running(js: JetStreamContext) -> None:
    try:
        held = await kv_keys(js, BUCKET_LEASES)
    except nats.js.errors.NotFoundError:
        held = []
    if held:
        raise MigrationError(f"workers are running (leases held: {', '.join(held)}): stop every worker, then run "
                             "`cortex init --migrate` again")


async def _freeze_and_mirror(js: JetStreamContext, settings: Settings, events: api.StreamInfo, mirrored: bool,
                             say: Say) -> api.StreamInfo:
    frozen = events.config
    if frozen.subjects != [_frozen(settings.prefix)]:
        frozen.metadata = {**(frozen.metadata or {}), SOURCES_METADATA: _sources_json(frozen.sources)}
        frozen.subjects = [_frozen(settings.prefix)]
        frozen.sources = None
        await js.update_stream(frozen)
    last = int((await js.stream_info(EVENTS_STREAM)).state.last_seq)
    say(f"migrate: CORTEX_EVENTS frozen at sequence {last} ({events.state.messages} events); "
        f"mirroring it to {BACKUP_STREAM} …")
    if not mirrored:
        sources = (frozen.metadata or {}).get(SOURCES_METADATA, "[]")
        await js.add_stream(api.StreamConfig(
            name=BACKUP_STREAM, mirror=api.StreamSource(name=EVENTS_STREAM), storage=api.StorageType.FILE,
            metadata={SOURCES_METADATA: sources},
            description="Cortex: CORTEX_EVENTS in stored layout 1, during a migration"))
    deadline = time.monotonic() + max(300.0, events.state.messages / 1000)
    while True:
        backup = await js.stream_info(BACKUP_STREAM)
        if backup.state.last_seq >= last and backup.state.messages == events.state.messages:
            break
        if time.monotonic() > deadline:
            raise MigrationError(f"{BACKUP_STREAM} did not catch up with CORTEX_EVENTS ({backup.state.last_seq} of "
                                 f"{last}); CORTEX_EVENTS is frozen but intact: run `cortex init --migrate` again")
        await asyncio.sleep(0.2)
    await js.delete_stream(EVENTS_STREAM)
    say(f"migrate: {BACKUP_STREAM} holds sequences {backup.state.first_seq}..{backup.state.last_seq}; "
        "old CORTEX_EVENTS deleted")
    return backup


async def _create_staging(js: JetStreamContext, settings: Settings, backup: api.StreamInfo) -> api.StreamInfo:
    prefix, staging = settings.prefix, _staging(settings.prefix)
    config = events_stream_config(settings)
    config.subjects = [published_subject(staging, family, "*", "*") for family in (*FAMILIES, OPENCLAW_FAMILY)]
    # the slot transform of ``prefix``'s stream, applied to what is published to the staging prefix
    config.subject_transform = api.SubjectTransform(src=published_subject(staging, "*", "*", "*"),
                                                    dest=slot_transform(prefix)[1])
    config.sources = None
    config.first_seq = max(1, int(backup.state.first_seq or 1))
    config.metadata = {LAYOUT_METADATA: str(LAYOUT), MIGRATING_METADATA: "1",
                       SOURCES_METADATA: (backup.config.metadata or {}).get(SOURCES_METADATA, "[]")}
    await js.add_stream(config)
    return await js.stream_info(EVENTS_STREAM)


async def _copy(js: JetStreamContext, settings: Settings, backup: api.StreamInfo, say: Say) -> None:
    """Publish every event of the mirror again, in sequence, from where the copy stands."""
    target = await js.stream_info(EVENTS_STREAM)
    last = int(backup.state.last_seq)
    expected = int(target.state.last_seq) + 1
    if expected > last:
        return
    sub = await js.pull_subscribe(">", stream=BACKUP_STREAM, config=api.ConsumerConfig(
        deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=expected,
        ack_policy=api.AckPolicy.NONE, inactive_threshold=60.0))
    copied = fillers = 0
    started = time.monotonic()
    origins = _origins(target.config.metadata)
    try:
        while expected <= last:
            try:
                msgs = await sub.fetch(BATCH, timeout=5.0)
            except nats.errors.TimeoutError as exc:
                raise MigrationError(f"reading {BACKUP_STREAM} stalled at sequence {expected}: run "
                                     "`cortex init --migrate` again") from exc
            for msg in msgs:
                seq = msg.metadata.sequence.stream
                while expected < seq:
                    await _filler(js, settings.prefix, expected)
                    expected, fillers = expected + 1, fillers + 1
                if seq < expected:
                    continue
                subject = staging_subject(settings.prefix, msg.subject)
                if subject is None:
                    await _filler(js, settings.prefix, seq)
                    fillers += 1
                else:
                    await _publish(js, subject, msg.data, msg.headers, seq)
                    copied += 1
                    if (origin := _origin(msg.headers)) is not None:
                        origins[origin[0]] = max(origins.get(origin[0], 0), origin[1])
                expected = seq + 1
            await _save_origins(js, origins)
            say(f"migrate: copied {copied} events up to sequence {expected - 1} of {last} "
                f"({copied / max(time.monotonic() - started, 1e-6):,.0f}/s)")
    finally:
        await sub.unsubscribe()
    say(f"migrate: {copied} events copied, {fillers} gaps kept")


async def _save_origins(js: JetStreamContext, origins: dict[str, int]) -> None:
    config = (await js.stream_info(EVENTS_STREAM)).config
    saved = msgspec.json.encode(origins).decode()
    if origins and (config.metadata or {}).get(ORIGINS_METADATA) != saved:
        config.metadata = {**(config.metadata or {}), ORIGINS_METADATA: saved}
        await js.update_stream(config)


async def _publish(js: JetStreamContext, subject: str, data: bytes, headers: dict[str, str] | None,
                   seq: int) -> None:
    # the server's own headers cannot be published (a source's is refused): kept under another name
    kept = {("Cortex-Stream-Source" if k == SOURCE_HEADER else k): v for k, v in (headers or {}).items()
            if not k.startswith(("Nats-Msg-Id", "Nats-Expected"))}
    kept["Nats-Expected-Last-Sequence"] = str(seq - 1)
    ack = await js.publish(subject, data, headers=kept, stream=EVENTS_STREAM)
    if ack.seq != seq:
        raise MigrationError(f"sequence {seq} was stored as {ack.seq}: CORTEX_EVENTS is not aligned with "
                             f"{BACKUP_STREAM}; delete CORTEX_EVENTS and run `cortex init --migrate` again")


async def _filler(js: JetStreamContext, prefix: str, seq: int) -> None:
    """Hold sequence ``seq`` with a message deleted at once: the gap stays a gap."""
    await _publish(js, published_subject(_staging(prefix), "notes", FILLER_AGENT, NOTES_KIND), b"", None, seq)
    await js.delete_msg(EVENTS_STREAM, seq)


async def _verify(js: JetStreamContext, backup: api.StreamInfo) -> None:
    target = (await js.stream_info(EVENTS_STREAM)).state
    want = backup.state
    if target.last_seq != want.last_seq or target.messages > want.messages:
        raise MigrationError(f"the copy does not match {BACKUP_STREAM} (sequences ..{target.last_seq} vs "
                             f"..{want.last_seq}, {target.messages} vs {want.messages} events); {BACKUP_STREAM} is "
                             "kept: delete CORTEX_EVENTS and run `cortex init --migrate` again")


async def _finish(js: JetStreamContext, settings: Settings, say: Say) -> None:
    info = await js.stream_info(EVENTS_STREAM)
    config = events_stream_config(settings, _sources_from(info.config.metadata))
    config.first_seq = info.config.first_seq
    await js.update_stream(config)
    say(f"migrate: CORTEX_EVENTS stores layout {LAYOUT} ({info.state.messages} events, sequences "
        f"{info.state.first_seq}..{info.state.last_seq}); producers can publish again")
