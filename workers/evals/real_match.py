"""Lenient word-overlap matching of labelled items against what Cortex shows (pure).

A text's *words* are its content words, lower-cased and stemmed: stopwords (function words,
chat filler, the most generic verbs) and the conversation's people's names are left out,
British spellings read as American (``favourite`` → ``favorite``, ``travelled`` → ``traveled``;
``-ise`` and ``-ize`` meet), a bound prefix joined (``e-mail`` → ``email``), and one common suffix
is taken off (``adoption`` → ``adopt``, ``designs`` → ``design``). Two words are the same when they
are equal, or when the shorter (four letters or more) is the start of the longer and at most
three letters shorter (``counsel`` — ``counselor``).

A candidate matches a label when it holds at least ``MATCH_THRESHOLD`` of the label's
words, and at least two of them when the wording has two or more (of the label's own
wording or of one of its ``aka``): one shared word of two ("company strategy" for "company
yellow") is no evidence; and every word they share is negated in both or in neither ("no TFT
screen" is not "a TFT screen"). A fact with ``about`` must also name that person; a promise whose
promiser is one of the conversation's speakers must be the label's owner's (Joanna's "share
more recipes with you" is not Nate's promise to send his recipe). Labels and candidates pair
one to one, best overlap first, required labels before optional ones: an item is credited to one
label. A candidate left over that states another part of a decision, commitment or fact already
paired is absorbed (true, no second recall); any other candidate paired with nothing — a repeat,
a second thread on a topic — is a false positive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from workers.evals.real_labels import CommitmentLabel, FactLabel, Label, ThreadLabel, label_texts

MATCH_THRESHOLD: Final = 0.5
MIN_SHARED: Final = 2  # words a candidate must share with a wording of two words or more
_TOKEN: Final = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_SUFFIXES: Final = ("ations", "ation", "ions", "ion", "ings", "ing", "ments", "ment", "ness", "ies", "ied",
                    "ers", "er", "ed", "ly")
_MIN_STEM: Final = 4
_PREFIX_SLACK: Final = 3

_STOPWORDS_WORDS: Final = """
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't
my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she she'd
she'll she's should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those through to too under until up very was wasn't we
we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why
why's will with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
also just really still even much many lot lots bit kind sort way thing things stuff something anything
everything yeah yes yep ok okay um uh mm hmm hey hi hello oh ah wow well like gonna wanna gotta got get gets
getting go goes going went gone make makes made let lets maybe sure right now soon today tomorrow yesterday
new good great awesome cool nice one two us
"""
STOPWORDS: Final = frozenset(_STOPWORDS_WORDS.split())


# British and American spellings read as one word (the corpora write American, the labels often British):
# "-our" of these roots ("favourite" — "favorite", "neighbourhood"), "-ise" / "-yse" as "-ize" / "-yze"
# (every "-ize" form is read as "-ise": "organize", "organisation"; "prize" is the one word it joins with
# another, "prise"), "-tre" as "-ter", a doubled "l" of these roots ("travelled", "counsellor") and a few
# words of their own. Nothing else: "your", "four", "tour" and "hour" keep their "-our".
_OUR_ROOTS: Final = ("armour", "behaviour", "candour", "clamour", "colour", "endeavour", "favour", "flavour",
                     "glamour", "harbour", "honour", "humour", "labour", "neighbour", "odour", "parlour", "rigour",
                     "rumour", "savour", "splendour", "valour", "vigour")
_LL_ROOTS: Final = ("cancel", "channel", "counsel", "dial", "duel", "equal", "fuel", "funnel", "grovel", "jewel",
                    "label", "level", "marvel", "model", "panel", "pedal", "quarrel", "rival", "shovel", "signal",
                    "snorkel", "total", "travel", "tunnel")
_LL_ENDINGS: Final = ("ed", "ing", "ings", "er", "ers", "or", "ors", "ous")
_IZE: Final = re.compile(r"(?<=[a-z]{2})([iy])z(e|es|ed|ing|er|ers|ation|ations)$")
_TRE: Final = re.compile(r"^(cent|theat|kilomet|centimet|millimet|met|lit|fib|somb|spect|lust|meag|calib)re(s|d)?$")
_SPELLINGS: Final = {
    "grey": "gray", "greys": "grays", "programme": "program", "programmes": "programs", "catalogue": "catalog",
    "catalogues": "catalogs", "dialogue": "dialog", "dialogues": "dialogs", "analogue": "analog",
    "defence": "defense", "offence": "offense", "licence": "license", "practise": "practice",
    "practised": "practiced", "practising": "practicing", "mum": "mom", "mums": "moms", "judgement": "judgment",
    "ageing": "aging", "jewellery": "jewelry", "pyjamas": "pajamas", "mould": "mold", "plough": "plow",
    "aluminium": "aluminum", "learnt": "learned", "burnt": "burned", "dreamt": "dreamed", "spelt": "spelled",
    "spoilt": "spoiled", "manoeuvre": "maneuver", "enquiry": "inquiry", "enquiries": "inquiries",
    "paediatric": "pediatric", "paediatrician": "pediatrician", "cosy": "cozy", "sceptical": "skeptical",
}
_BOUND_PREFIX: Final = re.compile(r"\b(e|co|t|x|re|pre|non)[-‐‑](?=[^\W_])", re.IGNORECASE)  # "e-mail": "email"


def american(word: str) -> str:
    """One spelling of a lower-cased word: British forms read as American ("favourite" → "favorite",
    "travelled" → "traveled", "centre" → "center"); "-ize" read as "-ise" (both spellings meet there)."""
    if (spelt := _SPELLINGS.get(word)) is not None:
        return spelt
    for root in _OUR_ROOTS:
        if word.startswith(root):
            return root[:-2] + "r" + word[len(root):]
    for root in _LL_ROOTS:
        if word.startswith(root + "l") and word[len(root) + 1:] in _LL_ENDINGS:
            return root + word[len(root) + 1:]
    if (tre := _TRE.match(word)) is not None:
        return f"{tre.group(1)}er" + {"s": "s", "d": "ed"}.get(tre.group(2) or "", "")
    return _IZE.sub(lambda m: f"{m.group(1)}s{m.group(2)}", word)


def _stem(token: str, spelling: bool = True) -> str:
    word = token.lower().replace("’", "'").removesuffix("'s").removesuffix("'")
    word = american(word) if spelling else word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            return word[: -len(suffix)]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > _MIN_STEM:
        return word[:-1]
    return word


def name_words(names: Iterable[str]) -> frozenset[str]:
    """The stems of people's names ("Project Manager" is a role, not a name: pass names only)."""
    return frozenset(_stem(t) for name in names for t in _TOKEN.findall(name))


def words(text: str, names: frozenset[str] = frozenset(), *, spelling: bool = True) -> frozenset[str]:
    """The content words of ``text``, stemmed, without stopwords and ``names`` (``spelling``: in one
    spelling, :func:`american`, and a bound prefix joined)."""
    out = set()
    for token in _TOKEN.findall(_BOUND_PREFIX.sub(r"\1", text) if spelling else text):
        lowered = token.lower().replace("’", "'")
        if lowered in STOPWORDS:
            continue
        stem = _stem(token, spelling)
        if stem not in names and stem not in STOPWORDS:
            out.add(stem)
    return frozenset(out)


def same_word(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= _MIN_STEM and len(long_) - len(short) <= _PREFIX_SLACK and long_.startswith(short)


def coverage(label: frozenset[str], candidate: frozenset[str]) -> float:
    """The share of ``label``'s words that ``candidate`` holds; 0 when it holds fewer than
    ``MIN_SHARED`` of a wording that has that many."""
    if not label:
        return 0.0
    shared = sum(1 for w in label if any(same_word(w, c) for c in candidate))
    return shared / len(label) if shared >= min(MIN_SHARED, len(label)) else 0.0


# A word said under a negation: "no TFT screen", "not the TFT screen", "we dropped the TFT screen",
# "plastic instead of rubber". A wording and a candidate must agree on it (``_agrees``): "no TFT screen" is
# not "a TFT screen"; a negation of a word they do not share ("can't wait") is not read.
_NEGATOR_WORDS: Final = """
no not never cannot without against nobody none neither nor nothing instead drop dropped dropping reject
rejected rejecting scrap scrapped scrapping ditch ditched discard discarded
"""
_NEGATORS: Final = frozenset(_NEGATOR_WORDS.split())
_DROP: Final = frozenset({"drop", "dropped", "dropping"})
_PARTICLES: Final = frozenset({"off", "by", "in", "into", "out"})  # "drop off the package" is no negation
_NEGATION_REACH: Final = 1  # content words a negator reaches ("no TFT screen": "tft"; "don't mind to convince": "mind")
_CLAUSE_END: Final = re.compile(r"[,.;:!?()\[\]—–…]|\s-\s|\b(?:but|and|or|so|because|although|though)\b",
                                re.IGNORECASE)


def negated(text: str, names: frozenset[str] = frozenset()) -> frozenset[str]:
    """The content words of ``text`` (as :func:`words` reads them) that a negation reaches in
    their clause: the next ``_NEGATION_REACH`` content words after "no", "not", "n't", "never",
    "without", "instead of", "dropped" …"""
    out: set[str] = set()
    for clause in _CLAUSE_END.split(_BOUND_PREFIX.sub(r"\1", text)):
        reach = 0
        tokens = [t.lower().replace("’", "'") for t in _TOKEN.findall(clause or "")]
        for i, token in enumerate(_TOKEN.findall(clause or "")):
            lowered = tokens[i]
            if (lowered in _NEGATORS or lowered.endswith("n't")) and not (
                    lowered in _DROP and i + 1 < len(tokens) and tokens[i + 1] in _PARTICLES):
                reach = _NEGATION_REACH
                continue
            if lowered in STOPWORDS or (stem := _stem(token)) in names or stem in STOPWORDS:
                continue
            if reach:
                out.add(stem)
                reach -= 1
    return frozenset(out)


def says_no(text: str) -> bool:
    """Whether ``text`` says a negation anywhere (a negator of :func:`negated`)."""
    return any(t in _NEGATORS or t.endswith("n't")
               for t in (x.lower().replace("’", "'") for x in _TOKEN.findall(text)))


@dataclass(frozen=True)
class Reading:
    """What the matcher reads beyond word overlap: one spelling, negation. ``TRAINED_READING`` is
    how it read before the twenty-third round, which labelled the shipped learnt reader's sentences
    (``learnt_data``): retraining with another reading changes the extraction."""

    spelling: bool = True
    negation: bool = True


READING: Final = Reading()
TRAINED_READING: Final = Reading(spelling=False, negation=False)


@dataclass(frozen=True)
class Wording:
    """One way a label may be said: its content words and those said negated."""

    words: frozenset[str]
    negated: frozenset[str] = frozenset()
    says_no: bool = False  # a negation anywhere in it


def _agrees(wording: Wording, cand_words: frozenset[str], cand_negated: frozenset[str], cand_says_no: bool,
            wording_says_no: bool) -> bool:
    """Whether the two agree on negation. When both negate a word they share, they must negate the same
    shared words ("plastic instead of rubber" is not "rubber instead of plastic"). When only one does,
    the other must say a negation somewhere: talk puts it far from its object ("we don't need to
    consider the teletext", "solar cells — we said no to that" are "no teletext", "no solar cells")."""
    shared = [w for w in wording.words if any(same_word(w, c) for c in cand_words)]
    in_cand = {w for w in shared if any(same_word(w, c) for c in cand_negated)}
    in_wording = {w for w in shared if w in wording.negated}
    if in_cand and in_wording:
        return in_cand == in_wording
    return (not in_wording or cand_says_no) and (not in_cand or wording_says_no)


@dataclass(frozen=True)
class Candidate:
    """One item a level shows: its text, and what a label's extra checks read."""

    text: str
    status: str | None = None  # "open", "closed", "overdue", "done"
    due: str | None = None
    who: str | None = None


@dataclass
class Matched:
    """The pairs of one section: (label, candidate), the labels missed, the extra candidates."""

    pairs: list[tuple[Label, Candidate]] = field(default_factory=list)
    missed: list[Label] = field(default_factory=list)  # required labels no candidate matched
    absorbed: list[tuple[Label, Candidate]] = field(default_factory=list)  # optional (or not expected)
    extra: list[Candidate] = field(default_factory=list)


def _wording(text: str, leave: frozenset[str], reading: Reading) -> Wording:
    return Wording(words(text, leave, spelling=reading.spelling),
                   negated(text, leave) if reading.negation else frozenset(),
                   reading.negation and says_no(text))


def _label_wordings(label: Label, names: frozenset[str], reading: Reading = READING) -> list[Wording]:
    about = name_words([label.about]) if isinstance(label, FactLabel) and label.about else frozenset()
    return [w for text in label_texts(label) if (w := _wording(text, names | about, reading)).words]


def _label_words(label: Label, names: frozenset[str]) -> list[frozenset[str]]:
    return [w.words for w in _label_wordings(label, names)]


def _parts(label: Label, names: frozenset[str], reading: Reading = READING) -> list[Wording]:
    """The label's wordings, and each part of one that says two things ("John loves The Lord of the
    Rings; Aragorn is his favourite character"): what a second item may state of it."""
    about = name_words([label.about]) if isinstance(label, FactLabel) and label.about else frozenset()
    texts = [part for text in label_texts(label) for part in text.split(";") if ";" in text]
    return _label_wordings(label, names, reading) + [
        w for t in texts if (w := _wording(t, names | about, reading)).words]


def _names_about(label: Label, candidate_tokens: frozenset[str]) -> bool:
    if not isinstance(label, FactLabel) or not label.about:
        return True
    return any(any(same_word(a, c) for c in candidate_tokens) for a in name_words([label.about]))


def _owner_agrees(label: Label, candidate: Candidate, speakers: frozenset[str]) -> bool:
    """A promise made by one of the conversation's speakers is its owner's."""
    who = (candidate.who or "").strip().lower()
    if not isinstance(label, CommitmentLabel) or who not in speakers:
        return True
    return who == label.owner.strip().lower()


def score(label_words: Sequence[frozenset[str]], candidate_words: frozenset[str]) -> float:
    return max((coverage(w, candidate_words) for w in label_words), default=0.0)


def _score(wordings: Sequence[Wording], cand_words: frozenset[str], cand_negated: frozenset[str],
           cand_says_no: bool) -> float:
    """The best coverage of a wording the candidate agrees with on negation."""
    return max((coverage(w.words, cand_words) for w in wordings
                if _agrees(w, cand_words, cand_negated, cand_says_no, w.says_no)), default=0.0)


def _held(wordings: Sequence[Wording], cand_words: frozenset[str]) -> frozenset[str]:
    return frozenset(w for x in wordings for w in x.words if any(same_word(w, c) for c in cand_words))


def match(labels: Sequence[Label], required: Sequence[bool], candidates: Sequence[Candidate],
          names: frozenset[str], speakers: frozenset[str] = frozenset(), reading: Reading = READING) -> Matched:
    """Pair ``labels`` (``required[i]``: counted for recall) with ``candidates`` one to one;
    ``names``: the words matching leaves out, ``speakers``: who may make a promise (lower case).

    A candidate left over that states *another part* of a statement already paired (a decision,
    commitment or fact: it matches the label, or one part of a label said in two, and holds a word of it
    that the label's candidates so far do not) is true but no second recall: it is absorbed. One that
    says nothing new of it is a repeat, and a second thread on a topic is one too: both stay extra."""
    wordings = [_label_wordings(label, names, reading) for label in labels]
    cand_words = [words(c.text, names, spelling=reading.spelling) for c in candidates]
    cand_negated = [negated(c.text, names) if reading.negation else frozenset() for c in candidates]
    cand_no = [reading.negation and says_no(c.text) for c in candidates]
    cand_tokens = [words(c.text) for c in candidates]  # names kept: a fact must name its person
    fits = [[_names_about(label, cand_tokens[ci]) and _owner_agrees(label, candidates[ci], speakers)
             for ci in range(len(candidates))] for label in labels]
    pairs = sorted(
        ((s, li, ci) for li in range(len(labels)) for ci in range(len(candidates))
         if fits[li][ci]
         and (s := _score(wordings[li], cand_words[ci], cand_negated[ci], cand_no[ci])) >= MATCH_THRESHOLD),
        key=lambda p: (-p[0], p[1], p[2]))
    used_labels: set[int] = set()
    used_cands: set[int] = set()
    out = Matched()
    held: dict[int, frozenset[str]] = {}
    parts = [_parts(label, names, reading) for label in labels]
    for want_required in (True, False):
        for _, li, ci in pairs:
            if required[li] != want_required or li in used_labels or ci in used_cands:
                continue
            used_labels.add(li)
            used_cands.add(ci)
            held[li] = _held(parts[li], cand_words[ci])
            if want_required:
                out.pairs.append((labels[li], candidates[ci]))
            else:
                out.absorbed.append((labels[li], candidates[ci]))
    for ci in range(len(candidates)):
        if ci in used_cands:
            continue
        for li in sorted(held):
            if isinstance(labels[li], ThreadLabel) or not fits[li][ci] \
                    or _score(parts[li], cand_words[ci], cand_negated[ci], cand_no[ci]) < MATCH_THRESHOLD:
                continue
            if new := _held(parts[li], cand_words[ci]) - held[li]:
                held[li] |= new
                used_cands.add(ci)
                out.absorbed.append((labels[li], candidates[ci]))
                break
    out.missed = [label for li, label in enumerate(labels) if required[li] and li not in used_labels]
    out.extra = [c for ci, c in enumerate(candidates) if ci not in used_cands]
    return out
