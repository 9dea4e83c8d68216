"""The sections of an agent's briefing (BOOTSTRAP): what a worker declares to put one there.

A worker whose documents belong in the briefing declares its sections on its spec
(``WorkerSpec.briefing``); the boot worker reads every declared section's document as of
each trigger — waited for, its lag reported, like any composed source (``Source``) — and
keeps only the frame: the header and state, each section's budget, the order, the
throttle, the completion and the file sink. Nothing in boot names a section.

A section is made by its worker's code, in its worker's folder, from

* its own document (``bucket``, ``doc_type``, read by ``as_of``), and any other section's
  document it reads (``reads``, by bucket: the narrative's wording of threads, say), all in
  one ``Briefing`` — what the briefing is about (the agent, the trigger's time, the knobs);
* what the sections made before it said (``Said``), so that each fact is said once: a
  decision Recent Decisions shows is not repeated in a thread's summary, a rule a promise
  already states is not listed again. A section ``hears`` kinds of ``Said`` and ``says``
  others; the briefing renders a section after every section that says what it hears
  (``render_order``), and places it by ``order`` in the document (``placed``);
* its budget: ``chars`` at the design size (16000 characters), scaled with the limit.

A section whose document exists only when there is something to tell (a snapshot at a
compaction, the pending operations of an agent that ran tools) is ``only_when_relevant``:
an agent without that document has no gap, no "no data yet" line. A section tells boot's
state line what it reads of its document (``mood``, ``ages``, ``follows_messages``), and
brings its own knobs (``knobs``: how many threads, how old a snapshot), read from
``CORTEX_BOOT_<KNOB>`` as the plugin design names them.

Everything a section does is pure — the documents in, the section out — so a replay makes
the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from zoneinfo import ZoneInfo

import msgspec

from schemas.types import FeedbackKind, Mood
from shared.footprint import AsOf, Source

if TYPE_CHECKING:
    from shared.config import Settings

T = TypeVar("T")
D = TypeVar("D")
K = TypeVar("K", bound=msgspec.Struct)

# Kinds of what a section says, for the sections rendered after it (``Said``).
SENTENCES = "sentences"  # every summary, wait, decision, reason and promise shown: said once
DECISIONS = "decisions"  # the decisions shown (or reversed by a later one), by their raw "what"
THREAD_TITLES = "thread_titles"  # the threads a narrative's Open block need not list, by raw title
FACTS = "facts"  # the fact sentences Known Facts shows
OPERATIONS = "operations"  # the ids of the operations Pending Operations lists whole


@dataclass(frozen=True)
class Said:
    """What the sections rendered so far said, by kind (``SENTENCES``, ``DECISIONS``, …)."""

    notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def of(self, kind: str) -> tuple[str, ...]:
        return self.notes.get(kind, ())

    def plus(self, notes: Mapping[str, Sequence[str]]) -> Said:
        merged = dict(self.notes)
        for kind, items in notes.items():
            merged[kind] = (*merged.get(kind, ()), *items)
        return Said(merged)


@dataclass(frozen=True)
class Briefing:
    """What one briefing is made from: the agent, the trigger's event time (never the wall
    clock), every section's document as of the trigger, by bucket (absent: not there), and
    the sections' knobs. ``person``: a briefing for one of the people the agent talks with."""

    agent: str
    now: datetime
    tz: ZoneInfo
    docs: Mapping[str, Any]
    person: str | None = None
    knobs: Mapping[type[Any], Any] = field(default_factory=dict)  # the sections' knobs, by type

    def doc(self, bucket: str, doc_type: type[D]) -> D | None:
        """The document of ``bucket``, when there is one of that type."""
        doc = self.docs.get(bucket)
        return doc if isinstance(doc, doc_type) else None

    def knob(self, knobs: type[K]) -> K:
        """A section's knobs (``BriefingSection.knobs``): as the environment sets them, else
        their defaults."""
        found = self.knobs.get(knobs)
        return found if isinstance(found, knobs) else knobs()


@dataclass(frozen=True)
class Rendered:
    """A section's text ("" for none), what it says for the sections after it, and its part
    of the footer's count ("2 active threads"; "" for none)."""

    text: str
    says: Mapping[str, Sequence[str]] = field(default_factory=dict)
    footer: str = ""


@dataclass(frozen=True)
class Seen(Generic[T]):
    """What a briefing shows of a section's document is seen: a ``kind`` feedback event
    names the ids ``ids`` finds in the briefing's markdown. ``given``: published for the
    briefings given to the agent (a session's start, a compaction), with an id from the
    trigger (``<tag>:<agent>:<seq>``, so a redelivery publishes it once); else for the
    briefings asked for (``cortex.api.boot``), stamped with ``stamp`` of the document."""

    kind: FeedbackKind
    ids: Callable[[T, str, ZoneInfo], list[str]]
    given: bool = False
    tag: str = ""
    stamp: Callable[[T], datetime] | None = None


Compose = Callable[[Briefing, Said, int], Rendered]


def _no_lines(doc: Any) -> Sequence[str]:
    return ()


@dataclass(frozen=True)
class BriefingSection(Generic[T]):
    """A section of the agent's briefing made from one of the worker's documents.

    The simple form: ``render`` makes the section's lines of the document (each kept whole
    or not at all within the budget; none: no section, no heading) under ``## title``. A
    section that sees the others ``compose``\\s instead: the whole ``Briefing``, what the
    sections before it said (``Said``) and its budget in, its text and what it says out.

    ``order`` places it in the document (the shipped sections: snapshot 100, narrative 200,
    threads 300, pending operations 400, lessons 500, decisions 600, commitments 700,
    facts 800, other channels 900, rules and key memories 1000; the header and state come
    first, the footer last); sections of one order by worker name. ``chars`` is its budget
    at the design size, scaled with the briefing's limit like every other section's.

    ``revise`` changes the other documents before any section is made (the extraction's
    model reading: what the model found beyond the patterns); ``view`` is the document as of
    the briefing's time (operations pending too long are orphaned at the trigger);
    ``seen`` says what a briefing showed of it (``Seen``).
    """

    title: str  # the heading, without its "## " (a composed section writes its own)
    bucket: str  # one of the worker's buckets
    doc_type: type[T]
    render: Callable[[T], Sequence[str]] = _no_lines
    chars: int = 600
    order: int = 1050
    as_of: AsOf = "before"
    name: str = ""  # what ``hears``/``says`` and the docs call it; the worker's name when empty
    compose: Compose | None = None
    reads: tuple[str, ...] = ()  # other sections' buckets its ``compose`` reads
    hears: tuple[str, ...] = ()
    says: tuple[str, ...] = ()
    only_when_relevant: bool = True
    # its document says the agent's conversations reached Cortex (the state's "nothing yet" and
    # "no data at all" lines count it); recall's does not: a rule kept with ``cortex remember``
    # is no conversation
    conversation_data: bool = True
    # its document changes with the agent's messages (threads, decisions, commitments, facts,
    # channels): the state's age line measures how far behind them ``ages`` is
    follows_messages: bool = False
    # the state line's reading of its document: the mood of the agent's last session (the
    # threads'), and what the age line calls it when it falls behind the messages ("Thread data")
    mood: Callable[[T], Mood] | None = None
    ages: str = ""
    # its own knobs, read from ``CORTEX_BOOT_<KNOB>`` (``Settings.briefing_knobs``: the plugin
    # design's names) and handed to its ``compose`` in the ``Briefing`` (``Briefing.knob``)
    knobs: type[msgspec.Struct] | None = None
    revise: Callable[[T, Briefing], dict[str, Any]] | None = None
    view: Callable[[T, datetime, Settings], T] | None = None
    seen: Seen[T] | None = None

    def source(self, worker: str) -> Source:
        """The composed input a briefing reads it as (its field: its bucket)."""
        return Source(self.bucket, worker, self.bucket, self.doc_type, self.as_of)

    def named(self, worker: str) -> BriefingSection[T]:
        return self if self.name else replace(self, name=worker)


def render_order(sections: Sequence[BriefingSection[Any]]) -> list[BriefingSection[Any]]:
    """``sections`` (in placement order) in the order they are made: each after every section
    that says a kind it hears, else in placement order. A kind no section says is heard as
    nothing; sections that hear each other are an error of the declarations."""
    pending = list(sections)
    made: list[BriefingSection[Any]] = []
    while pending:
        ready = next((s for s in pending
                      if not set(s.hears) & {kind for o in pending if o is not s for kind in o.says}), None)
        if ready is None:
            raise ValueError(f"briefing sections hear each other: {[s.name for s in pending]}")
        made.append(ready)
        pending.remove(ready)
    return made


def placed(sections: Iterable[tuple[str, BriefingSection[Any]]]) -> list[BriefingSection[Any]]:
    """Every worker's sections (worker → section), named, in the document's order."""
    named = [(s.order, s.named(w).name, s.named(w)) for w, s in sections]
    return [s for _, _, s in sorted(named, key=lambda e: (e[0], e[1]))]
