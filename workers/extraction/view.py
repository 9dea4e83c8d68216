"""The patterns' items as a model read them (pure): without the ones it judged wrong, with
the ones it found that the patterns missed — what the briefing shows when an extraction
document exists (only with a model configured). The pattern documents stay as they are.

A model item that says what a pattern item says (the same title, decision, task or fact,
case and spacing folded) is not shown twice: the pattern item stands.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from zoneinfo import ZoneInfo

import msgspec

from schemas.docs import Commitment, Decision, ExtractionDoc, Fact, KnowledgeDoc, Thread
from workers.boot.inputs import BootInputs

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


def extraction_of(inputs: BootInputs) -> ExtractionDoc | None:
    """The extraction document among a briefing's declared documents (``WorkerSpec.briefing``)."""
    return next((b.doc for b in inputs.briefings if isinstance(b.doc, ExtractionDoc)), None)


def model_view(inputs: BootInputs, tz: ZoneInfo) -> BootInputs:
    """A briefing's inputs as the model read the conversation (none read: as they are)."""
    doc = extraction_of(inputs)
    if doc is None:
        return inputs
    changes: dict[str, object] = {"key_memories": view_rules(inputs.key_memories, doc)}
    if inputs.threads is not None:
        changes["threads"] = _replace(inputs.threads, threads=view_threads(inputs.threads.threads, doc))
    if inputs.decisions is not None:
        changes["decisions"] = _replace(inputs.decisions, decisions=view_decisions(inputs.decisions.decisions, doc, tz))
    if inputs.commitments is not None:
        changes["commitments"] = _replace(inputs.commitments,
                                          commitments=view_commitments(inputs.commitments.commitments, doc))
    if inputs.knowledge is not None:
        changes["knowledge"] = _replace(inputs.knowledge, facts=view_facts(inputs.knowledge.facts, doc))
    elif doc.facts:
        changes["knowledge"] = KnowledgeDoc(updated=doc.updated, entities=[], facts=view_facts([], doc),
                                            integrity=doc.integrity)
    return _replace(inputs, **changes)


def render_nothing(doc: ExtractionDoc) -> list[str]:
    """The extraction's own briefing section: none — its document is merged into the work
    sections (``model_view``); it is declared as a section so that the briefing reads it as of
    each trigger, waited for like any source."""
    return []
