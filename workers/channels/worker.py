"""The channels worker: ChannelsDoc per agent in ``cortex_channels``.

Counts, last activity and layers come from message events. The one-line summaries (the
channel's latest active thread and last decision) are composed at trigger events
(session start/end, compaction) from the threads and decisions documents as they were at
that event, so a whole-pipeline replay reproduces them.

Every trigger is applied and counted in ``integrity.events``, also one that leaves the
summaries as they were: the count is then the agent's messages and triggers, whatever the
summaries read. Counting only the triggers that changed a summary made the count depend on
the read itself — live, a worker that falls more than the buckets' history behind its
sources reads the latest document instead (``shared.asof``, ``history_too_short``), and a
replay, reading the right one, counted a different number of changes for the same content.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from schemas.docs import ChannelsDoc, DecisionsDoc, ThreadsDoc
from schemas.events import MessageEvent
from shared.codec import Envelope
from shared.config import Settings
from shared.footprint import Source
from shared.inputs import ComposedProjection, Reading
from shared.names import BUCKET_CHANNELS, BUCKET_DECISIONS, BUCKET_THREADS
from shared.projection import EventProjection, ProjectionHandler, SourcedProjection, is_trigger
from shared.runtime import WorkerContext, WorkerSpec
from workers.channels.briefing import SECTIONS as BRIEFING
from workers.channels.core import apply_message, summarize

# the summaries: threads and decisions as of each trigger
SOURCES = (Source("threads", "threads", BUCKET_THREADS, ThreadsDoc),
           Source("decisions", "decisions", BUCKET_DECISIONS, DecisionsDoc))


def takes(env: Envelope) -> bool:
    return isinstance(env.event, MessageEvent) or is_trigger(env)


def sources_read(env: Envelope, doc: ChannelsDoc | None) -> tuple[Source, ...]:
    """A message only counts; a trigger summarises the channels there are."""
    return () if isinstance(env.event, MessageEvent) or doc is None else SOURCES


class ChannelsProjection(ComposedProjection[ChannelsDoc]):
    bucket = BUCKET_CHANNELS
    doc_type = ChannelsDoc
    # a summary is made at a trigger and kept until the next: read with threads or decisions still
    # behind, it stayed wrong (and unlike a replay's) until then — so a trigger waits for them
    patient = True

    def __init__(self, ctx: WorkerContext) -> None:
        super().__init__(ctx, SOURCES)

    def accepts(self, env: Envelope) -> bool:
        return takes(env)

    def sources_for(self, env: Envelope, doc: ChannelsDoc | None) -> tuple[Source, ...]:
        return sources_read(env, doc)

    def compose(self, doc: ChannelsDoc | None, env: Envelope, inputs: Reading) -> ChannelsDoc | None:
        return channels_after(doc, env, inputs.docs)


def channels_after(doc: ChannelsDoc | None, env: Envelope, docs: Mapping[str, Any]) -> ChannelsDoc | None:
    """The document after ``env``: a message counts; a trigger summarises the channels from
    ``docs``, threads and decisions as of it."""
    if isinstance(env.event, MessageEvent):
        return apply_message(doc, env.event)
    if doc is None:
        return None
    summarized = summarize(doc.channels, docs["threads"], docs["decisions"])
    return msgspec.structs.replace(doc, channels=summarized)  # counted even when unchanged (above)


class ChannelsFromEvents(SourcedProjection[ChannelsDoc]):
    """The same rule for a composed reader past the bucket's history (``shared.derive``):
    threads and decisions derive from the events, so the summaries do too."""

    bucket = BUCKET_CHANNELS
    doc_type = ChannelsDoc

    def accepts(self, env: Envelope) -> bool:
        return takes(env)

    def sources_for(self, env: Envelope, doc: ChannelsDoc | None) -> tuple[Source, ...]:
        return sources_read(env, doc)

    def apply_read(self, doc: ChannelsDoc | None, env: Envelope, docs: Mapping[str, Any]) -> ChannelsDoc | None:
        return channels_after(doc, env, docs)


def projections(settings: Settings) -> list[EventProjection[Any]]:
    """Its document as a composed reader derives it (``WorkerSpec.derive``)."""
    return [ChannelsFromEvents()]


async def build(ctx: WorkerContext) -> ProjectionHandler:
    return ProjectionHandler(ctx.js, ctx.worker, ctx.producer, [ChannelsProjection(ctx)],
                             bucket_names={BUCKET_CHANNELS: ctx.bucket(BUCKET_CHANNELS)},
                             cut_on_triggers=True, cut_every=ctx.settings.runtime.cut_every)


SPEC = WorkerSpec(name="channels", priority="throughput",
                  families=("msg", "session", "compaction"), build=build, derive=projections,
                  buckets=(BUCKET_CHANNELS,), sources=SOURCES,
                  briefing=BRIEFING)
