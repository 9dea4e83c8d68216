"""A person's family and pets, told across turns: one fact per person and kind, its nouns kept
with their owner (issue 37, fifteenth round; docs/briefing-eval.md "Fifteenth round: facts").

Chat tells a family a noun at a time: "I got a puppy two weeks ago! Her name's Coco", a turn
later "I just adopted this cute pup" and, the next turn, "Her name is Shadow!"; "Our
one-year-old is so cute, his name is Kyle!", weeks later "my daughter Sara's birthday". No
clause holds the noun with a name and its owner together, and a fact per noun ("Maria has a
puppy") pairs with no label that names two. This module reads the structure instead of a
phrase: a kin or pet noun of a closed class, owned by the speaker ("my", "our"; had, got or
adopted), and the name, age or count given with it in the same sentence, or — the name — in the
speaker's next sentence or turn ("her name is …"). The nouns of a kind gather in one fact about
the speaker, "Maria's pets include a puppy named Coco, a pup named Shadow" (``'s-pets-include``,
``'s-family-includes``), replaced as it grows.

What starts the fact (``Kin.fixed``): a noun owned with a name, age or count ("my daughter
Sara", "Oscar, my guinea pig", "our one-year-old … his name is Kyle", "my two kids"), or owned
by a statement of having ("we've got a pup and a kitty", "I just adopted this cute pup"). Once
there, every noun of that kind the speaker says as theirs joins it ("my kids", "my son"). A noun
someone else owns ("your dog", "her kids") or a teacher's "the kids" is none; a noun that
modifies another ("my horse painting") is none.

The lexicon is a closed class per pack: English and German have it; the other eight packs do not
(their possessives, counters and particles want their own reading) and keep the per-clause rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal, NamedTuple

Kind = Literal["family", "pets"]
PREDICATES: Final[dict[Kind, str]] = {"family": "'s-family-includes", "pets": "'s-pets-include"}
MAX_ITEMS: Final = 6
MAX_OBJECT_CHARS: Final = 120
MAX_MENTIONS: Final = 16  # per message: a page of "my dog my dog …" is read this far
NAME_WINDOW_SECONDS: Final = 600  # "Her name is Shadow!" names the noun of the speaker's turn this recent


@dataclass(frozen=True, slots=True)
class KinPack:
    code: str
    family: str  # the family nouns (a closed class)
    pets: str  # the pets
    owner: str  # the speaker's possessive before a noun ("my", "our")
    have: str  # a statement of having before a noun ("I've got a", "we adopted this")
    between: str  # words that may stand between the owner and the noun ("little", "new", "two")
    counts: str  # a count or an age among them: the noun is told, not passing
    named: str  # after the noun: its name ("named X", "called X", ", X")
    name_before: str  # before "my <noun>": its name ("Oscar, my guinea pig")
    name_next: str  # a later sentence naming the noun just said ("her name is X")
    not_after: str  # a word after the noun that makes it a modifier ("my horse painting")
    gift: str  # after a noun got: whom it is for ("I got this new pup for you"): not the speaker's
    article: tuple[str, str]  # the indefinite articles of an item: before a consonant, before a vowel
    named_word: str  # how an item says its name ("a puppy named Coco", "ein Hund namens Bello")
    # nouns of one animal or one person ("dog pup puppy", "husband partner"): an item said plain beside one of
    # its kind says nothing new ("a husband, kids, a partner": the partner is the husband; seventeenth round)
    same: tuple[str, ...] = ()
    female: str = ""  # the nouns "her name is …" / "sie heißt …" may name (a wife, a daughter): not "his"
    male: str = ""  # and "his name is …" / "er heißt …" (a husband, a son): not "her"


# a name: a capitalised word, not an adverb opening a sentence ("Thankfully, my son's ok")
_NAME: Final = r"(?P<name>(?![A-Z][a-z]*ly\b)[A-Z][a-z]{1,20})"
_EN_FAMILY = (r"husband|wife|hubby|missus|partner|boyfriend|girlfriend|fianc[ée]e?|spouse|sons?|daughters?"
              r"|kids|children|child|kid|bab(?:y|ies)|toddlers?|twins|mom|mum|mother|dad|father|parents"
              r"|brothers?|sisters?|siblings|grandma|grandmother|grandpa|grandfather|grandparents|grandkids"
              r"|grandchildren|grandsons?|granddaughters?|aunt|uncle|cousins?|nieces?|nephews?"
              r"|(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)-(?:year|month)-old")
_EN_PETS = (r"dogs?|cats?|pupp(?:y|ies)|pups?|kittens?|kitty|kitties|guinea\s+pigs?|hamsters?|rabbits?"
            r"|bunn(?:y|ies)|parrots?|horses?|turtles?|tortoises?|snakes?|lizards?|ferrets?|gerbils?")
_EN_NUMBERS = r"two|three|four|five|six|seven|eight|nine|ten|\d{1,2}"

EN: Final = KinPack(
    code="en",
    family=_EN_FAMILY,
    pets=_EN_PETS,
    owner=r"\b(?:my|our)\s+",
    have=(r"\b(?:i|we)(?:\s+(?:also|just|recently|finally|now|still))?(?:\s+have|['’]ve\s+got|\s+have\s+got|\s+got"
          r"|\s+adopted|\s+rescued)\s+(?:a|an|another|this|two|three|four|five)\s+"),
    between=(rf"(?:(?:little|new|baby|sweet|cute|beloved|furry|own|older|younger|big|two|three|four|five|six|"
             rf"{_EN_NUMBERS}|\w+-year-old|rescue|adopted)\s+){{0,2}}"),
    counts=rf"\b(?:{_EN_NUMBERS}|\w+-(?:year|month)-old)\b",
    named=rf"(?:\s+(?:named|called)\s+|,\s+|\s+(?=[A-Z][a-z]+(?:['’]s)?\b(?!\s+(?:and|&)\s)))(?=[A-Z]){_NAME}",
    name_before=rf"{_NAME},\s+$",
    name_next=(rf"\b(?:(?P<who>[Hh]is|[Hh]er|[Ii]ts|[Tt]heir)\s+name(?:['’]s|\s+is)"
               rf"|(?P<who2>[Hh]e|[Ss]he)(?:['’]s|\s+is)\s+(?:named|called))\s+{_NAME}"),
    not_after=(r"\s+(?:painting|drawing|photo|pic|picture|portrait|sculpture|costume|toy|toys|food|bed|walker"
               r"|sitter|show|story|stories|book|character|friendly|hair|park|shelter|'s\s+house)\b"),
    gift=r"\s+for\s+(?:you|ya|him|her|them|the|my|our|your)\b",
    article=("a", "an"),
    named_word="named",
    same=("dog dogs pup pups puppy puppies", "cat cats kitten kittens kitty kitties", "rabbit rabbits bunny bunnies",
          "turtle turtles tortoise tortoises",
          "husband hubby wife missus partner spouse boyfriend girlfriend fiancé fiancée fiance fiancee",
          "kids kid children child", "mom mum mother", "dad father", "grandma grandmother", "grandpa grandfather"),
    female=(r"wife|missus|girlfriend|fianc[ée]e|daughters?|mom|mum|mother|sisters?|grandma|grandmother|aunt|nieces?"
            r"|granddaughters?"),
    male=r"husband|hubby|boyfriend|fianc[ée]|sons?|dad|father|brothers?|grandpa|grandfather|uncle|nephews?|grandsons?",
)

DE: Final = KinPack(
    code="de",
    family=(r"mann|ehemann|frau|ehefrau|partner(?:in)?|freund(?:in)?|sohn|söhne|tochter|töchter|kinder|kind"
            r"|baby|zwillinge|mutter|mama|vater|papa|eltern|bruder|brüder|schwester|schwestern|geschwister"
            r"|oma|opa|großeltern|enkel(?:kinder|in)?|tante|onkel|cousine?|nichte|neffe"),
    pets=r"hund|hunde|katze|katzen|kater|haustiere|meerschweinchen|hamster|kaninchen|pferd|pferde|schildkröten?",
    owner=r"\b(?:mein|meine|meinen|meinem|meiner|unser|unsere|unseren|unserem|unserer)\s+",
    have=(r"\b(?:ich|wir)\s+(?:habe|haben|hab)\s+(?:(?:auch|jetzt|seit\s+kurzem|endlich)\s+)?"
          r"(?:einen|eine|ein|zwei|drei|vier)\s+"),
    between=r"(?:(?:kleine[nrm]?|neue[nrm]?|süße[nrm]?|zwei|drei|vier|\d{1,2})\s+){0,2}",
    counts=r"\b(?:zwei|drei|vier|fünf|\d{1,2})\b",
    named=rf"(?:\s+(?:namens|names)\s+|,\s+|\s+(?=[A-Z][a-z]+\b))(?=[A-Z]){_NAME}",
    name_before=rf"{_NAME},\s+$",
    name_next=rf"\b(?P<who>[Ee]r|[Ss]ie|[Ee]s)\s+heißt\s+{_NAME}",
    not_after=r"\s+(?:bild|foto|zeichnung|futter|spielzeug)\b",
    gift=r"\s+für\s+(?:dich|euch|sie|ihn|meine[nm]?|unsere[nm]?)\b",
    article=("ein", "ein"),
    named_word="namens",
    same=("hund hunde", "katze katzen kater", "mann ehemann frau ehefrau partner partnerin freund freundin",
          "kind kinder", "mutter mama", "vater papa", "pferd pferde"),
    female=r"frau|ehefrau|partnerin|freundin|tochter|töchter|mutter|mama|schwester|schwestern|oma|tante|cousine|nichte",
    male=r"mann|ehemann|partner|freund|sohn|söhne|vater|papa|bruder|brüder|opa|onkel|cousin|neffe",
)

PACKS: Final[dict[str, KinPack]] = {"en": EN, "de": DE}


class Mention(NamedTuple):
    """A kin or pet noun the speaker owns, as read: its kind, its item text ("a puppy named
    Coco"), the noun ("puppy"), its name, and whether it starts the fact (a name, an age or a
    count said with it, or a statement of having)."""

    kind: Kind
    item: str
    noun: str
    name: str
    fixed: bool


@dataclass(frozen=True, slots=True)
class Compiled:
    pack: KinPack
    noun: re.Pattern[str]  # an owner or a statement of having, the words between, and the noun
    gate: re.Pattern[str]  # an owner or a statement of having at all (one search rules most messages out)
    family: re.Pattern[str]
    named: re.Pattern[str]
    name_before: re.Pattern[str]
    name_next: re.Pattern[str]
    not_after: re.Pattern[str]
    gift: re.Pattern[str]
    counts: re.Pattern[str]
    had: re.Pattern[str]  # a noun in the object of a statement of having
    same: dict[str, str]  # a noun → its ``KinPack.same`` group ("en:0")
    female: re.Pattern[str] | None
    male: re.Pattern[str] | None


def _compile(pack: KinPack) -> Compiled:
    noun = (rf"(?:(?P<owner>{pack.owner})|(?P<have>{pack.have})){pack.between}"
            rf"(?P<noun>{pack.family}|{pack.pets})\b")
    return Compiled(pack=pack, noun=re.compile(noun, re.IGNORECASE),
                    gate=re.compile(f"{pack.owner}|{pack.have}", re.IGNORECASE),
                    family=re.compile(rf"(?:{pack.family})", re.IGNORECASE), named=re.compile(pack.named),
                    name_before=re.compile(pack.name_before), name_next=re.compile(pack.name_next),
                    not_after=re.compile(pack.not_after, re.IGNORECASE), gift=re.compile(pack.gift, re.IGNORECASE),
                    counts=re.compile(pack.counts, re.IGNORECASE),
                    had=re.compile(rf"(?<!\w)(?P<between>{pack.between})(?P<noun>{pack.family}|{pack.pets})\b(?!-)",
                                   re.IGNORECASE),
                    same={noun: f"{pack.code}:{i}" for i, group in enumerate(pack.same) for noun in group.split()},
                    female=re.compile(pack.female) if pack.female else None,
                    male=re.compile(pack.male) if pack.male else None)


@lru_cache(maxsize=32)
def kin_packs(languages: tuple[str, ...]) -> tuple[Compiled, ...]:
    """The compiled kin lexicons of ``languages`` that have one (English, German)."""
    return tuple(_compile(PACKS[code]) for code in dict.fromkeys(languages) if code in PACKS)


_STOP_NAMES: Final = frozenset({"I", "And", "But", "So", "The", "He", "She", "We", "They", "It", "My", "Our", "This",
                                "That", "Thanks", "Yes", "Yeah", "Oh", "Wow", "Haha", "Und", "Aber", "Er", "Sie", "Es",
                                "Ich", "Wir", "Das", "Die", "Der"})


def _item(c: Compiled, noun: str, between: str, name: str) -> str:
    noun = " ".join(noun.split())
    low = noun.lower()
    plural = low in _DE_PLURALS if c.pack.code != "en" else (
        (low.endswith("s") and not low.endswith(("ss", "us"))) or low == "children")
    told = " ".join(w for w in between.split() if c.counts.fullmatch(w))
    head = f"{told} {noun}".strip()
    if not plural and not told:
        vowel = head[:1].lower() in "aeiou" and not c.counts.fullmatch(head)
        head = f"{c.pack.article[1] if vowel else c.pack.article[0]} {head}"
    return f"{head} {c.pack.named_word} {name}" if name else head


_DE_PLURALS: Final = frozenset({"kinder", "söhne", "töchter", "zwillinge", "eltern", "brüder", "schwestern",
                                "geschwister", "großeltern", "enkelkinder", "hunde", "katzen", "haustiere", "pferde",
                                "schildkröten"})


# after "<noun>, <Name>": more names — a list the noun is one of, not the noun's name ("my girlfriend, Toby
# and Buddy"; with the list's last comma too, "my girlfriend, Toby, and Buddy": eighteenth round)
_A_LIST: Final = re.compile(r"\s*(?:,\s*(?:(?:and|&|und)\s+)?|\s+(?:and|&|und)\s+)[A-Z][a-z]")


# after "<Name>, my <noun>": "and I" — the people who did something, not the noun's name ("Toby, my girlfriend
# and I went hiking"; eighteenth round)
_AND_I: Final = re.compile(r"\s+(?:and|&|und)\s+(?:I|me|we|us|ich|wir|mir|mich)\b", re.IGNORECASE)


def mentions(text: str, packs: Sequence[Compiled]) -> list[tuple[Mention, int]]:
    """The kin and pet nouns a message's speaker owns, each with where it ends (``text`` as
    written: names are capitalised), in order; then a name said of the last singular one
    ("… his name is Kyle") is given to it. At most ``MAX_MENTIONS``."""
    found: list[tuple[Mention, int]] = []
    for c in packs:
        if c.gate.search(text) is None:
            continue
        for m in c.noun.finditer(text):
            if len(found) >= MAX_MENTIONS:
                break
            if c.not_after.match(text, m.end()) or (m.group("have") and c.gift.match(text, m.end())):
                continue
            noun = m.group("noun")
            named = c.named.match(text, m.end())
            name = named.group("name") if named is not None and named.group("name") not in _STOP_NAMES else ""
            if name and named is not None and text.startswith(",", m.end()) and _A_LIST.match(text, named.end()):
                name = ""  # "with my girlfriend, Toby and Buddy": a list of others, not her name
            if not name and m.group("owner") and _AND_I.match(text, m.end()) is None:
                before = c.name_before.search(text, max(0, m.start() - 24), m.start())
                name = before.group("name") if before is not None and before.group("name") not in _STOP_NAMES else ""
            between = text[m.end("owner") if m.group("owner") else m.end("have"):m.start("noun")]
            if m.group("have") and c.counts.fullmatch(last := m.group("have").split()[-1]):
                between = f"{last} {between}"  # "I have four dogs": the count is the statement's (eighteenth round)
            told = bool(name) or c.counts.search(between) is not None or c.counts.fullmatch(noun) is not None \
                or "-" in noun or m.group("have") is not None
            kind: Kind = "family" if c.family.fullmatch(noun) else "pets"
            found.append((Mention(kind, _item(c, noun, between, name), noun.lower(), name, told), m.end()))
    return found


def had(obj: str, packs: Sequence[Compiled]) -> list[Mention]:
    """The kin and pet nouns of what a person has ("a pup and a kitty", "husband and kids", "another
    cat named Bailey"): each starts its kind's fact, as a noun owned with a name does."""
    out: list[Mention] = []
    for c in packs:
        for m in c.had.finditer(obj):
            if len(out) >= MAX_MENTIONS:
                break
            noun = m.group("noun")
            named = c.named.match(obj, m.end())
            name = named.group("name") if named is not None and named.group("name") not in _STOP_NAMES else ""
            kind: Kind = "family" if c.family.fullmatch(noun) else "pets"
            out.append(Mention(kind, _item(c, noun, m.group("between") or "", name), noun.lower(), name, True))
    return out


Gender = Literal["", "f", "m"]
_GENDERS: Final[dict[str, Gender]] = {"his": "m", "he": "m", "er": "m", "her": "f", "she": "f", "sie": "f"}


def named_next(text: str, packs: Sequence[Compiled], after: int = 0) -> tuple[str, Gender]:
    """A name said of a noun just said ("Her name is Shadow!"), from ``after`` on, and the gender its
    pronoun says ("f", "m", or "" for "its", "their", "es"); else ("", "")."""
    for c in packs:
        m = c.name_next.search(text, after)
        if m is not None:
            name = m.group("name")
            if name not in _STOP_NAMES:
                who = (m.group("who") or m.groupdict().get("who2") or "").lower()
                return name, _GENDERS.get(who, "")
    return "", ""


def agrees(noun: str, gender: Gender, packs: Sequence[Compiled]) -> bool:
    """Whether a name said with ``gender``'s pronoun may name ``noun``: "his name is Toby" names no
    girlfriend, "her name is Coco" no son (a pet's noun takes either)."""
    if not gender:
        return True
    low = noun.casefold()
    for c in packs:
        other = c.male if gender == "f" else c.female
        if other is not None and other.fullmatch(low):
            return False
    return True


_NAMED: Final = re.compile(r" (?:named|namens) ")


def _head(item: str) -> str:
    return _NAMED.split(item, maxsplit=1)[0]


def singular(item: str) -> bool:
    return _head(item).startswith(("a ", "an ", "ein "))


def has_name(item: str) -> bool:
    return _NAMED.search(item) is not None


def split_items(obj: str) -> list[str]:
    return [part for part in obj.split(", ") if part]


def _counted(item: str) -> bool:
    """Whether an item is a count of several ("four dogs", "vier Hunde"), not one ("a dog") nor "kids"."""
    head = _head(item).split()
    return len(head) > 1 and not singular(item)


def _noun_of(item: str) -> str:
    head = _head(item).split()
    return head[-1].casefold() if head else ""


@lru_cache(maxsize=32)
def kinds_of(languages: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Per noun of ``languages``' lexicons, the ``KinPack.same`` groups it is in (a noun two packs
    share, "partner", is in both)."""
    out: dict[str, set[str]] = {}
    for c in kin_packs(languages):
        for noun, group in c.same.items():
            out.setdefault(noun, set()).add(group)
    return {noun: frozenset(groups) for noun, groups in out.items()}


def joined(items: list[str], mention: Mention, kinds: Mapping[str, frozenset[str]] | None = None) -> list[str]:
    """``items`` with ``mention`` in: a noun already there unnamed takes the name said now; a
    noun there is not said twice, nor one only owned (no name, count or having) of the kind of one there
    (``kinds``: a noun → its ``KinPack.same`` group: "a partner" beside "a husband"); a new one is
    added (at most ``MAX_ITEMS``)."""
    if mention.name and mention.name in names_of(items):
        return items  # one name is one animal or person: "my pup Toby" beside "a puppy named Toby" (eighteenth round)
    noun = _noun_of(mention.item)
    same = [i for i, item in enumerate(items) if _noun_of(item) == noun]
    if not same:
        kind = kinds.get(noun) if kinds is not None else None
        if kind and kinds is not None and (not mention.fixed or (not mention.name and _counted(mention.item))) \
                and any(kind & kinds.get(_noun_of(item), frozenset()) and (not mention.fixed or _counted(item))
                        for item in items):
            return items  # "my pup" or "my four pups" beside "four dogs": the same ones (eighteenth round)
        return [*items, mention.item][:MAX_ITEMS]
    if not mention.name:
        return items
    word = "namens" if mention.item.startswith("ein ") else "named"
    for i in same:
        if has_name(items[i]):
            if items[i].endswith(f" {mention.name}"):
                return items
            continue
        return [*items[:i], f"{items[i]} {word} {mention.name}", *items[i + 1:]]
    return [*items, mention.item][:MAX_ITEMS]


def named_last(items: list[str], name: str, gender: Gender = "", packs: Sequence[Compiled] = ()) -> list[str]:
    """``items`` with the last one named ``name``, if it is a singular noun without a name (that the
    name's pronoun ``gender`` may name: ``agrees``)."""
    if not items or has_name(items[-1]) or not singular(items[-1]) or not agrees(_noun_of(items[-1]), gender, packs) \
            or name in names_of(items):
        return items
    return [*items[:-1], f"{items[-1]} {'namens' if items[-1].startswith('ein ') else 'named'} {name}"]


def names_of(items: Sequence[str]) -> frozenset[str]:
    """The names the items give ("a puppy named Toby": Toby)."""
    return frozenset(parts[1].strip() for item in items if len(parts := _NAMED.split(item, maxsplit=1)) == 2)


def without_names(items: list[str], names: frozenset[str]) -> list[str]:
    """``items`` with none of ``names`` given: a name a pet of the speaker has is not a family noun's ("a
    girlfriend named Toby" beside "a puppy named Toby" is the girlfriend, unnamed; eighteenth round). An item
    left the same as one before it goes."""
    out: list[str] = []
    for item in items:
        head, _, name = item.partition(" named ") if " named " in item else item.partition(" namens ")
        kept = head if name.strip() in names else item
        if kept not in out:
            out.append(kept)
    return out


def as_object(items: list[str]) -> str:
    """The items as the fact's object, within ``MAX_OBJECT_CHARS`` (the last ones dropped)."""
    out: list[str] = []
    for item in items:
        if len(", ".join([*out, item])) > MAX_OBJECT_CHARS:
            break
        out.append(item)
    return ", ".join(out)
