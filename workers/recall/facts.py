"""The knowledge worker's facts as recall memories: searchable by meaning (pure functions).

The knowledge-engine design syncs facts to a vector store as sentences ("Atlas is a
sub-agent."), the fact id kept with the vector. Here each fact of the agent's
KnowledgeDoc, read as of a session start, is mirrored as a memory of type ``fact``:

* its id is uuid5 of the agent and ``fact:<fact id>``, its ``fact_id`` the fact's id and
  its ``source_event`` ``fact:<fact id>`` (a fact comes from many events, not one);
* its text names the entities by their values: "Maria works at Acme Corp";
* its confidence is the fact's relevance, its times the fact's (created, last accessed:
  the later of the fact's and the memory's own hits);
* only the ``MAX_FACT_MEMORIES`` most relevant facts are mirrored (relevance, then the
  most recently accessed, then the id); a fact pruned or past the cap leaves recall;
* the clear contradiction among facts, without a model: a newer fact with the same subject
  and a *functional* predicate (one value at a time: works-at, lives-in, reports-to, …)
  and another object supersedes the older one's memory ("Maria works at Globex" over
  "Maria works at Acme"). Newer is by creation time: restating an old triple promotes it
  in the knowledge document but does not make it current again here.

Mirrors belong to their facts: they are never consolidated, captured memories never fold
into them, and claims and Claude's judgement leave them alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import msgspec

from schemas.docs import Fact, KnowledgeDoc
from workers.recall.models import Memory, memory_id
from workers.render import entity_names, fact_sentence

MAX_FACT_MEMORIES = 1000
FUNCTIONAL_PREDICATES = frozenset({
    "works-at", "works-for", "employed-by", "lives-in", "located-in", "based-in", "reports-to", "managed-by",
    "married-to", "moved-to", "role", "has-role", "title", "job-title", "position", "status", "deadline", "due",
    "due-on", "scheduled-for", "version", "current-version", "arbeitet-bei", "wohnt-in",
})


def fact_text(fact: Fact, names: Mapping[str, str]) -> str:
    """The fact as a sentence (``render.fact_sentence``): entity values for ids."""
    subject, obj = names.get(fact.subject, fact.subject), names.get(fact.object, fact.object)
    return fact_sentence(subject, fact.predicate, obj)


def mirrored(facts: Iterable[Fact]) -> list[Fact]:
    """The facts that get a memory: the most relevant, at most MAX_FACT_MEMORIES."""
    ranked = sorted(facts, key=lambda f: (-f.relevance, -f.last_accessed.timestamp(), f.id))
    return ranked[:MAX_FACT_MEMORIES]


def _successors(facts: Sequence[Fact]) -> dict[str, tuple[str | None, str | None]]:
    """fact id -> (the newer fact superseding it, the older fact it supersedes)."""
    groups: dict[tuple[str, str], list[Fact]] = {}
    for fact in facts:
        if fact.predicate in FUNCTIONAL_PREDICATES:
            groups.setdefault((fact.subject, fact.predicate), []).append(fact)
    out: dict[str, tuple[str | None, str | None]] = {}
    for group in groups.values():
        group.sort(key=lambda f: (f.created_at, f.id))
        newest = group[-1]
        for fact in group[:-1]:
            out[fact.id] = (newest.id, None)
        if len(group) > 1:
            out[newest.id] = (None, group[-2].id)
    return out


def fact_memories(agent: str, doc: KnowledgeDoc | None) -> list[Memory]:
    """The memories the agent's facts should be, without store-side state (hits, tier,
    sequences: :func:`settle` adds those)."""
    if doc is None:
        return []
    names = entity_names(doc.entities)
    facts = mirrored(doc.facts)
    links = _successors(facts)
    created = {fact.id: fact.created_at for fact in facts}
    out = []
    for fact in facts:
        newer, older = links.get(fact.id, (None, None))
        out.append(Memory(
            id=fact_memory_id(agent, fact.id), agent=agent, content=fact_text(fact, names), type="fact",
            scope="permanent", confidence=fact.relevance, source_event=f"fact:{fact.id}", created_at=fact.created_at,
            last_accessed=fact.last_accessed, fact_id=fact.id,
            superseded_by=fact_memory_id(agent, newer) if newer else None,
            superseded_at=created[newer] if newer else None,
            supersedes_id=fact_memory_id(agent, older) if older else None))
    return out


def fact_memory_id(agent: str, fact_id: str) -> str:
    return memory_id(agent, f"fact:{fact_id}", 0)


class FactSync(msgspec.Struct, frozen=True, kw_only=True):
    """What to write: new memories (to embed), changed payloads, ids to delete."""

    new: tuple[Memory, ...] = ()
    changed: tuple[Memory, ...] = ()
    removed: tuple[str, ...] = ()


def settle(desired: Sequence[Memory], existing: Sequence[Memory], seq: int) -> FactSync:
    """The mirror as it should be after a sync at stream sequence ``seq``: what the store
    keeps of a memory (its hits, tier, pin, first sequence) stays; a memory whose text
    changed (an entity's value did) is embedded again as new."""
    have = {m.id: m for m in existing if m.fact_id is not None}
    new, changed = [], []
    for memory in desired:
        old = have.get(memory.id)
        if old is None or old.content != memory.content:
            new.append(msgspec.structs.replace(
                memory, first_seq=old.first_seq if old else seq, last_seq=seq,
                access_count=old.access_count if old else 0, pinned=old.pinned if old else False,
                last_accessed=max(memory.last_accessed, old.last_accessed) if old else memory.last_accessed))
            continue
        kept = msgspec.structs.replace(memory, access_count=old.access_count, pinned=old.pinned, tier=old.tier,
                                       first_seq=old.first_seq, last_seq=old.last_seq,
                                       last_accessed=max(memory.last_accessed, old.last_accessed))
        if kept != old:
            changed.append(msgspec.structs.replace(kept, last_seq=max(old.last_seq, seq)))
    wanted = {m.id for m in desired}
    removed = sorted(i for i in have if i not in wanted)
    return FactSync(new=tuple(new), changed=tuple(changed), removed=tuple(removed))
