"""Where a source of CORTEX_EVENTS stands: ``cortex status`` and the api worker's gauges.

The source is found in the stream's own configuration (the source ``cortex init`` wired,
``shared.provision.is_openclaw_source``), so nothing but the stream has to know it. What a
person watching a backfill wants: how much the store holds, how much the server has copied
(and its lag), what kinds of events those are — conversation, tool and run events, the ones
Cortex ignores (``llm.*``, ``gateway.*``, ``msg.sending``) and types it does not know —
and how far the slowest worker has applied the stream.
"""

from __future__ import annotations

import msgspec
import nats.js.errors
from nats.js.client import JetStreamContext

from shared.names import EVENTS_STREAM, OPENCLAW_IGNORED, OPENCLAW_TYPES, store_filter
from shared.provision import is_openclaw_source

# what the store's events are, by type token (labels of cortex_source_events)
CLASSES = ("conversation", "tool", "run", "not_conversation", "unknown")


def event_class(token: str) -> str:
    mapped = OPENCLAW_TYPES.get(token)
    if mapped is not None:
        return mapped[0] if mapped[0] in ("tool", "run") else "conversation"
    return "not_conversation" if token in OPENCLAW_IGNORED else "unknown"


class SourceState(msgspec.Struct, kw_only=True):
    stream: str
    copied: int = 0  # store events in CORTEX_EVENTS
    lag: int | None = None  # store messages the server has not copied yet
    active_s: float | None = None  # since the server last copied (or checked)
    error: str | None = None
    classes: dict[str, int] = msgspec.field(default_factory=dict)
    unknown_types: list[str] = msgspec.field(default_factory=list)
    store_messages: int | None = None  # None: the store's stream is not readable from here
    store_last_seq: int | None = None


async def _counts(js: JetStreamContext, prefix: str, state: SourceState) -> None:
    info = await js.stream_info(EVENTS_STREAM, subjects_filter=store_filter(prefix))
    classes = dict.fromkeys(CLASSES, 0)
    unknown: set[str] = set()
    for subject, count in (info.state.subjects or {}).items():
        token = subject.rsplit(".", 1)[-1]
        kind = event_class(token)
        classes[kind] += count
        if kind == "unknown":
            unknown.add(token)
    state.classes, state.copied, state.unknown_types = classes, sum(classes.values()), sorted(unknown)


async def source_states(js: JetStreamContext, prefix: str, store_info: bool = True) -> list[SourceState]:
    """Every OpenClaw source of CORTEX_EVENTS (normally one); [] when none is wired."""
    try:
        info = await js.stream_info(EVENTS_STREAM)
    except nats.js.errors.NotFoundError:
        return []
    live = {s.name: s for s in info.sources or []}
    states = []
    for source in info.config.sources or []:
        if not is_openclaw_source(source, prefix):
            continue
        state = SourceState(stream=source.name)
        if (now := live.get(source.name)) is not None:
            state.lag = now.lag
            state.active_s = now.active / 1e9 if now.active is not None and now.active >= 0 else None
            state.error = (now.error or {}).get("description") if now.error else None
        await _counts(js, prefix, state)
        if store_info:
            try:
                store = await js.stream_info(source.name)
                state.store_messages, state.store_last_seq = store.state.messages, store.state.last_seq
            except Exception:  # another account, or no permission: the copy's side is still shown
                pass
        states.append(state)
    return states
