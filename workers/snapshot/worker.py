"""The snapshot worker: on ``compaction.before``, the hot zone of the conversation."""

from __future__ import annotations

from schemas.docs import Integrity, SnapshotDoc, ThreadsDoc
from schemas.events import CompactionEvent
from shared.asof import DocReader
from shared.codec import Envelope
from shared.composed import source_consumer, wait_bound_s
from shared.footprint import Source
from shared.names import BUCKET_SNAPSHOTS, BUCKET_THREADS
from shared.projection import Projection, ProjectionHandler
from shared.runtime import WorkerContext, WorkerSpec
from shared.watermarks import WatermarkTracker
from workers.snapshot.core import build_snapshot_markdown, thread_state_line

SnapshotInputs = tuple[ThreadsDoc | None, list[str]]  # the threads document as of the event, lagging


class SnapshotProjection(Projection[SnapshotDoc, SnapshotInputs]):
    bucket = BUCKET_SNAPSHOTS
    doc_type = SnapshotDoc

    def __init__(self, ctx: WorkerContext, tracker: WatermarkTracker, reader: DocReader) -> None:
        self._ctx = ctx
        self._tracker = tracker
        self._reader = reader
        self._max = ctx.settings.precompaction.max_snapshot_messages

    def accepts(self, env: Envelope) -> bool:
        return env.family == "compaction" and env.kind == "before" and self._ctx.settings.precompaction.enabled

    async def prepare(self, env: Envelope, doc: SnapshotDoc | None = None) -> SnapshotInputs:
        """Threads flushed first: wait for the threads worker, read its state as of this event."""
        threads_consumer = source_consumer(self._ctx, "threads", env.agent)
        lagging = await self._tracker.wait({threads_consumer: env.seq}, wait_bound_s(self._ctx))
        threads, _ = await self._reader.as_of(self._ctx.bucket(BUCKET_THREADS), env.agent, ThreadsDoc, env.seq)
        return threads, lagging

    def compose(self, doc: SnapshotDoc | None, env: Envelope, inputs: SnapshotInputs) -> SnapshotDoc:
        event = env.event
        assert isinstance(event, CompactionEvent)
        threads, _ = inputs
        markdown, count = build_snapshot_markdown(event.ts, list(event.messages), self._max,
                                                  thread_state_line(threads))
        return SnapshotDoc(agent=env.agent, session=event.session, ts=event.ts, messages_snapshotted=count,
                           markdown=markdown, integrity=Integrity())


class SnapshotHandler(ProjectionHandler):
    def __init__(self, ctx: WorkerContext, tracker: WatermarkTracker) -> None:
        super().__init__(ctx.js, ctx.worker, ctx.producer, [SnapshotProjection(ctx, tracker, DocReader(ctx.js))],
                         # each compaction's snapshot a revision of its own, whatever the batch (shared.asof)
                         bucket_names={BUCKET_SNAPSHOTS: ctx.bucket(BUCKET_SNAPSHOTS)}, cut_on_triggers=True)
        self._tracker = tracker

    async def aclose(self) -> None:
        await self._tracker.stop()


async def build(ctx: WorkerContext) -> ProjectionHandler:
    tracker = WatermarkTracker(ctx.js)
    await tracker.start()
    return SnapshotHandler(ctx, tracker)


# threads as of the compaction
SOURCES = (Source("threads", "threads", BUCKET_THREADS, ThreadsDoc),)

SPEC = WorkerSpec(name="snapshot", families=("compaction",), build=build, config_sections=("precompaction",),
                  buckets=(BUCKET_SNAPSHOTS,), sources=SOURCES)
