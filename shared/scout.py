"""A look past a full read-ahead, so one agent's burst holds no other agent's next event.

The consume loop reads ahead up to ``read_ahead`` messages (``shared.lanes``); the server
stops delivering there (``max_ack_pending``), because a message read is unacked until it
is applied — the composed readers take the consumer's ack floor, and "nothing pending,
nothing unacked", as proof that everything before a trigger is applied. A burst longer
than the read-ahead therefore held a quiet agent's next event until the burst's excess
was applied.

The scout reads past the read-ahead without taking anything from the durable consumer:

* an *ephemeral* consumer (``<consumer>-scout``, no acks, in memory) on the durable's own
  filter subjects, starting just past the last message the loop read — minus the noisy
  agents (those holding ``quota`` or more messages in the lanes when it opens): their
  slots are left out of its filter, so the server skips their backlog for it (and the
  other agents it knows in those slots are named one by one, ``scout_filters``); a slot's
  agent the stream did not know yet when the scout opened is not seen by it at all — but
  for the OpenClaw store's session token, always named (any agent's message may be filed
  under it: seen, it is kept or passed as its agent's, so that agent's next event is never
  kept ahead of it);
* each message it delivers is *kept* — filed in its agent's lane, to be applied at that
  agent's turn (an OpenClaw store event decided as it is filed: its duplicate window
  compares it with its agent's earlier events only, ``shared.duplicates``) — or *passed*
  (``Passing.sort``): an agent whose lane reaches ``quota`` and anything that names no
  agent are passed, and once one of an agent's messages is passed so is every later one
  (the agent is *blocked* until the scout closes), so each agent's events are still
  applied — and decided — in stream order: what the scout kept of an agent is all of that
  agent's events between the durable's last read and there. An OpenClaw store event under
  the session token is its session key's agent's (read from its bytes without the whole
  decode): the server cannot filter a noisy agent's out there, so the scout reads past them
  itself, several batches a turn; such an event of an agent the scout does not see under
  its own id (new to a noisy agent's slot) is passed — kept, it could overtake that agent's
  earlier event the scout never saw;
* an agent that comes into a noisy agent's slot after the scout opened is not in its
  filter: ``Scout.outdated`` tells, and the loop opens a new scout at the durable's last
  read, which names it;
* the durable delivers every message in its turn as before, the kept ones too: a copy of
  one already applied is acked (``handled_above``), of one still held it is kept to be
  acked when that one is; so the durable's ack floor, its pending counts and the
  checkpoint keep meaning "every event up to here is applied" — nothing is acked before
  it is applied — and a restart rewinds as before, the documents' per-agent watermarks
  skipping what was applied ahead;
* the scout closes once the lanes are empty and the durable has read past everything the
  scout sorted out (the blocked agents' passed messages are in the lanes then, so a new
  scout may keep their later ones), or at a delivery gap, an error or a rewind: it is an
  optimisation the loop can always drop.

Pure, but for ``Scout``'s consumer and fetcher.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from nats.js import api
from nats.js.client import JetStreamContext

from shared.names import (
    OPENCLAW_FAMILY,
    OPENCLAW_SESSION_AGENT,
    SLOTS,
    scout_consumer,
    session_agent_filter,
    slot_of,
)
from shared.pull import PullFetcher, fetcher_for

log = logging.getLogger(__name__)

# a stored subject, <prefix>.<family>.<slot>.<agent>.<kind>
_STORED_TOKENS = 5
_FAMILY_TOKEN = 1
_SLOT_TOKEN = 2
_AGENT_TOKEN = 3
_INACTIVE_S = 30.0  # an abandoned scout (its worker died) is removed by the server after this


def scout_filters(filters: list[str], noisy: set[str], neighbours: dict[int, set[str]]) -> list[str]:
    """The durable's ``filters`` without the ``noisy`` agents: a wildcard slot is spelled out
    slot by slot, and in a noisy agent's slot only the other agents the stream knows there
    (``neighbours``) are named. Filters of another shape (what the first layout stored
    without a slot) are kept as they are."""
    noisy_slots = {slot_of(agent) for agent in noisy}
    out: list[str] = []
    for subject in filters:
        tokens = subject.split(".")
        if len(tokens) != _STORED_TOKENS:
            out.append(subject)
            continue
        slots = range(SLOTS) if tokens[_SLOT_TOKEN] == "*" else [int(tokens[_SLOT_TOKEN])]
        for slot in slots:
            tokens[_SLOT_TOKEN] = str(slot)
            if slot not in noisy_slots:
                out.append(".".join(tokens))
                continue
            named = tokens[_AGENT_TOKEN]
            for agent in sorted(_named_in(slot, tokens[_FAMILY_TOKEN], neighbours.get(slot, set()) - noisy)):
                if named in ("*", agent):
                    out.append(".".join([*tokens[:_AGENT_TOKEN], agent, *tokens[_AGENT_TOKEN + 1:]]))
            tokens[_AGENT_TOKEN] = named
    return out


def _named_in(slot: int, family: str, known: set[str]) -> set[str]:
    """The agents a filter names in a noisy agent's slot: the others the stream knows there and,
    for the OpenClaw store's events in its slot, always the session token (OpenClaw 2026.9 files
    any agent's messages under it, noisy or not, known or not when the scout opened): the scout
    must see each of them to pass (block) the agent it is, or it would keep that agent's next
    event — under its own id — ahead of it, and the agent's watermark would then skip it."""
    if family == OPENCLAW_FAMILY and slot == slot_of(OPENCLAW_SESSION_AGENT):
        return known | {OPENCLAW_SESSION_AGENT}
    return known


class Passing:
    """What the scout has sorted out since it opened: how far, and whose messages it passes."""

    def __init__(self, prefix: str, start: int, quota: int, noisy: set[str]) -> None:
        self.prefix = prefix
        self.top = start - 1  # every message of the filter up to here is kept, or its agent blocked
        self.quota = quota
        self.blocked: set[str] = set(noisy)
        # the agents the filter names in each noisy agent's slot (``Scout.open``): another agent
        # of such a slot is not seen under its own id, so its messages under the session token
        # are passed — kept, one could overtake its own earlier event the scout never saw
        self.named: dict[int, set[str]] = {}
        self._session_subjects = session_agent_filter(prefix)[:-1]  # is_session_agent_subject's, made once

    def under_session_token(self, subject: str) -> bool:
        """``shared.names.is_session_agent_subject``, for every message the scout reads."""
        return subject.startswith(self._session_subjects)

    def sort(self, subject: str, seq: int, held: Callable[[str], int], filed: str | None = None) -> str | None:
        """The agent to keep the message at ``seq`` under, or None to pass it (the durable
        delivers it in its turn). ``held(agent)``: how many of the agent's messages the
        lanes hold; ``filed``: for an OpenClaw store event under the session token, the agent
        its session key names (``shared.openclaw.filed_agent_of``; None: no agent's — bad
        input, dead-lettered in its turn)."""
        self.top = max(self.top, seq)
        tokens = subject.split(".")
        if len(tokens) != _STORED_TOKENS:
            return None  # what no agent's lane holds (the first layout's subjects)
        agent = tokens[_AGENT_TOKEN]
        if agent == OPENCLAW_SESSION_AGENT and self.under_session_token(subject):
            if filed is None:
                return None
            agent = filed
            if not self._sees(agent):
                self.blocked.add(agent)
                return None
        if agent in self.blocked:
            return None
        if held(agent) >= self.quota:
            self.blocked.add(agent)
            return None
        return agent


    def _sees(self, agent: str) -> bool:
        """Does the filter deliver ``agent``'s events under its own id (not an agent of a noisy
        agent's slot that it does not name)?"""
        named = self.named.get(slot_of(agent))
        return named is None or agent in named


def agent_token(subject: str) -> str | None:
    """The agent token of a stored subject (None for any other shape)."""
    tokens = subject.split(".")
    return tokens[_AGENT_TOKEN] if len(tokens) == _STORED_TOKENS else None


class Scout:
    """The ephemeral consumer and its fetcher; ``open`` before ``read``, ``close`` after."""

    def __init__(self, js: JetStreamContext, stream: str, consumer: str, passing: Passing,
                 delivery_of: Callable[[Msg], int]) -> None:
        self._js = js
        self._delivery_of = delivery_of  # a message's consumer sequence
        self._stream = stream
        self._durable = consumer
        self.name = scout_consumer(consumer)
        self.passing = passing
        self._fetcher: PullFetcher | None = None
        self._next_delivery = 1
        self._known: dict[int, set[str]] = {}  # the agents of each noisy agent's slot as it opened

    async def open(self, noisy: set[str]) -> bool:
        """Make the consumer; False when there is nothing to read past the noisy agents (every
        slot the durable reads is theirs) — or the durable reads the whole stream, which a
        filter without them cannot say."""
        info = await self._js.consumer_info(self._stream, self._durable)
        config = info.config
        filters = list(config.filter_subjects or ([config.filter_subject] if config.filter_subject else []))
        neighbours = self._known = {slot: await self._agents_in(slot) for slot in {slot_of(agent) for agent in noisy}}
        self.passing.named = neighbours
        filters = scout_filters(filters, noisy, neighbours) if filters else []
        if not filters:
            return False  # an empty filter would be the whole stream: other workers' events too
        with contextlib.suppress(nats.js.errors.NotFoundError):
            await self._js.delete_consumer(self._stream, self.name)  # one a dead worker left behind
        await self._js.add_consumer(self._stream, api.ConsumerConfig(
            name=self.name, ack_policy=api.AckPolicy.NONE, deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=self.passing.top + 1, filter_subjects=filters,
            inactive_threshold=_INACTIVE_S, mem_storage=True, num_replicas=1,
            description=f"Cortex: {self._durable} reading past a noisy agent's backlog"))
        self._fetcher = fetcher_for(self._js, self._stream, self.name)
        await self._fetcher.start()
        return True

    async def outdated(self) -> bool:
        """Does a noisy agent's slot hold an agent the stream did not know when the scout opened?
        Its filter does not name that agent, so the scout does not see it: a new scout must."""
        for slot, known in self._known.items():
            if await self._agents_in(slot) - known:
                return True
        return False

    async def _agents_in(self, slot: int) -> set[str]:
        """The agents the stream holds events of in ``slot`` (its per-subject counts)."""
        info = await self._js.stream_info(self._stream, subjects_filter=f"{self.passing.prefix}.*.{slot}.*.*")
        subjects = info.state.subjects or {}
        return {agent for agent in map(agent_token, subjects) if agent is not None}

    async def read(self, batch: int, expires_s: float, room: int = 0) -> list[Msg] | None:
        """The messages delivered since the last read (up to ``batch``), in order, with up to
        ``room`` on their way (at least the batch); None when a delivery went missing on the
        way (the scout must close: a message it never saw may be an agent's it would keep
        later ones of)."""
        if self._fetcher is None:
            return []
        await self._fetcher.ask(room, expires_s)
        msgs = await self._fetcher.poll(batch, expires_s)
        for msg in msgs:
            delivery = self._delivery_of(msg)
            if delivery != self._next_delivery:
                return None
            self._next_delivery = delivery + 1
        return msgs

    async def close(self) -> None:
        """Stop reading and remove the consumer (it acks nothing: nothing to give back)."""
        fetcher, self._fetcher = self._fetcher, None
        if fetcher is not None:
            await fetcher.abandon()
        with contextlib.suppress(nats.errors.Error, nats.js.errors.Error):
            await self._js.delete_consumer(self._stream, self.name)
