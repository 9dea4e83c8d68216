"""What the knowledge tests of the personal reader share: a sentence's self-statements, and a made-up
conversation applied message by message to a KnowledgeDoc (no server: the core alone)."""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec

from schemas.docs import KnowledgeDoc
from schemas.events import MessageEvent
from shared.config import KnowledgeSettings
from workers.conversation.patterns import prepare_text
from workers.knowledge.core import apply_message
from workers.knowledge.personal import get_personal_patterns, self_statements


def said(text: str, language: str = "en") -> list[tuple[str, str]]:
    """(predicate, object) of every statement the pack of ``language`` reads in ``text`` said by Sam."""
    packs = get_personal_patterns((language,))
    return [(s.predicate, s.object) for s in self_statements(prepare_text(text), "Sam", packs)]


def talk(turns: list[tuple[str, str]], languages: tuple[str, ...], start: datetime) -> KnowledgeDoc:
    """The KnowledgeDoc after ``turns`` (sender, text), a minute apart from ``start``, in one session."""
    doc = None
    for n, (sender, text) in enumerate(turns):
        event = msgspec.convert({"id": f"e{n}", "agent": "a1", "session": "s1", "ts": start + timedelta(minutes=n),
                                 "role": "user", "sender": sender, "content": text}, MessageEvent)
        doc = apply_message(doc, event, KnowledgeSettings(), get_personal_patterns(languages))
    assert doc is not None
    return doc
