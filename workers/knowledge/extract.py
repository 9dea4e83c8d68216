"""Regex entity extraction and entity merging (reference: ``src/entity-extractor.ts``).

Pure functions: the time an entity was seen is the event's ``ts``, passed in.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from datetime import datetime

import msgspec

from schemas.docs import Entity
from schemas.types import EntityType
from workers.knowledge import patterns

MAX_MENTIONS = 20
"""Distinct surface forms kept per entity; the first ones seen win, so replay is stable."""

MAX_VALUE_CHARS = 256
"""Longer matches (a pasted 10 KB URL, a run of capitalised words) are noise, not entities."""

MAX_SCAN_CHARS = 8194
"""At most this much of a text is scanned: regex cost stays bounded per event however
large the content (up to the contract's 64 KiB). The worker passes the same head-and-tail
view the conversation patterns read (``conversation.patterns.scan_view``, which is at most
this long); the LLM path still sees the whole message."""

PRECISION = 6
"""Scores are rounded so the encoded document is byte-identical on every platform."""

_IMPORTANCE: dict[str, float] = {
    "organization": 0.8,
    "person": 0.7,
    "product": 0.6,
    "location": 0.5,
    "date": 0.4,
    "email": 0.4,
    "url": 0.4,
}


def canonicalize(value: str, entity_type: EntityType) -> str:
    """The canonical value: legal suffix dropped for organisations, else one trailing
    punctuation mark ("Acme GmbH" → "Acme", "Atlas." → "Atlas")."""
    if entity_type == "organization":
        return patterns.ORG_SUFFIX_TRAILER.sub("", value).strip()
    return patterns.TRAILING_PUNCT.sub("", value).strip()


def entity_slug(canonical: str) -> str:
    """The id part after the type: lower case, whitespace runs as ``-``."""
    return patterns.WHITESPACE.sub("-", canonical.lower())


def entity_id(entity_type: str, canonical: str) -> str:
    """``organization:acme``, ``unknown:claude-keller``."""
    return f"{entity_type}:{entity_slug(canonical)}"


def initial_importance(entity_type: str, value: str) -> float:
    """Importance by type; an untyped name counts more when it has several words."""
    known = _IMPORTANCE.get(entity_type)
    if known is not None:
        return known
    return 0.5 if len(patterns.WORD_SPLIT.split(value)) > 1 else 0.3


def extract_entities(text: str, ts: datetime, names: list[tuple[int, int]] | None = None) -> list[Entity]:
    """Entities found by the regex patterns in ``text``, in order of first appearance
    per pattern, each counted once per occurrence. ``names``, when given, receives the span
    of every proper-noun match (a statement's subject is one: ``facts.derive_statements``
    reads them without scanning again)."""
    head = text[:MAX_SCAN_CHARS]
    found: dict[str, Entity] = {}
    for name, pattern, entity_type in _scans(head):
        proper, products = name == "proper_noun", name == "product_name"
        for match in pattern.finditer(head):
            if names is not None and proper:
                names.append(match.span())
            mention = match.group().strip()
            if proper and _lone_opener(head, match.start(), mention):
                continue
            if products and _quantity(mention):
                continue
            _record(found, mention, entity_type, ts)
    return list(found.values())


def _lone_opener(text: str, start: int, mention: str) -> bool:
    """A praise word alone at the start of a sentence ("Great work", "Nice momentum"):
    capitalised for its place, not a name (``patterns.SOLO_OPENERS``)."""
    if mention not in patterns.SOLO_OPENERS:
        return False
    before = text[max(0, start - 64):start].rstrip()
    return not before or not (before[-1].isalnum() or before[-1] in ",;&/-")


def _quantity(mention: str) -> bool:
    """A number after a word of quantity ("for 3", "was 10"): no product and its version."""
    first = patterns.WORD_SPLIT.split(mention, maxsplit=1)[0]
    return first.lower() in patterns.QUANTITY_WORDS


def _scans(text: str) -> list[tuple[str, re.Pattern[str], EntityType]]:
    """The patterns worth running on ``text``: not one whose every match contains what
    ``text`` lacks — an e-mail an ``@``, a URL ``://``, a date digits, an organisation its
    legal suffix, a product a version's digits or a Roman numeral (``patterns.PRODUCT_HINT``).
    Results are unchanged; most messages skip seven of the nine scans. Decided once per text
    (one look for each kind of evidence, not a call per pattern)."""
    digit = patterns.DIGIT.search(text) is not None
    runs = {"email": "@" in text, "url": "://" in text, "date": digit, "proper_noun": True,
            "organization_suffix": patterns.ORG_SUFFIX_HINT.search(text) is not None,
            "product_name": digit or patterns.PRODUCT_HINT.search(text) is not None}
    return [scan for scan, gate in zip(patterns.ENTITY_PATTERNS, _GATES, strict=True) if runs[gate]]


# each pattern's gate in ``_scans``: its own name, or "date" for the four date patterns
_GATES = tuple("date" if name.endswith("date") else name for name, _, _ in patterns.ENTITY_PATTERNS)


@functools.lru_cache(maxsize=8192)
def _identity(mention: str, entity_type: EntityType) -> tuple[str, str, float]:
    """A mention's canonical value, entity id and initial importance (the same names come
    up message after message: computed once each)."""
    canonical = canonicalize(mention, entity_type)
    return canonical, entity_id(entity_type, canonical), initial_importance(entity_type, mention)


def _record(found: dict[str, Entity], mention: str, entity_type: EntityType, ts: datetime) -> None:
    if not mention or len(mention) > MAX_VALUE_CHARS:
        return
    canonical, key, importance = _identity(mention, entity_type)
    if not canonical:
        return
    entity = found.get(key)
    if entity is None:
        found[key] = Entity(
            id=key,
            type=entity_type,
            value=canonical,
            mentions=[mention],
            count=1,
            importance=importance,
            last_seen=ts,
            source=["regex"],
        )
        return
    # Entities in ``found`` were created here, so updating them in place is safe.
    entity.count += 1
    if mention not in entity.mentions and len(entity.mentions) < MAX_MENTIONS:
        entity.mentions.append(mention)


def merge_entities(existing: Iterable[Entity], incoming: Iterable[Entity]) -> list[Entity]:
    """Merge two entity lists by id without modifying either.

    Counts add, importance takes the maximum, mentions and sources are unioned (mentions
    capped at ``MAX_MENTIONS``), ``last_seen`` takes the later time. Order: ``existing``
    first, then new ids in ``incoming`` order.
    """
    merged: dict[str, Entity] = {entity.id: entity for entity in existing}
    for entity in incoming:
        current = merged.get(entity.id)
        merged[entity.id] = entity if current is None else combine_entities(current, entity)
    return list(merged.values())


def combine_entities(current: Entity, other: Entity) -> Entity:
    """One entity seen twice: ``current`` keeps its id, type and value. Lists that do not
    change are shared with ``current``, not copied (a document's lists are never mutated;
    most messages name an entity again as it was named before)."""
    mentions = current.mentions
    if len(mentions) < MAX_MENTIONS and not all(m in mentions for m in other.mentions):
        mentions = union_capped(mentions, other.mentions, MAX_MENTIONS)
    source = current.source if other.source == current.source else sorted({*current.source, *other.source})
    return msgspec.structs.replace(
        current,
        count=current.count + other.count,
        importance=round(max(current.importance, other.importance), PRECISION),
        mentions=mentions,
        source=source,
        last_seen=max(current.last_seen, other.last_seen),
    )


def union_capped(first: list[str], second: list[str], cap: int) -> list[str]:
    """Ordered union of two lists, at most ``cap`` items (a new list)."""
    return list(dict.fromkeys([*first, *second]))[:cap]
