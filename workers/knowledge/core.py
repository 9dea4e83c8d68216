"""The knowledge worker's pure core: events and LLM answers in, a new KnowledgeDoc out.

No I/O, no awaits, no wall clock. "Now" is the event's ``ts`` (or, for an LLM answer,
the time of the last event of its batch). The input document is never modified: it
changes with ``msgspec.structs.replace``, so fields not named here (``integrity``, owned by
the shell; ``llm_pending``, the worker's; a new field) are carried over.

Decay runs in event time on a fixed grid (see ``facts.decay_steps``) anchored at the
document's ``updated``. ``updated`` is the latest event time applied: an event stamped
earlier than the document (a producer's clock behind another's) leaves it unchanged,
so decay intervals are never counted twice.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Final

import msgspec

from schemas.docs import Entity, Fact, Integrity, KnowledgeDoc
from schemas.events import MessageEvent
from schemas.types import EntityType
from shared.config import KnowledgeSettings
from workers.conversation import learnt
from workers.conversation.languages import PACKS
from workers.conversation.patterns import MatchText, prepare_text, scan_view
from workers.conversation.sentences import sentence_around, sentence_ends
from workers.knowledge import kin, patterns
from workers.knowledge.extract import (
    MAX_MENTIONS,
    MAX_VALUE_CHARS,
    PRECISION,
    canonicalize,
    entity_id,
    entity_slug,
    extract_entities,
    initial_importance,
    merge_entities,
)
from workers.knowledge.facts import (
    Statement,
    Triple,
    access_facts,
    decay_facts,
    decay_steps,
    derive_statements,
    fact_id,
    prune_entities,
    prune_facts,
    reference_index,
    resolve_statement,
    restated,
    upsert_facts,
)
from workers.knowledge.llm import LlmEntity, LlmFact, LlmKnowledge, build_llm_prompt, parse_llm_output
from workers.knowledge.personal import (
    DEFAULT_LANGUAGES,
    CompiledPack,
    Said,
    get_personal_patterns,
    self_statements_at,
    under_way,
)
from workers.render import as_utc

__all__ = [
    "LlmKnowledge",
    "apply_access",
    "apply_message",
    "build_llm_prompt",
    "empty_doc",
    "merge_llm_result",
    "normalize_type",
    "parse_llm_output",
]

LLM_MIN_IMPORTANCE: Final = 0.7
"""The reference's default importance for an LLM entity: a model that names something
is stronger evidence than a capitalised word. Types that rank higher keep their rank."""

_TYPE_WORDS: Final[dict[str, EntityType]] = {
    "person": "person",
    "location": "location",
    "organization": "organization",
    "date": "date",
    "product": "product",
    "concept": "concept",
    "email": "email",
    "url": "url",
    "organisation": "organization",
    "org": "organization",
    "company": "organization",
    "place": "location",
    "city": "location",
    "country": "location",
    "tool": "product",
    "software": "product",
}


def empty_doc(ts: datetime) -> KnowledgeDoc:
    return KnowledgeDoc(updated=ts, entities=[], facts=[], integrity=Integrity())


def apply_message(doc: KnowledgeDoc | None, event: MessageEvent, settings: KnowledgeSettings,
                  packs: Sequence[CompiledPack] | None = None) -> KnowledgeDoc:
    """One message applied: decay up to ``event.ts``, regex entities merged, regex facts
    added or promoted, caps enforced. The facts are those about a name
    (``derive_statements``) and what the speaker says of themselves
    (``personal.self_statements`` of ``packs``, English and German by default): the speaker
    is the sender, a person."""
    packs = get_personal_patterns(DEFAULT_LANGUAGES) if packs is None else packs
    base, facts = _advance(doc, event.ts, settings)
    text = scan_view(event.content)
    names: list[tuple[int, int]] = []
    entities = merge_entities(base.entities, extract_entities(text, event.ts, names))
    statements = derive_statements(text, packs, names)
    speaker = speaker_name(event)
    figures = project_figures(text)
    if figures:
        entities = merge_entities(entities, [_concept(name, event.ts) for name, _ in figures])
        statements += [Statement(name, "is", amount, None) for name, amount in figures]
    shares = share_findings(text)
    if shares:
        entities = merge_entities(entities, [_concept(share, event.ts) for share, _ in shares])
        statements += [Statement(share, verb, finding, None)
                       for share, (verb, finding) in ((share, said.split(" ", 1)) for share, said in shares)]
    own = self_statements_held(prepare_text(text), speaker, packs) if speaker else []
    if own and speaker:
        own = [said for said in own if not _names_the_speaker(said, speaker)]
    others = len(statements)
    heard: list[Said] = []
    if speaker:
        facts, own, told = _kin(facts, entities, text, speaker, own, event.ts, packs)
        if own:
            heard = [said for said in own if under_way(said.predicate)]
            own = [said for said in own if not under_way(said.predicate)] if heard else own
    if speaker and (own or told or heard):
        entities = merge_entities(entities, [_person(speaker, event.ts)])
        statements += [_statement(said) for said in own]
        statements += told
    # Most messages state nothing: index the entities only when there is something to resolve.
    index = reference_index(entities) if statements or heard else {}
    triples = restated([resolve_statement(s, index) for s in statements], facts)
    known = {f.id for f in facts} if triples else set()
    facts = upsert_facts(facts, triples, "extracted-regex", event.ts)
    done = _finish(base, entities, facts, event.ts, settings)
    said = [fact_id(*t) for t in triples[others:] if t.predicate not in SAID_TO_THE_ROOM]
    held = _held(done, [resolve_statement(_statement(s), index) for s in heard], event.ts) if heard else []
    if held:
        done = msgspec.structs.replace(done, under_way=[*done.under_way, *held][-MAX_UNDER_WAY:])
    replied = _replied(done, event, text, [*(i for i in said if i not in known), *(f.id for f in held)],
                       {fact_id(*t) for t in triples if fact_id(*t) in known})
    return _under_way(replied, event, text, speaker, settings) if replied.under_way else replied


# A practice under way read with an open verb (``personal.under_way``) waits here, out of the facts,
# until the listener's reply has taken it up (``_replied`` marks it ``taken_up``) and its speaker says
# its object's words again this long after (a later sitting: the next day's session); the newest
# ``MAX_UNDER_WAY`` wait. Either alone was measured too (issue 37, sixteenth round): each added wrong
# lines on the development split; both together added none.
AGAIN_AFTER: Final = timedelta(hours=6)
MAX_UNDER_WAY: Final = 32


def _names_the_speaker(said: Said, speaker: str) -> bool:
    """An introduction that gives the name the speaker is known by ("Hi, I'm Anna, the project manager" from
    Anna): "Anna is named Anna" tells nothing (issue 37, eighteenth round)."""
    return said.predicate == "is-named" and said.object.casefold() == speaker.casefold()


def _held(doc: KnowledgeDoc, triples: list[Triple], ts: datetime) -> list[Fact]:
    """The practices under way just said, as facts not yet kept (those already kept or waiting: none)."""
    have = {f.id for f in doc.facts} | {f.id for f in doc.under_way}
    out: list[Fact] = []
    for t in triples:
        key = fact_id(*t)
        if key not in have:
            have.add(key)
            out.append(Fact(id=key, subject=t.subject, predicate=t.predicate, object=t.object, relevance=1.0,
                            created_at=ts, last_accessed=ts, source="extracted-regex"))
    return out


@functools.lru_cache(maxsize=64)
def _person_id(name: str) -> str:
    return entity_id("person", canonicalize(name, "person"))


def _under_way(doc: KnowledgeDoc, event: MessageEvent, text: str, speaker: str | None,
               settings: KnowledgeSettings) -> KnowledgeDoc:
    """``doc`` with the practices under way that are facts now: taken up by the reply when said, and
    said again by their speaker at a later sitting — the object's words (two, or its one) in a
    message ``AGAIN_AFTER`` later. They join the facts (taken up, so Known Facts may show them)."""
    if speaker is None:
        return doc
    subject, cutoff = _person_id(speaker), event.ts - AGAIN_AFTER
    old = [f for f in doc.under_way if f.subject == subject and f.created_at <= cutoff]
    if not old:
        return doc
    # every practice waiting was taken up, but those still awaiting their reply (``_replied`` drops the others)
    awaiting = doc.awaiting_reply
    lowered = ""
    again: set[str] = set()
    for f in old:
        if f.id not in awaiting:
            lowered = lowered or text[:MAX_REPLY_CHARS].casefold()
            if _says_again(f.object, lowered):
                again.add(f.id)
    if not again:
        return doc
    facts = upsert_facts(doc.facts, [Triple(f.subject, f.predicate, f.object) for f in doc.under_way if f.id in again],
                         "extracted-regex", event.ts)
    return msgspec.structs.replace(doc, facts=prune_facts(facts, settings.max_facts),
                                   under_way=[f for f in doc.under_way if f.id not in again])


def _says_again(obj: str, lowered: str) -> bool:
    """Whether ``lowered`` says the content words of ``obj`` again — two of them, or its one — each
    as a word starting with all but two of its letters (four at least: "dance" — "dancing")."""
    keys = _again_keys(obj)
    need = min(2, len(keys))
    return need > 0 and sum(1 for key in keys if _starts_a_word(lowered, key)) >= need


MAX_AGAIN_TRIES: Final = 4  # where a word's start is found inside other words, looked for this often at most


def _starts_a_word(lowered: str, key: str) -> bool:
    """``key`` starts a word of ``lowered`` — among its first ``MAX_AGAIN_TRIES`` occurrences (a
    literal search is fast; one with a look-behind for a word's start tries every position)."""
    at = lowered.find(key)
    for _ in range(MAX_AGAIN_TRIES):
        if at == -1:
            return False
        if at == 0 or not lowered[at - 1].isalpha():
            return True
        at = lowered.find(key, at + 1)
    return False


@functools.lru_cache(maxsize=256)
def _again_keys(obj: str) -> tuple[str, ...]:
    """Per content word of ``obj``: the start a word must have to say it again (all but two of its
    letters, four at least)."""
    return tuple(word[:max(_MIN_STEM, len(word) - _STEM_SLACK)] for word in sorted(_content_words(obj)))


def _kin(facts: list[Fact], entities: list[Entity], text: str, speaker: str, own: list[Said], ts: datetime,
         packs: Sequence[CompiledPack]) -> tuple[list[Fact], list[Said], list[Statement]]:
    """A person's family and pets told across turns (``kin``; issue 37, fifteenth round): the kin and
    pet nouns the speaker owns join their kind's one fact about the speaker ("Maria's pets include a
    puppy named Coco, a pup named Shadow"), which replaces the one before it. A noun said with a
    name, an age or a count, or had ("we've got a pup"), starts the fact; an owned noun alone only
    joins one there; "her name is Shadow" names the noun the speaker said last, in this message or
    within ``kin.NAME_WINDOW_SECONDS`` before it. The statements of having and naming the per-clause
    rules read of the same nouns ("Maria has a puppy", "Caroline's guinea pig is named Oscar") are
    told in it instead."""
    readers = kin.kin_packs(tuple(pack.code for pack in packs))
    if not readers:
        return facts, own, []
    found = kin.mentions(text, readers)
    found += [(m, 0) for said in own if said.predicate == "has" for m in kin.had(said.object, readers)]
    named, gender = kin.named_next(text, readers)
    if not found and not named:
        return facts, own, []
    people = {e.value for e in entities if e.type == "person"}  # "my dad, Caroline": the listener, no name
    said, named = _named_here([(m, end) for m, end in found if m.name not in people],
                              "" if named in people else named, text, gender, readers)
    person = entity_id("person", canonicalize(speaker, "person"))
    mine = {f.predicate: f for f in facts if f.subject == person and f.predicate in _KIN_PREDICATES}
    kinds = kin.kinds_of(tuple(pack.code for pack in packs))
    told: list[Statement] = []
    dropped: set[str] = set()
    held: set[str] = set()  # the nouns of the kinds a fact now holds
    lists: dict[kin.Kind, tuple[list[str], list[str]]] = {}  # per kind: the items before, and now
    for kind, predicate in kin.PREDICATES.items():
        old = mine.get(predicate)
        items = start = kin.split_items(old.object) if old is not None else []
        for m in said:
            if m.kind == kind and (items or m.fixed):
                items = kin.joined(items, m, kinds)
        if named and old is not None and not any(m.kind == kind for m in said) and \
                (ts - as_utc(old.created_at)).total_seconds() <= kin.NAME_WINDOW_SECONDS:
            # "Her name is Shadow!", a turn after "I adopted this pup"
            items = kin.named_last(items, named, gender, readers)
        lists[kind] = (start, items)
    pet_names = kin.names_of(lists["pets"][1])
    if pet_names and (family := lists["family"])[1]:  # one name, one noun: a pet's name is no family noun's
        lists["family"] = (family[0], kin.without_names(family[1], pet_names))
    for kind, predicate in kin.PREDICATES.items():
        old = mine.get(predicate)
        start, items = lists[kind]
        held |= {m.noun for m in said if m.kind == kind} if items else set()
        if items != start:
            told.append(Statement(speaker, predicate, kin.as_object(items), None))
            dropped |= {old.id} if old is not None else set()
    if not held and not told:
        return facts, own, []
    nouns = held | {noun.replace(" ", "-") for noun in held}
    own = [s for s in own if not _kin_said(s, nouns)]
    return ([f for f in facts if f.id not in dropped] if dropped else facts), own, told


def _named_here(found: list[tuple[kin.Mention, int]], named: str, text: str, gender: kin.Gender = "",
                readers: Sequence[kin.Compiled] = ()) -> tuple[list[kin.Mention], str]:
    """The mentions, the last singular unnamed one before "his name is …" named by it; and the
    name, if no noun of this message took it (it may name the speaker's last turn's)."""
    said = [m for m, _ in found]
    if not named:
        return said, ""
    at = text.find(named)
    before = [i for i, (m, end) in enumerate(found) if end <= at]
    if not before:
        return said, named
    # the last noun before it that the name's pronoun may name ("a puppy with my girlfriend. His name is
    # Toby": the puppy)
    for i in reversed(before):
        last = said[i]
        if kin.agrees(last.noun, gender, readers):
            if last.name or not kin.singular(last.item):
                return said, named
            said[i] = last._replace(item=kin.named_last([last.item], named)[0], name=named, fixed=True)
            return said, ""
    return said, named


_KIN_PREDICATES: Final = frozenset(kin.PREDICATES.values())


def _kin_said(said: Said, nouns: set[str]) -> bool:
    """Whether a per-clause statement says what a kin fact now holds: having one of ``nouns``
    ("has a puppy"), or its name ("'s-guinea-pig-is-named")."""
    if said.predicate == "has":
        return any(re.search(rf"\b{re.escape(noun)}\b", said.object.lower()) for noun in nouns)
    return said.predicate.startswith("'s-") and said.predicate.endswith("-is-named") and \
        said.predicate[3:-len("-is-named")] in nouns


# What a person says of themselves to the room, that nobody says back: their name given in an
# introduction ("I'm Laura and I'm the project manager") is shown without a reply taking it up.
SAID_TO_THE_ROOM: Final = frozenset({"is-named"})
MAX_AWAITING: Final = 32
MAX_TOLD: Final = 500  # ids kept of what people were told (``taken_up``, ``unanswered``), each


def _replied(doc: KnowledgeDoc, event: MessageEvent, text: str, new: list[str], again: set[str]) -> KnowledgeDoc:
    """What a person said of themselves, judged by the reply (issue 37, thirteenth round): a
    self-statement waits for the next speaker (``awaiting_reply``). Said to the agent (its next
    message is the assistant's) it stands as before. Said to another person it is ``taken_up``
    when their reply shares a content word with it (``_fact_words``: "I'm learning German now" —
    "Wow, German!"; "Lost my job as a banker yesterday" — "Sorry about your job"),
    else ``unanswered``; said again later by anyone's statement, an unanswered one is taken up.
    Known Facts shows none of the unanswered and a few of the taken up (``briefing.showable``);
    the document keeps them all. A person's next message of their own leaves it waiting; a
    system or tool message changes nothing."""
    awaiting, taken, unanswered = doc.awaiting_reply, doc.taken_up, doc.unanswered
    if not awaiting and not new and not (again and unanswered):
        return doc
    dropped: set[str] = set()
    # one pass over the facts, for the few this message concerns (most messages concern none)
    wanted = {*awaiting, *new}
    here = {f.id: f for f in doc.facts if f.id in wanted}
    held = {f.id: f for f in doc.under_way if f.id in wanted} if doc.under_way else {}
    here.update(held)
    if awaiting:
        subject = here[awaiting[0]].subject if awaiting[0] in here else None
        speaker = speaker_name(event)
        mine = speaker is not None and subject == entity_id("person", canonicalize(speaker, "person"))
        if not mine and (event.role == "assistant" or speaker is not None):
            # another person answers: what their reply takes up, and not; the agent's reply judges only
            # the practices under way (``_under_way``: what it did not take up keeps waiting)
            answered = [i for i in awaiting if i in here and (event.role != "assistant" or i in held)]
            if answered:
                reply = _content_words(text)
                starts = _starts(reply)
                up = [_takes_up(_fact_words(here[i]), reply, starts) for i in answered]
                taken = [*taken, *(i for i, yes in zip(answered, up, strict=True) if yes)]
                unanswered = [*unanswered, *(i for i, yes in zip(answered, up, strict=True)
                                             if not yes and i not in held)]
                # a practice under way the reply did not take up is dropped: it can be no fact now
                dropped = {i for i, yes in zip(answered, up, strict=True) if not yes and i in held}
            awaiting = []
    if again & set(unanswered):  # said again: it stands as one taken up
        taken = [*taken, *(i for i in unanswered if i in again)]
        unanswered = [i for i in unanswered if i not in again]
    if new:  # said anew (a fact pruned and stated again): it waits afresh
        fresh = set(new)
        taken, unanswered = [i for i in taken if i not in fresh], [i for i in unanswered if i not in fresh]
    waiting = [i for i in [*awaiting, *new] if i in here]
    awaiting = waiting[-MAX_AWAITING:]
    dropped |= {i for i in waiting[:-MAX_AWAITING] if i in held}  # no reply will judge them now
    under_way = [f for f in doc.under_way if f.id not in dropped] if dropped else doc.under_way
    return msgspec.structs.replace(doc, awaiting_reply=awaiting, taken_up=taken[-MAX_TOLD:],
                                   unanswered=unanswered[-MAX_TOLD:], under_way=under_way)


_WORD: Final = re.compile(r"[^\W\d_]{3,}")
_STEM_SLACK: Final = 2  # "dance" — "dancing", "counselling" — "counselor": alike but for this many letters
_MIN_STEM: Final = 4


@functools.cache
def _function_words() -> frozenset[str]:
    return frozenset(w.casefold() for pack in PACKS.values() for w in pack.stopwords)


_UNSPACED: Final = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{2,}")  # kana, CJK ideographs, Hangul


def _content_words(text: str) -> frozenset[str]:
    """A text's content words: letters-only words of three or more letters but every pack's
    function words; in Japanese, Chinese and Korean, whose words no space parts (or whose nouns
    take particles), every pair of adjacent characters ("ドイツ語を" — "ドイツ語": "ドイ", "イツ", "ツ語")."""
    text = text[:MAX_REPLY_CHARS]
    stop = _function_words()
    found = {w for w in (m.group().casefold() for m in _WORD.finditer(text)) if w not in stop}
    for m in _UNSPACED.finditer(text):
        run = m.group()
        found.update(run[i:i + 2] for i in range(len(run) - 1))
    return frozenset(found)


MAX_REPLY_CHARS: Final = 4000


def _fact_words(fact: Fact) -> frozenset[str]:
    """A fact's content words, its predicate's with its object's: "lost-their-job-as" "a banker" is
    taken up by "Sorry about your job" as "is-learning" "German" is by "Wow, German!"."""
    return _content_words(f"{fact.predicate.replace('-', ' ')} {fact.object}")


def _takes_up(said: frozenset[str], reply: frozenset[str], starts: dict[str, int]) -> bool:
    """Whether a reply (its words ``reply``, their ``_starts``) shares a content word with
    ``said``: the same word, or the same stem — a common start of at least four letters, and of
    all but two letters of the shorter word."""
    if said & reply:
        return True
    for a in said:
        for k in range(_MIN_STEM, len(a) + 1):
            shortest = starts.get(a[:k])  # the shortest reply word that starts so
            if shortest is not None and k >= min(len(a), shortest) - _STEM_SLACK:
                return True
    return False


def _starts(words: frozenset[str]) -> dict[str, int]:
    """Every start of four letters or more of ``words`` → the length of the shortest word it starts."""
    starts: dict[str, int] = {}
    for w in words:
        for k in range(_MIN_STEM, len(w) + 1):
            if starts.get(w[:k], len(w) + 1) > len(w):
                starts[w[:k]] = len(w)
    return starts


def self_statements_held(text: MatchText, speaker: str, packs: Sequence[CompiledPack]) -> list[Said]:
    """What ``speaker`` says of themselves (``personal.self_statements``) that the learnt reader
    reads as a lasting fact: the sentence each is said in scores at least the shipped facts
    head's ``keep``. As shipped the head has no ``keep`` and every statement is kept: the filter
    measured for it (issue 37, eleventh round, docs/briefing-eval.md "Eleventh round: facts")
    did not beat the rules leaving one conversation out. A sentence the reader does not read
    (not English, English not enabled) keeps its statements."""
    found = self_statements_at(text, speaker, packs)
    if not found or not learnt.reader_judges("facts"):
        return [said for said, _ in found]
    languages = tuple(pack.code for pack in packs)
    ends = sentence_ends(text.original)
    held = []
    for said, at in found:
        start, end = sentence_around(text.original, ends, at)
        if learnt.reader_keeps("facts", text.original[start:end], languages):
            held.append(said)
    return held


def self_said(fact: Fact) -> bool:
    """Whether a fact is what a person said of themselves (its subject a person: the speaker of
    a self-statement), not a project figure, a finding or a statement about a name."""
    return fact.subject.startswith("person:")


def speaker_name(event: MessageEvent) -> str | None:
    """Who says "I" in a message: its sender, else "User" for the user's; the assistant's
    (and a system's or tool's) "I" is no person's."""
    if event.role != "user" and not (event.sender and event.role != "assistant"):
        return None
    name = " ".join((event.sender or "").split())[:MAX_VALUE_CHARS]
    return name or "User"


def _statement(said: Said) -> Statement:
    """A personal statement as a triple to resolve: an employer with a legal suffix is the
    organisation ("I work for Acme GmbH": ``organization:acme``, as "Maria works at Acme
    GmbH" says), anything else a literal."""
    if patterns.ORGANIZATION.fullmatch(said.object):
        return Statement(said.subject, said.predicate, canonicalize(said.object, "organization"), "organization")
    return Statement(said.subject, said.predicate, said.object, None)


def project_figures(text: str) -> list[tuple[str, str]]:
    """The project's figures a message states, as (what, amount): "Our selling price is twenty
    five Euros" → ("selling price", "twenty five euros"); "it sells for 25 euros" is its selling
    price, "we're aiming to make fifty million Euros" its profit aim, "it can't cost more than
    twelve Euros fifty to make" its production cost (issue 37: AMI's kick-offs state price, cost
    and profit aim, and no fact kept them). English; each figure once per message."""
    lowered = text.lower()
    if not any(word in lowered for word in patterns.FIGURE_TRIGGERS):
        return []
    found: dict[str, str] = {}
    for m in patterns.FIGURE.finditer(lowered):
        if m.group("costs") and not m.group("per"):
            continue  # "the phone cost 500 dollars": what a thing cost, not what making one may
        if _figure_unsure(lowered, m.start(), m.end()):
            continue  # "Can it sell it for fifty Euros?", "let's sell this for fifty Euros": a proposal
        name = ("selling price" if m.group("sells") else "profit aim" if m.group("makes")
                else "production cost" if m.group("costs") or m.group("produce")
                else " ".join(m.group("figure").split()))
        found.setdefault(name, " ".join(m.group("amount").replace("-", " ").split()))
    return list(found.items())


def share_findings(text: str) -> list[tuple[str, str]]:
    """A share of people and what they were found to say, think or do, as (share, finding):
    "Seventy five percent of users find their remote controls ugly." → ("seventy five percent
    of users", "find their remote controls ugly") — a team's market research (tenth round of
    issue 37). Asked or supposed ("if fifty percent would pay …?") is none; each share once."""
    lowered = text.lower()
    if not any(word in lowered for word in patterns.SHARE_TRIGGERS):
        return []
    found: dict[str, str] = {}
    for m in patterns.SHARE.finditer(lowered):
        if _figure_unsure(lowered, m.start(), m.end()):
            continue
        share = _unhesitating(m.group("share").replace("%", " percent").replace("-", " ")).removeprefix("and ")
        said = _unhesitating(m.group("said"))
        if " " in said and any(ch.isalnum() for ch in said.split(" ", 1)[1]):
            found.setdefault(share, said)  # a verb and what it says
    return list(found.items())


SENTENCE_REACH: Final = 400
_HESITATIONS: Final = frozenset({"uh", "um", "er", "erm", "hmm", "mm"})


def _unhesitating(text: str) -> str:
    """``text`` without the sounds of a speaker thinking ("of the um people questioned")."""
    return " ".join(word for word in text.split() if word not in _HESITATIONS)


def _figure_unsure(lowered: str, start: int, end: int) -> bool:
    """The figure at ``start:end`` is asked, proposed or supposed, not stated: its sentence ends
    with a question mark, or a hedge stands before it in its sentence ("if we sell it for …",
    "then we'd have to sell it for thirty Euros")."""
    # a sentence is read at most SENTENCE_REACH characters either side: a page without a full
    # stop is not rescanned for each figure in it
    floor, ceiling = max(0, start - SENTENCE_REACH), min(len(lowered), end + SENTENCE_REACH)
    begin = max(max(lowered.rfind(mark, floor, start) for mark in ".!?;\n") + 1, floor)
    stop = min((i for i in (lowered.find(mark, end, ceiling) for mark in ".!?;\n") if i != -1), default=ceiling)
    return lowered[stop:stop + 1] == "?" or patterns.FIGURE_UNSURE.search(lowered, begin, start) is not None


def _concept(name: str, ts: datetime) -> Entity:
    return Entity(id=entity_id("concept", name), type="concept", value=name, mentions=[name], count=1,
                  importance=initial_importance("concept", name), last_seen=ts, source=["regex"])


def _person(name: str, ts: datetime) -> Entity:
    value = canonicalize(name, "person")
    return Entity(id=entity_id("person", value), type="person", value=value, mentions=[name], count=1,
                  importance=initial_importance("person", value), last_seen=ts, source=["regex"])


def merge_llm_result(
    doc: KnowledgeDoc | None, result: LlmKnowledge, ts: datetime, settings: KnowledgeSettings | None = None
) -> KnowledgeDoc:
    """An LLM answer merged: its entities (source ``llm``; ``regex`` too where the
    regex path already found the same id) and its facts, with names resolved to
    entity ids where the document or the answer knows them."""
    settings = settings or KnowledgeSettings()
    base, facts = _advance(doc, ts, settings)
    found = _llm_entities(result.entities, ts)
    entities = merge_entities(base.entities, found)
    # The answer's own entities resolve its facts first; then the document's.
    index = reference_index([*found, *entities])
    facts = upsert_facts(facts, _llm_triples(result.facts, index), "extracted-llm", ts)
    return _finish(base, entities, facts, ts, settings)


def apply_access(
    doc: KnowledgeDoc | None, fact_ids: Iterable[str], ts: datetime, settings: KnowledgeSettings
) -> KnowledgeDoc:
    """Facts used (e.g. returned by a search, reported by a ``recall_access`` feedback
    event) are promoted, as the reference's ``getFact`` does."""
    base, facts = _advance(doc, ts, settings)
    return _finish(base, base.entities, access_facts(facts, fact_ids, ts), ts, settings)


def _advance(
    doc: KnowledgeDoc | None, ts: datetime, settings: KnowledgeSettings
) -> tuple[KnowledgeDoc, list[Fact]]:
    """The document to build on and its facts decayed up to ``ts``."""
    if doc is None:
        return empty_doc(ts), []
    steps = decay_steps(doc.updated, ts, settings.decay_interval_hours)
    return doc, decay_facts(doc.facts, settings.decay_rate, steps)


def _finish(
    base: KnowledgeDoc, entities: list[Entity], facts: list[Fact], ts: datetime, settings: KnowledgeSettings
) -> KnowledgeDoc:
    return msgspec.structs.replace(
        base,
        updated=max(base.updated, ts),
        entities=prune_entities(entities, settings.max_entities),
        facts=prune_facts(facts, settings.max_facts),
    )


def normalize_type(raw: str) -> EntityType:
    """The model's type word as an EntityType; anything unrecognised is ``unknown``."""
    return _TYPE_WORDS.get(raw.strip().lower(), "unknown")


def _llm_entities(items: Iterable[LlmEntity], ts: datetime) -> list[Entity]:
    found: dict[str, Entity] = {}
    for item in items:
        entity_type = normalize_type(item.type)
        mention = item.value.strip()
        value = canonicalize(mention, entity_type)
        if not value:
            continue
        entity = Entity(
            id=entity_id(entity_type, value),
            type=entity_type,
            value=value,
            mentions=[mention],
            count=1,
            importance=round(max(initial_importance(entity_type, value), LLM_MIN_IMPORTANCE), PRECISION),
            last_seen=ts,
            source=["llm"],
        )
        found[entity.id] = entity if entity.id not in found else _same_answer(found[entity.id], entity)
    return list(found.values())


def _same_answer(first: Entity, again: Entity) -> Entity:
    # The model listing a name twice is one sighting; only a new spelling is kept.
    mentions = list(dict.fromkeys([*first.mentions, *again.mentions]))[:MAX_MENTIONS]
    return msgspec.structs.replace(first, mentions=mentions)


def _llm_triples(items: Iterable[LlmFact], index: dict[str, str]) -> list[Triple]:
    triples: list[Triple] = []
    for item in items:
        subject, obj = item.subject.strip(), item.object.strip()
        # The reference's predicate normal form: lower case, whitespace as hyphens.
        predicate = "-".join(item.predicate.lower().split())
        if subject and obj and predicate:
            triples.append(Triple(_resolve(subject, index), predicate, _resolve(obj, index)))
    return triples


def _resolve(name: str, index: dict[str, str]) -> str:
    """The entity id a name refers to, else the name itself as a literal. The legal
    suffix is tried off as well, so "Acme GmbH" finds ``organization:acme``."""
    for form in (canonicalize(name, "unknown"), canonicalize(name, "organization")):
        found = index.get(entity_slug(form))
        if found is not None:
            return found
    return name
