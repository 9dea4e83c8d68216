"""Lenient word-overlap matching of labelled items against what Cortex shows (pure).

A text's *words* are its content words, lower-cased and stemmed: stopwords (function words,
chat filler, the most generic verbs) and the conversation's people's names are left out,
and one common suffix is taken off (``adoption`` → ``adopt``, ``designs`` → ``design``).
Two words are the same when they are equal, or when the shorter (four letters or more) is
the start of the longer and at most three letters shorter (``counsel`` — ``counselor``).

A candidate matches a label when it holds at least ``MATCH_THRESHOLD`` of the label's
words, and at least two of them when the wording has two or more (of the label's own
wording or of one of its ``aka``): one shared word of two ("company strategy" for "company
yellow") is no evidence. A fact with ``about`` must also name that person; a promise whose
promiser is one of the conversation's speakers must be the label's owner's (Joanna's "share
more recipes with you" is not Nate's promise to send his recipe). Labels and candidates pair
one to one, best overlap first, required labels before optional ones; a candidate paired
with nothing is a false positive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from workers.evals.real_labels import CommitmentLabel, FactLabel, Label, label_texts

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


def _stem(token: str) -> str:
    word = token.lower().replace("’", "'")
    word = word.removesuffix("'s").removesuffix("'")
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            return word[: -len(suffix)]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > _MIN_STEM:
        return word[:-1]
    return word


def name_words(names: Iterable[str]) -> frozenset[str]:
    """The stems of people's names ("Project Manager" is a role, not a name: pass names only)."""
    return frozenset(_stem(t) for name in names for t in _TOKEN.findall(name))


def words(text: str, names: frozenset[str] = frozenset()) -> frozenset[str]:
    """The content words of ``text``, stemmed, without stopwords and ``names``."""
    out = set()
    for token in _TOKEN.findall(text):
        lowered = token.lower().replace("’", "'")
        if lowered in STOPWORDS:
            continue
        stem = _stem(token)
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


def _label_words(label: Label, names: frozenset[str]) -> list[frozenset[str]]:
    about = name_words([label.about]) if isinstance(label, FactLabel) and label.about else frozenset()
    return [w for text in label_texts(label) if (w := words(text, names | about))]


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


def match(labels: Sequence[Label], required: Sequence[bool], candidates: Sequence[Candidate],
          names: frozenset[str], speakers: frozenset[str] = frozenset()) -> Matched:
    """Pair ``labels`` (``required[i]``: counted for recall) with ``candidates`` one to one;
    ``names``: the words matching leaves out, ``speakers``: who may make a promise (lower case)."""
    label_words = [_label_words(label, names) for label in labels]
    cand_words = [words(c.text, names) for c in candidates]
    cand_tokens = [words(c.text) for c in candidates]  # names kept: a fact must name its person
    pairs = sorted(
        ((s, li, ci) for li, label in enumerate(labels) for ci in range(len(candidates))
         if _names_about(label, cand_tokens[ci]) and _owner_agrees(label, candidates[ci], speakers)
         and (s := score(label_words[li], cand_words[ci])) >= MATCH_THRESHOLD),
        key=lambda p: (-p[0], p[1], p[2]))
    used_labels: set[int] = set()
    used_cands: set[int] = set()
    out = Matched()
    for want_required in (True, False):
        for _, li, ci in pairs:
            if required[li] != want_required or li in used_labels or ci in used_cands:
                continue
            used_labels.add(li)
            used_cands.add(ci)
            if want_required:
                out.pairs.append((labels[li], candidates[ci]))
            else:
                out.absorbed.append((labels[li], candidates[ci]))
    out.missed = [label for li, label in enumerate(labels) if required[li] and li not in used_labels]
    out.extra = [c for ci, c in enumerate(candidates) if ci not in used_cands]
    return out
