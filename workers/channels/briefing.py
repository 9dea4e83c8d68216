"""The channels worker's briefing section: Other Channels.

One line per background channel as ``[channel] summary (last: time)``, the most recently
active first, archived channels left out (the layered context of the processing-brain design).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schemas.docs import ChannelsDoc, ChannelState
from shared.briefing import Briefing, BriefingSection, Rendered, Said
from shared.names import BUCKET_CHANNELS
from workers.briefing import section
from workers.render import as_utc, iso_seconds, one_line

MAX_CHANNELS_IN_BOOT = 10


def background_channels(channels: Sequence[ChannelState]) -> list[ChannelState]:
    """Background channels, the most recently active first."""
    background = sorted((c for c in channels if c.layer == "background"), key=lambda c: c.channel)
    background.sort(key=lambda c: as_utc(c.last_message_at), reverse=True)
    return background[:MAX_CHANNELS_IN_BOOT]


def _channel_line(c: ChannelState) -> str:
    # An unsummarised channel still says how much happened there.
    summary = one_line(c.summary) or f"{c.messages} messages"
    return f"[{one_line(c.channel)}] {summary} (last: {iso_seconds(c.last_message_at)})"


def channels_section(channels: Sequence[ChannelState], budget: int) -> str:
    lines = [_channel_line(c) for c in background_channels(channels)]
    return section("## 📡 Other Channels", lines, budget)[0]


def _channels(b: Briefing, said: Said, budget: int) -> Rendered:
    doc = b.doc(BUCKET_CHANNELS, ChannelsDoc)
    return Rendered(channels_section(doc.channels if doc is not None else [], budget))


# the channel summaries are made for every trigger (read as of the trigger itself)
SECTIONS: tuple[BriefingSection[Any], ...] = (
    BriefingSection("📡 Other Channels", BUCKET_CHANNELS, ChannelsDoc, name="channels", order=900, chars=600,
                    compose=_channels, as_of="made_for_trigger", only_when_relevant=False,
                    follows_messages=True),
)
