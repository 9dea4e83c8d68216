"""The snapshot worker: on ``compaction.before``, the hot zone of the conversation — the
event's messages, or when it carries none the last ones the threads document kept."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schemas.docs import Integrity, SnapshotDoc, ThreadsDoc
from schemas.events import CompactionEvent
from shared.codec import Envelope
from shared.config import PrecompactionSettings, Settings
from shared.footprint import Source
from shared.inputs import ComposedProjection, Reading
from shared.names import BUCKET_SNAPSHOTS, BUCKET_THREADS
from shared.projection import EventProjection, ProjectionHandler, SourcedProjection
from shared.runtime import WorkerContext, WorkerSpec
from workers.snapshot.briefing import SECTIONS as BRIEFING
from workers.snapshot.core import build_snapshot_markdown, thread_state_line, window_messages

# threads as of the compaction
SOURCES = (Source("threads", "threads", BUCKET_THREADS, ThreadsDoc),)


class SnapshotProjection(ComposedProjection[SnapshotDoc]):
    """Threads flushed first: the threads worker's state as of this compaction."""

    bucket = BUCKET_SNAPSHOTS
    doc_type = SnapshotDoc
    # the thread state it records stays in the snapshot until the next compaction: read with
    # threads behind (busy, restarted), a replay said "2 open threads" where the live run said 4
    patient = True

    def __init__(self, ctx: WorkerContext) -> None:
        super().__init__(ctx, SOURCES)
        self._ctx = ctx
        self._max = ctx.settings.precompaction.max_snapshot_messages

    def accepts(self, env: Envelope) -> bool:
        return takes(env, self._ctx.settings.precompaction)

    def compose(self, doc: SnapshotDoc | None, env: Envelope, inputs: Reading) -> SnapshotDoc:
        return snapshot_of(env, inputs.docs["threads"], self._max)


def takes(env: Envelope, settings: PrecompactionSettings) -> bool:
    return env.family == "compaction" and env.kind == "before" and settings.enabled


def snapshot_of(env: Envelope, threads: ThreadsDoc | None, max_messages: int) -> SnapshotDoc:
    """The snapshot made for the compaction ``env``, with threads as of it."""
    event = env.event
    assert isinstance(event, CompactionEvent)
    # a compaction without its messages (OpenClaw's): the last ones the threads worker kept
    messages = list(event.messages) or window_messages(threads, event.session)
    markdown, count = build_snapshot_markdown(event.ts, messages, max_messages, thread_state_line(threads))
    return SnapshotDoc(agent=env.agent, session=event.session, ts=event.ts, messages_snapshotted=count,
                       markdown=markdown, integrity=Integrity())


class SnapshotFromEvents(SourcedProjection[SnapshotDoc]):
    """The same rule for a composed reader past the bucket's history (``shared.derive``): its
    one source, threads, derives from the events, so the snapshots do too."""

    bucket = BUCKET_SNAPSHOTS
    doc_type = SnapshotDoc

    def __init__(self, settings: PrecompactionSettings) -> None:
        self._settings = settings

    def accepts(self, env: Envelope) -> bool:
        return takes(env, self._settings)

    def sources_for(self, env: Envelope, doc: SnapshotDoc | None) -> tuple[Source, ...]:
        return SOURCES

    def apply_read(self, doc: SnapshotDoc | None, env: Envelope, docs: Mapping[str, Any]) -> SnapshotDoc | None:
        return snapshot_of(env, docs["threads"], self._settings.max_snapshot_messages)


def projections(settings: Settings) -> list[EventProjection[Any]]:
    """Its document as a composed reader derives it (``WorkerSpec.derive``)."""
    return [SnapshotFromEvents(settings.precompaction)]


async def build(ctx: WorkerContext) -> ProjectionHandler:
    return ProjectionHandler(ctx.js, ctx.worker, ctx.producer, [SnapshotProjection(ctx)],
                             # each compaction's snapshot a revision of its own, whatever the batch (shared.asof)
                             bucket_names={BUCKET_SNAPSHOTS: ctx.bucket(BUCKET_SNAPSHOTS)}, cut_on_triggers=True)


SPEC = WorkerSpec(name="snapshot", priority="throughput",
                  families=("compaction",), build=build, derive=projections,
                  config_sections=("precompaction",),
                  buckets=(BUCKET_SNAPSHOTS,), sources=SOURCES,
                  briefing=BRIEFING)
