"""Feedback a service publishes about what it returned (``recall_access``, ``fact_access``).

A reply never writes another worker's state: it publishes a FeedbackEvent on
``<prefix>.feedback.<agent>.<kind>`` (contract: Payloads), and the owning worker applies
it in stream order like any other event, so it replays.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Final

import msgspec
from nats.js.api import PubAck
from nats.js.client import JetStreamContext

from schemas.api import StatusReply
from schemas.events import FeedbackEvent, LlmAnswerValue
from schemas.types import FeedbackKind
from shared.names import feedback_subject

# "now" for an agent no event of which is applied yet (see ``request_time``)
NO_EVENT_TIME: Final = datetime(1970, 1, 1, tzinfo=UTC)


def request_time(stamps: Iterable[datetime | None]) -> datetime:
    """The time of the feedback a request publishes for an agent (contract: Time and
    replay): the latest event time applied for the agent, i.e. the newest watermark
    (``integrity.last_event_ts``) among the agent's documents the publisher reads — never
    the wall clock, so the feedback leaves every document's time (a RecallDoc's ``updated``,
    a briefing's "now" and its age line) where the agent's events put it.

    An agent with no event applied yet has no such time: it is the epoch
    (``NO_EVENT_TIME``), as for ``shared.inputs.Inputs.now`` and recall's ``recall_now``.
    Deterministic, and older than any real event: feedback given before an agent's first
    event can never make its later data look stale, whatever dates its events carry."""
    return _latest(stamps) or NO_EVENT_TIME


def publish_time(stamps: Iterable[datetime | None]) -> datetime:
    """The time a person's or an agent's own feedback (a remember, a forget, a thread closed
    from the CLI) is published with: ``request_time`` — but for an agent with no event
    applied yet the wall clock, as any producer stamps a first event. The epoch would date
    a fresh agent's first memories 1970: once its conversation starts, every lifecycle run
    would find a ``ttl`` memory expired and a ``session`` one decayed. The time is recorded
    in the event, so a replay reproduces what it made either way."""
    return _latest(stamps) or datetime.now(UTC)


def _latest(stamps: Iterable[datetime | None]) -> datetime | None:
    return max((ts for ts in stamps if ts is not None), default=None)


def status_time(status: StatusReply) -> datetime:
    """``publish_time`` as ``cortex.api.status`` reports it (each worker's last event
    applied): how a publisher without access to the documents' buckets (the MCP server,
    confined to the agent's APIs and feedback) stamps the feedback it publishes."""
    return publish_time(datetime.fromisoformat(w.last_event_ts) for w in status.workers if w.last_event_ts)


def late_answer(event: object) -> LlmAnswerValue | None:
    """The model's late answer an ``llm_answer`` event carries (``shared.llm.deferred``); None
    for any other event. Its value was validated when the event was decoded."""
    if not isinstance(event, FeedbackEvent) or event.kind != "llm_answer":
        return None
    return msgspec.convert(event.value, LlmAnswerValue)


def feedback_ids(event: FeedbackEvent) -> list[str]:
    """The ids a feedback event names: ``target`` and/or a list of strings in ``value``."""
    ids = [event.target] if event.target else []
    if isinstance(event.value, list):
        ids += [v for v in event.value if isinstance(v, str)]
    return list(dict.fromkeys(ids))


async def publish_ids(js: JetStreamContext, prefix: str, agent: str, kind: FeedbackKind, ids: Sequence[str],
                      ts: datetime, actor: str) -> None:
    """One ``kind`` event naming ``ids`` (nothing when there are none); ``ts`` is the
    request's "now": the latest event time the publisher knows for the agent (``request_time``)."""
    if not ids:
        return
    event = FeedbackEvent(id=f"{kind.split('_')[0][:4]}-{uuid.uuid4().hex}", agent=agent, ts=ts, kind=kind,
                          value=list(dict.fromkeys(ids)), actor=actor)
    await publish_feedback(js, prefix, event)


async def publish_feedback(js: JetStreamContext, prefix: str, event: FeedbackEvent,
                           ack_timeout_s: float | None = None, stream: str | None = None) -> PubAck:
    """Publish one FeedbackEvent on its subject, its id as the ``Nats-Msg-Id`` (a retried
    publish is stored once); the stream's acknowledgement."""
    return await js.publish(feedback_subject(prefix, event.agent, event.kind), msgspec.json.encode(event),
                            timeout=ack_timeout_s, stream=stream, headers={"Nats-Msg-Id": event.id})
