"""Multi-factor recall ranking, exactly as the semantic-memory design states it::

    score = 0.5·similarity + 0.2·recency + 0.1·frequency + 0.1·typeBoost + 0.1·scopeBoost

* similarity — the dense cosine of query and memory as the store returns it (optionally
  calibrated per embedder, see below);
* recency    — ``exp(-ln 2 · days since last access / 7)``: a 7-day half-life (exact
  ln 2; the reference's 0.693 changes no fourth decimal);
* frequency  — ``min(1, log2(1 + access_count) / 10)``, saturating near 1 000 accesses;
* typeBoost  — the type multiplier **raw**: rule 1.5, procedure 1.3, fact 1.0,
  episode 0.8, preference 0.7 (so a rule adds up to 0.15 and a score can reach 1.05);
* scopeBoost — **normalised** to the best scope the query context allows.

Reconciling the reference's numbers with the design's words
-----------------------------------------------------------
The Go reference (ajitpratap0/openclaw-cortex ``internal/recall/recall.go``) applies both
multipliers raw: scope 1.5 for a matching project, 1.0 for ``permanent``, 0.8 otherwise,
and 1.0 for everything when the query names no project. The design text calls the scope
boost normalised: 1.0 for a matching project vs 0.67 for permanent and 0.53 for
session/ttl — that is the raw value divided by 1.5. Its acceptance numbers
(fact, sim 0.85, 48 h, 2 accesses → 0.8049; rule, sim 0.80, 1 h, 10 accesses → 0.8838)
are computed without a project and need a scope term of exactly 1.0 (0.1·0.67 would give
0.7716 and 0.8504), and they need the type multiplier raw (a normalised fact 0.67 would
give 0.7716 again).

So we normalise the scope multiplier by the largest value reachable in the query's
context: with a project, ``raw / 1.5`` (1.0 / 0.667 / 0.533, the design's words); without
one every memory gets ``1.0 / 1.0 = 1.0`` (the reference's numbers — the factor is then
the same for every candidate and cannot change the order). The type multiplier stays raw.
Both acceptance numbers come out exactly, and the project-boost ordering of the reference
holds (a matching project outranks a permanent memory 0.02 more similar).

Similarity calibration
----------------------
The design's weights assume cosines spread like nomic-embed-text's. multilingual-e5
(the default embedder) packs them into a narrow band — unrelated text scores ~0.65–0.80,
paraphrases ~0.85–0.95 — so 0.5·cosine barely separates candidates and the type boost
(a rule's +0.07 over an episode) decides instead. ``similarity_floor`` rescales the
cosine linearly, ``max(0, (cos - floor) / (1 - floor))``, before the formula; each
embedder names its floor (e5: 0.7; hashing and Ollama: 0.0, i.e. the raw cosine). The
formula itself is untouched, and with floor 0.0 — the default here — it is exactly the
reference's, acceptance numbers included.

Hybrid relevance
----------------
The store finds candidates with dense and BM25 prefetches fused by reciprocal rank; the
recall API (``rank(..., fused=True)``) then takes the similarity term from that fused
score, min-max scaled over the candidates (1.0 for the best, 0.0 for the last), instead
of the dense cosine: questions name people and things that the lexical half matches and
a small dense model does not, and on LoCoMo the cosine-only formula let recency decide
(evidence recall@10 0.47 → 0.67 from this change alone, docs/recall-eval.md). The
formula and its weights are unchanged; the reply still reports the dense cosine.

Access, gated
-------------
A reply marks every memory it returns as accessed (``recall_access`` feedback: last
access now, one more access), and the design's recency and frequency terms then lift
those memories for every later query. Unchecked, that lets the first answers crowd out
the right ones: a memory returned once for one question gained up to 0.2 + 0.1 over
everything older for any other question, and replies filled with earlier replies. On
LoCoMo with the feedback applied as a live deployment applies it, evidence recall@10
fell from 0.81 to 0.72 (docs/recall-eval.md, "Two ways of publishing"). With the hybrid
relevance, the recency and frequency terms are therefore scaled by the candidate's
relevance (in [0, 1]): a recently or often used memory still wins among relevant ones,
but its use no longer lifts it where it does not match (0.72 → 0.82 with the feedback,
and +0.02 without). The cosine-only path (``fused=False``) is the design's formula
exactly: the three sections below apply to the hybrid path only.

A message's memories, pooled
----------------------------
A message is found through several memories — its turn, its context window, its reply
window, its cue sentences — each with its own place in the dense and BM25 lists. The
fused score of each is therefore replaced by the sum over the message's candidates
(:func:`pool_by_message`) before the formula: a turn whose own text, the turns before it
and the turn after it all match the query outranks one that a single window carries.
Notes and LLM-extracted memories pool with nothing. On LoCoMo (all ten conversations)
R@1 0.397 → 0.411, R@10 0.808 → 0.820 (docs/recall-eval.md).

The sender a query names
------------------------
A question that names a person is mostly about what that person said ("What did Melanie
paint?" is answered by Melanie's turn, rarely by Caroline's "Melanie showed me…"). When
the query names a candidate's sender — the sender's words, case-folded, appear as
consecutive words of the query; for a name in a script written without spaces, as a
substring — the candidate gains ``weights.sender``. A query naming no sender changes no
order. On LoCoMo (all ten conversations) R@1 0.409 → 0.433, R@10 0.820 → 0.833 at 0.1
(0.05 / 0.2 / 0.3 gave R@10 0.831 / 0.835 / 0.833 then); since the lexical term (below)
also lifts every window that quotes the named person's partner, 0.2 is clearly the better
weight: R@10 0.850 → 0.853, R@1 0.445 → 0.460, and 0.853-0.855 for any lexical weight
0.2-0.3 and asking weight 0.1-0.2 (docs/recall-eval.md).

A query naming two senders is about the one it names first, its subject ("What does
Melanie think about Caroline's decision?", "What did Jon say about Gina's store?"), and
only that one takes the term (before, naming both changed no order). On LoCoMo's dev
conversations (0-4), 62 of the 67 questions naming both speakers have their evidence
from the one named first; found in the top 10: 39 → 40 of them, first: 9 → 11 (all dev
questions: R@10 0.858 → 0.859, R@1 0.471 → 0.474; the later-named at half the term
instead of none: R@10 0.857). Senders named at the same place (a name inside a longer
one) all count.

A turn that asks
----------------
A question matches questions: "What did you paint?" shares every word with "What did
Melanie paint?", while the turn that answers it ("The sunrise one, over the lake") shares
few. A conversation memory whose own turn ends by asking (its last character is a
question mark, ASCII or full-width) therefore loses ``weights.asking`` (0.1); the answer
is found through the reply window, which the turn after it credits (see below), or its
own memories. Notes and LLM-extracted memories are never judged. On LoCoMo (all ten
conversations) R@10 0.832 → 0.840, R@1 0.432 → 0.441; only turns that are a question
and nothing else: 0.833 (docs/recall-eval.md).

Lexical weight
--------------
Reciprocal-rank fusion keeps only each list's order: the first BM25 hit gets as much as
the first dense hit, whether its words match the question far better than the next
hit's or barely. The store therefore also reports each candidate's BM25 score
(``SearchHit.lexical``, one sparse query over the fused hits), pooling keeps a message's
best, and the candidate gains ``weights.lexical`` (0.2) times that score as a share of
the best candidate's (:func:`lexical_relevance`; 0 for all when no candidate shares a
term with the query). A question naming rare words ("the bench at the park") lifts the
turns that carry all of them over turns the dense half ranked as high. On LoCoMo (all
ten conversations) R@10 0.839 → 0.850, R@1 0.439 → 0.445; 0.1 / 0.3 gave 0.846 / 0.849,
the message's summed or its own memory's score instead of its best 0.842 / 0.850 with a
lower R@1, the dense cosine in the same way 0.835-0.837 (docs/recall-eval.md).

Windows, credited to the turn they match
----------------------------------------
A turn is quoted by up to six memories: its own, its context window and reply window,
the context windows of the two turns after it and the reply window of the turn before.
A question about it finds all of them, and each neighbour's window says "this came from
*my* turn" (its ``source_event``): on LoCoMo the top memory quoted the evidence turn
for 0.53 of the questions but came from it for 0.31. :func:`by_matching_turn`
therefore reads a window as the lines it quotes: when the line that matches the query
best (by the dense cosine of that line's own turn memory, where it is a candidate) is
another turn's, that turn's best memory comes first, lifted to the window's score, and
the window's own message right after it (the window may match through its context: the
answer is often the turn after the one a question names). Each message still counts once.

Weights, chosen on 0-4
----------------------
The design's terms keep the design's weights (0.5 / 0.2 / 0.1 / 0.1 / 0.1: its acceptance
numbers hold on the cosine-only path). Cortex's own terms — sender, lexical, asking — were
first chosen on all ten LoCoMo conversations, the set they were then scored on. They are
now chosen on conversations 0-4 alone (the dev split; 760 questions) and reported on 5-9
(held out, 776) beside all ten (docs/recall-eval.md, "Issue 41: chosen on conversations
0–4, held out 5–9"): over sender 0.1-0.5, lexical 0.1-0.3, asking 0.05-0.3, the best dev
R@10, then R@1, was sender 0.3, lexical 0.2, asking 0.2 (dev R@10 0.853 → 0.857, R@1
0.468 → 0.471 against 0.2 / 0.2 / 0.1;
the landscape is flat: the top fifteen lie within 0.003 of R@10). The numbers quoted in the
sections below were measured on all ten when those terms were added.

What somebody stored, first
---------------------------
A memory the agent or a person stored on purpose — remembered (``cortex_remember``), a
note or an indexed document, a knowledge fact — is what they want back, and conversation
that merely mentions the same words is not. Three things kept such a memory under the turns
(issue 41: "Bob prefers code reviews on Friday afternoons", remembered, came back 6th of 6
for its own words): a message pools the fused scores of up to six memories while a stored
memory has one; the query named Bob, the sender of the turns, and the sender term lifted
only turns; a preference weighs 0.7 to an episode's 0.8. So, on the hybrid path, an
explicit memory (:func:`is_explicit_memory`)

* pools as well as the best message: its fused score is scaled by the best pooled score
  over the best single one (:func:`pool_by_message`), so a stored memory that matches as well
  as any single memory counts as well as the best-found message;
* is as relevant as the share of the query's content words its text has, when that is more
  (:func:`workers.recall.distinct.coverage`: "Maria works at Acme Analytics GmbH" has every
  word of "where does Maria work?" — the fact answers the question it answers);
* takes the sender term when its text names a person the query names (it is about them);
* gains ``weights.explicit`` (0.3) times its relevance.

LoCoMo has no stored memories: its numbers do not move (docs/recall-eval.md).

The turns around the answer
--------------------------
A question names what one turn said and is answered by the turn before or after it as
often as by that turn ("What did Nate think of the ice cream he made?" matches the turn
that offers it; "Super good! Rich and creamy" answers it), and when several turns of one
exchange are candidates, the one the question matched best is not always the one it
asks about. The windows already count a turn's neighbours into its own score; a reply
then also pulls each turn toward the best-scored turn within two of it in its session:
it gains ``weights.neighbour`` (0.25) times the gap to that turn when the neighbour
scores higher (:func:`with_neighbours`). Pulled, never past its neighbour: the first
answer stays first, and a turn far from anything found moves only by the turns that
move above it. Which turns are next to each other is read from the context and reply
windows among the candidates (:func:`adjacent_turns`: a window quotes its own turn and
the turns before or after it), so it costs no store read. On LoCoMo's dev conversations
(0-4) R@10 0.863 → 0.876, R@1 unchanged (0.468); by halves, 0-2 0.877 → 0.888 and 3-4
0.849 → 0.865; the weight is flat over 0.2-0.3 on both halves (0.1: 0.871, 0.5: 0.862),
and 0.25 is its middle (docs/recall-eval.md).

``now`` is always a parameter — the time of the triggering event, never the wall clock.
Ties order by similarity, then id, so a ranking is a pure function of its inputs.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from datetime import datetime

import msgspec

from schemas.types import MemoryType
from workers.recall.capture import (
    CONTEXT_POSITIONS,
    REPLY_POSITION,
    WINDOW_LINE_CHARS,
    WINDOW_POSITION,
    conversation_position,
    event_position,
    is_explicit,
    turn_line,
)
from workers.recall.distinct import coverage
from workers.recall.models import Memory, RankedMemory, SearchHit

HALF_LIFE_DAYS = 7.0
SECONDS_PER_DAY = 86_400.0
_NEG_LN2 = -math.log(2.0)

TYPE_MULTIPLIER: dict[MemoryType, float] = {
    "rule": 1.5,
    "procedure": 1.3,
    "fact": 1.0,
    "episode": 0.8,
    "preference": 0.7,
}

# Raw scope multipliers of the reference, used only when the query names a project.
PROJECT_MATCH_MULTIPLIER = 1.5
PERMANENT_MULTIPLIER = 1.0
OTHER_SCOPE_MULTIPLIER = 0.8


class RankingWeights(msgspec.Struct, frozen=True, kw_only=True):
    similarity: float = 0.5
    recency: float = 0.2
    frequency: float = 0.1
    type_boost: float = 0.1
    scope_boost: float = 0.1
    # Cortex's own terms, chosen on LoCoMo conversations 0-4 only (see "Weights, chosen on 0-4")
    sender: float = 0.3  # the query names the memory's sender (see "The sender a query names")
    lexical: float = 0.2  # the message's BM25 score against the best candidate's (see "Lexical weight")
    asking: float = 0.2  # subtracted when the memory's own turn ends by asking (see "A turn that asks")
    explicit: float = 0.3  # a stored memory, times its relevance (see "What somebody stored, first")
    neighbour: float = 0.25  # of the gap to a better-scored turn next to it (see "The turns around the answer")


DEFAULT_WEIGHTS = RankingWeights()


def recency_score(last_accessed: datetime, now: datetime) -> float:
    """Exponential decay with a 7-day half-life; an access "in the future" counts as now."""
    days = max(0.0, (now - last_accessed).total_seconds() / SECONDS_PER_DAY)
    return math.exp(_NEG_LN2 * days / HALF_LIFE_DAYS)


def frequency_score(access_count: int) -> float:
    if access_count <= 0:
        return 0.0
    return min(1.0, math.log2(1 + access_count) / 10.0)


def type_boost(memory_type: MemoryType) -> float:
    return TYPE_MULTIPLIER.get(memory_type, 1.0)


def scope_boost(memory: Memory, project: str | None) -> float:
    """The scope multiplier normalised by the best one reachable (see module docstring)."""
    if not project:
        return 1.0
    if memory.scope == "project" and memory.project == project:
        raw = PROJECT_MATCH_MULTIPLIER
    elif memory.scope == "permanent":
        raw = PERMANENT_MULTIPLIER
    else:
        raw = OTHER_SCOPE_MULTIPLIER
    return raw / PROJECT_MATCH_MULTIPLIER


_WORDS = re.compile(r"\w+")
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")  # kana, CJK, hangul


def names_sender(query: str, sender: str) -> bool:
    """Whether ``query`` names ``sender``: its words as consecutive words of the query
    (case-folded), or as a substring for a name in a script written without spaces."""
    return _named_at(query, sender) is not None


def _named_at(query: str, sender: str) -> int | None:
    """Where ``query`` first names ``sender`` (a word index, or a character index for a name
    in a script written without spaces), None when it does not."""
    name = sender.casefold().strip()
    if not name:
        return None
    text = query.casefold()
    if _UNSPACED.search(name):
        at = text.find(name)
        return at if at >= 0 else None
    want, words = _WORDS.findall(name), _WORDS.findall(text)
    if not want:
        return None
    return next((i for i in range(len(words) - len(want) + 1) if words[i:i + len(want)] == want), None)


def _names_a_named(memory: Memory, named: frozenset[str], explicit: bool) -> bool:
    """A conversation memory said by a person the query names, or an explicit memory
    (``explicit``: :func:`is_explicit_memory`) that names one (see "The sender a query
    names", "What somebody stored, first")."""
    if memory.sender is not None:
        return memory.sender in named
    return explicit and any(names_sender(memory.content, person) for person in named)


def named_senders(query: str, memories: Iterable[Memory]) -> frozenset[str]:
    """The senders of ``memories`` that ``query`` names first: a question naming two people
    is about the one it names first, its subject (see "The sender a query names")."""
    named = {s: at for s in {m.sender for m in memories if m.sender} if (at := _named_at(query, s)) is not None}
    first = min(named.values(), default=None)
    return frozenset(s for s, at in named.items() if at == first)


@functools.lru_cache(maxsize=8192)
def content_lines(content: str) -> tuple[str, ...]:
    """A window's lines (its date line first). Cached: a query reads a window's lines to find
    its own turn, the turn it is credited to and the turns next to it, and the same windows
    come back across queries of one conversation."""
    return tuple(content.split("\n"))


# A turn's text as a window line, cached for the query path (capture makes each line once).
_line_of = functools.lru_cache(maxsize=8192)(turn_line)


def own_line(memory: Memory) -> str:
    """The memory's own turn as it is written in it: a context window's last line, a reply
    window's first line after the date, anything else whole."""
    position = conversation_position(memory)
    if position not in CONTEXT_POSITIONS:
        return memory.content
    lines = content_lines(memory.content)
    return lines[1] if position == REPLY_POSITION and len(lines) > 1 else lines[-1]


def asks(memory: Memory) -> bool:
    """Whether a conversation memory's own turn ends by asking (see "A turn that asks")."""
    return memory.sender is not None and own_line(memory).rstrip().endswith(("?", "？"))


def is_explicit_memory(memory: Memory) -> bool:
    """Stored on purpose: remembered, noted, or a knowledge fact (see "What somebody stored, first")."""
    return memory.fact_id is not None or is_explicit(memory)


def pool_by_message(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """Each hit with its fused score replaced by the sum of the fused scores of its
    message's hits, and its BM25 score by the best of theirs (:func:`message_key`; see
    "A message's memories, pooled" and "Lexical weight"); an explicit memory's fused
    score scaled to pool as well as the best message (see "What somebody stored, first")."""
    totals: dict[str, float] = {}
    lexical: dict[str, float] = {}
    keys = [message_key(hit.memory) for hit in hits]
    for hit, key in zip(hits, keys, strict=True):
        totals[key] = totals.get(key, 0.0) + hit.fused
        lexical[key] = max(lexical.get(key, 0.0), hit.lexical)
    best_single = max((h.fused for h in hits), default=0.0)
    scale = max(totals.values(), default=0.0) / best_single if best_single > 0 else 1.0
    return [_pooled(hit, totals[key] * (scale if is_explicit_memory(hit.memory) else 1.0), lexical[key])
            for hit, key in zip(hits, keys, strict=True)]


def _pooled(hit: SearchHit, fused: float, lexical: float) -> SearchHit:
    """``hit`` with its pooled scores (itself when they are its own: a message found once)."""
    return hit if fused == hit.fused and lexical == hit.lexical else msgspec.structs.replace(
        hit, fused=fused, lexical=lexical)


def calibrate_similarity(cosine: float, floor: float = 0.0) -> float:
    """Stretch an embedder's useful cosine band ``[floor, 1]`` onto ``[0, 1]``."""
    if floor <= 0.0:
        return cosine
    return max(0.0, (cosine - floor) / (1.0 - floor))


def fused_relevance(hits: Sequence[SearchHit]) -> list[float]:
    """The hybrid search's fused scores, min-max scaled over the candidates: 1.0 for the
    best, 0.0 for the last (1.0 for all when they tie or there is one)."""
    scores = [h.fused for h in hits]
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    return [(s - lo) / (hi - lo) if hi > lo else 1.0 for s in scores]


def lexical_relevance(hits: Sequence[SearchHit]) -> list[float]:
    """Each candidate's BM25 score as a share of the best candidate's (0.0 for all when
    none shares a term with the query; see "Lexical weight")."""
    best = max((h.lexical for h in hits), default=0.0)
    return [max(0.0, h.lexical) / best if best > 0 else 0.0 for h in hits]


def score_hit(
    hit: SearchHit,
    *,
    now: datetime,
    project: str | None = None,
    weights: RankingWeights = DEFAULT_WEIGHTS,
    similarity_floor: float = 0.0,
    relevance: float | None = None,
    named: frozenset[str] = frozenset(),
    lexical: float = 0.0,
) -> RankedMemory:
    """The design's score of one candidate; ``relevance`` (in [0, 1]), when given, is the
    similarity term instead of the calibrated cosine (see "Hybrid relevance") and scales
    the recency and frequency terms (see "Access, gated"); ``named`` are the senders the
    query names (see "The sender a query names"); ``lexical`` (in [0, 1]) is the
    candidate's BM25 share (:func:`lexical_relevance`, the hybrid path only)."""
    return _score(hit, now, project, weights, similarity_floor, relevance, named, lexical,
                  is_explicit_memory(hit.memory))


def _score(hit: SearchHit, now: datetime, project: str | None, weights: RankingWeights, similarity_floor: float,
           relevance: float | None, named: frozenset[str], lexical: float, stored: bool) -> RankedMemory:
    """:func:`score_hit`, told whether the memory was stored on purpose (``stored``:
    :func:`is_explicit_memory`, which :func:`rank` asks once a candidate)."""
    memory = hit.memory
    similarity = relevance if relevance is not None else calibrate_similarity(hit.similarity, similarity_floor)
    recency = recency_score(memory.last_accessed, now)
    frequency = frequency_score(memory.access_count)
    if relevance is not None:  # access counts where the memory is relevant (see "Access, gated")
        recency *= relevance
        frequency *= relevance
    tboost = type_boost(memory.type)
    sboost = scope_boost(memory, project)
    # the sender and asking terms belong to the hybrid path; the cosine-only one stays the design's
    named_boost = 1.0 if relevance is not None and _names_a_named(memory, named, stored) else 0.0
    explicit = relevance if relevance is not None and stored else 0.0
    asking = 1.0 if relevance is not None and asks(memory) else 0.0
    lexical = lexical if relevance is not None else 0.0
    score = (
        weights.similarity * similarity
        + weights.recency * recency
        + weights.frequency * frequency
        + weights.type_boost * tboost
        + weights.scope_boost * sboost
        + weights.sender * named_boost
        - weights.asking * asking
        + weights.lexical * lexical
        + weights.explicit * explicit
    )
    return RankedMemory(
        memory=memory,
        score=score,
        similarity=similarity,
        cosine=hit.similarity,
        recency=recency,
        frequency=frequency,
        type_boost=tboost,
        scope_boost=sboost,
        sender_boost=named_boost,
        asks=asking,
        lexical=lexical,
        explicit=explicit,
    )


def rank(
    hits: Iterable[SearchHit],
    *,
    now: datetime,
    project: str | None = None,
    weights: RankingWeights = DEFAULT_WEIGHTS,
    limit: int | None = None,
    similarity_floor: float = 0.0,
    fused: bool = False,
    named: frozenset[str] = frozenset(),
    query: str | None = None,
) -> list[RankedMemory]:
    """Re-rank store candidates by the multi-factor score, best first. ``fused=True``
    takes the similarity term from the hybrid fused scores (:func:`fused_relevance`);
    ``named`` are the senders the query names (:func:`named_senders`); ``query``, the
    query's text, measures an explicit memory's coverage of it (see "What somebody stored,
    first")."""
    candidates = list(hits)
    stored = [is_explicit_memory(hit.memory) for hit in candidates]
    relevance: list[float | None] = list(fused_relevance(candidates)) if fused else [None] * len(candidates)
    if fused and query:
        relevance = [max(rel or 0.0, coverage(query, hit.memory.content)) if explicit else rel
                     for hit, rel, explicit in zip(candidates, relevance, stored, strict=True)]
    lexical = lexical_relevance(candidates) if fused else [0.0] * len(candidates)
    ranked = [_score(hit, now, project, weights, similarity_floor, rel, named, lex, explicit)
              for hit, rel, lex, explicit in zip(candidates, relevance, lexical, stored, strict=True)]
    ranked.sort(key=lambda r: (-r.score, -r.similarity, r.memory.id))
    return ranked if limit is None else ranked[:limit]


def message_key(memory: Memory) -> str:
    """What one message's memories share: a turn, its windows and the cue sentences
    captured from it carry the message's sender and source event. Notes and
    LLM-extracted memories are their own."""
    return f"msg\x1f{memory.source_event}" if memory.sender is not None else f"id\x1f{memory.id}"


def _turn_lines(ranked: Sequence[RankedMemory], keys: Sequence[str]) -> dict[str, tuple[float, str]]:
    """Each candidate turn memory's window line(s) → (its dense cosine, its message key: ``keys``)."""
    lines: dict[str, tuple[float, str]] = {}
    for r, key in zip(ranked, keys, strict=True):
        if conversation_position(r.memory) == 0:
            entry = (r.cosine, key)
            lines.setdefault(_line_of(r.memory.content), entry)
            lines.setdefault(_line_of(r.memory.content, WINDOW_LINE_CHARS), entry)  # as a context line
    return lines


def matching_turn(ranked: RankedMemory, turn_lines: dict[str, tuple[float, str]]) -> str:
    """The message key of the turn a memory is credited to: for a window, the turn of its
    line that matches the query best when that is clearly another turn's (a higher cosine
    than the window's own line; lines whose turn is not a candidate are not judged);
    otherwise the memory's own message."""
    return _matching_turn(ranked.memory, message_key(ranked.memory), turn_lines)


def _matching_turn(memory: Memory, own: str, turn_lines: dict[str, tuple[float, str]]) -> str:
    """:func:`matching_turn` of ``memory``, whose message key is ``own``."""
    if conversation_position(memory) not in CONTEXT_POSITIONS:
        return own
    scored = [entry for line in content_lines(memory.content)[1:] if (entry := turn_lines.get(line)) is not None]
    if not scored:
        return own
    own_cosine = max((cos for cos, key in scored if key == own), default=-math.inf)
    cosine, key = max(scored)
    return key if key != own and cosine > own_cosine else own


def adjacent_turns(memories: Iterable[Memory]) -> list[tuple[str, str]]:
    """Pairs of message keys of turns within two turns of each other in one session, as the
    context and reply windows among ``memories`` quote them (a window quotes its own turn
    and the turns next to it; a turn whose line no candidate carries as its own is not
    placed). See "The turns around the answer"."""
    own: dict[tuple[str | None, str], str] = {}
    windows: list[tuple[str, str | None, tuple[str, ...]]] = []
    for memory in memories:
        if memory.sender is None or memory.type != "episode":
            continue
        position = event_position(memory)
        if position == 0:
            own.setdefault((memory.session, _line_of(memory.content, WINDOW_LINE_CHARS)), message_key(memory))
        elif position in (WINDOW_POSITION, REPLY_POSITION):
            key, lines = message_key(memory), content_lines(memory.content)[1:]  # cut as a window quotes them
            windows.append((key, memory.session, lines))
            own.setdefault((memory.session, lines[0] if position == REPLY_POSITION else lines[-1]), key)
    pairs: list[tuple[str, str]] = []
    for key, session, lines in windows:
        for line in lines:
            other = own.get((session, line))
            if other is not None and other != key:
                pairs.append((key, other))
    return pairs


def with_neighbours(ranked: Sequence[RankedMemory], adjacent: Iterable[tuple[str, str]],
                    weight: float = DEFAULT_WEIGHTS.neighbour) -> list[RankedMemory]:
    """``ranked`` (one memory per message) re-ordered after each turn gains ``weight`` times
    the gap to the best-scored turn next to it (``adjacent``: pairs of message keys, either
    way round), when that one scores higher (see "The turns around the answer"): pulled
    toward its neighbour, never past it, so the first stays first."""
    keys = [message_key(r.memory) for r in ranked]
    scores = dict(zip(keys, (r.score for r in ranked), strict=True))
    near: dict[str, float] = {}
    for a, b in adjacent:
        score_a, score_b = scores.get(a), scores.get(b)
        if score_a is None or score_b is None:
            continue
        if score_b > near.get(a, score_a):
            near[a] = score_b
        if score_a > near.get(b, score_b):
            near[b] = score_a
    gains = [weight * max(0.0, near.get(key, r.score) - r.score) for key, r in zip(keys, ranked, strict=True)]
    order = sorted(range(len(ranked)), key=lambda i: (-(ranked[i].score + gains[i]), i))
    return [msgspec.structs.replace(ranked[i], score=ranked[i].score + gains[i]) if gains[i] else ranked[i]
            for i in order]


def by_matching_turn(ranked: Sequence[RankedMemory], limit: int | None = None) -> list[RankedMemory]:
    """One memory per message, each window credited to the turn it matches (see "Windows,
    credited to the turn they match"): for each memory in ranked order, the best memory of
    its matching turn (lifted to this memory's score), then its own message's best."""
    keys = [message_key(r.memory) for r in ranked]
    best: dict[str, RankedMemory] = {}
    for r, key in zip(ranked, keys, strict=True):
        best.setdefault(key, r)
    turn_lines = _turn_lines(ranked, keys)
    out: list[RankedMemory] = []
    seen: set[str] = set()
    for r, own in zip(ranked, keys, strict=True):
        for key in (_matching_turn(r.memory, own, turn_lines), own):
            if key in seen:
                continue
            seen.add(key)
            chosen = best[key]
            out.append(chosen if chosen.score >= r.score else msgspec.structs.replace(chosen, score=r.score))
            if limit is not None and len(out) >= limit:
                return out
    return out
