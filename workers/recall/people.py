"""People inside an agent (pure): whose conversation a memory comes from, and what a recall
scoped to one person may see — mem0's ``user_id``, Zep's user, within one agent.

An agent is the tenant: nothing crosses agents, as always. Within one, a support agent
talking with a thousand customers keeps one pool; each memory now records the person the
agent was talking with when it was said (``Memory.person``):

* a user's message: its sender;
* the agent's own message: the person of the last message before it in its session (the
  one it answers), or none;
* a remembered memory: the ``person`` its ``remember`` names (the ``cortex_remember`` tool's
  argument), else none;
* notes, knowledge facts and Claude's extractions: none — the agent's shared knowledge.

And to whom a user's message is said: the agent, or another person it answers
(``answers_another``) — a rule is a standing instruction *to the agent*.

A recall for a person (``person`` on ``cortex.api.recall.<agent>``, the ``cortex_recall``
tool's argument, ``cortex recall --person``) sees that person's memories and the shared
ones, never another person's.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from schemas.events import MessageEvent
from workers.recall.models import Memory
from workers.recall.store_base import MemoryFilter


def conversation_person(event: MessageEvent, previous: Sequence[Memory]) -> str | None:
    """The person a message belongs to: a user's sender, else the person of the turn it
    follows in its session (``previous``: the session's turns before it, oldest first)."""
    if event.role == "user":
        return event.sender or None
    return previous[-1].person if previous else None


def _a_users_turn(turn: Memory) -> bool:
    """A user's turn: its person is its sender (``conversation_person``); the agent's turn has
    the person it answers, or none."""
    return turn.person is not None and turn.person == turn.sender


def answers_another(event: MessageEvent, previous: Sequence[Memory]) -> bool:
    """Whether a user's message answers another person rather than the agent: the nearest
    turn before it in its session (``previous``, oldest first) by someone other than its
    sender is another user's, not the agent's. Two people chatting, or a meeting, with the
    agent listening: "Never close your laptop", "Remember that seventy five percent of users
    find most remote controls ugly" are said to the room, not standing instructions to the
    agent (issue 37). A session's first message, or one after the agent spoke, is the
    agent's to keep."""
    if event.role != "user":
        return False
    sender = event.sender or event.role
    other = next((p for p in reversed(previous) if p.sender != sender), None)
    return other is not None and _a_users_turn(other)


def visible_to(memory: Memory, person: str) -> bool:
    """Whether a recall for ``person`` may return ``memory``: theirs, or shared."""
    return memory.person is None or memory.person == person


def person_filters(flt: MemoryFilter, person: str | None) -> list[MemoryFilter]:
    """The store filters of a recall: ``flt`` itself, or for a person two — theirs and the
    shared memories (the store's conditions are all required: two searches, pooled after)."""
    if person is None:
        return [flt]
    return [msgspec.structs.replace(flt, person=person), msgspec.structs.replace(flt, shared=True)]


def owners(memories: Sequence[Memory], texts: Sequence[str]) -> dict[str, str]:
    """Of ``texts`` (key memories), those that belong to one person only → that person: a
    briefing for another person leaves them out (a text some memory shares is shared)."""
    wanted = set(texts)
    people: dict[str, set[str | None]] = {}
    for memory in memories:
        if memory.content in wanted:
            people.setdefault(memory.content, set()).add(memory.person)
    out: dict[str, str] = {}
    for text, who in people.items():
        (person,) = who if len(who) == 1 else (None,)
        if person is not None:
            out[text] = person
    return out

