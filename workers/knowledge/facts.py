"""The fact store's rules as pure functions (reference: ``src/fact-store.ts``).

A fact is a subject–predicate–object triple with a relevance in [0.1, 1.0]: new facts
start at 1.0, decay by ``rate`` per elapsed interval, and are promoted halfway to 1.0
when accessed or stated again. Every function returns new lists and new ``Fact``
values; inputs are never modified. Time is always an event time passed in.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Final, NamedTuple

import msgspec

from schemas.docs import Entity, Fact
from schemas.types import EntityType, FactSource
from workers.conversation.patterns import MatchText, prepare_text
from workers.knowledge import patterns
from workers.knowledge.extract import MAX_SCAN_CHARS, MAX_VALUE_CHARS, PRECISION, canonicalize, entity_slug
from workers.knowledge.personal import (
    DEFAULT_LANGUAGES,
    CompiledPack,
    get_personal_patterns,
    name_opens_clause,
    name_statement,
    name_verbs,
)

RELEVANCE_FLOOR = 0.1
"""Decay never goes below this: an old fact fades but stays findable (the reference's floor)."""

PROMOTION = 0.5
"""Share of the distance to 1.0 regained on access or restatement."""

_FACT_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "cortex:knowledge:fact")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Triple(NamedTuple):
    """A fact's content. ``subject`` and ``object`` are entity ids or literals."""

    subject: str
    predicate: str
    object: str


class Statement(NamedTuple):
    """A triple as read from text, before names are resolved to entity ids.

    ``object_type`` is None when the object is a literal ("sub-agent").
    """

    subject: str
    predicate: str
    object: str
    object_type: EntityType | None


def fact_id(subject: str, predicate: str, object_: str) -> str:
    """Deterministic id: the same triple is the same fact in every replay and process."""
    return str(uuid.uuid5(_FACT_NAMESPACE, "\x1f".join((subject, predicate, object_))))


def promote(relevance: float) -> float:
    """Push relevance halfway to 1.0."""
    return round(min(1.0, relevance + (1.0 - relevance) * PROMOTION), PRECISION)


def decayed(relevance: float, rate: float, steps: int) -> float:
    """Relevance after ``steps`` decay intervals, never below the floor."""
    if steps <= 0 or rate <= 0.0:
        return relevance
    return round(max(RELEVANCE_FLOOR, relevance * (1.0 - rate) ** steps), PRECISION)


def decay_steps(since: datetime | None, until: datetime, interval_hours: int) -> int:
    """Decay intervals between two event times.

    Intervals are counted as boundaries crossed on a fixed grid (multiples of the
    interval since the Unix epoch), so the count depends only on the two event times:
    two messages 23 hours apart still cross a 24-hour boundary when there is one, and
    replaying the same events crosses the same boundaries. Time never runs backwards.
    """
    if since is None:
        return 0
    interval = timedelta(hours=interval_hours)
    return max(0, (until - _EPOCH) // interval - (since - _EPOCH) // interval)


def decay_facts(facts: Iterable[Fact], rate: float, steps: int) -> list[Fact]:
    """Every fact decayed by ``steps`` intervals (the reference's ``decayFacts``)."""
    result: list[Fact] = []
    for fact in facts:
        relevance = decayed(fact.relevance, rate, steps)
        unchanged = relevance == fact.relevance
        result.append(fact if unchanged else msgspec.structs.replace(fact, relevance=relevance))
    return result


def upsert_facts(
    facts: Iterable[Fact], triples: Iterable[Triple], source: FactSource, ts: datetime
) -> list[Fact]:
    """Add new triples at relevance 1.0; a triple already known is promoted instead
    and keeps its original source and creation time."""
    by_id: dict[str, Fact] = {fact.id: fact for fact in facts}
    for triple in triples:
        key = fact_id(*triple)
        known = by_id.get(key)
        if known is None:
            by_id[key] = Fact(
                id=key,
                subject=triple.subject,
                predicate=triple.predicate,
                object=triple.object,
                relevance=1.0,
                created_at=ts,
                last_accessed=ts,
                source=source,
            )
        else:
            by_id[key] = _touched(known, ts)
    return list(by_id.values())


_ARTICLES: Final = frozenset({"a", "an", "the", "their", "some"})


def _object_key(object_: str) -> str:
    words = object_.lower().split()
    while words and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)


def restated(triples: Iterable[Triple], facts: Iterable[Fact]) -> list[Triple]:
    """``triples`` with each one that says again what a known fact of its subject says, in
    other words of the verb ("Nate is passionate about turtles" after "Nate is into turtles", "is part of the
    fire-fighting brigade" after "joined a fire-fighting brigade"), replaced by that fact: a
    restatement promotes the fact rather than adding a second one."""
    triples = list(triples)
    if not triples:
        return triples  # most messages state nothing: no index of the known facts
    known = {(fact.subject, _object_key(fact.object)): fact for fact in facts}
    out: list[Triple] = []
    for triple in triples:
        same = known.get((triple.subject, _object_key(triple.object)))
        out.append(Triple(same.subject, same.predicate, same.object) if same is not None else triple)
    return out


def access_facts(facts: Iterable[Fact], ids: Iterable[str], ts: datetime) -> list[Fact]:
    """Promote the facts with the given ids (the reference's ``getFact``)."""
    wanted = frozenset(ids)
    return [_touched(fact, ts) if fact.id in wanted else fact for fact in facts]


def _touched(fact: Fact, ts: datetime) -> Fact:
    return msgspec.structs.replace(
        fact, relevance=promote(fact.relevance), last_accessed=max(fact.last_accessed, ts)
    )


def prune_facts(facts: list[Fact], max_facts: int) -> list[Fact]:
    """Drop the least relevant facts, then the least recently accessed, beyond the cap.
    The id breaks remaining ties so the choice never depends on list order."""
    excess = len(facts) - max_facts
    if excess <= 0:
        return facts
    ranked = sorted(facts, key=lambda f: (f.relevance, f.last_accessed, f.id))
    dropped = {fact.id for fact in ranked[:excess]}
    return [fact for fact in facts if fact.id not in dropped]


def prune_entities(entities: list[Entity], max_entities: int) -> list[Entity]:
    """Drop the least important entities, then the least recently seen, beyond the cap."""
    excess = len(entities) - max_entities
    if excess <= 0:
        return entities
    ranked = sorted(entities, key=lambda e: (e.importance, e.last_seen, e.count, e.id))
    dropped = {entity.id for entity in ranked[:excess]}
    return [entity for entity in entities if entity.id not in dropped]


def query_facts(
    facts: Iterable[Fact],
    *,
    subject: str | None = None,
    predicate: str | None = None,
    object_: str | None = None,
) -> list[Fact]:
    """Facts matching every given field, most relevant first (the reference's ``query``)."""
    hits = [
        fact
        for fact in facts
        if (subject is None or fact.subject == subject)
        and (predicate is None or fact.predicate == predicate)
        and (object_ is None or fact.object == object_)
    ]
    return sorted(hits, key=lambda f: -f.relevance)


Span = tuple[int, int]


def derive_statements(text: str, packs: Sequence[CompiledPack] | None = None,
                      names: Sequence[Span] | None = None) -> list[Statement]:
    """Statements about a name that opens its clause, in order, without duplicates:
    "<Name> works at <Org or Name>" and "<Name> is a <kind>." (and their German forms), and
    the personal statements of ``packs`` ("Maria lives in Porto", "Jonas ist allergisch gegen
    Nüsse"; ``personal.name_statement``). A name inside a clause is no subject: "X for Switch
    is an awesome open-world game" says nothing of Switch; nor is praise a kind ("an awesome
    open-world game"). ``names`` are the spans of ``patterns.PROPER_NOUN`` in ``text``, when
    the caller has them (``extract_entities`` finds them anyway)."""
    head = text[:MAX_SCAN_CHARS]
    packs = get_personal_patterns(DEFAULT_LANGUAGES) if packs is None else packs
    spans = [m.span() for m in patterns.PROPER_NOUN.finditer(head)] if names is None else names
    return _name_statements(prepare_text(head), tuple(packs), spans) if spans else []


def _name_statements(text: MatchText, packs: tuple[CompiledPack, ...], names: Sequence[Span],
                     guarded: bool = True) -> list[Statement]:
    found: dict[Statement, None] = {}
    verbs = name_verbs(packs) | patterns.STATEMENT_VERBS
    for start, end in names:
        # the word after the name must be a statement's verb: a set lookup rules most names out
        if guarded and _next_word(text.lowered, end) not in verbs:
            continue
        if not name_opens_clause(text.lowered, start, packs):
            continue
        statement = _works_at(text.original, end) or _is_a(text.original, end)
        if statement is None:
            said = name_statement(text, start, end, packs)
            statement = Statement("", said[0], said[1], None) if said is not None else None
        subject = canonicalize(text.original[start:end], "unknown")
        if statement is not None and subject and len(subject) <= MAX_VALUE_CHARS:
            found[statement._replace(subject=subject)] = None
    return list(found)


def _next_word(lowered: str, end: int) -> str:
    """The word right after ``end`` past blanks (at most one short look ahead)."""
    rest = lowered[end:end + 64].lstrip()
    return rest.split(maxsplit=1)[0] if rest else ""


def _works_at(text: str, pos: int) -> Statement | None:
    verb = patterns.WORKS_AT_TAIL.match(text, pos)
    if verb is None:
        return None
    employer = patterns.EMPLOYER.match(text, verb.end())
    if employer is None:
        return None
    object_type: EntityType = "organization" if employer.group("org") else "unknown"
    value = canonicalize(employer.group(), object_type)
    if not value or len(value) > MAX_VALUE_CHARS:
        return None
    return Statement("", "works-at", value, object_type)


def _is_a(text: str, pos: int) -> Statement | None:
    tail = patterns.IS_A_TAIL.match(text, pos)
    if tail is None or patterns.PRAISE.match(kind := tail.group("kind").lower()) or patterns.VIEWED.search(kind):
        return None
    return Statement("", "is-a", tail.group("kind"), None)


def reference_index(entities: Iterable[Entity]) -> dict[str, str]:
    """Entity id by slug, for turning a name in a triple into an entity id.

    The first entity with a slug wins, except that a typed entity replaces an
    ``unknown`` one: "Claude" resolves to ``person:claude`` once the LLM has typed it.
    """
    index: dict[str, str] = {}
    for entity in entities:
        slug = entity_slug(entity.value)
        current = index.get(slug)
        if current is None or (current.startswith("unknown:") and entity.type != "unknown"):
            index[slug] = entity.id
    return index


def resolve_statement(statement: Statement, index: Mapping[str, str]) -> Triple:
    """The statement with its names replaced by entity ids."""
    subject = index.get(entity_slug(statement.subject), f"unknown:{entity_slug(statement.subject)}")
    if statement.object_type is None:
        return Triple(subject, statement.predicate, statement.object)
    slug = entity_slug(statement.object)
    if statement.object_type == "organization":
        # A legal suffix makes the type certain; an index hit of another type must not win.
        return Triple(subject, statement.predicate, f"organization:{slug}")
    return Triple(subject, statement.predicate, index.get(slug, f"{statement.object_type}:{slug}"))
