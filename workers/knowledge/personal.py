"""Personal facts: what people say about themselves, and about a person named (pure).

"I'm allergic to cats" said by Caroline is the fact *Caroline is allergic to cats*; "my kids
love dinosaurs" said by Melanie is *Melanie's kids love dinosaurs*; "Maria lives in Porto"
is *Maria lives in Porto*, whoever says it. The knowledge-engine reference leaves every
fact to its LLM, and Cortex's regex path knew only "<Name> works at <Org>" and "<Name> is
a <kind>": a chat full of self-disclosures had no known fact. The phrases are the language
packs' (``personal_packs``); what makes one a fact is said here, once for every language:

* it opens its clause ("Yeah, I'm a nurse", not "I think I'm a nurse" or "if I'm …"), in a
  sentence that does not ask;
* it says what the speaker is, has or does, not what they love, like or enjoy (``OPINIONS``);
* it holds for good: a clause about now ("I'm at the gym today"), negated, hoped or
  wished, or about to happen ("I'm going to be a …") is none;
* its object is the rest of the clause, cut where a new clause begins ("I'm a teacher and I
  love it" → "teacher"), without fillers ("too"), at most ``max_words`` words, and says
  something lasting — not "it", "that", "you", nor "a bit", nor a statement about the
  listener; what "has" takes is family, a pet or a condition ("two kids", not "a question");
* the speaker is the message's sender, and the assistant's "I" is no person's.

In English an object's "my" is said of the subject ("is into hiking with their
family"); in the other languages an object in the speaker's own words is left out.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Final, NamedTuple

from workers.conversation.patterns import MatchText
from workers.conversation.triggers import required_literals
from workers.knowledge.personal_packs import OBJ, PACKS, Check, PersonalPack

DEFAULT_LANGUAGES: Final = ("en", "de")  # the packs of CORTEX_LANGUAGE's default, "both"
MAX_OBJECT_CHARS: Final = 120
DATED_CHARS: Final = 48  # how far before a lead its time phrase is looked for
BEFORE_WORDS: Final = 6  # an object before its phrase is short ("Painting landscapes and still life")
MAX_LEADS: Final = 64
"""At most this many leads of one pack are read for a statement in one message. Each reads an
object of up to 160 characters, so a message made of leads (64 KiB of ", i'm a ") cost ~50× an
ordinary one; the most any of the 91 096 dev messages holds (LoCoMo 0–4, QMSum train) is 8."""
# What the speaker says they love, like or enjoy ("I love traveling too", "I like titanium. It's
# light.", "I love creating art!") is an opinion far more often than a fact about them: on the
# development split of the real-conversation set (issue 37, eighth round; docs/briefing-eval.md)
# these predicates made 19 scored facts, 17 of them wrong (in 7 of the 9 conversations) and 2
# matching a label (one by chance). The packs still read the phrase, so no other
# rule reads its words; the standing forms of a taste stay facts ("I'm into", "I'm passionate
# about", "X is my favourite", "my kids love").
OPINIONS: Final = frozenset({"loves", "likes", "enjoys"})
_SENTENCE_END: Final = re.compile(r"[.!?…。！？\n]")
_WORD: Final = re.compile(r"\w+")
_BAD_CHARS: Final = frozenset("{}[]<>|\\=*#@_~^`$%")


class Rule(NamedTuple):
    predicate: str
    pattern: re.Pattern[str]
    check: Check
    triggers: frozenset[str] | None  # every match contains one of these (None: cannot tell)


def _rule(predicate: str, source: str, check: Check, pattern: str = "{}") -> Rule:
    literals = required_literals(source)
    return Rule(predicate, re.compile(pattern.format(source)), check,
                frozenset(literals) if literals is not None else None)


@dataclass(frozen=True, slots=True, eq=False)
class CompiledPack:
    """One language's personal-fact patterns, compiled (``get_personal_patterns``)."""

    code: str
    lead: re.Pattern[str]
    first_person: tuple[Rule, ...]
    third_person: tuple[Rule, ...]
    anywhere: tuple[Rule, ...]
    third_verbs: tuple[str, ...]
    discourse: frozenset[str]
    coordinators: frozenset[str]
    ends: re.Pattern[str] | None
    trailing: re.Pattern[str] | None
    transient: re.Pattern[str] | None
    unreal: re.Pattern[str] | None
    events: frozenset[str]
    vague: re.Pattern[str] | None
    taste_vague: re.Pattern[str] | None
    passing: re.Pattern[str] | None
    not_nouns: re.Pattern[str] | None
    family: re.Pattern[str] | None
    own_words: re.Pattern[str] | None
    deictic: re.Pattern[str] | None
    comma_clause: re.Pattern[str] | None
    pronouns: tuple[tuple[re.Pattern[str], str], ...]
    verbs: dict[str, str]
    rel_verbs: dict[str, str]
    before: tuple[Rule, ...]
    kind: re.Pattern[str] | None
    before_stop: frozenset[str]
    topic: re.Pattern[str] | None
    max_words: int
    spaced: bool
    heads: re.Pattern[str] | None  # what follows a lead in any of the speaker's rules, up to its object
    before_gate: re.Pattern[str] | None  # no ``before`` rule matches a text without this
    in_passing: tuple[Rule, ...]  # who one is said in passing (``PersonalPack.in_passing``)
    in_passing_words: tuple[str, ...]  # no ``in_passing`` rule matches a text without one of these
    dated: re.Pattern[str] | None  # a time phrase ending where a lead starts (``PersonalPack.dated``)
    reported: re.Pattern[str] | None  # a report to the listener ending there (``PersonalPack.reported``)
    dated_last: frozenset[str]
    reported_last: frozenset[str]
    under_way_not: re.Pattern[str] | None

    @property
    def at_start(self) -> tuple[Rule, ...]:
        """The rules tried at a lead that opens its clause."""
        return self.first_person + self.anywhere


class Said(NamedTuple):
    """A personal statement as read: its subject (a name), predicate and object."""

    subject: str
    predicate: str
    object: str


def _optional(source: str) -> re.Pattern[str] | None:
    return re.compile(source) if source else None


def _compile(pack: PersonalPack) -> CompiledPack:
    return CompiledPack(
        code=pack.code,
        lead=re.compile(pack.lead),
        first_person=tuple(_rule(p, s, c) for p, s, c in pack.first_person),
        third_person=tuple(_rule(p, s, c) for p, s, c in pack.third_person),
        anywhere=tuple(_rule(p, s, c) for p, s, c in pack.anywhere),
        third_verbs=pack.third_verbs,
        discourse=frozenset(pack.discourse),
        coordinators=frozenset(pack.coordinators),
        ends=_optional(pack.ends),
        trailing=_optional(pack.trailing),
        transient=_optional(pack.transient),
        unreal=_optional(pack.unreal),
        events=frozenset(pack.events),
        vague=_optional(pack.vague),
        taste_vague=_optional(pack.taste_vague),
        passing=_optional(pack.passing),
        not_nouns=_optional(pack.not_nouns),
        family=_optional(pack.family),
        own_words=_optional(pack.own_words),
        deictic=_optional(pack.deictic),
        comma_clause=_optional(pack.comma_clause),
        pronouns=tuple((re.compile(rf"\b{word}\b"), said) for word, said in pack.pronouns),
        verbs=dict(pack.verbs),
        rel_verbs=dict(pack.rel_verbs),
        # searched, not matched at a lead: starting only at a run's first blank keeps a page of
        # blanks from being rescanned from each of them
        before=tuple(_rule(p, s, c, r"(?<!\s)(?:{})") for p, s, c in pack.before),
        kind=_optional(pack.kind),
        before_stop=frozenset(pack.before_stop),
        topic=_optional(pack.topic),
        max_words=pack.max_words,
        spaced=pack.spaced,
        heads=_heads((*pack.first_person, *pack.anywhere)),
        before_gate=_optional(pack.before_gate),
        in_passing=tuple(_rule(p, s, c) for p, s, c in pack.in_passing),
        in_passing_words=pack.in_passing_words,
        dated=re.compile(f"(?:{pack.dated})$") if pack.dated else None,
        reported=re.compile(f"(?:{pack.reported})$") if pack.reported else None,
        dated_last=frozenset(pack.dated_last),
        reported_last=frozenset(pack.reported_last),
        under_way_not=_optional(pack.under_way_not),
    )


_GROUP_NAME: Final = re.compile(r"\(\?P<\w+>")


def _heads(rules: Sequence[tuple[str, str, Check]]) -> re.Pattern[str] | None:
    """Every rule's source up to its object as one alternation (names dropped: they repeat)."""
    heads = [source.removesuffix(OBJ).split("(?#obj)", 1)[0] for _, source, _ in rules]
    return re.compile("|".join(f"(?:{_GROUP_NAME.sub('(?:', head)})" for head in heads)) if heads else None


@lru_cache(maxsize=32)
def get_personal_patterns(languages: tuple[str, ...]) -> tuple[CompiledPack, ...]:
    """The compiled packs of ``languages``, in their order (unknown codes ignored)."""
    return tuple(_compile(PACKS[code]) for code in dict.fromkeys(languages) if code in PACKS)


# --- where a statement may start ------------------------------------------------------------


def _word_before(lowered: str, end: int) -> tuple[str, int]:
    start = end
    while start > 0 and (lowered[start - 1].isalnum() or lowered[start - 1] in "'’"):
        start -= 1
    return lowered[start:end], start


def opens_clause(lowered: str, pos: int, discourse: frozenset[str], spaced: bool = True,
                 coordinators: frozenset[str] = frozenset()) -> bool:
    """True when only discourse words ("yeah", "also"; at most three) stand between ``pos``
    and the start of its clause: the text's start, a punctuation mark, a symbol, or a word
    that joins clauses ("and", "but")."""
    skipped = 0
    while True:
        end = pos
        while end > 0 and lowered[end - 1] in " \t":
            end -= 1
        if end == 0:
            return True
        before = lowered[end - 1]
        if not (before.isalnum() or before in "'’"):
            return True
        if not spaced:
            return False
        word, start = _word_before(lowered, end)
        if word in coordinators:
            return True  # "Soy de Madrid y trabajo como …": a new clause
        if skipped >= 3 or word not in discourse:
            return False
        skipped += 1
        pos = start


class _Asks:
    """Whether the sentence around an offset of ``lowered`` ends with a question mark.

    The text's sentence ends are found once, on the first question: a search from every lead
    rescanned the rest of the text each time, quadratic in a long message of leads (a 64 KiB
    run of ", i'm a " cost ~50× an ordinary message)."""

    __slots__ = ("_ends", "_lowered")

    def __init__(self, lowered: str) -> None:
        self._lowered = lowered
        self._ends: list[int] | None = None

    def __call__(self, pos: int) -> bool:
        if self._ends is None:
            self._ends = [end.start() for end in _SENTENCE_END.finditer(self._lowered)]
        at = bisect_left(self._ends, pos)
        return at < len(self._ends) and self._lowered[self._ends[at]] in "?？"


# --- the object ----------------------------------------------------------------------------


def _cut(pack: CompiledPack, original: str, lowered: str, start: int, end: int) -> int:
    """Where the object starting at ``start`` ends: before a new clause, and before a comma
    that a lower-case word follows ("I live in Berlin, Germany" keeps its comma)."""
    if pack.ends is not None:
        stop = pack.ends.search(lowered, start, end)
        if stop is not None:
            end = stop.start()
    if pack.comma_clause is not None:
        stop = pack.comma_clause.search(lowered, start, end)
        return end if stop is None else stop.start()
    comma = lowered.find(",", start, end)
    while comma != -1:
        after = original[comma + 1:end].lstrip()
        if not after or not after[0].isupper() or not pack.spaced:
            return comma
        comma = lowered.find(",", comma + 1, end)
    return end


def _tidy(pack: CompiledPack, original: str, lowered: str) -> str:
    """The object without the marks around it, a symbol or emoji at its end, and fillers."""
    start, end = 0, len(original)
    edge = " \t,;:-–—\"'“”„()"
    while start < end and original[start] in edge:
        start += 1
    while end > start and not (original[end - 1].isalnum() or original[end - 1] in ")'’"):
        end -= 1
    if pack.trailing is not None:
        filler = pack.trailing.search(lowered, start, end)
        end = filler.start() if filler is not None else end
    while end > start and original[end - 1] in edge:
        end -= 1
    return original[start:end]


def _name_run(obj: str) -> str:
    """The capitalised words that open ``obj`` ("Sweden", "New York", "the Netherlands")."""
    words = obj.split()
    kept: list[str] = []
    for i, word in enumerate(words[:5]):
        if word[:1].isupper() or (i == 0 and word.lower() == "the") or (kept and word in ("of", "de", "del", "la")):
            kept.append(word)
        else:
            break
    while kept and not kept[-1][:1].isupper():
        kept.pop()
    return " ".join(kept)


def _checked(pack: CompiledPack, obj: str, check: Check) -> str | None:
    lowered = obj.lower()
    if check in {"name", "capitalized"}:
        if not obj[:1].isupper() and not (check == "name" and lowered.startswith("the ")):
            return None
        if check == "name" and pack.spaced:
            return _name_run(obj) or None
        return obj
    if check == "noun" and pack.not_nouns is not None and pack.not_nouns.match(lowered):
        return None
    if check == "family" and (pack.family is None or pack.family.search(lowered) is None):
        return None
    if check == "taste" and any(p is not None and p.match(lowered) for p in (pack.taste_vague, pack.passing)):
        return None
    if check == "kind" and (pack.kind is None or pack.kind.search(lowered) is None):
        return None
    return obj


def _said_of_them(pack: CompiledPack, obj: str) -> str | None:
    """``obj`` with its first-person words said of the subject (English), or cut before the
    speaker's own words and the short word leading to them ("Paris avec mon mari": Paris);
    None when nothing is left."""
    for pattern, said in pack.pronouns:
        obj = pattern.sub(said, obj)
    own = pack.own_words.search(obj.lower()) if pack.own_words is not None else None
    if own is None:
        return obj
    head = obj[:own.start()].split(" ")
    while head and (not head[-1] or (len(head[-1]) <= 5 and head[-1].islower() and pack.spaced)):
        head.pop()
    return " ".join(head).strip(" ,;:-–—") or None


def _object(pack: CompiledPack, text: MatchText, span: tuple[int, int], check: Check) -> str | None:
    start, end = span
    end = _cut(pack, text.original, text.lowered, start, end)
    obj = _tidy(pack, text.original[start:end], text.lowered[start:end])
    lowered = obj.lower()
    if not obj or len(obj) > MAX_OBJECT_CHARS or any(ch in _BAD_CHARS for ch in obj):
        return None
    if pack.vague is not None and pack.vague.match(lowered):
        return None
    if pack.deictic is not None and pack.deictic.search(lowered):
        return None
    if lowered.isascii() and not any(len(word) > 2 for word in _WORD.findall(lowered)) \
            and not (check == "name" and obj[:1].isupper()):
        return None  # "to", "it": no word that says anything (a name may be short: "My name is Ed")
    if pack.spaced and len(obj.split()) > pack.max_words:
        return None
    if re.search(r"\byou(?:r|rs|rself)?\b", lowered) and pack.code == "en":
        return None
    kept = _checked(pack, obj, check)
    return None if kept is None else _said_of_them(pack, kept)


# --- statements ----------------------------------------------------------------------------


def _slug(words: str) -> str:
    return "-".join(words.lower().split())


def _predicate(pack: CompiledPack, rule: Rule, found: re.Match[str]) -> str:
    predicate = rule.predicate
    groups = found.groupdict()
    if "{verb}" in predicate:
        verb = " ".join((groups.get("verb") or "").split())
        said = pack.rel_verbs if predicate.startswith("'s-") else pack.verbs
        predicate = predicate.replace("{verb}", _slug(said.get(verb, verb)))
    if "{rel}" in predicate:
        predicate = predicate.replace("{rel}", _slug(groups.get("rel") or ""))
    if "{noun}" in predicate:
        noun = groups.get("noun")
        predicate = predicate.replace("-{noun}", f"-{_slug(noun)}" if noun else "")
    return predicate


def _about_now(pack: CompiledPack, lowered: str, start: int, end: int, predicate: str = "") -> bool:
    """The clause is about now, or not real: for an event that stays true ("I lost my job at
    Door Dash this month", ``events``) only a wish, a negation or a plan is."""
    words = pack.unreal if predicate in pack.events and pack.unreal is not None else pack.transient
    return words is not None and words.search(lowered, start, end) is not None


def _statement(pack: CompiledPack, text: MatchText, at: int, rules: Sequence[Rule]) -> tuple[str, str] | None:
    """The first rule that reads a lasting statement at ``at``: (predicate, object)."""
    for rule in rules:
        found = rule.pattern.match(text.lowered, at)
        if found is None:
            continue
        obj = _object(pack, text, found.span("obj"), rule.check)
        if obj is None:
            return None  # the phrase is this one; its object says nothing lasting
        end = found.start("obj") + len(obj)
        predicate = _predicate(pack, rule, found)
        if _about_now(pack, text.lowered, at, min(end, found.end()), predicate):
            return None
        if pack.under_way_not is not None and under_way(predicate) \
                and pack.under_way_not.search(text.lowered, found.start("obj"), found.end()) is not None:
            return None
        return predicate, _had(obj) if rule.predicate == "has" else obj
    return None


_HAD: Final = re.compile(r"^(?:their|another)\s+", re.IGNORECASE)


def _had(obj: str) -> str:
    """What one has, said without the speaker's own "my" ("lucky to have my husband and
    kids": has husband and kids) and as one more ("we got another cat": has a cat)."""
    return _HAD.sub(lambda m: "a " if m.group().lower().startswith("another") else "", obj)


def _last_word(lowered: str, at: int) -> str:
    """The word before ``at``, past blanks and one comma ("last week, i": "week")."""
    end = at
    while end > 0 and lowered[end - 1] in " \t":
        end -= 1
    if end > 0 and lowered[end - 1] == ",":
        end -= 1
    return _word_before(lowered, end)[0]


def _leads(pack: CompiledPack, text: MatchText) -> Iterator[tuple[int, bool, bool]]:
    """Each lead that some rule's words follow, outside a question, whether it opens its clause,
    and whether only a time phrase before it does ("Just yesterday I joined …": dated). Most
    leads ("I'll", "I think") fail the one ``heads`` match and cost nothing more."""
    lowered = text.lowered
    heads = pack.heads
    if heads is None:
        return
    asks = _Asks(lowered)
    for found in pack.lead.finditer(lowered):
        at = found.start()
        # the lead starts a word (checked here: a leading "\b" keeps ``re`` from skipping ahead to its letters)
        if at and (lowered[at - 1].isalnum() or lowered[at - 1] in "_'’"):
            continue
        if heads.match(lowered, at) is None or asks(at):
            continue
        if opens_clause(lowered, at, pack.discourse, pack.spaced, pack.coordinators):
            yield at, True, False
            continue
        last = _last_word(lowered, at)
        if last in pack.reported_last and pack.reported is not None \
                and pack.reported.search(lowered, max(0, at - DATED_CHARS), at) is not None:
            yield at, True, False
            continue
        when = pack.dated.search(lowered, max(0, at - DATED_CHARS), at) \
            if last in pack.dated_last and pack.dated is not None else None
        dated = when is not None and opens_clause(lowered, when.start(), pack.discourse, pack.spaced,
                                                  pack.coordinators)
        yield at, dated, dated


def _object_before(pack: CompiledPack, text: MatchText, found: re.Match[str], check: Check) -> str | None:
    """The object a ``before`` rule follows: its clause up to the match ("Blue's my fave"),
    for a name the one word before it ("Oscar, my guinea pig"); where the pack has
    ``before_stop``, the word up to such a character ("私は猫が好き": 猫), and what stands
    before it in the clause must be the speaker as ``topic`` (or nothing)."""
    lowered, start = text.lowered, found.start()
    inside = " \t'’-" if not pack.before_stop else ""
    while start > 0 and (lowered[start - 1].isalnum() or lowered[start - 1] in inside) \
            and lowered[start - 1] not in pack.before_stop:
        start -= 1
    if check == "name":
        start = max(start, lowered.rfind(" ", start, found.start()) + 1)
    elif pack.spaced:  # "I love all dances, but contemporary is my top pick": the clause starts after its "but"
        begin = start
        while begin < found.start() and lowered[begin] in " \t":
            begin += 1
        first = _WORD.match(lowered, begin)
        if first is not None and first.group() in pack.coordinators and lowered[first.end():first.end() + 1] == " ":
            start = first.end() + 1
    if pack.before_stop and not _speaker_topic(pack, lowered, start):
        return None
    obj = _object(pack, text, (start, found.start()), check)
    if obj is None or len(obj.split()) > BEFORE_WORDS:
        return None
    # a clause's first word is capitalised as its sentence's: "Playing video games … are my main hobbies" is
    # read "playing video games …" (an "-ing" word before a lower-case one is no name; eighteenth round)
    return obj[:1].lower() + obj[1:] if _OPENING_GERUND.match(obj) else obj


_OPENING_GERUND: Final = re.compile(r"[A-Z][a-z]+ing\s+[a-z]")


def _speaker_topic(pack: CompiledPack, lowered: str, start: int) -> bool:
    """Only the speaker as topic ("私は", "저는") stands between the clause start and ``start``."""
    begin = start
    while begin > 0 and (lowered[begin - 1].isalnum() or lowered[begin - 1] in " \t"):
        begin -= 1
    before = lowered[begin:start].strip()
    return not before or (pack.topic is not None and pack.topic.fullmatch(before) is not None)


def _befores(pack: CompiledPack, text: MatchText, speaker: str, rules: Sequence[Rule]) -> Iterator[tuple[Said, int]]:
    asks = _Asks(text.lowered)
    for rule in rules:
        for found in rule.pattern.finditer(text.lowered):
            obj = None if asks(found.start()) else _object_before(pack, text, found, rule.check)
            if obj is not None and not _about_now(pack, text.lowered, found.start() - len(obj), found.end()):
                yield Said(speaker, _predicate(pack, rule, found), obj), found.start()


def _in_passing(pack: CompiledPack, text: MatchText, speaker: str) -> Iterator[tuple[Said, int]]:
    """Who the speaker is, said before their own clause ("As a nurse, I …"): each match that opens its clause,
    outside a question, its object checked as a lead's is (twenty-fifth round)."""
    lowered = text.lowered
    asks: _Asks | None = None
    for rule in pack.in_passing:
        for found in islice(rule.pattern.finditer(lowered), MAX_LEADS):
            at = found.start()
            if at and (lowered[at - 1].isalnum() or lowered[at - 1] in "_'’"):
                continue  # inside a word ("has a", "animals")
            asks = asks or _Asks(lowered)
            if asks(at) or not opens_clause(lowered, at, pack.discourse, pack.spaced, pack.coordinators):
                continue
            obj = _object(pack, text, found.span("obj"), rule.check)
            if obj is not None and not _about_now(pack, lowered, at, found.end()):
                yield Said(speaker, _predicate(pack, rule, found), obj), at


def _may_match(rule: Rule, text: str) -> bool:
    """One of the rule's literals is in ``text`` (else its regex cannot match there)."""
    return rule.triggers is None or any(literal in text for literal in rule.triggers)


def self_statements(text: MatchText, speaker: str, packs: Sequence[CompiledPack]) -> list[Said]:
    """What ``speaker`` says of themselves in ``text``, in order, each once."""
    return [said for said, _ in self_statements_at(text, speaker, packs)]


def self_statements_at(text: MatchText, speaker: str, packs: Sequence[CompiledPack]) -> list[tuple[Said, int]]:
    """``self_statements``, each with where in ``text`` it was first read (its sentence is
    the one around that offset)."""
    found: dict[Said, int] = {}
    for pack in packs:
        for at, opens, dated in islice(_leads(pack, text), MAX_LEADS):
            said = _statement(pack, text, at, pack.at_start if opens else pack.anywhere)
            if said is not None and (not dated or said[0] in pack.events):
                found.setdefault(Said(speaker, *said), at)
        for word in pack.in_passing_words:
            if word in text.lowered:
                for said_of, at in _in_passing(pack, text, speaker):
                    found.setdefault(said_of, at)
                break
        if pack.before and (pack.before_gate is None or pack.before_gate.search(text.lowered) is not None):
            before = [rule for rule in pack.before if _may_match(rule, text.lowered)]
            for said_of, at in _befores(pack, text, speaker, before):
                found.setdefault(said_of, at)
    return [(said, at) for said, at in found.items() if said.predicate not in OPINIONS]


# A practice under way said with an open verb (``personal_packs``: "is-{verb}", "started-{verb}" of any
# "-ing" word, tried after every closed phrase): "Jon is starting a dance studio", "Maria started doing
# aerial yoga". Any "-ing" word is read there, so one statement alone is weak evidence: the knowledge
# core holds it back until the listener takes it up or the speaker says it again on a later day
# (``core._under_way``; issue 37, sixteenth round). The closed phrases of that shape ("is-learning",
# "is-writing") are facts as they were.
_UNDER_WAY: Final = re.compile(r"(?:is|started)-[a-z]+ing")
_CLOSED: Final = frozenset(rule[0] for pack in PACKS.values()
                           for rule in (*pack.first_person, *pack.anywhere, *pack.third_person)
                           if _UNDER_WAY.fullmatch(rule[0]))


def under_way(predicate: str) -> bool:
    """Whether ``predicate`` is a practice under way read with an open verb (not a closed phrase's)."""
    return predicate not in _CLOSED and _UNDER_WAY.fullmatch(predicate) is not None


@lru_cache(maxsize=32)
def name_verbs(packs: tuple[CompiledPack, ...]) -> frozenset[str]:
    """The first words of every pack's third-person statements ("lives", "wohnt", "vive")."""
    return frozenset(verb for pack in packs for verb in pack.third_verbs)


@lru_cache(maxsize=32)
def _name_clause_words(packs: tuple[CompiledPack, ...]) -> tuple[frozenset[str], frozenset[str]]:
    return (frozenset().union(*(p.discourse for p in packs)), frozenset().union(*(p.coordinators for p in packs)))


def name_opens_clause(lowered: str, start: int, packs: tuple[CompiledPack, ...]) -> bool:
    """The name at ``start`` opens its clause, by any pack's discourse and joining words."""
    discourse, coordinators = _name_clause_words(packs)
    return opens_clause(lowered, start, discourse, True, coordinators)


def name_statement(text: MatchText, name_start: int, name_end: int,
                   packs: Sequence[CompiledPack]) -> tuple[str, str] | None:
    """A statement about the name at ``name_start:name_end`` ("Maria lives in Porto"): the
    name must open its clause; (predicate, object) of the first pack that reads one."""
    for pack in packs:
        if not pack.third_person or not opens_clause(text.lowered, name_start, pack.discourse, pack.spaced,
                                                     pack.coordinators):
            continue
        said = _statement(pack, text, name_end, pack.third_person)
        if said is not None:
            return said
    return None
