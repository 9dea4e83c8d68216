"""Splitting a KnowledgeDoc over several KV values (contract: no value exceeds 512 KiB;
a store that could grow past that splits into keys ``agent.<part>``).

Each part is itself a complete ``KnowledgeDoc`` (same ``updated`` and ``integrity``)
holding a run of the entities and then the facts, so every value is self-describing
and decodes with the ordinary decoder. Keys are relative to the agent: ``""`` is the
head (key ``agent``), ``"part1"``, ``"part2"`` … follow (keys ``agent.part1`` …).
The writer deletes any ``agent.partN`` beyond the keys it wrote; the reader stops at
the first missing part.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec

from schemas.docs import Entity, Fact, KnowledgeDoc

MAX_VALUE_BYTES: Final = 512 * 1024

_ENCODER: Final = msgspec.json.Encoder()
_DECODER: Final = msgspec.json.Decoder(KnowledgeDoc)


def part_key(index: int) -> str:
    return "" if index == 0 else f"part{index}"


class _Part:
    def __init__(self) -> None:
        self.entities: list[Entity] = []
        self.facts: list[Fact] = []
        self.used = 0


def split_doc(doc: KnowledgeDoc, max_bytes: int = MAX_VALUE_BYTES) -> dict[str, bytes]:
    """Encode ``doc`` into values of at most ``max_bytes``, packing entities then facts
    greedily in list order. A doc that fits is one value, byte-identical to
    ``msgspec.json.encode(doc)``. Raises ValueError if one item cannot fit at all."""
    whole = _ENCODER.encode(doc)
    if len(whole) <= max_bytes:
        return {"": whole}
    budget = max_bytes - len(_ENCODER.encode(msgspec.structs.replace(doc, entities=[], facts=[])))
    parts = [_Part()]
    for entity in doc.entities:
        _room(parts, _size(entity, budget), budget, len(parts[-1].entities)).entities.append(entity)
    for fact in doc.facts:
        _room(parts, _size(fact, budget), budget, len(parts[-1].facts)).facts.append(fact)
    return {
        part_key(i): _ENCODER.encode(msgspec.structs.replace(doc, entities=part.entities, facts=part.facts))
        for i, part in enumerate(parts)
    }


def _size(item: Entity | Fact, budget: int) -> int:
    size = len(_ENCODER.encode(item))
    if size > budget:
        kind = type(item).__name__
        raise ValueError(f"one {kind} encodes to {size} bytes, over the part budget of {budget}")
    return size


def _room(parts: list[_Part], size: int, budget: int, siblings: int) -> _Part:
    """The part that takes the next item: the last one, or a new one when it is full.
    An item after the first in its list also costs its separating comma."""
    part = parts[-1]
    cost = size + (1 if siblings else 0)
    if part.used + cost > budget:
        part = _Part()
        parts.append(part)
        cost = size
    part.used += cost
    return part


def join_parts(parts: Mapping[str, bytes]) -> KnowledgeDoc:
    """The document back from the values ``split_doc`` produced (head key ``""``)."""
    head = _DECODER.decode(parts[""])
    entities, facts = list(head.entities), list(head.facts)
    index = 1
    while (raw := parts.get(part_key(index))) is not None:
        part = _DECODER.decode(raw)
        entities.extend(part.entities)
        facts.extend(part.facts)
        index += 1
    return msgspec.structs.replace(head, entities=entities, facts=facts)
