"""Pure core of the channels worker: counts, last activity and layers, in event time.

Layer rule (unified-brain design, on the stream): the channel of the agent's latest
message event is *foreground*; other channels active in the 24 h before that message are
*background*; older ones are *archived*. The document changes with
``msgspec.structs.replace``: fields not named here (``integrity``, owned by the shell, a
new field) are carried over.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec

from schemas.docs import ChannelsDoc, ChannelState, DecisionsDoc, Integrity, ThreadsDoc
from schemas.events import MessageEvent
from workers.render import clip_words

BACKGROUND_WINDOW = timedelta(hours=24)
DEFAULT_CHANNEL = "default"
MAX_CHANNELS = 200


def relayer(channels: list[ChannelState], foreground: str, now: datetime) -> list[ChannelState]:
    out = []
    for ch in channels:
        if ch.channel == foreground:
            layer = "foreground"
        elif now - ch.last_message_at <= BACKGROUND_WINDOW:
            layer = "background"
        else:
            layer = "archived"
        out.append(msgspec.structs.replace(ch, layer=layer))
    return out


def apply_message(doc: ChannelsDoc | None, event: MessageEvent) -> ChannelsDoc:
    channel = event.channel or DEFAULT_CHANNEL
    channels = list(doc.channels) if doc else []
    for i, ch in enumerate(channels):
        if ch.channel == channel:
            channels[i] = msgspec.structs.replace(ch, last_message_at=event.ts, messages=ch.messages + 1)
            break
    else:
        channels.append(ChannelState(channel=channel, last_message_at=event.ts, messages=1, summary="",
                                     layer="foreground"))
    channels = relayer(channels, channel, event.ts)
    if len(channels) > MAX_CHANNELS:  # drop the longest-idle archived channels first
        channels.sort(key=lambda c: (c.layer != "archived", c.last_message_at))
        channels = channels[len(channels) - MAX_CHANNELS:]
    channels.sort(key=lambda c: c.channel)
    if doc is None:
        return ChannelsDoc(updated=event.ts, channels=channels, integrity=Integrity())
    return msgspec.structs.replace(doc, updated=event.ts, channels=channels)


def channel_summary(channel: str, threads: ThreadsDoc | None, decisions: DecisionsDoc | None) -> str:
    """``<latest active thread> · decided: <last decision>`` for the channel (either part may be absent)."""
    parts = []
    open_threads = [t for t in (threads.threads if threads else [])
                    if t.status == "open" and (t.channel or DEFAULT_CHANNEL) == channel]
    if open_threads:
        latest = max(open_threads, key=lambda t: (t.last_activity, t.id))
        parts.append(latest.title)
    mine = [d for d in (decisions.decisions if decisions else []) if (d.channel or DEFAULT_CHANNEL) == channel]
    if mine:
        last = max(mine, key=lambda d: (d.extracted_at, d.id))
        parts.append(f"decided: {clip_words(last.what, 120)}")
    return " · ".join(parts)


def summarize(channels: list[ChannelState], threads: ThreadsDoc | None,
              decisions: DecisionsDoc | None) -> list[ChannelState]:
    return [msgspec.structs.replace(c, summary=channel_summary(c.channel, threads, decisions)) for c in channels]
