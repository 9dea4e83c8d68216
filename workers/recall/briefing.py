"""The recall worker's briefing section: Rules & Key Memories.

Recall's rules and hot memories, in its order, each once — none that belongs to another
person than the one a briefing is for, and none that a sentence the work sections show
already says (``SENTENCES``): the message a thread is about is no rule to read again.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Any

from schemas.docs import RecallDoc
from shared.briefing import SENTENCES, Briefing, BriefingSection, Rendered, Said
from shared.names import BUCKET_RECALL
from workers.briefing import said_before, said_parts, section
from workers.render import one_line

MAX_KEY_MEMORIES_IN_BOOT = 10


# "And remember our rule: never deploy on Fridays." is read as its rule: the lead-in that
# told the agent to keep it says nothing under Rules & Key Memories. Only a short lead-in
# ending in a colon, of words that announce a rule or a note (English and German).
_LEAD_IN = re.compile(
    r"(?:(?:and|also|so|but|oh|ok|okay|und|aber)[, ]+)?(?:please[, ]+|bitte[, ]+)?"
    r"(?:(?:always[, ]+)?remember|don'?t forget|never forget|keep in mind|note|reminder|important|rule|policy"
    r"|merk dir|merke|denk dran|vergiss nicht|wichtig|regel|hinweis)"
    r"(?:[, ]+(?:our|the|this|my|that|team|unsere|unser|die|der|diese)?[, ]*(?:rule|policy|principle|regel|grundsatz))?"
    r"\s*:\s+(?=\S)",
    re.IGNORECASE,
)


def without_lead_in(memory: str) -> str:
    """``memory`` without a lead-in such as "And remember our rule:", its first letter raised."""
    lead = _LEAD_IN.match(memory)
    if lead is None:
        return memory
    rest = memory[lead.end():]
    return rest[:1].upper() + rest[1:]


def key_memories_section(memories: Sequence[str], budget: int, said: Collection[str] = ()) -> str:
    """Rules and key memories from recall, in recall's order, each once — and none that a
    sentence of ``said`` (what the work sections show: summaries, decisions, reasons,
    promises) already says, or that says one of them: the message a thread is about is no
    rule to read again."""
    if not memories:
        return ""
    parts = said_parts(list(said))
    unique = list(dict.fromkeys(m for m in (without_lead_in(one_line(m)) for m in memories)
                                if m and not said_before(m, parts)))
    lines = [f"- {m}" for m in unique[:MAX_KEY_MEMORIES_IN_BOOT]]
    return section("## 📌 Rules & Key Memories", lines, budget)[0]


def key_memories(doc: RecallDoc | None, person: str | None) -> list[str]:
    """The rules and key memories of ``doc``; for ``person``, none that belongs to another."""
    if doc is None:
        return []
    if person is None:
        return list(doc.key_memories)
    return [text for text in doc.key_memories if doc.key_owners.get(text, person) == person]


def _memories(b: Briefing, said: Said, budget: int) -> Rendered:
    return Rendered(key_memories_section(key_memories(b.doc(BUCKET_RECALL, RecallDoc), b.person), budget,
                                         said.of(SENTENCES)))


SECTIONS: tuple[BriefingSection[Any], ...] = (
    BriefingSection("📌 Rules & Key Memories", BUCKET_RECALL, RecallDoc, name="memories", order=1000, chars=1000,
                    compose=_memories, hears=(SENTENCES,), only_when_relevant=False, conversation_data=False),
)
