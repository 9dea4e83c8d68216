"""Builders for the boot assembly tests: real documents, filled with plausible defaults."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from briefing_sections import DOC_BUCKETS, boot_inputs, replaced

from schemas.docs import (
    ChannelsDoc,
    ChannelState,
    Commitment,
    CommitmentsDoc,
    Decision,
    DecisionsDoc,
    Fact,
    Integrity,
    KnowledgeDoc,
    NarrativeDoc,
    SnapshotDoc,
    Thread,
    ThreadsDoc,
)
from shared.config import BootSettings
from workers.boot import BootInputs

NOW = datetime(2026, 2, 17, 11, 30, 2, tzinfo=UTC)  # 12:30 in Berlin: afternoon
BERLIN = ZoneInfo("Europe/Berlin")


class Make:
    """One method per document; keyword arguments override the defaults."""

    now = NOW

    @staticmethod
    def integrity(**kw: Any) -> Integrity:
        return Integrity(**{"last_seq": 10, "last_event_ts": NOW - timedelta(minutes=2), "events": 10,
                            "producer": "test@0.1.0+abc", **kw})

    def thread(self, id: str, **kw: Any) -> Thread:
        fields: dict[str, Any] = {
            "title": f"thread {id}", "status": "open", "priority": "medium", "summary": f"summary {id}",
            "decisions": [], "waiting_for": None, "mood": "neutral",
            "last_activity": NOW - timedelta(minutes=10), "created": NOW - timedelta(hours=2),
        }
        return Thread(id=id, **{**fields, **kw})

    def threads(self, *threads: Thread, mood: str = "neutral") -> ThreadsDoc:
        return ThreadsDoc(updated=NOW, session_mood=mood, threads=list(threads),
                          integrity=self.integrity())

    def decision(self, id: str, **kw: Any) -> Decision:
        fields: dict[str, Any] = {
            "what": f"decision {id}", "date": "2026-02-17", "why": f"because {id}", "impact": "medium",
            "who": "albert", "extracted_at": NOW - timedelta(minutes=30),
        }
        return Decision(id=id, **{**fields, **kw})

    def decisions(self, *decisions: Decision) -> DecisionsDoc:
        return DecisionsDoc(updated=NOW, decisions=list(decisions), integrity=self.integrity())

    def commitment(self, id: str, **kw: Any) -> Commitment:
        fields: dict[str, Any] = {
            "who": "claudia", "what": f"promise {id}", "status": "open",
            "created": NOW - timedelta(hours=1), "source_event": f"ev-{id}",
        }
        return Commitment(id=id, **{**fields, **kw})

    def commitments(self, *commitments: Commitment) -> CommitmentsDoc:
        return CommitmentsDoc(updated=NOW, commitments=list(commitments), integrity=self.integrity())

    def snapshot(
        self, markdown: str = "# Hot Snapshot\nRecent conversation...", age: timedelta = timedelta(0)
    ) -> SnapshotDoc:
        return SnapshotDoc(agent="main", session="s-1", ts=NOW - age, messages_snapshotted=2,
                           markdown=markdown, integrity=self.integrity())

    def narrative(self, markdown: str = "Today was productive. Built the cortex plugin.",
                  age: timedelta = timedelta(0)) -> NarrativeDoc:
        return NarrativeDoc(agent="main", ts=NOW - age, markdown=markdown, source="structured",
                            integrity=self.integrity())

    def fact(self, id: str, relevance: float = 0.5, **kw: Any) -> Fact:
        fields: dict[str, Any] = {
            "subject": f"subject-{id}", "predicate": "is", "object": f"object-{id}",
            "created_at": NOW - timedelta(days=1), "last_accessed": NOW - timedelta(hours=1),
            "source": "extracted-regex",
        }
        return Fact(id=id, relevance=relevance, **{**fields, **kw})

    def knowledge(self, *facts: Fact) -> KnowledgeDoc:
        return KnowledgeDoc(updated=NOW, entities=[], facts=list(facts), integrity=self.integrity())

    def channel(self, name: str, layer: str = "background", **kw: Any) -> ChannelState:
        fields: dict[str, Any] = {
            "last_message_at": NOW - timedelta(hours=1), "messages": 3, "summary": f"talk in {name}",
        }
        return ChannelState(channel=name, layer=layer, **{**fields, **kw})

    def channels(self, *channels: ChannelState) -> ChannelsDoc:
        return ChannelsDoc(updated=NOW, channels=list(channels), integrity=self.integrity())

    @staticmethod
    def inputs(**kw: Any) -> BootInputs:
        """Inputs of the documents named as the sections' (``threads=``, ``knowledge=``, …;
        ``key_memories=`` and ``key_owners=`` make recall's document), the rest as given."""
        return boot_inputs(**kw)

    @staticmethod
    def replaced(inputs: BootInputs, **docs: Any) -> BootInputs:
        """``inputs`` with the documents named as the sections' replaced."""
        return replaced(inputs, **docs)

    @staticmethod
    def doc(inputs: BootInputs, name: str) -> Any:
        return inputs.docs.get(DOC_BUCKETS[name])


@pytest.fixture
def make() -> Make:
    return Make()


@pytest.fixture
def settings() -> BootSettings:
    return BootSettings()


@pytest.fixture
def tz() -> ZoneInfo:
    return BERLIN
