"""A verb's past forms, for a promise reported done in the past tense (issue 37).

"I'm going to a transgender conference this month" is kept as "go to a transgender
conference"; weeks later the same person says "I went to an LGBTQ conference two days ago"
— no closure word ("done", "finished"), and the promise stood OVERDUE in the briefing though
the conversation saw it kept. A report in the past tense of the task's own verb closes it
(``workers.decisions.commitments``). English only: the other packs keep their closure words
(their past forms are compound — "ich bin … gegangen", "je suis allé" — and need a parser of
their own).
"""

from __future__ import annotations

import functools
import re
from typing import Final

# English verbs whose past is not -ed: the base form → its simple past and participle.
_IRREGULAR: Final[dict[str, tuple[str, ...]]] = {
    "be": ("was", "were", "been"), "begin": ("began", "begun"), "bring": ("brought",), "build": ("built",),
    "buy": ("bought",), "catch": ("caught",), "choose": ("chose", "chosen"), "come": ("came",),
    "do": ("did", "done"), "draw": ("drew", "drawn"), "drive": ("drove", "driven"), "eat": ("ate", "eaten"),
    "feed": ("fed",), "find": ("found",), "fly": ("flew", "flown"), "get": ("got", "gotten"),
    "give": ("gave", "given"), "go": ("went", "gone"), "grow": ("grew", "grown"), "have": ("had",),
    "hear": ("heard",), "hold": ("held",), "keep": ("kept",), "leave": ("left",), "lend": ("lent",),
    "make": ("made",), "meet": ("met",), "pay": ("paid",), "put": ("put",), "read": ("read",), "ride": ("rode",),
    "run": ("ran",), "say": ("said",), "see": ("saw", "seen"), "sell": ("sold",), "send": ("sent",),
    "set": ("set",), "show": ("showed", "shown"), "sing": ("sang", "sung"), "sit": ("sat",),
    "speak": ("spoke", "spoken"), "spend": ("spent",), "take": ("took", "taken"), "teach": ("taught",),
    "tell": ("told",), "think": ("thought",), "throw": ("threw", "thrown"), "try": ("tried",),
    "wear": ("wore", "worn"), "win": ("won",), "write": ("wrote", "written"),
}
_VOWELS: Final = frozenset("aeiou")
_VERB: Final = re.compile(r"[a-z]+")


@functools.lru_cache(maxsize=2048)
def past_forms(verb: str) -> frozenset[str]:
    """The simple past and participle of an English verb: irregular ones from the table,
    else -ed as spelt ("bake" → "baked", "try" → "tried", "plan" → "planned" and "planed")."""
    verb = verb.lower()
    if not _VERB.fullmatch(verb) or len(verb) < 2:
        return frozenset()
    if verb in _IRREGULAR:
        return frozenset(_IRREGULAR[verb])
    if verb.endswith("e"):
        return frozenset({verb + "d"})
    if verb.endswith("y") and verb[-2] not in _VOWELS:
        return frozenset({verb[:-1] + "ied"})
    forms = {verb + "ed"}
    if len(verb) >= 3 and verb[-1] not in _VOWELS | {"w", "x", "y"} and verb[-2] in _VOWELS \
            and verb[-3] not in _VOWELS:
        forms.add(verb + verb[-1] + "ed")  # "plan" → "planned" (and "visit" → "visitted", harmless)
    return frozenset(forms)
