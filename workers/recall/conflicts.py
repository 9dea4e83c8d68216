"""Contradictions without a model: the clear cases where a newer memory replaces an older one.

The semantic-memory design records on a memory the id of the one it replaces
(``SupersedesID``) and leaves detection to its Claude capture. Here the clear cases need
no model: the claim a memory's statement makes (``workers.conversation.claims``, in every
language pack: the copula, a value at the end, "since", "now", "no longer") against the
older memories' claims; Claude judges the rest when a key is set (``workers.recall.supersede``).
A memory's statement is a turn's text without its speaker, a window's own line, any other
memory's content; a first-person frame is keyed with the memory's sender.
"""

from __future__ import annotations

import functools

from workers.conversation.claims import MAX_CLAIM_CHARS, Claim, claim_of, conflicts
from workers.recall.capture import REPLY_POSITION, WINDOW_POSITION, conversation_position
from workers.recall.models import Memory

__all__ = ["MAX_CLAIM_CHARS", "Claim", "claim_of", "conflicts", "memory_claim", "statement_of"]


def statement_of(memory: Memory) -> str:
    """The statement a memory makes: a turn's text without its ``"Speaker: "``, a context
    window's own (last) line without it, a reply window's own (second) line without it,
    any other memory's content."""
    prefix = f"{memory.sender}: "
    position = conversation_position(memory)  # looked up once (each ``is_*_memory`` looks again)
    if position in (WINDOW_POSITION, REPLY_POSITION):
        lines = memory.content.split("\n")
        line = lines[1] if position == REPLY_POSITION and len(lines) > 1 else lines[-1]  # date, turn, reply
        return line[len(prefix):] if line.startswith(prefix) else line
    if position == 0 and memory.content.startswith(prefix):
        return memory.content[len(prefix):]
    return memory.content


def memory_claim(memory: Memory) -> Claim | None:
    """The claim ``memory`` makes, if it makes one (a first-person one keyed with its sender);
    a knowledge fact's mirror makes none (its fact's own rule applies, ``workers.recall.facts``)."""
    return None if memory.fact_id is not None else _claim_of(statement_of(memory), memory.sender)


@functools.lru_cache(maxsize=1 << 14)
def _claim_of(statement: str, sender: str | None) -> Claim | None:
    """``claim_of``, remembered: a step asks it of every candidate, and of every stored
    memory making a claim the step's new statements make, for each of them (a third of the
    bench's turns and windows carry one: ~14 % of the warm indexing time, parsed anew)."""
    return claim_of(statement, sender)
