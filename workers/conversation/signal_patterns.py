"""The compiled signal patterns of the enabled languages, and the questions asked of a message.

Dissatisfaction knows what the conversation mood detector knows: a word its packs read as
frustrated counts as the user's frustration here too (issue 37: the threads' mood called a
message frustrated that the trace analyzer let pass).

``get_signal_patterns(("en", "de"))`` merges the packs of ``workers.conversation.signal_languages`` in
the given order, adds the universal signs and caches the result per tuple, like the
reference's ``SignalPatternRegistry`` (which always had the universal patterns and EN/DE
synchronously, the others on demand). Matching reuses the conversation cores' machinery:
a message is lower-cased once (``prepare_text``, which also bounds a long message to its
head and tail), and each family rules its regexes out with one substring pre-check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from workers.conversation.languages import PACKS as CONVERSATION_PACKS
from workers.conversation.patterns import (
    MOOD_ORDER,
    Family,
    MatchText,
    Pattern,
    PatternSet,
    compile_led,
    get_patterns,
    share_scan,
)
from workers.conversation.signal_languages import (
    SIGNAL_PACKS,
    UNIVERSAL_COMPLETION,
    UNIVERSAL_QUESTION,
    UNIVERSAL_SATISFIED,
    SignalPack,
)

NEGATION_REACH: Final = 24
"""How far before a completion word a negation still negates it (a few words)."""
_CLAUSE_BREAK: Final = re.compile(r"[,;:.!?。，、！？；：\n]")
_FENCE: Final = "```"


@dataclass(frozen=True, slots=True)
class SignalPatterns:
    languages: tuple[str, ...]
    correction: Family
    short_negative: Family
    question: Family
    dissatisfied: Family
    satisfied: Family
    resolution: Family
    completion: Family
    state_claims: Family
    opinion: Family
    failure: Family
    negation: re.Pattern[str] | None
    mood: PatternSet | None = None  # the conversation packs' (their mood words), for ``is_dissatisfied``

    def is_question(self, text: MatchText) -> bool:
        return _any(self.question, text)

    def is_correction(self, text: MatchText, *, after_question: bool) -> bool:
        """A correction of the agent — unless it only answers the agent's question with a
        plain "no" (the reference's exclusion: "Should I deploy?" — "No.")."""
        if not _any(self.correction, text):
            return False
        return not (after_question and _any(self.short_negative, text))

    def is_dissatisfied(self, text: MatchText) -> bool:
        """Frustration or giving up — the packs' own phrases, or a word the conversation mood
        detector reads as frustrated, not negated ("fuck", "nervig", "schon wieder"); a message
        that also thanks or praises is not."""
        return not self.is_satisfied(text) and (_any(self.dissatisfied, text) or self._frustrated(text))

    def _frustrated(self, text: MatchText) -> bool:
        mood = self.mood
        if mood is None:
            return False
        frustrated = mood.mood.patterns[MOOD_ORDER.index("frustrated")]
        return any(not mood.is_mood_negated(text.lowered, m.start()) for m in frustrated.finditer(text))

    def is_satisfied(self, text: MatchText) -> bool:
        """The message thanks or praises."""
        return _any(self.satisfied, text)

    def is_resolution(self, text: MatchText) -> bool:
        return _any(self.resolution, text)

    def completion_claim(self, text: MatchText) -> str | None:
        """The words claiming the work is done, when the message asserts (not asks) it,
        admits no failure, and no negation in the same clause takes the claim back."""
        if self.is_question(text) or _any(self.failure, text):
            return None
        for match in _matches(self.completion, text):
            if not self._negated(text.lowered, match.start()):
                return text.original[match.start():match.end()]
        return None

    def state_claim(self, text: MatchText) -> str | None:
        """A factual statement about the system's state outside a code block, when the
        message does not hedge it as an opinion."""
        if _any(self.opinion, text):
            return None
        for match in _matches(self.state_claims, text):
            if text.lowered.count(_FENCE, 0, match.start()) % 2 == 0:
                return text.original[match.start():match.end()]
        return None

    def _negated(self, lowered: str, start: int) -> bool:
        if self.negation is None:
            return False
        window = lowered[max(0, start - NEGATION_REACH):start]
        clause = _CLAUSE_BREAK.split(window)[-1]
        return self.negation.search(clause) is not None


def _matches(family: Family, text: MatchText) -> list[re.Match[str]]:
    if not family.may_match(text):
        return []
    found = [m for p in family for m in [p.search(text)] if m is not None]
    return sorted(found, key=lambda m: m.start())


def _any(family: Family, text: MatchText) -> bool:
    return family.may_match(text) and any(p.search(text) is not None for p in family)


def _family(packs: tuple[SignalPack, ...], name: str, *universal: str) -> Family:
    sources = dict.fromkeys([*(s for pack in packs for s in getattr(pack, name)), *universal])
    return Family.of(_compile(source) for source in sources)


def _compile(source: str) -> Pattern:
    # Every source is written for the lower-cased text; a line ending in "?" anywhere in
    # the message asks, so the universal question is multi-line.
    if source == UNIVERSAL_QUESTION:
        return Pattern(compile_led(source, re.MULTILINE), lowered=True, triggers=("?", "？"))
    return Pattern.compile(source, lowered=True)


@lru_cache(maxsize=32)
def get_signal_patterns(languages: tuple[str, ...]) -> SignalPatterns:
    """The merged, compiled signal patterns of ``languages`` (unknown codes ignored)."""
    packs = tuple(SIGNAL_PACKS[code] for code in dict.fromkeys(languages) if code in SIGNAL_PACKS)
    negations = [s for pack in packs for s in pack.negation]
    signals = SignalPatterns(
        languages=tuple(p.code for p in packs),
        correction=_family(packs, "correction"),
        short_negative=_family(packs, "short_negative"),
        question=_family(packs, "question", UNIVERSAL_QUESTION),
        dissatisfied=_family(packs, "dissatisfied"),
        satisfied=_family(packs, "satisfied", UNIVERSAL_SATISFIED),
        resolution=_family(packs, "resolution"),
        completion=_family(packs, "completion", UNIVERSAL_COMPLETION),
        state_claims=_family(packs, "state_claim"),
        opinion=_family(packs, "opinion"),
        failure=_family(packs, "failure"),
        negation=compile_led("|".join(negations)) if negations else None,
        mood=get_patterns(tuple(code for code in languages if code in CONVERSATION_PACKS)),
    )
    # one scan of every family's triggers (``patterns.share_scan``): a message is read once for
    # all of them, where each family's pre-check was a regex search of its own (the correction
    # family's, asked of every user message by the threads and commitments cores: ~3 µs)
    share_scan(f for f in (getattr(signals, name) for name in signals.__dataclass_fields__) if isinstance(f, Family))
    return signals
