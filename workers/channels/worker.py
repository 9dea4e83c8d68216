"""The channels worker: ChannelsDoc per agent in ``cortex_channels``.

Counts, last activity and layers come from message events. The one-line summaries (the
channel's latest active thread and last decision) are composed at trigger events
(session start/end, compaction) from the threads and decisions documents as they were at
that event, so a whole-pipeline replay reproduces them.
"""

from __future__ import annotations

import msgspec

from schemas.docs import ChannelsDoc, DecisionsDoc, ThreadsDoc
from schemas.events import MessageEvent
from shared.asof import DocReader
from shared.codec import Envelope
from shared.composed import source_consumer, wait_bound_s
from shared.footprint import Source
from shared.names import BUCKET_CHANNELS, BUCKET_DECISIONS, BUCKET_THREADS
from shared.projection import Projection, ProjectionHandler, is_trigger
from shared.runtime import WorkerContext, WorkerSpec
from shared.watermarks import WatermarkTracker
from workers.channels.core import apply_message, summarize

ChannelsInputs = tuple[ThreadsDoc | None, DecisionsDoc | None]  # as of a trigger; none for a message


class ChannelsProjection(Projection[ChannelsDoc, ChannelsInputs]):
    bucket = BUCKET_CHANNELS
    doc_type = ChannelsDoc

    def __init__(self, ctx: WorkerContext, tracker: WatermarkTracker, reader: DocReader) -> None:
        self._ctx = ctx
        self._tracker = tracker
        self._reader = reader

    def accepts(self, env: Envelope) -> bool:
        return isinstance(env.event, MessageEvent) or is_trigger(env)

    async def prepare(self, env: Envelope, doc: ChannelsDoc | None) -> ChannelsInputs:
        if isinstance(env.event, MessageEvent) or doc is None:
            return None, None
        ctx = self._ctx
        await self._tracker.wait({source_consumer(ctx, "threads", env.agent): env.seq,
                                  source_consumer(ctx, "decisions", env.agent): env.seq}, wait_bound_s(ctx))
        threads, _ = await self._reader.as_of(ctx.bucket(BUCKET_THREADS), env.agent, ThreadsDoc, env.seq)
        decisions, _ = await self._reader.as_of(ctx.bucket(BUCKET_DECISIONS), env.agent, DecisionsDoc, env.seq)
        return threads, decisions

    def compose(self, doc: ChannelsDoc | None, env: Envelope, inputs: ChannelsInputs) -> ChannelsDoc | None:
        if isinstance(env.event, MessageEvent):
            return apply_message(doc, env.event)
        if doc is None:
            return None
        threads, decisions = inputs
        summarized = summarize(doc.channels, threads, decisions)
        if summarized == doc.channels:
            return None
        return msgspec.structs.replace(doc, channels=summarized)


class ChannelsHandler(ProjectionHandler):
    def __init__(self, ctx: WorkerContext, tracker: WatermarkTracker) -> None:
        super().__init__(ctx.js, ctx.worker, ctx.producer, [ChannelsProjection(ctx, tracker, DocReader(ctx.js))],
                         bucket_names={BUCKET_CHANNELS: ctx.bucket(BUCKET_CHANNELS)},
                             cut_on_triggers=True, cut_every=ctx.settings.runtime.cut_every)
        self._tracker = tracker

    async def aclose(self) -> None:
        await self._tracker.stop()


async def build(ctx: WorkerContext) -> ProjectionHandler:
    tracker = WatermarkTracker(ctx.js)
    await tracker.start()
    return ChannelsHandler(ctx, tracker)


# the summaries: threads and decisions as of each trigger
SOURCES = (Source("threads", "threads", BUCKET_THREADS, ThreadsDoc),
           Source("decisions", "decisions", BUCKET_DECISIONS, DecisionsDoc))

SPEC = WorkerSpec(name="channels", families=("msg", "session", "compaction"), build=build,
                  buckets=(BUCKET_CHANNELS,), sources=SOURCES)
