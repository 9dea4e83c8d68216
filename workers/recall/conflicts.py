"""Contradictions without a model: the clear cases where a newer statement replaces an older one.

The semantic-memory design records on a memory the id of the one it replaces
(``SupersedesID``) and leaves detection to its Claude capture. Here the clear cases need
no model; Claude judges the rest when a key is set (``workers.recall.supersede``).

A *claim* is read from a statement of one sentence (a cue sentence, a turn, a remembered
or noted line) as ``frame`` + ``value`` + ``negated``:

* the **value** is what follows the last present-tense copula (is, are, ist, sind — not
  was/were: two trips are no change; not ``'s``, as often a genitive) when it starts at
  most two words after it, looks like a value — a number or time, a weekday or month, a
  name (capitalised), a yes/no/on/off word — and is at most four words: "The deploy day
  is **Tuesday**", "The standup is at **9:30**", "Our team lead is **Maria Lopez**";
* the **frame** is everything before it, lower-cased, without a leading article or
  "our", without fillers ("now", "currently", "jetzt") and negations: "deploy day is",
  "standup is at";
* **negated**: a negation word was in the sentence ("not", "never", "no longer", "n't",
  "nicht", "nie", "kein…");
* a sentence with no such value still has a claim with an empty value when it is a plain
  statement, so "We deploy on Fridays" and "We never deploy on Fridays" meet.

Two claims **conflict** when their frames are equal and either their values differ (same
polarity) or their polarities differ (same value). A frame spoken in the first or second
person singular ("my", "I", "your", "mein", "du"…) is the speaker's own: it is keyed
with the sender, so Melanie's "my dog is called Max" and Caroline's "my dog is called Rex"
never meet. A subject that is only a pronoun ("it is Tuesday") has no claim: what it
refers to is unknown. Questions have no claim.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from workers.recall.capture import is_reply_memory, is_turn_memory, is_window_memory
from workers.recall.models import Memory

MAX_CLAIM_CHARS = 240  # a longer text is not "one clear statement"
MAX_VALUE_WORDS = 4
MIN_FRAME_WORDS = 2

# Present tense only: "I was in Paris" and "I was in Rome" are two trips, not a change.
_COPULAS = frozenset({"is", "are", "ist", "sind"})
_NEGATIONS = frozenset({"not", "never", "nicht", "nie", "niemals", "kein", "keine", "keinen", "keinem", "keiner",
                        "no-longer", "not-anymore", "no-more", "nicht-mehr"})
_FILLERS = frozenset({"now", "currently", "still", "actually", "officially", "jetzt", "nun", "aktuell",
                      "mittlerweile", "inzwischen"})
_LEADING = frozenset({"the", "a", "an", "our", "der", "die", "das", "den", "dem", "ein", "eine", "unser", "unsere",
                      "unseren", "unserem", "so", "ok", "okay", "fyi", "btw", "also", "and", "but", "und", "aber"})
# Singular first and second person: "my dog" is the speaker's own ("our" is shared).
_PERSONAL = frozenset({"i", "my", "me", "mine", "you", "your", "yours", "ich", "mein", "meine", "meiner", "meinen",
                       "meinem", "mir", "mich", "du", "dein", "deine", "deiner", "deinen", "deinem", "dir", "dich"})
_PRONOUNS = frozenset({"it", "this", "that", "he", "she", "they", "these", "those", "there", "here", "es", "dies",
                       "er", "sie", "man", "what", "who", "which", "was", "wer"})
_VALUE_WORDS = frozenset({
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "montag", "dienstag", "mittwoch",
    "donnerstag", "freitag", "samstag", "sonntag", "january", "february", "march", "april", "may", "june", "july",
    "august", "september", "october", "november", "december", "januar", "februar", "märz", "juni", "juli",
    "oktober", "dezember", "yes", "no", "on", "off", "true", "false", "enabled", "disabled", "ja", "nein",
    "aktiv", "inaktiv", "noon", "midnight", "mittags", "weekly", "daily", "monthly", "täglich", "wöchentlich",
})
_CONTRACTED = re.compile(r"(?i)\b(\w+?)n[’']t\b")  # "doesn't", "isn't": the word and a negation
_MULTI_NEGATION = re.compile(r"(?i)\b(?:no longer|not anymore|no more|nicht mehr)\b")
_WORD = re.compile(r"[\w’'.:/@+-]+")
_EDGE_PUNCT = re.compile(r"^[^\w]+|[^\w%]+$")
_INNER_END = re.compile(r"[.!?]\s+\S")


class Claim(NamedTuple):
    key: str  # what the claim is about: its frame (with the speaker when personal), hashed
    value: str  # the value, lower-cased ("" when the statement has none)
    negated: bool


def _words(text: str) -> list[str]:
    text = _MULTI_NEGATION.sub(lambda m: " " + m.group(0).lower().replace(" ", "-") + " ", text)
    text = _CONTRACTED.sub(lambda m: f"{m.group(1)} not", text)
    return [w for w in (_EDGE_PUNCT.sub("", raw) for raw in _WORD.findall(text)) if w]


def _value_like(word: str) -> bool:
    """A number or time, a weekday, month or yes/no word, or a name (capitalised)."""
    return any(ch.isdigit() for ch in word) or word.casefold() in _VALUE_WORDS or word[:1].isupper()


def _split_value(words: list[str]) -> tuple[list[str], list[str]]:
    """(frame words, value words): the value starts at most two words after the last
    copula ("is at 9:30", "ist am Dienstag", "is called Rex"); none when nothing there
    looks like a value or it runs longer than MAX_VALUE_WORDS."""
    copula = max((i for i, w in enumerate(words) if w.casefold() in _COPULAS), default=-1)
    if copula < 1:
        return words, []
    after = [i for i in range(copula + 1, min(len(words), copula + 4)) if words[i].casefold() not in _FILLERS]
    start = next((i for i in after if _value_like(words[i])), None)
    if start is None or len(words) - start > MAX_VALUE_WORDS:
        return words, []
    return words[:start], words[start:]


def claim_of(text: str, sender: str | None = None) -> Claim | None:
    """The claim one sentence makes, or None (not one clear statement)."""
    text = " ".join(text.split())
    if not text or len(text) > MAX_CLAIM_CHARS or text.endswith("?") or _INNER_END.search(text):
        return None
    words = _words(text)
    negated = any(w.casefold() in _NEGATIONS for w in words)
    words = [w for w in words if w.casefold() not in _NEGATIONS]
    while words and words[0].casefold() in _LEADING:
        words = words[1:]
    if not words or words[0].casefold() in _PRONOUNS:
        return None
    frame_words, value_words = _split_value(words)
    frame = [w.casefold() for w in frame_words if w.casefold() not in _FILLERS]
    if len(frame) < (MIN_FRAME_WORDS if value_words else MIN_FRAME_WORDS + 1):
        return None
    personal = any(w in _PERSONAL for w in frame)
    if personal and not sender:
        return None
    basis = f"{sender.casefold() if personal and sender else ''}\x1f{' '.join(frame)}"
    return Claim(key=hashlib.sha256(basis.encode()).hexdigest()[:32],
                 value=" ".join(w.casefold() for w in value_words), negated=negated)


def conflicts(new: Claim | None, old: Claim | None) -> bool:
    """Whether ``new`` replaces ``old``: one frame, and another value or the other polarity."""
    if new is None or old is None or new.key != old.key:
        return False
    return new.value != old.value or new.negated != old.negated


def statement_of(memory: Memory) -> str:
    """The statement a memory makes: a turn's text without its ``"Speaker: "``, a context
    window's own (last) line without it, a reply window's own (second) line without it,
    any other memory's content."""
    prefix = f"{memory.sender}: "
    if is_window_memory(memory) or is_reply_memory(memory):
        lines = memory.content.split("\n")
        line = lines[1] if is_reply_memory(memory) and len(lines) > 1 else lines[-1]  # date, turn, reply
        return line[len(prefix):] if line.startswith(prefix) else line
    if is_turn_memory(memory) and memory.content.startswith(prefix):
        return memory.content[len(prefix):]
    return memory.content


def memory_claim(memory: Memory) -> Claim | None:
    """The claim ``memory`` makes, if it makes one (a first-person one keyed with its sender);
    a knowledge fact's mirror makes none (its fact's own rule applies, ``workers.recall.facts``)."""
    return None if memory.fact_id is not None else claim_of(statement_of(memory), memory.sender)
