"""The channels worker's pure core: counts, last activity, layers in event time, the cap,
and each channel's summary from the threads and decisions documents."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec

from schemas.docs import ChannelsDoc, ChannelState, Decision, DecisionsDoc, Integrity, Thread, ThreadsDoc
from schemas.events import MessageEvent
from schemas.types import ThreadStatus
from workers.channels.core import (
    BACKGROUND_WINDOW,
    DEFAULT_CHANNEL,
    MAX_CHANNELS,
    apply_message,
    channel_summary,
    summarize,
)

T0 = datetime(2026, 2, 17, 9, tzinfo=UTC)


def message(channel: str | None, at: datetime, n: int = 1) -> MessageEvent:
    return MessageEvent(id=f"m{n}", agent="alice", session="s1", ts=at, role="user", content="hi", channel=channel)


def applied(*events: MessageEvent, doc: ChannelsDoc | None = None) -> ChannelsDoc:
    for event in events:
        doc = apply_message(doc, event)
    assert doc is not None
    return doc


def layers(doc: ChannelsDoc) -> dict[str, tuple[str, int]]:
    return {c.channel: (c.layer, c.messages) for c in doc.channels}


def test_a_first_message_opens_its_channel_in_the_foreground() -> None:
    doc = apply_message(None, message("slack", T0))
    assert doc.channels == [ChannelState(channel="slack", last_message_at=T0, messages=1, summary="",
                                         layer="foreground")]
    assert doc.updated == T0


def test_a_message_without_a_channel_counts_for_the_default_one() -> None:
    doc = applied(message(None, T0, 1), message(DEFAULT_CHANNEL, T0 + timedelta(minutes=1), 2))
    assert layers(doc) == {DEFAULT_CHANNEL: ("foreground", 2)}
    assert doc.channels[0].last_message_at == T0 + timedelta(minutes=1)


def test_the_latest_message_decides_the_foreground_the_24h_before_it_the_background() -> None:
    """Unified-brain layers, in event time: the window's edge is still background."""
    later = T0 + BACKGROUND_WINDOW
    doc = applied(message("old", T0 - timedelta(seconds=1), 1), message("edge", T0, 2),
                  message("slack", T0 + timedelta(hours=1), 3), message("mail", later, 4))
    assert layers(doc) == {"mail": ("foreground", 1), "slack": ("background", 1), "edge": ("background", 1),
                           "old": ("archived", 1)}
    back = apply_message(doc, message("old", later + timedelta(minutes=1), 5))
    assert layers(back) == {"mail": ("background", 1), "slack": ("background", 1), "edge": ("archived", 1),
                            "old": ("foreground", 2)}


def test_channels_are_listed_by_name_and_the_same_events_give_the_same_bytes() -> None:
    events = [message(name, T0 + timedelta(minutes=i), i) for i, name in enumerate(["zeta", "alpha", "mid", "alpha"])]
    doc = applied(*events)
    assert [c.channel for c in doc.channels] == ["alpha", "mid", "zeta"]
    assert msgspec.json.encode(doc) == msgspec.json.encode(applied(*events))


def test_a_summary_and_the_integrity_survive_a_message() -> None:
    doc = applied(message("slack", T0))
    kept = ChannelsDoc(updated=doc.updated, integrity=Integrity(last_seq=7, events=1, producer="channels@x"),
                       channels=[msgspec.structs.replace(doc.channels[0], summary="Auth migration")])
    after = apply_message(kept, message("slack", T0 + timedelta(minutes=5), 2))
    assert after.channels[0].summary == "Auth migration"
    assert after.integrity == kept.integrity


def test_past_the_cap_the_longest_idle_archived_channels_go_first() -> None:
    start = T0 - timedelta(days=30)
    doc = applied(*(message(f"c{i:03d}", start + timedelta(minutes=i), i) for i in range(MAX_CHANNELS)))
    doc = applied(message("recent", T0 - timedelta(hours=1), 900), message("now", T0, 901), doc=doc)
    names = [c.channel for c in doc.channels]
    assert len(names) == MAX_CHANNELS
    assert {"c000", "c001"}.isdisjoint(names)  # the two idle longest
    assert {"c002", "c199", "recent", "now"} <= set(names)
    assert layers(doc)["now"] == ("foreground", 1) and layers(doc)["recent"] == ("background", 1)


def thread(tid: str, title: str, channel: str | None, at: datetime, status: ThreadStatus = "open") -> Thread:
    return Thread(id=tid, title=title, status=status, priority="medium", summary="", decisions=[],
                  waiting_for=None, mood="neutral", last_activity=at, created=T0, channel=channel)


def decision(did: str, what: str, channel: str | None, at: datetime) -> Decision:
    return Decision(id=did, what=what, date="2026-02-17", why="", impact="medium", who="albert", extracted_at=at,
                    channel=channel)


THREADS = ThreadsDoc(updated=T0, session_mood="neutral", integrity=Integrity(), threads=[
    thread("t1", "Auth migration", "slack", T0),
    thread("t2", "Billing export", "slack", T0 + timedelta(hours=1)),
    thread("t3", "Closed later", "slack", T0 + timedelta(hours=2), status="closed"),
    thread("t4", "Default work", None, T0),
])
DECISIONS = DecisionsDoc(updated=T0, integrity=Integrity(), decisions=[
    decision("d1", "Use Postgres", "slack", T0),
    decision("d2", "Ship on Monday " + "and more words " * 20, "slack", T0 + timedelta(hours=1)),
    decision("d3", "Default decision", None, T0),
])


def test_a_summary_is_the_latest_open_thread_and_the_last_decision_of_the_channel() -> None:
    summary = channel_summary("slack", THREADS, DECISIONS)
    title, decided = summary.split(" · ")
    assert title == "Billing export"  # the latest open one: t3 is later but closed
    assert decided.startswith("decided: Ship on Monday") and decided.endswith("…")
    assert len(decided) <= len("decided: ") + 120
    assert channel_summary(DEFAULT_CHANNEL, THREADS, DECISIONS) == "Default work · decided: Default decision"


def test_a_summary_has_what_there_is() -> None:
    assert channel_summary("slack", None, DECISIONS).startswith("decided: Ship on Monday")
    assert channel_summary("slack", THREADS, None) == "Billing export"
    assert channel_summary("mail", THREADS, DECISIONS) == ""
    assert channel_summary("slack", None, None) == ""


def test_summarize_fills_every_channel_and_keeps_the_rest() -> None:
    doc = applied(message("slack", T0, 1), message("mail", T0 + timedelta(minutes=1), 2))
    out = summarize(doc.channels, THREADS, DECISIONS)
    assert [(c.channel, c.summary) for c in out] == [("mail", ""), ("slack", channel_summary("slack", THREADS,
                                                                                               DECISIONS))]
    assert [msgspec.structs.replace(c, summary="") for c in out] == doc.channels
