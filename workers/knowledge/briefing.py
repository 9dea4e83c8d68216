"""The knowledge worker's briefing section: Known Facts.

The layered context of the processing-brain design: the most relevant current facts, one
sentence each, the entities' values in place of their ids. It says the sentences it would
show (``FACTS``): a thread that says nothing but one of them is no thread to follow.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from schemas.docs import Fact, KnowledgeDoc
from shared.briefing import FACTS, Briefing, BriefingSection, Rendered, Said, Seen
from shared.names import BUCKET_KNOWLEDGE
from workers.briefing import section
from workers.knowledge.patterns import PRAISE
from workers.knowledge.personal import under_way
from workers.knowledge.personal_packs import KIN_DEATHS
from workers.render import as_utc, entity_names, fact_sentence, one_line

MAX_FACTS_IN_BOOT = 20


# Predicates a subject has one object of at a time: a newer statement replaces the older (a name
# given again, in full: "my name's Bob Mor" … "my name's Bob Morris"; tenth round of issue 37).
SINGLE_VALUED = frozenset({"works-at", "lives-in", "is-named"})


def current_facts(facts: Sequence[Fact]) -> list[Fact]:
    """``facts`` without those a newer fact replaced: of a subject's single-valued predicate
    (``SINGLE_VALUED``: "Maria works at Globex Corp" two weeks after "Maria works at Acme
    Analytics GmbH") only the one first stated last stays — the briefing showed both, the old
    employer beside the new. The fact store keeps both (a search still finds the old one)."""
    latest: dict[tuple[str, str], Fact] = {}
    for f in facts:
        if f.predicate in SINGLE_VALUED:
            key = (f.subject, f.predicate)
            other = latest.get(key)
            if other is None or (as_utc(f.created_at), f.id) > (as_utc(other.created_at), other.id):
                latest[key] = f
    return [f for f in facts if f.predicate not in SINGLE_VALUED or latest[(f.subject, f.predicate)] is f]


# Of what a person told another person and the reply took up (``KnowledgeDoc.taken_up``), Known
# Facts shows this many per person, the first said first; what the reply did not take up
# (``unanswered``) it does not show. Chosen leaving one development conversation out (issue 37,
# thirteenth round: every fold but one chose 1 of 1, 2, 3 or all, precision first).
MAX_TOLD_PER_PERSON = 1

# A change in a person's life told to another person — a job got or lost, a group joined, a business
# opened, a pastime started years ago, a move — is shown whether or not the reply took it up: it is
# news that stays true, said once as a report. By kind of statement (``real_facts.FAMILIES``) it is
# the one chat kind right in all five development chats (12 true, 3 wrong stored); shown beside the
# one taken-up fact per person, the development split's Known Facts read .830 / .375 (39/8/65)
# against .833 / .288, and chosen leaving one conversation out every fold keeps it (issue 37,
# fourteenth round). The predicates are the shared vocabulary, so every pack that reads them has it.
LIFE_CHANGES = frozenset({"got", "joined", "opened", "started", "moved-to", "is-part-of", "lost-their-job-as",
                          "lost-their-job-at", "lost-their-job-with",
                          # under way or just begun: a move, a long stay, a course (twenty-fourth round)
                          "is-moving-to", "is-off-to", "signed-up-for",
                          # a marriage (twenty-fifth round)
                          "married-their"})


# A person's family and pets as one fact per kind ("Maria's pets include a puppy named Coco, a pup
# named Shadow": ``kin``, fifteenth round), started only by a noun told with a name, an age or a
# count, or had: shown whether or not the reply took it up, as a change of life is. On the development
# split these lines are right in two chats and wrong in none (5 true, 0 wrong stored); chosen leaving
# one conversation out, every fold shows them.
FAMILY_AND_PETS = frozenset({"'s-family-includes", "'s-pets-include"})

# A taste said as what one cares about most ("I'm passionate about veterans' rights", "I'm all about dramas and
# romcoms"; "Je suis passionnée de photo", "Me apasiona la fotografía") or as one's favourite ("My favourite book
# is Harry Potter", "contemporary is my top pick", "Mein Lieblingsbuch ist …") is who one is, not a remark on the
# moment: shown whether or not the reply took it up, as a change of life is. "I'm into …", "I'm keen on …" and "I
# love …" stay held back (on the development split they are as often a passing interest: two of three "into" lines
# shown told were counted wrong). On the development split the passionate lines add 3 true and 1 counted wrong to
# Known Facts, the favourites 3 true and none wrong; chosen leaving one chat out, every fold shows each (issue 37,
# twenty-fifth round; docs/briefing-eval.md).
STANDING_TASTES = frozenset({"is-passionate-about", "is-all-about"})
_FAVOURITE = re.compile(r"'s-(?:favorite|lieblings)")
SHOWN_TOLD = LIFE_CHANGES | FAMILY_AND_PETS | STANDING_TASTES


def standing_taste(f: Fact) -> bool:
    """What one cares about most or likes best (``STANDING_TASTES``, a favourite): shown told or not."""
    return f.predicate in STANDING_TASTES or _FAVOURITE.match(f.predicate) is not None


def kin_event(f: Fact) -> bool:
    """What happened to the speaker's own people and stays so — a death ("Maria's grandma passed away"), a win
    ("Gina's team won first place at regionals"; ``personal_packs``, twenty-second round): shown told or not,
    as a change of life is."""
    return f.predicate.startswith("'s-") and (f.predicate.endswith("-won") or f.object.casefold() in KIN_DEATHS)

# Who a person is — a condition, a kind, where they are from or live, the languages they speak — told to
# another person is shown whether or not the reply took it up, as a change of life is: it stays true,
# and a reply to "I'm lactose intolerant" or "I'm a shooting guard for the team" is rarely about it.
# A fan ("a big fan of Nintendo games") is a taste said as a noun, not who one is: held back as tastes
# are; so is an object that says the speaker's own name again (``_names_itself``: a meeting's role). A
# line whose words a shown line of the same person all say is not shown again (``_with_practices``).
# On the development split this shows 4 more true lines in three chats and none wrong; chosen leaving
# one chat out, every fold keeps it (issue 37, seventeenth round).
IDENTITY = frozenset({"is", "is-a", "is-allergic-to", "is-from", "is-married-to", "lives-in", "lives-with",
                      "grew-up-in", "was-born-in", "speaks", "'s-home-country-is"})
_A_TASTE = re.compile(r"(?:\w+\s+){0,2}(?:fan|fans|lover|enthusiast)\b")


def _who_they_are(f: Fact) -> bool:
    return f.predicate in IDENTITY and _A_TASTE.match(f.object.casefold()) is None and not _names_itself(f) \
        and not _one_word_kind(f)


# A kind said as one word ("I'm a rookie", "I'm a beginner, so go easy", "Ich bin Anfänger") is as often how
# one sees oneself at the moment as who one is: kept back unless the reply took it up, as before the
# seventeenth round. A kind with its modifier or complement ("a shooting guard for the team") is shown
# (issue 37, eighteenth round). A script written without spaces (Japanese, Chinese) says no word count.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _one_word_kind(f: Fact) -> bool:
    """A kind of one word, or of one word and a word of praise or size ("a huge softie", "a real homebody")."""
    if f.predicate != "is-a" or _UNSPACED.search(f.object) is not None:
        return False
    words = f.object.split()
    return len(words) == 1 or (len(words) == 2 and PRAISE.fullmatch(words[0].casefold()) is not None)


def _names_itself(f: Fact) -> bool:
    """Whether the object says the subject's own name again: a meeting's speaker named by their role
    ("User Interface is a user usability user interface designer") tells nothing new."""
    name = [word for word in f.subject.partition(":")[2].split("-") if word]
    said = f.object.casefold().split()
    return bool(name) and all(word in said for word in name)


def showable(doc: KnowledgeDoc) -> list[Fact]:
    """The facts Known Facts may show (issue 37, thirteenth round): what people said of
    themselves to another person only as ``MAX_TOLD_PER_PERSON`` per person of what the reply
    took up, none of what it did not, every change in their life (``LIFE_CHANGES``,
    fourteenth round), their family and pets (``FAMILY_AND_PETS``, fifteenth round), who they are
    and what they do (``IDENTITY``, ``PRACTICES``, seventeenth round: ``_with_practices``); every
    other fact — a name's, a project figure, what was
    said to the agent or is still waiting for a reply — as before. The document keeps them all,
    and a search finds them."""
    if not doc.taken_up and not doc.unanswered:
        return doc.facts
    told, hidden = frozenset(doc.taken_up), frozenset(doc.unanswered)
    by_person: dict[str, list[Fact]] = {}
    for f in doc.facts:
        if f.id in told:
            by_person.setdefault(f.subject, []).append(f)
    shown = {f.id for facts in by_person.values()
             for f in sorted(facts, key=lambda f: (as_utc(f.created_at), f.id))[:MAX_TOLD_PER_PERSON]}
    out = [f for f in doc.facts
           if f.predicate in SHOWN_TOLD or under_way(f.predicate) or kin_event(f) or standing_taste(f)
           or (f.id not in hidden and (f.id not in told or f.id in shown))]
    return _with_practices(doc.facts, out)


# What a person does — plays, mentors, volunteers, is learning, works as — told to another person is
# shown taken up or not, as who they are is, but one per person and verb (the first said: "Tim is
# learning piano", not also "… violin", "… German") and none whose words a line of theirs already shown
# says ("Caroline mentors a transgender teen" beside "Caroline joined a mentorship program …"). On the
# development split this shows 3 more true lines in three chats and none wrong; shown without those two
# limits, 4 true and 2 counted wrong (a second line on a label's topic). Chosen leaving one chat out,
# every fold keeps the limited rule (issue 37, seventeenth round).
PRACTICES = frozenset({"plays", "mentors", "coaches", "fosters", "paints", "draws", "teaches", "volunteers-at",
                       "volunteers-as", "volunteers-with", "volunteers-for", "is-learning", "studies", "works-as",
                       "works-at", "works-in", "works-with"})
_STEM_WORD = re.compile(r"[^\W\d_]{4,}")
_STEM = 5  # "mentors" — "mentorship": a word's first letters, as a reader hears the same word
_NOT_STEMS = frozenset({"their", "with", "about", "from", "this", "that", "them", "they"})


def _stems(f: Fact) -> frozenset[str]:
    return _stems_of(f.predicate, f.object)


@functools.lru_cache(maxsize=4096)
def _stems_of(predicate: str, obj: str) -> frozenset[str]:
    return frozenset(w[:_STEM] for w in _STEM_WORD.findall(f"{predicate.replace('-', ' ')} {obj}".casefold())
                     if w not in _NOT_STEMS)


def _with_practices(facts: Sequence[Fact], shown: list[Fact]) -> list[Fact]:
    """``shown`` with what was kept back of who people are (``_who_they_are``: each, but none whose
    words a shown line of that person all say) and of what they do (``PRACTICES``: one per person and
    verb, none any of whose words such a line says), the first said first; in the document's order."""
    have = {f.id for f in shown}
    waiting = [f for f in facts if (f.predicate in PRACTICES or f.predicate in IDENTITY) and f.id not in have
               and (f.predicate in PRACTICES or _who_they_are(f))]
    if not waiting:
        return shown
    people = {f.subject for f in waiting}
    words: dict[str, set[str]] = {}
    for f in shown:
        if f.subject in people:
            words.setdefault(f.subject, set()).update(_stems(f))
    said = {(f.subject, f.predicate) for f in shown}
    for f in sorted(waiting, key=lambda f: (as_utc(f.created_at), f.id)):
        stems, before = _stems(f), words.get(f.subject, set())
        if f.predicate not in PRACTICES:  # who they are: each, but not said again in other words
            if stems and stems <= before:
                continue
        elif (f.subject, f.predicate) in said or stems & before:
            continue
        said.add((f.subject, f.predicate))
        words.setdefault(f.subject, set()).update(stems)
        have.add(f.id)
    return [f for f in facts if f.id in have]


def top_facts(facts: Sequence[Fact], limit: int = MAX_FACTS_IN_BOOT) -> list[Fact]:
    """The most relevant current facts (``current_facts``); recent access, then the id, break ties."""
    ranked = sorted(current_facts(facts), key=lambda f: f.id)
    ranked.sort(key=lambda f: (f.relevance, as_utc(f.last_accessed)), reverse=True)
    return ranked[:limit]


def _fact_line(f: Fact, names: Mapping[str, str]) -> str:
    # Facts refer to entities by id (`person:maria`); the briefing shows their values.
    # Predicates are slugs ("works-at", "located-in"): the briefing reads them as words.
    subject, obj = names.get(f.subject, f.subject), names.get(f.object, f.object)
    return f"- {one_line(fact_sentence(subject, f.predicate, obj))}"


def fact_sentences(facts: Sequence[Fact], names: Mapping[str, str]) -> list[str]:
    """The sentences Known Facts shows (at most; its budget may cut the last)."""
    return [_fact_line(f, names).removeprefix("- ") for f in top_facts(facts)]


def facts_section(facts: Sequence[Fact], budget: int, names: Mapping[str, str] | None = None) -> str:
    lines = [_fact_line(f, names or {}) for f in top_facts(facts)]
    return section("## 🧠 Known Facts", lines, budget)[0]


def shown_facts(markdown: str, facts: Sequence[Fact], names: Mapping[str, str] | None = None) -> list[str]:
    """Ids of the facts whose line a briefing shows (within its budgets and its limit)."""
    lines = set(markdown.split("\n"))
    return [f.id for f in top_facts(facts) if _fact_line(f, names or {}) in lines]


def _facts(b: Briefing, said: Said, budget: int) -> Rendered:
    doc = b.doc(BUCKET_KNOWLEDGE, KnowledgeDoc)
    if doc is None:
        return Rendered("")
    names = entity_names(doc.entities)
    facts = showable(doc)
    return Rendered(facts_section(facts, budget, names), {FACTS: fact_sentences(facts, names)})


def _shown(doc: KnowledgeDoc, markdown: str, tz: ZoneInfo) -> list[str]:
    return shown_facts(markdown, showable(doc), entity_names(doc.entities))


def _updated(doc: KnowledgeDoc) -> datetime:
    return doc.updated


# the facts a briefing asked for shows are accessed: knowledge promotes them (``fact_access``)
SECTIONS: tuple[BriefingSection[Any], ...] = (
    BriefingSection("🧠 Known Facts", BUCKET_KNOWLEDGE, KnowledgeDoc, name="facts", order=800, chars=800,
                    compose=_facts, says=(FACTS,), only_when_relevant=False, follows_messages=True,
                    seen=Seen("fact_access", _shown, stamp=_updated)),
)
