"""A full-size agent state written straight into KV with the schemas' Structs:
50 threads, 100 decisions, commitments, a snapshot, a narrative and channels — what the
API latency is measured against."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import msgspec
from nats.js.client import JetStreamContext

from schemas.docs import (
    ChannelsDoc,
    ChannelState,
    Commitment,
    CommitmentsDoc,
    Decision,
    DecisionsDoc,
    Integrity,
    NarrativeDoc,
    SnapshotDoc,
    Thread,
    ThreadsDoc,
    TimelineItem,
)
from schemas.types import Impact, Mood, Priority
from shared.names import (
    BUCKET_CHANNELS,
    BUCKET_COMMITMENTS,
    BUCKET_DECISIONS,
    BUCKET_NARRATIVES,
    BUCKET_SNAPSHOTS,
    BUCKET_THREADS,
)
from workers.bench.events import ACTIONS_EN, CHANNELS, TOPICS_DE, TOPICS_EN, message_text

NOW = datetime(2026, 3, 2, 10, 30, tzinfo=UTC)
THREADS = 50
DECISIONS = 100
COMMITMENTS = 40
SNAPSHOT_MESSAGES = 15

_PRIORITIES: tuple[Priority, ...] = ("critical", "high", "medium", "medium", "low")
_IMPACTS: tuple[Impact, ...] = ("critical", "high", "medium", "medium", "low")
_MOODS: tuple[Mood, ...] = ("neutral", "productive", "tense", "exploratory", "excited", "frustrated")


def _integrity(events: int) -> Integrity:
    return Integrity(last_seq=1, last_event_ts=NOW, events=events, producer="bench@0+fullstate")


def _threads(rng: random.Random) -> ThreadsDoc:
    topics = [*TOPICS_EN, *TOPICS_DE]
    threads = []
    for i in range(THREADS):
        last = NOW - timedelta(hours=rng.randrange(1, 240))
        threads.append(Thread(
            id=f"t-{i:03d}", title=f"{topics[i % len(topics)]} {i // len(topics) + 1}",
            status="open" if i % 4 else "closed", priority=rng.choice(_PRIORITIES),
            summary=f"Topic detected from albert: {message_text(rng, i % 3 == 0, 1)}"[:200],
            decisions=[message_text(rng, False, 1)[:100] for _ in range(rng.randrange(0, 5))],
            waiting_for=f"Waiting for Maria to review the {rng.choice(TOPICS_EN)}." if i % 5 == 0 else None,
            mood=rng.choice(_MOODS), last_activity=last, created=last - timedelta(days=2),
            channel=rng.choice(CHANNELS),
        ))
    return ThreadsDoc(updated=NOW, session_mood="productive", threads=threads, integrity=_integrity(5000))


def _decisions(rng: random.Random) -> DecisionsDoc:
    decisions = []
    for i in range(DECISIONS):
        at = NOW - timedelta(hours=3 * (DECISIONS - i))
        action = rng.choice(ACTIONS_EN)
        what = f"We decided to {action} because the {rng.choice(TOPICS_EN)} needs it."
        decisions.append(Decision(
            id=f"d-{i:03d}", what=what[:150], date=at.date().isoformat(),
            why=f"{message_text(rng, False, 2)} {what}"[:300], impact=rng.choice(_IMPACTS),
            who=rng.choice(("albert", "claudia", "maria")), extracted_at=at, channel=rng.choice(CHANNELS),
        ))
    return DecisionsDoc(updated=NOW, decisions=decisions, integrity=_integrity(5000))


def _commitments(rng: random.Random) -> CommitmentsDoc:
    commitments = [
        Commitment(id=f"c-{i:03d}", who=rng.choice(("claudia", "albert")),
                   what=f"{rng.choice(ACTIONS_EN)} for the {rng.choice(TOPICS_EN)}",
                   status=("open", "open", "overdue", "done")[i % 4], created=NOW - timedelta(hours=7 * i),
                   source_event=f"ev-{i}", due="tomorrow" if i % 3 == 0 else None)
        for i in range(COMMITMENTS)
    ]
    return CommitmentsDoc(updated=NOW, commitments=commitments, integrity=_integrity(5000))


def _snapshot(rng: random.Random, agent: str) -> SnapshotDoc:
    lines = [f"# Hot Snapshot — {NOW:%Y-%m-%dT%H:%M:%S}Z", "", "## Last conversation topics", ""]
    lines += [f"- [{rng.choice(('user', 'assistant'))}] {message_text(rng, i % 3 == 0, 2)}"
              for i in range(SNAPSHOT_MESSAGES)]
    lines += ["", "## Thread state", "- 37 open threads, 13 closed"]
    return SnapshotDoc(agent=agent, session="s-full-7", ts=NOW, messages_snapshotted=SNAPSHOT_MESSAGES,
                       markdown="\n".join(lines), integrity=_integrity(12))


def _narrative(rng: random.Random, agent: str) -> NarrativeDoc:
    body = "\n".join(f"- {message_text(rng, False, 2)}" for _ in range(12))
    timeline = [TimelineItem(ts=NOW - timedelta(hours=2 * i), kind="session_start", text=f"s-{i}")
                for i in range(20)]
    return NarrativeDoc(agent=agent, ts=NOW, markdown=f"## Last 24 hours\n\n{body}", source="structured",
                        integrity=_integrity(40), timeline=timeline)


def _channels() -> ChannelsDoc:
    channels = [ChannelState(channel=c, last_message_at=NOW - timedelta(minutes=30 * i), messages=1200 // (i + 1),
                             summary=f"{c}: deployment planning and the {TOPICS_EN[i]}",
                             layer=("foreground", "background", "archived")[i])
                for i, c in enumerate(CHANNELS)]
    return ChannelsDoc(updated=NOW, channels=channels, integrity=_integrity(5000))


def full_state(agent: str, seed: int = 11) -> dict[str, msgspec.Struct]:
    """Bucket → document for one agent with a full-size state."""
    rng = random.Random(seed)
    return {
        BUCKET_THREADS: _threads(rng),
        BUCKET_DECISIONS: _decisions(rng),
        BUCKET_COMMITMENTS: _commitments(rng),
        BUCKET_SNAPSHOTS: _snapshot(rng, agent),
        BUCKET_NARRATIVES: _narrative(rng, agent),
        BUCKET_CHANNELS: _channels(),
    }


async def write_full_state(js: JetStreamContext, agent: str) -> dict[str, int]:
    """Write the documents; returns the size in bytes of each."""
    encoder = msgspec.json.Encoder()
    sizes: dict[str, int] = {}
    for bucket, doc in full_state(agent).items():
        data = encoder.encode(doc)
        await (await js.key_value(bucket)).put(agent, data)
        sizes[bucket] = len(data)
    return sizes
