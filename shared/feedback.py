"""Feedback a service publishes about what it returned (``recall_access``, ``fact_access``).

A reply never writes another worker's state: it publishes a FeedbackEvent on
``<prefix>.feedback.<agent>.<kind>`` (contract: Payloads), and the owning worker applies
it in stream order like any other event, so it replays.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

import msgspec
from nats.js.api import PubAck
from nats.js.client import JetStreamContext

from schemas.events import FeedbackEvent
from schemas.types import FeedbackKind
from shared.names import feedback_subject


def feedback_ids(event: FeedbackEvent) -> list[str]:
    """The ids a feedback event names: ``target`` and/or a list of strings in ``value``."""
    ids = [event.target] if event.target else []
    if isinstance(event.value, list):
        ids += [v for v in event.value if isinstance(v, str)]
    return list(dict.fromkeys(ids))


async def publish_ids(js: JetStreamContext, prefix: str, agent: str, kind: FeedbackKind, ids: Sequence[str],
                      ts: datetime, actor: str) -> None:
    """One ``kind`` event naming ``ids`` (nothing when there are none); ``ts`` is the
    request's "now": the latest event time the publisher knows for the agent."""
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
