"""Consolidation: near-duplicate memories folded into one survivor (pure functions).

The semantic-memory design's lifecycle manager merges near-duplicate ``permanent``
memories whose cosine exceeds 0.92, keeping the more confident one (reference:
``internal/lifecycle`` ``consolidate``). Case for case here:

* scope ``permanent`` — and, further, ``project`` within one project (a project's
  memories are as durable; two projects' are never merged); ``session`` and ``ttl``
  memories expire on their own, as in the reference;
* cosine at or above ``dedup_threshold`` (0.92; the reference's ``>`` differs only at
  exactly 0.92, and capture's dedup has always used ``>=``);
* the survivor is the more confident memory — further: a pinned memory first (it is never
  folded away), then, at equal confidence, the oldest, then the id, so the choice never
  depends on the order the store lists memories in;
* further: statements of any type meet — a procedure "Remember: always run the
  migrations before the deploy" and a rule "Always run the migrations before deploying"
  are one (issue 41) — but an episode stays among episodes (a turn "Alice: never deploy on
  Fridays" and the rule captured from it stay apart), the survivor keeps the provenance of what it
  absorbed (ids and source events, :func:`merge_duplicate`) and the hits add up, where
  the reference deleted the other memory outright;
* further: a message's own turn memory is a record of what was said, not a statement, so
  turns fold only into a repeat from the same sender — the same words in some form, less
  courtesies ("Thanks!" / "Thank you so much!", :func:`paraphrase_key`), nothing said otherwise
  (``distinct``); a turn of function words only by its exact text (case, punctuation and
  spacing set aside): a hundred "Thanks!" become one memory that
  remembers every event; context and reply windows overlap by construction and are never
  merged; a knowledge fact's mirror (``fact_id``) follows its fact and a superseded memory
  is history, so neither takes part, and two memories whose claims
  conflict (``workers.recall.conflicts``: "… is Tuesday" / "… is Thursday") are never
  merged however close their vectors;
* further: two statements that differ in a number, name, address or date, or that replace
  a word of one another ("Server alpha …" / "Server beta …", ``workers.recall.distinct``),
  are never merged either (:func:`may_fold`): templated facts are near-duplicates to an
  embedder, and folding them lost 450 of 500 remembered facts (issue 44). A memory folds
  into the most similar kept one it may fold into.

Everything here is a pure function of the memories (and their vectors): the worker runs it
at a session start in event time, so a replay makes the same merges.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime

import msgspec
import numpy as np
import numpy.typing as npt

from workers.recall.capture import is_context_memory, is_turn_memory
from workers.recall.conflicts import Claim, conflicts, memory_claim, statement_of
from workers.recall.distinct import distinct
from workers.recall.models import MAX_PROVENANCE, Memory

Vector = Sequence[float] | npt.NDArray[np.float32]

CONSOLIDATED_SCOPES = frozenset({"permanent", "project"})
_NOT_WORD = re.compile(r"[\W_]+")


class Merge(msgspec.Struct, frozen=True, kw_only=True):
    """``removed`` was folded into ``kept`` (the rewritten survivor) at ``similarity``."""

    kept: Memory
    removed: str
    similarity: float = 1.0


def _capped(ids: Sequence[str]) -> tuple[str, ...]:
    # The newest MAX_PROVENANCE entries: the ones a redelivered merge could repeat.
    unique = tuple(dict.fromkeys(ids))
    return unique[-MAX_PROVENANCE:]


def merge_duplicate(kept: Memory, duplicate: Memory) -> Memory:
    """Fold ``duplicate`` into ``kept``: access counts add, times and flags take the max,
    tags unite, and ``kept`` records the duplicate's id and source event (and whatever the
    duplicate had absorbed itself). ``kept`` keeps its id and content.

    Idempotent: a duplicate ``kept`` already absorbed (a redelivered batch that captured it
    again) adds nothing a second time."""
    if duplicate.id in kept.merged_from:
        return kept
    seen = [t for t in (kept.last_seen, duplicate.last_seen, duplicate.created_at) if t is not None]
    sources = [s for s in (*kept.sources, duplicate.source_event, *duplicate.sources) if s != kept.source_event]
    return msgspec.structs.replace(
        kept,
        access_count=kept.access_count + duplicate.access_count,
        last_accessed=max(kept.last_accessed, duplicate.last_accessed),
        last_seen=max(seen),
        confidence=max(kept.confidence, duplicate.confidence),
        tags=tuple(dict.fromkeys(kept.tags + duplicate.tags)),
        pinned=kept.pinned or duplicate.pinned,
        merged_from=_capped([*kept.merged_from, duplicate.id, *duplicate.merged_from]),
        sources=_capped(sources),
        merged=kept.merged + 1 + duplicate.merged,
    )


def may_fold(memory: Memory, other: Memory, claim: Claim | None = None) -> bool:
    """Whether ``memory`` and ``other``, near-duplicates by their vectors, may become one:
    never a knowledge fact's mirror, never two whose claims conflict, never two statements
    that differ in a number, name, address or date or replace a word of one another
    (``workers.recall.distinct``). ``claim`` is ``memory``'s, when known already."""
    if other.fact_id is not None or memory.fact_id is not None:
        return False
    if conflicts(claim if claim is not None else memory_claim(memory), memory_claim(other)):
        return False
    return not distinct(statement_of(memory), statement_of(other))


def takes_part(memory: Memory) -> bool:
    """Whether consolidation considers ``memory`` at all (see the module docstring)."""
    return (memory.scope in CONSOLIDATED_SCOPES and memory.superseded_by is None and memory.fact_id is None
            and not is_context_memory(memory))


def needs_vector(memory: Memory) -> bool:
    """Memories compared by cosine (every participant but turns, which compare by text)."""
    return takes_part(memory) and not is_turn_memory(memory)


def survivor_order(memory: Memory) -> tuple[bool, float, datetime, str]:
    """Pinned first, then the most confident, then the oldest, then the id."""
    return (not memory.pinned, -memory.confidence, memory.created_at, memory.id)


def repeat_key(text: str) -> str:
    """A turn's text with case, punctuation and spacing set aside (an emoji-only turn,
    which has no word character, is compared as it is written)."""
    words = _NOT_WORD.sub(" ", text.casefold()).split()
    return " ".join(words) if words else " ".join(text.split())


def consolidate(memories: Sequence[Memory], vectors: Mapping[str, Vector], threshold: float) -> tuple[Merge, ...]:
    """Every merge among ``memories``: turns by exact repeat, the rest greedily by cosine
    within one (type, scope, project) group. Memories are visited in survivor order; each
    one whose cosine to an already kept memory of its group reaches ``threshold`` is
    folded into the most similar kept one (a pinned memory is never folded). A memory
    without a vector is left alone. Cost: O(n·kept) dot products per group."""
    turns: dict[tuple[str | None, str, str | None, str], list[Memory]] = {}
    groups: dict[tuple[str, str, str | None], list[Memory]] = {}
    for memory in sorted(memories, key=survivor_order):
        if not takes_part(memory):
            continue
        if is_turn_memory(memory):
            turns.setdefault((memory.sender, memory.scope, memory.project, paraphrase_key(memory)),
                             []).append(memory)
        elif memory.id in vectors:
            # statements of any type meet (a procedure and a rule that say the same are one);
            # an episode is what happened, and stays among episodes
            kind = "episode" if memory.type == "episode" else "statement"
            groups.setdefault((kind, memory.scope, memory.project), []).append(memory)
    merges: list[Merge] = []
    for repeats in turns.values():
        merges.extend(_fold_repeats(repeats))
    for group in groups.values():
        merges.extend(_consolidate_group(group, vectors, threshold))
    return tuple(merges)


STEM_CHARS = 5  # a word's form set aside: its first five letters ("deploying" and "deploy" are "deplo")
# what a courtesy adds without saying anything else ("Thanks!" / "Thank you so much!"; "I
# finished the migration." / "Finished the migration!"); every other word counts, function
# words too: "I will deploy tomorrow." / "I deployed yesterday.", "Deploying now." / "Deploy
# done." say different things in the same content words
FILLERS = frozenset({
    "i", "you", "we", "me", "us", "a", "an", "the", "so", "very", "much", "many", "lot", "lots", "really", "just",
    "oh", "ok", "okay", "well", "too", "again", "indeed", "all",
    "vielen", "sehr", "schön", "merci", "beaucoup", "muchas", "mille", "tante", "muito", "obrigado",
})


def paraphrase_key(turn: Memory) -> str:
    """What a turn says, its wording set aside: the stems of its words but courtesies and
    fillers (``FILLERS``), once each, and whether it asks ("Thanks so much!" / "Thank you!":
    "thank"; "Can you deploy?" / "I can deploy." differ); a turn of fillers only ("Ok.") or
    emoji is compared as :func:`repeat_key` has it."""
    statement = statement_of(turn)
    stems = sorted({w[:STEM_CHARS] for w in _NOT_WORD.sub(" ", statement.casefold()).split() if w not in FILLERS})
    if not stems:
        return repeat_key(turn.content)
    return " ".join(stems) + (" ?" if statement.rstrip().endswith("?") else "")


def _fold_repeats(repeats: list[Memory]) -> list[Merge]:
    """Fold each turn into the first kept one it does not say otherwise (``distinct``: a
    number, a name, a replaced word)."""
    kept: list[Memory] = []
    merges: list[Merge] = []
    for memory in repeats:
        target = next((i for i, k in enumerate(kept)
                       if not memory.pinned and not distinct(statement_of(k), statement_of(memory))), None)
        if target is None:
            kept.append(memory)
            continue
        kept[target] = merge_duplicate(kept[target], memory)
        merges.append(Merge(kept=kept[target], removed=memory.id))
    return merges


def _unit(vector: Vector) -> npt.NDArray[np.float32]:
    arr = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(arr))
    return arr / norm if norm > 0 else arr


def _fold_target(memory: Memory, kept: Sequence[Memory], sims: npt.NDArray[np.float32],
                 threshold: float) -> int | None:
    """The most similar kept memory at ``threshold`` or above that ``memory`` may fold into."""
    for index in np.argsort(-sims, kind="stable"):
        if float(sims[index]) < threshold:
            return None
        if may_fold(memory, kept[index]):
            return int(index)
    return None


def _consolidate_group(group: list[Memory], vectors: Mapping[str, Vector], threshold: float) -> list[Merge]:
    kept: list[Memory] = []
    matrix: npt.NDArray[np.float32] | None = None  # the kept memories' unit vectors, one row each
    merges: list[Merge] = []
    for memory in group:
        vector = _unit(vectors[memory.id])
        if matrix is None:
            matrix = np.empty((len(group), vector.shape[0]), dtype=np.float32)
        if kept and not memory.pinned:
            sims = matrix[: len(kept)] @ vector
            target = _fold_target(memory, kept, sims, threshold)
            if target is not None:
                kept[target] = merge_duplicate(kept[target], memory)
                merges.append(Merge(kept=kept[target], removed=memory.id, similarity=round(float(sims[target]), 6)))
                continue
        matrix[len(kept)] = vector
        kept.append(memory)
    return merges
