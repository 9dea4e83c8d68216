"""The patterns' items as a model read them (pure): without the ones it judged wrong, with
the ones it found that the patterns missed — what the briefing shows when an extraction
document exists (only with a model configured). The pattern documents stay as they are.

A model item that says what a pattern item says (the same title, decision, task or fact,
case and spacing folded) is not shown twice: the pattern item stands.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any
from zoneinfo import ZoneInfo

import msgspec

from schemas.docs import (
    Commitment,
    CommitmentsDoc,
    Decision,
    DecisionsDoc,
    ExtractionDoc,
    Fact,
    KnowledgeDoc,
    RecallDoc,
    Thread,
    ThreadsDoc,
)
from shared.briefing import Briefing
from shared.names import BUCKET_COMMITMENTS, BUCKET_DECISIONS, BUCKET_KNOWLEDGE, BUCKET_RECALL, BUCKET_THREADS

_replace = msgspec.structs.replace


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def _new(keys: Iterable[str], taken: Iterable[str]) -> set[str]:
    seen = {_folded(t) for t in taken}
    return {k for k in keys if _folded(k) not in seen}


def view_threads(threads: Sequence[Thread], doc: ExtractionDoc) -> list[Thread]:
    dropped = set(doc.dropped)
    kept = [t for t in threads if t.id not in dropped]
    fresh = _new((t.title for t in doc.threads), (t.title for t in kept))
    added = [Thread(id=t.id, title=t.title, status=t.status, priority="medium", summary=t.summary, decisions=[],
                    waiting_for=None, mood="neutral", last_activity=t.at, created=t.at)
             for t in doc.threads if t.title in fresh]
    return [*kept, *added]


def view_decisions(decisions: Sequence[Decision], doc: ExtractionDoc, tz: ZoneInfo) -> list[Decision]:
    dropped = set(doc.dropped)
    kept = [d for d in decisions if d.id not in dropped]
    fresh = _new((d.what for d in doc.decisions), (d.what for d in kept))
    added = [Decision(id=d.id, what=d.what, date=d.at.astimezone(tz).date().isoformat(), why=d.why, impact="medium",
                      who=d.who, extracted_at=d.at) for d in doc.decisions if d.what in fresh]
    return [*kept, *added]


def view_commitments(commitments: Sequence[Commitment], doc: ExtractionDoc) -> list[Commitment]:
    dropped = set(doc.dropped)
    kept = [c for c in commitments if c.id not in dropped]
    fresh = _new((c.what for c in doc.commitments), (c.what for c in kept))
    added = [Commitment(id=c.id, who=c.who, what=c.what, status=c.status, created=c.at, source_event=c.source_event,
                        due=c.due) for c in doc.commitments if c.what in fresh]
    return [*kept, *added]


def view_facts(facts: Sequence[Fact], doc: ExtractionDoc) -> list[Fact]:
    dropped = set(doc.dropped)
    kept = [f for f in facts if f.id not in dropped]
    said = {_folded(f"{f.subject} {f.predicate} {f.object}") for f in kept}
    added = [Fact(id=f.id, subject=f.subject, predicate=f.predicate, object=f.object, relevance=1.0, created_at=f.at,
                  last_accessed=f.at, source="extracted-llm")
             for f in doc.facts if _folded(f"{f.subject} {f.predicate} {f.object}") not in said]
    return [*kept, *added]


def view_rules(memories: Sequence[str], doc: ExtractionDoc) -> list[str]:
    """The model's rules first (rules lead the key memories), the ones recall has not already."""
    fresh = _new((r.text for r in doc.rules), memories)
    return [*(r.text for r in doc.rules if r.text in fresh), *memories]


def model_view(doc: ExtractionDoc, briefing: Briefing) -> dict[str, Any]:
    """A briefing's documents (by bucket) as the model read the conversation: the extraction
    section's ``revise`` (``shared.briefing``), before any section is made."""
    docs, tz = briefing.docs, briefing.tz
    changes: dict[str, Any] = {}
    if isinstance(threads := docs.get(BUCKET_THREADS), ThreadsDoc):
        changes[BUCKET_THREADS] = _replace(threads, threads=view_threads(threads.threads, doc))
    if isinstance(decisions := docs.get(BUCKET_DECISIONS), DecisionsDoc):
        changes[BUCKET_DECISIONS] = _replace(decisions, decisions=view_decisions(decisions.decisions, doc, tz))
    if isinstance(commitments := docs.get(BUCKET_COMMITMENTS), CommitmentsDoc):
        changes[BUCKET_COMMITMENTS] = _replace(commitments,
                                               commitments=view_commitments(commitments.commitments, doc))
    if isinstance(knowledge := docs.get(BUCKET_KNOWLEDGE), KnowledgeDoc):
        changes[BUCKET_KNOWLEDGE] = _replace(knowledge, facts=view_facts(knowledge.facts, doc))
    elif doc.facts:
        changes[BUCKET_KNOWLEDGE] = KnowledgeDoc(updated=doc.updated, entities=[], facts=view_facts([], doc),
                                                 integrity=doc.integrity)
    if isinstance(recall := docs.get(BUCKET_RECALL), RecallDoc):
        changes[BUCKET_RECALL] = _replace(recall, key_memories=view_rules(recall.key_memories, doc))
    elif doc.rules:
        changes[BUCKET_RECALL] = RecallDoc(agent=briefing.agent, updated=doc.updated, key_memories=view_rules([], doc),
                                           memories=0, hot=0, cold=0, integrity=doc.integrity)
    return {**docs, **changes}
