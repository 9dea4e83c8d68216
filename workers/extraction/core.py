"""The extraction document's pure core: the session window, and the model's readings merged.

A model item is dated by the message the model says it was said in (``Said``: the window's
ids and times; an id not in the window, or none, dates it at the trigger that read it).
A model item's id is a digest of what it says (``m`` + sha256 of its kind and its key text,
case and spacing folded), so the same thread found again in a later window updates the one
already there (its status, its summary) instead of adding a second. Each list is capped, the
oldest first out; the window keeps the last ``WINDOW_MAX`` messages of the session not read yet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final, Protocol, TypeVar

import msgspec

from schemas.docs import (
    ExtractionDoc,
    Integrity,
    ModelCommitment,
    ModelDecision,
    ModelFact,
    ModelRule,
    ModelThread,
    WindowMessage,
)
from schemas.events import MessageEvent
from workers.extraction.model import (
    FACT_CHARS,
    MESSAGE_CHARS,
    TEXT_CHARS,
    TITLE_CHARS,
    WHO_CHARS,
    Reading,
    cut,
    due_date,
)

WINDOW_MAX: Final = 100  # messages of a session window kept until a trigger reads them
CAPS: Final = {"threads": 50, "decisions": 100, "commitments": 100, "facts": 200, "rules": 50, "dropped": 500}

Said = Mapping[str, datetime]  # a window's message ids and their times
_replace = msgspec.structs.replace


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


T = TypeVar("T", bound=_Identified)


def model_id(kind: str, *key: str) -> str:
    folded = "\0".join(" ".join(k.casefold().split()) for k in key)
    return "m" + hashlib.sha256(f"{kind}\0{folded}".encode()).hexdigest()[:15]


def with_message(doc: ExtractionDoc | None, event: MessageEvent, now: datetime) -> ExtractionDoc:
    """The document with ``event`` at the end of the window (the oldest out past ``WINDOW_MAX``)."""
    message = WindowMessage(id=event.id, role=event.role, text=event.content[:MESSAGE_CHARS], ts=event.ts,
                            sender=event.sender or "")
    if doc is None:
        return ExtractionDoc(updated=now, integrity=Integrity(), window=[message])
    return _replace(doc, updated=now, window=[*doc.window, message][-WINDOW_MAX:])


def _upsert(items: Sequence[T], new: Sequence[T], cap: int) -> list[T]:
    """``new`` over ``items`` by id (a found-again item moves to the end: the newest), capped."""
    fresh = {item.id: item for item in new}
    kept = [item for item in items if item.id not in fresh]
    return [*kept, *fresh.values()][-cap:]


def _threads(reading: Reading, at: datetime, said: Said) -> list[ModelThread]:
    return [ModelThread(id=model_id("thread", t.title), title=cut(t.title, TITLE_CHARS), at=said.get(t.message, at),
                        summary=cut(t.summary, TEXT_CHARS), status=t.status) for t in reading.threads]


def _decisions(reading: Reading, at: datetime, said: Said) -> list[ModelDecision]:
    return [ModelDecision(id=model_id("decision", d.what), what=cut(d.what, TEXT_CHARS), at=said.get(d.message, at),
                          why=cut(d.why, TEXT_CHARS), who=cut(d.who, WHO_CHARS)) for d in reading.decisions]


def _commitments(reading: Reading, at: datetime, source_event: str, said: Said) -> list[ModelCommitment]:
    return [ModelCommitment(id=model_id("commitment", c.who, c.what), who=cut(c.who, WHO_CHARS),
                            what=cut(c.what, TEXT_CHARS), at=said.get(c.message, at),
                            source_event=c.message if c.message in said else source_event, due=due_date(c.due))
            for c in reading.commitments]


def _facts(reading: Reading, at: datetime, said: Said) -> list[ModelFact]:
    return [ModelFact(id=model_id("fact", f.subject, f.predicate, f.object), subject=cut(f.subject, FACT_CHARS),
                      predicate=cut(f.predicate, FACT_CHARS), object=cut(f.object, FACT_CHARS),
                      at=said.get(f.message, at)) for f in reading.facts]


def _rules(reading: Reading, at: datetime, said: Said) -> list[ModelRule]:
    return [ModelRule(id=model_id("rule", r.text), text=cut(r.text, TEXT_CHARS), at=said.get(r.message, at))
            for r in reading.rules]


def merge_reading(doc: ExtractionDoc, reading: Reading, at: datetime, source_event: str,
                  said: Said | None = None) -> ExtractionDoc:
    """The document with one answer merged: its items added or updated (each dated by its
    message in ``said``, else ``at``), its wrong ids dropped."""
    said = said or {}
    return _replace(
        doc,
        threads=_upsert(doc.threads, _threads(reading, at, said), CAPS["threads"]),
        decisions=_upsert(doc.decisions, _decisions(reading, at, said), CAPS["decisions"]),
        commitments=_upsert(doc.commitments, _commitments(reading, at, source_event, said), CAPS["commitments"]),
        facts=_upsert(doc.facts, _facts(reading, at, said), CAPS["facts"]),
        rules=_upsert(doc.rules, _rules(reading, at, said), CAPS["rules"]),
        dropped=list(dict.fromkeys([*doc.dropped, *reading.wrong]))[-CAPS["dropped"]:],
    )


def said_in(messages: Sequence[WindowMessage]) -> dict[str, datetime]:
    return {m.id: m.ts for m in messages}


def read_window(doc: ExtractionDoc, readings: Sequence[Reading | None], at: datetime) -> ExtractionDoc:
    """The document after a trigger: each chunk's reading merged in order (None: the model gave
    none — unreachable, refused, over budget — and the patterns' items stand), the window empty."""
    source_event = doc.window[-1].id if doc.window else ""
    said = said_in(doc.window)
    for reading in readings:
        if reading is not None:
            doc = merge_reading(doc, reading, at, source_event, said)
    return _replace(doc, updated=at, window=[])
