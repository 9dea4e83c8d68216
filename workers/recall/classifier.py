"""Deterministic heuristic memory-type classifier (keyword scoring), English and German; rules in ten languages.

Port of the semantic-memory design's ``HeuristicClassifier``
(ajitpratap0/openclaw-cortex ``internal/classifier/classifier.go``) with three changes:

* **Ties break by a fixed order**, ``rule > procedure > fact > episode > preference`` —
  the design's own priority order (the recall type multipliers 1.5/1.3/1.0/0.8/0.7).
  When the evidence is even, the label recall weighs more wins, because losing a
  constraint costs more than losing a preference. The Go reference iterates a map, so
  its ties are random.
* **Cues match whole words** (``never`` does not fire inside ``nevertheless``, ``like``
  not inside ``likely``); a cue ending in ``*`` is a prefix (``lieblings*``).
* **German cues** beside the English ones; ``fact`` has a few definitional cues of its
  own and stays the default when nothing fires.
* **A rule is a standing instruction** (``workers.recall.rules``, every language pack), not
  any sentence with must, always or never: the design's cue words made "It must be really
  awesome!" and "That's a memory I'll never forget." rules (issue 37).

A type's score is the number of distinct cues found. Confidence grows with the winning
score and shrinks when another type ties it: 0.5 for the bare default (no signal), then
``0.6 + 0.1·(score-1)`` capped at 0.9, minus 0.1 on a tie.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from schemas.types import MemoryType
from workers.recall.rules import rule_signals

TIE_BREAK_ORDER: tuple[MemoryType, ...] = ("rule", "procedure", "fact", "episode", "preference")

_CUES: dict[str, dict[MemoryType, tuple[str, ...]]] = {
    "en": {
        "procedure": (
            "step 1", "step 2", "first,", "then,", "finally,", "how to", "to do this", "process:",
            "workflow:", "steps:", "run the", "execute", "install", "configure", "setup", "set up",
            "create a", "deploy", "build the",
        ),
        "fact": ("defined as", "stands for", "refers to", "is located in", "consists of"),
        "episode": (
            "yesterday", "today", "last week", "on monday", "happened", "occurred", "we did",
            "we found", "discovered", "resolved", "fixed the", "broke", "incident", "session",
            "meeting",
        ),
        "preference": (
            "prefer", "prefers", "like", "likes", "dislike", "favorite", "favourite", "rather",
            "style:", "prefer to", "would rather", "choose", "instead of", "better than", "worse than",
        ),
    },
    "de": {
        "procedure": (
            "schritt 1", "schritt 2", "zuerst", "danach", "anschließend", "zum schluss",
            "wie man", "anleitung", "ablauf:", "installiere", "installieren", "konfiguriere",
            "konfigurieren", "einrichten", "richte", "führe", "ausführen", "erstelle", "deploye",
            "deployen",
        ),
        "fact": ("definiert als", "steht für", "bezeichnet", "befindet sich in", "besteht aus"),
        "episode": (
            "gestern", "heute", "letzte woche", "letzten woche", "am montag", "passiert",
            "aufgetreten", "wir fanden", "entdeckt", "behoben", "gelöst", "kaputt", "vorfall",
            "sitzung", "besprechung", "meeting",
        ),
        "preference": (
            "bevorzuge", "bevorzugt", "lieber", "mag", "mögen", "gefällt", "lieblings*",
            "stattdessen", "anstatt", "statt", "besser als", "schlechter als",
        ),
    },
}


class Classification(NamedTuple):
    type: MemoryType
    confidence: float


def _cue_pattern(cue: str) -> str:
    if cue.endswith("*"):
        return rf"(?<!\w){re.escape(cue[:-1])}\w*"
    tail = r"(?!\w)" if cue[-1].isalnum() else ""
    return rf"(?<!\w){re.escape(cue)}{tail}"


def _compile(cues: Iterable[str]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    # One pattern per cue: overlapping cues ("prefer", "prefer to") each count, as in the design.
    # Each beside its literal text: a substring test first (most texts lack most cues)
    # spares the pattern's search, which is ~20x slower.
    return tuple((cue.rstrip("*"), re.compile(_cue_pattern(cue))) for cue in dict.fromkeys(cues))


_PATTERNS: dict[str, dict[MemoryType, tuple[tuple[str, re.Pattern[str]], ...]]] = {
    lang: {mtype: _compile(cues) for mtype, cues in table.items()} for lang, table in _CUES.items()
}


def score_types(text: str, languages: Iterable[str] = ("en", "de"), *, to_agent: bool = True
                ) -> dict[MemoryType, int]:
    """Distinct cues found per type (lower-cased once; languages without cues add nothing);
    a rule's are the signs of a standing instruction (``rules.rule_signals``) — none in a text
    not said ``to_agent`` (one person answering another: ``people.answers_another``)."""
    lowered = text.lower()
    languages = tuple(dict.fromkeys(languages))
    scores: dict[MemoryType, int] = dict.fromkeys(TIE_BREAK_ORDER, 0)
    scores["rule"] = rule_signals(text, languages) if to_agent else 0
    for lang in languages:
        for mtype, patterns in _PATTERNS.get(lang, {}).items():
            scores[mtype] += sum(1 for literal, pattern in patterns if literal in lowered and pattern.search(lowered))
    return scores


def classify(text: str, languages: Iterable[str] = ("en", "de"), *, to_agent: bool = True) -> Classification:
    """The memory type of ``text`` and a confidence in [0.5, 0.9] (``to_agent``: ``score_types``)."""
    return classify_scores(score_types(text, languages, to_agent=to_agent))


def classify_scores(scores: dict[MemoryType, int]) -> Classification:
    """``classify`` of the text whose ``score_types`` are ``scores`` (a caller that has them
    already does not score the text twice)."""
    best = max(scores.values())
    if best == 0:
        return Classification("fact", 0.5)
    winners = [mtype for mtype in TIE_BREAK_ORDER if scores[mtype] == best]
    confidence = min(0.9, 0.6 + 0.1 * (best - 1))
    if len(winners) > 1:
        confidence -= 0.1
    return Classification(winners[0], round(confidence, 2))
