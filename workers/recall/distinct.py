"""Two statements that say different things are never one memory, however close their vectors.

Dense vectors of templated sentences are near-identical: "Server alpha has the IP address
10.0.0.11" and "Server beta has the IP address 10.0.0.12" are 0.94 apart with the default
embedder, over the 0.92 at which near-duplicates fold (issue 44: of 500 distinct remembered
facts 50 survived). So before anything folds, :func:`distinct` compares the two texts
themselves, and they stay apart when

* their **specifics** differ — a number, version, IP address, time or date (any token with
  a digit), an address, e-mail, URL or path (``@``, ``/``), a weekday or month, a name
  (a capitalised word that does not open its sentence) or a quoted string; compared as
  sets, case-folded ("db-2" / "DB-2" are one);
* one says no and the other does not (a negation word of any language pack);
* one **replaces** a content word of the other by a different word: with the function words
  of every language pack set aside, the two word sequences are aligned and a substituted
  run is a different statement unless its words are the same words in another form ("the
  deploy" / "deploying": five letters alike and four fifths of the shorter word, as
  commitments compare a task's words). "Server alpha" / "Server beta", "prefers tea" /
  "prefers coffee" stay apart; "Remember: always run the migrations before the deploy" and
  "Always run the migrations before deploying" differ by an added word and a word's form,
  and may fold.

Added or dropped words (more or less detail) do not make two statements distinct; whether
they fold is the cosine's call. Everything here is a pure function of the two texts.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Sequence

from workers.conversation.due import DAY_AND_MONTH_NAMES
from workers.conversation.languages import PACKS

_TOKEN = re.compile(r"[\w@/][\w.:/@+%#-]*[\w%]|[\w@/]")
_QUOTED = re.compile(r"[\"“”„«»]([^\"“”„«»]{1,80})[\"“”„«»]")  # not apostrophes: "Bob's", "it's"
_SENTENCE_END = re.compile(r"[.!?。！？]\s*$")
_DATE_WORDS = DAY_AND_MONTH_NAMES
STEM_LETTERS = 5  # a word in another form: this many letters alike …
STEM_SHARE = 0.8  # … and this share of the shorter word


@functools.cache
def _function_words() -> frozenset[str]:
    return frozenset(w.casefold() for pack in PACKS.values() for w in pack.stopwords)


@functools.cache
def _negation() -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for pack in PACKS.values() for p in pack.negation))


def _tokens(text: str) -> list[tuple[str, bool]]:
    """The text's words, each with whether it opens a sentence (where a capital says nothing)."""
    out: list[tuple[str, bool]] = []
    opening = True
    for match in _TOKEN.finditer(text):
        word = match.group(0).rstrip(".:")
        if word:
            out.append((word, opening))
        opening = bool(_SENTENCE_END.search(text[match.start(): match.end() + 1]))
    return out


def _is_specific(word: str, opening: bool) -> bool:
    return (any(ch.isdigit() for ch in word) or "@" in word or "/" in word
            or word.casefold() in _DATE_WORDS or (not opening and word[:1].isupper()))


def specifics(text: str) -> frozenset[str]:
    """What identifies the statement's subject and value (see the module docstring), case-folded."""
    found = {word.casefold() for word, opening in _tokens(text) if _is_specific(word, opening)}
    found.update(f"“{q.strip().casefold()}”" for q in _QUOTED.findall(text) if q.strip())
    return frozenset(found)


def negated(text: str) -> bool:
    return bool(_negation().search(text.casefold()))


def content_words(text: str) -> list[str]:
    """The text's words less the function words of every language pack, case-folded."""
    stop = _function_words()
    return [w for w in (word.casefold() for word, _ in _tokens(text)) if w not in stop]


def same_word(a: str, b: str) -> bool:
    """One word in two forms ("deploy" / "deploying", "migration" / "migrations")."""
    if a == b:
        return True
    shorter = min(len(a), len(b))
    alike = len(_common_prefix(a, b))
    return alike >= STEM_LETTERS and alike >= STEM_SHARE * shorter


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def _substituted(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether aligning ``a`` and ``b`` replaces a word of one by a different word of the other."""
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        old, new = a[i1:i2], b[j1:j2]
        if not all(any(same_word(x, y) for y in new) for x in old) and not all(
                any(same_word(y, x) for x in old) for y in new):
            return True
    return False


def distinct(a: str, b: str) -> bool:
    """Whether texts ``a`` and ``b`` state different things (see the module docstring)."""
    if a == b:
        return False
    if specifics(a) != specifics(b) or negated(a) != negated(b):
        return True
    return _substituted(content_words(a), content_words(b))


def _akin(a: str, b: str) -> bool:
    """Looser than :func:`same_word`, for finding a query's words in a text: "work" / "works"."""
    alike = len(_common_prefix(a, b))
    return a == b or (alike >= min(STEM_LETTERS, len(a), len(b)) and alike >= STEM_SHARE * min(len(a), len(b))
                      and min(len(a), len(b)) >= 4)


def coverage(query: str, text: str) -> float:
    """The share of the query's content words that ``text`` has, in some form (0.0 for a
    query of function words only)."""
    wanted = list(dict.fromkeys(content_words(query)))
    if not wanted:
        return 0.0
    have = set(content_words(text))
    return sum(1 for w in wanted if w in have or any(_akin(w, h) for h in have)) / len(wanted)

