"""The channels worker: ChannelsDoc per agent in ``cortex_channels``."""

from __future__ import annotations

from schemas.docs import ChannelsDoc
from schemas.events import MessageEvent
from shared.codec import Envelope
from shared.names import BUCKET_CHANNELS
from shared.projection import ProjectionHandler
from shared.runtime import WorkerContext, WorkerSpec
from workers.channels.core import apply_message


class ChannelsProjection:
    bucket = BUCKET_CHANNELS
    doc_type = ChannelsDoc

    def accepts(self, env: Envelope) -> bool:
        return isinstance(env.event, MessageEvent)

    def apply(self, doc: ChannelsDoc | None, env: Envelope) -> ChannelsDoc | None:
        assert isinstance(env.event, MessageEvent)
        return apply_message(doc, env.event)


async def build(ctx: WorkerContext) -> ProjectionHandler:
    return ProjectionHandler(ctx.js, ctx.worker, ctx.producer, [ChannelsProjection()],
                             bucket_names={BUCKET_CHANNELS: ctx.bucket(BUCKET_CHANNELS)}, cut_on_triggers=True)


SPEC = WorkerSpec(name="channels", families=("msg", "session", "compaction"), build=build, buckets=(BUCKET_CHANNELS,))
