"""Decisions as pure functions over the contract's ``DecisionsDoc``.

Ported from the reference's ``DecisionTracker`` (openclaw-cortex ``src/decision-tracker.ts``)
with its extraction replaced (``workers.conversation.statements``): one decision per
decision sentence, its ``what`` the sentence (without its reason clause) and its ``why``
the reason the text gives, or empty. The reference took 50 characters before to 100 after
every match as ``what`` and 100 before to 200 after as ``why``: its decisions were cut
inside words, one sentence with two patterns was two decisions, and every why repeated its
decision. Impact is ``high`` when a high-impact keyword of any enabled language appears in
the decision sentence, else ``medium``. An identical ``what`` seen within
``dedupe_window_hours`` of the event is skipped, and the list keeps the newest
``max_decisions``.

Time is the event's: ``extracted_at`` is ``event.ts`` and ``date`` is that instant's day
in the configured time zone. The functions return a new document and never mutate their
input; unchanged decisions are shared between the two. The document changes with
``msgspec.structs.replace``: fields not named here (``integrity``, owned by the shell, a
new field) are carried over.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo

import msgspec

from schemas.docs import Decision, DecisionsDoc, Integrity, Proposal
from schemas.events import FeedbackEvent, MessageEvent
from schemas.types import Impact
from shared.config import DecisionsSettings
from workers.conversation.feedback import feedback_target
from workers.conversation.ids import unique_id
from workers.conversation.patterns import AnyOf, MatchText, PatternSet, any_of, prepare_text
from workers.conversation.signals import cue_topics, is_noise_topic
from workers.conversation.statements import (
    DecisionText,
    assent_echo,
    find_asked_choice,
    find_decisions,
    find_proposal,
    is_approval,
    is_assent,
    is_ratification,
)


def empty_decisions_doc(ts: datetime) -> DecisionsDoc:
    return DecisionsDoc(updated=ts, decisions=[], integrity=Integrity())


def infer_impact(text: str, patterns: PatternSet) -> Impact:
    """``high`` when the text names a high-impact keyword, else ``medium`` (``inferImpact``)."""
    return "high" if patterns.is_high_impact(text.lower()) else "medium"


def _fresh_decisions(
    text: MatchText, patterns: PatternSet, decisions: list[Decision], cutoff: datetime
) -> list[tuple[int, DecisionText]]:
    """The message's decisions (with their index in the message) whose ``what`` is not
    recent (extracted at or after ``cutoff``).

    The recent ``what``s are a set, so a message with many decisions costs linear time (and
    one without a match costs nothing); decisions of this same message count as recent
    too, as in the reference.
    """
    fresh: list[tuple[int, DecisionText]] = []
    recent: set[str] | None = None
    for index, found in enumerate(find_decisions(text, patterns, steps=True)):
        if recent is None:
            recent = {d.what for d in decisions if d.extracted_at >= cutoff}
        if found.what not in recent:
            recent.add(found.what)
            fresh.append((index, found))
    return fresh


TOPIC_MESSAGES: Final = 12
"""How many messages after its cue a topic ("Let's get back to the auth migration") is still the
context of a decision that names none: its impact reads that topic's."""


def _ratified(base: DecisionsDoc, text: MatchText, who: str, patterns: PatternSet) -> DecisionText | None:
    """The proposal of the message before, when this one ratifies it ("How about we use
    Postgres?" — "Agreed."): a ratification said nothing itself, and the reference kept "let's
    do that" while what was agreed was lost. A speaker does not ratify their own proposal.

    A choice asked as a question ("So, let's go for Mando? Yeah? No objection?") is agreed by a
    plain yes too ("Yeah, yeah."; ``is_assent``): the question asked for one (twenty-first round)."""
    proposal = base.proposal
    if proposal is None or proposal.by == who or (not proposal.said and not proposal.what):
        return None
    if proposal.after:
        return _approved(proposal, text, patterns)
    if is_ratification(text, patterns):
        what = proposal.what or find_proposal(prepare_text(proposal.said), patterns)
        if what:
            return DecisionText(what=what, why=proposal.why, sentence=what)
    if (approved := _approved(proposal, text, patterns)) is not None:
        return approved
    if not proposal.said or (echo := assent_echo(text, patterns)) is None:
        return None
    asked = find_asked_choice(prepare_text(proposal.said), patterns)
    if asked is not None and is_assent(echo, asked.sentence, patterns):
        return asked
    return None


def _approved(proposal: Proposal, text: MatchText, patterns: PatternSet) -> DecisionText | None:
    """The proposal, when this message approves the idea ("We could make two buttons out of that." …
    "Yeah. That's really a good idea, I think."; ``is_approval``) — another speaker's, said up to
    ``APPROVAL_MESSAGES`` messages before (issue 37, twenty-fifth round): in a meeting the group agrees over
    a few turns, and a judgement of the idea, unlike a bare yes, agrees with it."""
    if not proposal.said or not is_approval(text, patterns):
        return None
    said = prepare_text(proposal.said)
    proposed = find_proposal(said, patterns)
    if not proposed or (patterns.going_on is not None and patterns.going_on.match(proposed.lower()) is not None):
        return None  # nothing proposed, or only to go on as before ("Let's keep spreading positivity")
    what = find_proposal(said, patterns, rest=True)
    return DecisionText(what=what, why=proposal.why, sentence=what) if what else None


APPROVAL_MESSAGES: Final = 3
"""How many messages after a proposal an approval of it ("That's a good idea") still decides it: the
proposer's own words and a back-channel may come between (twenty-fifth round)."""


def _carried(proposal: Proposal | None) -> Proposal | None:
    """The proposal one message older, while an approval may still answer it (``APPROVAL_MESSAGES``)."""
    if proposal is None or not proposal.said or proposal.after + 1 >= APPROVAL_MESSAGES:
        return None
    return msgspec.structs.replace(proposal, after=proposal.after + 1)


PROPOSAL_CHARS: Final = 2000
"""How much of a message (its end) is kept for the answer that may ratify what it proposes."""


def _proposal(text: MatchText, who: str, patterns: PatternSet) -> Proposal | None:
    """The message, kept for its answer, when it may propose something: it holds a proposal's
    words ("how about", "let's", "wie wäre es" …; ``Pattern.may_match``). What it proposes is
    read only when the answer ratifies it (``_ratified``): the scan cost 19 µs on every message
    with a "let's", ~15 % of the worker's time on the bench backlog."""
    found = patterns.proposal
    if (found is None or not found.may_match(found.subject(text))) and not _asks(text, patterns):
        return None
    return Proposal(said=text.original[-PROPOSAL_CHARS:], by=who)


def _asks(text: MatchText, patterns: PatternSet) -> bool:
    """The message puts a choice to the others ("So, let's go for Mando?", "I think we can keep the
    single curved one"; ``find_asked_choice``): read only when it holds a decision's cue (the literals the
    message's one scan found) and none was a decision, and a question mark or an opinion's words."""
    if not patterns.decision.may_match(text):
        return False
    opinion = patterns.opinion
    asking = "?" in text.original or "？" in text.original
    if not asking and (opinion is None or opinion.search(text.lowered) is None):
        return False
    return find_asked_choice(text, patterns) is not None


def _context(base: DecisionsDoc, text: MatchText, patterns: PatternSet) -> tuple[str | None, int]:
    """The topic the conversation is on after this message, and for how many more messages."""
    topics = [topic for _, topic in cue_topics(text, patterns) if not is_noise_topic(topic, patterns)]
    if topics:
        return topics[-1], TOPIC_MESSAGES
    left = max(0, base.topic_left - 1)
    return (base.topic if left else None), left


def _impact(found: DecisionText, topic: str | None, patterns: PatternSet) -> Impact:
    """High when the decision or its reason names a high-impact keyword — or, naming none, when
    the topic it was made in does ("We decided to use Auth0 as the provider" during the auth
    migration: the sentence alone no longer carried the migration it belongs to)."""
    impact = infer_impact(f"{found.sentence} {found.why}", patterns)
    if impact != "high" and topic is not None and patterns.is_high_impact(topic.lower()):
        return "high"
    return impact


_SIGNALS: dict[int, tuple[PatternSet, AnyOf]] = {}  # id(patterns) → (the set, ``_signals``)


def _signals(patterns: PatternSet) -> AnyOf:
    """What a message must hold for this core to read it further: a decision's cue, a topic's cue
    or a proposal's words (``AnyOf``, one set test of the message's scan). Two messages in three of
    the bench backlog hold none."""
    hit = _SIGNALS.get(id(patterns))
    if hit is None or hit[0] is not patterns:
        hit = _SIGNALS[id(patterns)] = (patterns, any_of(patterns.decision, patterns.step, patterns.topic,
                                                                 patterns.proposal))
    return hit[1]


def apply_message(
    doc: DecisionsDoc | None,
    event: MessageEvent,
    settings: DecisionsSettings,
    patterns: PatternSet,
    tz: ZoneInfo,
) -> DecisionsDoc:
    """The decisions document after one message (the reference's ``processMessage``)."""
    base = doc if doc is not None else empty_decisions_doc(event.ts)
    text = prepare_text(event.content)
    who = event.sender or event.role
    if not _signals(patterns).may_match(text) \
            and (base.proposal is None or _ratified(base, text, who, patterns) is None):
        # no decision, no topic, no proposal, nothing before ratified or approved: the context ages by
        # one message, and a proposal waiting for its approval with it (what ``_fresh_decisions``,
        # ``_context`` and ``_proposal`` find here)
        left = base.topic_left - 1 if base.topic_left > 0 else 0
        return msgspec.structs.replace(base, updated=event.ts, proposal=_carried(base.proposal),
                                       topic=base.topic if left else None, topic_left=left)
    cutoff = event.ts - timedelta(hours=settings.dedupe_window_hours)
    fresh = _fresh_decisions(text, patterns, base.decisions, cutoff)
    if not fresh and (ratified := _ratified(base, text, who, patterns)) is not None \
            and not any(d.what == ratified.what and d.extracted_at >= cutoff for d in base.decisions):
        fresh = [(0, ratified)]
    topic, topic_left = _context(base, text, patterns)
    proposal = None if fresh else (_proposal(text, who, patterns) or _carried(base.proposal))
    context = {"proposal": proposal, "topic": topic, "topic_left": topic_left}
    if not fresh:
        return msgspec.structs.replace(base, updated=event.ts, **context)
    date = event.ts.astimezone(tz).date().isoformat()
    # Only the newest max_decisions can survive the cap: build no more than those.
    taken = {d.id for d in base.decisions}
    added = []
    for index, found in fresh[-settings.max_decisions :]:
        decision_id = unique_id(event.id, "decision", index, taken)
        taken.add(decision_id)
        added.append(_decision(event, patterns, decision_id=decision_id, found=found, date=date, topic=topic))
    decisions = [*base.decisions, *added][-settings.max_decisions :] if added else base.decisions
    return msgspec.structs.replace(base, updated=event.ts, decisions=decisions, **context)


def apply_feedback(doc: DecisionsDoc | None, event: FeedbackEvent) -> DecisionsDoc:
    """Apply ``decision_reject`` (target = decision id): a person said the decision is wrong, so
    it leaves the document (and every briefing after it); an unknown id changes nothing."""
    base = doc if doc is not None else empty_decisions_doc(event.ts)
    target = feedback_target(event)
    kept = [d for d in base.decisions if d.id != target]
    if len(kept) == len(base.decisions):
        return base
    return msgspec.structs.replace(base, updated=max(base.updated, event.ts), decisions=kept)


def _decision(
    event: MessageEvent, patterns: PatternSet, *, decision_id: str, found: DecisionText, date: str,
    topic: str | None = None,
) -> Decision:
    # The whole sentence (and a reason from the sentence before) holds every keyword the
    # reference found in its what and why windows.
    return Decision(
        id=decision_id,
        what=found.what,
        date=date,
        why=found.why,
        impact=_impact(found, topic, patterns),
        who=event.sender or event.role,
        extracted_at=event.ts,
        channel=event.channel,
    )
