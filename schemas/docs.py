"""Derived documents stored in the contract's KV buckets (contract: Derived state).

Documents are encoded with ``omit_defaults`` so optional fields (``channel?``, ``due?``)
are absent rather than null; fields the contract shows as ``X|null`` have no default and
are always present.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import msgspec

from schemas.types import (
    BootTrigger,
    ChannelLayer,
    CommitmentStatus,
    EntityType,
    FactSource,
    Impact,
    Mood,
    OperationStatus,
    Priority,
    Role,
    Severity,
    Signal,
    ThreadStatus,
)


class Integrity(msgspec.Struct, frozen=True, kw_only=True):
    """Provenance and per-agent watermark of a document.

    ``last_seq`` is the highest stream sequence of this agent's events the producer has
    applied: a redelivered or replayed event at or below it changes nothing.
    """

    last_seq: int = 0
    last_event_ts: datetime | None = None
    events: int = 0
    producer: str = ""


class Thread(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``about`` goes beyond the contract (readers ignore it): what the conversation said
    the thread is about when it opened; ``summary`` is composed from it and where the
    thread stands."""

    id: str
    title: str
    status: ThreadStatus
    priority: Priority
    summary: str
    decisions: list[str]
    waiting_for: str | None
    mood: Mood
    last_activity: datetime
    created: datetime
    channel: str | None = None
    about: str = ""
    # who said the wait (beyond the contract): the other speaker's answer ends a wait on "your
    # go-ahead" however many messages later; None in a document written before it was kept
    waiting_role: Role | None = None
    # how the conversation referred to it since it opened (beyond the contract, issue 37): the
    # messages that said its title as a phrase, and of them those that said it after a definite
    # article, a possessive or an English "'s" ("the dance studio", "my online store"); 0 and 0 in
    # a document written before they were kept (``workers.threads.core._count_references``)
    mentions: int = 0
    definite: int = 0


class RecentMessage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One of the last messages, for the topics nobody announced (``workers.threads.topics``)
    and for the hot snapshot of a compaction that carries no messages (an OpenClaw
    gateway's never does: ``workers.snapshot.core.window_messages``)."""

    n: int  # the message's ordinal (``ThreadsDoc.messages`` when it was applied)
    text: str  # its first characters
    work: bool = False  # it carried a decision, a wait, a closure, a high-impact word or a promise
    checked: bool = False  # a promise was looked for (the costlier check runs once, when needed)
    role: str = ""  # who said it (user, assistant, …); "" in a document written before it was kept
    session: str = ""


class ThreadsDoc(msgspec.Struct, frozen=True, kw_only=True):
    # Lists a write trims from the front (their oldest items) if the document would not fit
    # one KV value otherwise (``shared.parts.cap``); the cores' own caps keep it far below.
    CAP_LISTS: ClassVar[tuple[str, ...]] = ("threads",)

    updated: datetime
    session_mood: Mood
    threads: list[Thread]
    integrity: Integrity
    version: int = 2
    # Beyond the contract (readers ignore them): how many messages the agent sent or
    # received, the last of them and the phrases settled as threads or details of one
    # (``workers.threads.topics``).
    messages: int = 0
    recent: list[RecentMessage] = msgspec.field(default_factory=list)
    settled: list[str] = msgspec.field(default_factory=list)
    # the phrases said twice in a window without work, each with the ordinal of the message
    # that said it last: said again later, it is a topic the conversation comes back to
    heard: dict[str, int] = msgspec.field(default_factory=dict)
    # each phrase said lately: (episodes, ordinal of its last mention); a phrase said again once
    # its last mention left the window of recent messages is a return to it
    returns: dict[str, tuple[int, int]] = msgspec.field(default_factory=dict)


class Decision(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    what: str
    date: str
    why: str
    impact: Impact
    who: str
    extracted_at: datetime
    channel: str | None = None


class Proposal(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The latest message, when it may propose something ("How about we use Postgres for the
    event store?"), for the answer that ratifies it ("Agreed."): beyond the contract (readers
    ignore it). What it proposes is read from ``said`` only when an answer ratifies it (most
    messages with a "let's" are never answered "Agreed."); ``what`` is that reading, kept by
    documents written before ``said`` was."""

    what: str = ""
    why: str = ""
    by: str = ""  # its sender (or role): a speaker does not ratify their own proposal
    said: str = ""  # the message's last PROPOSAL_CHARS characters
    # messages said since it (0: it was the latest): an approval ("That's a good idea") may answer it a
    # few messages on (``workers.decisions.core.APPROVAL_MESSAGES``; issue 37, twenty-fifth round)
    after: int = 0


class DecisionsDoc(msgspec.Struct, frozen=True, kw_only=True):
    CAP_LISTS: ClassVar[tuple[str, ...]] = ("decisions",)

    updated: datetime
    decisions: list[Decision]
    integrity: Integrity
    version: int = 1
    # beyond the contract (readers ignore them): the latest message's proposal, and the topic the
    # conversation is on (its latest cue, "Let's get back to the auth migration") with how many
    # more messages it still names the context of a decision that names none (impact)
    proposal: Proposal | None = None
    topic: str | None = None
    topic_left: int = 0


class Commitment(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    who: str
    what: str
    status: CommitmentStatus
    created: datetime
    source_event: str
    due: str | None = None
    topic: str | None = None  # what the message it was made in was about, when ``what`` does not say
    # the promiser's role (beyond the contract): a briefing calls the agent's own promises
    # "(you)", whatever name its messages carry ("claudia")
    role: Role | None = None
    # the session an undated task asked of the one addressed was given in (beyond the contract;
    # ``workers.decisions.commitments``): it is for the next meeting, and done once its asker
    # speaks in a later session; None once the agent answered in that session (the agent was
    # the one asked: its to report), and for every other commitment
    session: str | None = None


class AgentTurn(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The agent's turn since the user last spoke, as the commitments core needs it: the
    commitments its messages closed, and whether its latest message asked a question."""

    session: str
    closed: list[str] = msgspec.field(default_factory=list)  # commitment ids, in the order closed
    question: bool = False


class AwaitingReply(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The latest message's undated commitments the learnt reader judges once the next turn is
    said (``workers.conversation.learnt.replies_keep``): the message's session, and per
    commitment id its sentence's part of the score."""

    session: str
    said: dict[str, float] = msgspec.field(default_factory=dict)


class Request(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The latest message, when it may ask something of the one addressed ("could you send us a
    copy of your slides?"), for the answer that accepts it ("Yes, I will."): beyond the contract
    (readers ignore it). The task is said only there; it is read from ``said`` only when an
    answer accepts it, and the accepter's commitment takes it (issue 37, thirteenth round)."""

    said: str  # the message's last REQUEST_CHARS characters
    by: str = ""  # its sender (or role): a speaker does not accept their own request
    session: str = ""


class CommitmentsDoc(msgspec.Struct, frozen=True, kw_only=True):
    CAP_LISTS: ClassVar[tuple[str, ...]] = ("commitments",)

    updated: datetime
    commitments: list[Commitment]
    integrity: Integrity
    version: int = 1
    # Beyond the contract (readers ignore it): the agent's current turn, whose closures the
    # user's next message may correct ("No, that's wrong, the deploy failed" reopens them)
    agent_turn: AgentTurn | None = None
    # and the latest message's undated commitments awaiting the next turn's judgement (issue 37)
    awaiting: AwaitingReply | None = None
    # and the latest message's request to the one addressed, for the next message that accepts it
    request: Request | None = None


class SnapshotDoc(msgspec.Struct, frozen=True, kw_only=True):
    agent: str
    session: str
    ts: datetime
    messages_snapshotted: int
    markdown: str
    integrity: Integrity


class TimelineItem(msgspec.Struct, frozen=True, kw_only=True):
    ts: datetime
    kind: str
    text: str = ""


class EnhancedThread(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    title: str = ""
    summary: str = ""
    basis: str = ""  # a digest of the title and summary it was written from: stale once they change


class EnhancedDecision(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    what: str = ""
    why: str = ""


class EnhancedCommitment(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    what: str = ""


class Enhancements(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Claude's wording of thread, decision and commitment texts, by id
    (``workers.narrative.enhance``); the briefing shows them in place of the extracted ones."""

    threads: dict[str, EnhancedThread] = msgspec.field(default_factory=dict)
    decisions: dict[str, EnhancedDecision] = msgspec.field(default_factory=dict)
    commitments: dict[str, EnhancedCommitment] = msgspec.field(default_factory=dict)


class NewsItem(msgspec.Struct, frozen=True, kw_only=True):
    """A sentence a speaker told of something they did or plan (``workers.narrative.session``)."""

    speaker: str
    text: str
    ts: datetime
    score: int


class SessionDigest(msgspec.Struct, frozen=True, kw_only=True):
    """What happened in one session: who spoke, how much, and the best of their news."""

    session: str
    started: datetime
    ended: datetime | None = None
    messages: int = 0
    speakers: list[str] = msgspec.field(default_factory=list)
    news: list[NewsItem] = msgspec.field(default_factory=list)


class NarrativeDoc(msgspec.Struct, frozen=True, kw_only=True):
    """``timeline``, ``sessions`` and ``enhanced`` go beyond the contract (readers ignore
    unknown fields): the narrative worker's own record of session starts/ends and
    compactions, in event time, a digest of each recent session (issue 37), and — with
    ``ANTHROPIC_API_KEY`` — Claude's wording of the briefing's items."""

    CAP_LISTS: ClassVar[tuple[str, ...]] = ("timeline", "sessions")

    agent: str
    ts: datetime
    markdown: str
    source: str  # "structured" | "llm"
    integrity: Integrity
    timeline: list[TimelineItem] = msgspec.field(default_factory=list)
    enhanced: Enhancements | None = None
    sessions: list[SessionDigest] = msgspec.field(default_factory=list)


class BootDoc(msgspec.Struct, frozen=True, kw_only=True):
    agent: str
    session: str | None
    generated_at: datetime
    trigger: BootTrigger
    chars: int
    markdown: str
    lagging: list[str]
    integrity: Integrity


class Entity(msgspec.Struct, kw_only=True, rename="camel"):
    id: str
    type: EntityType
    value: str
    mentions: list[str]
    count: int
    importance: float
    last_seen: datetime
    source: list[str]


class Fact(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    id: str
    subject: str
    predicate: str
    object: str
    relevance: float
    created_at: datetime
    last_accessed: datetime
    source: FactSource


class KnowledgeDoc(msgspec.Struct, frozen=True, kw_only=True):
    """``llm_pending`` goes beyond the contract (readers ignore it): the messages of the
    current LLM extraction batch, ``[sender, text]``, so batching survives restarts and
    replays deterministically. ``awaiting_reply``, ``taken_up`` and ``unanswered`` go beyond it
    too (issue 37, thirteenth round): the ids of the facts a person said of themselves that
    wait for the next speaker; of those said to another person whose reply took them up (or
    said again); and of those said to another person who did not take them up — all kept;
    Known Facts shows a few of the taken up and none of the unanswered. ``under_way`` (issue 37,
    sixteenth round): what a person said they are doing with a verb no closed phrase reads ("I'm
    starting a dance studio", "just started doing aerial yoga"), held out of ``facts`` until the
    listener's reply takes it up or the speaker says it again on a later day (then it is a fact,
    taken up); the newest 32 wait.

    A document over the 512 KiB value limit is stored as the head ``agent`` and parts
    ``agent.part1`` …, each a complete KnowledgeDoc holding a run of ``SPLIT_LISTS``."""

    CAP_LISTS: ClassVar[tuple[str, ...]] = ("llm_pending", "taken_up", "unanswered", "under_way")
    SPLIT_LISTS: ClassVar[tuple[str, ...]] = ("entities", "facts")

    updated: datetime
    entities: list[Entity]
    facts: list[Fact]
    integrity: Integrity
    version: int = 1
    llm_pending: list[list[str]] = msgspec.field(default_factory=list)
    awaiting_reply: list[str] = msgspec.field(default_factory=list)
    taken_up: list[str] = msgspec.field(default_factory=list)
    unanswered: list[str] = msgspec.field(default_factory=list)
    under_way: list[Fact] = msgspec.field(default_factory=list)


class ChannelState(msgspec.Struct, frozen=True, kw_only=True):
    channel: str
    last_message_at: datetime
    messages: int
    summary: str
    layer: ChannelLayer


class ChannelsDoc(msgspec.Struct, frozen=True, kw_only=True):
    CAP_LISTS: ClassVar[tuple[str, ...]] = ("channels",)

    updated: datetime
    channels: list[ChannelState]
    integrity: Integrity
    version: int = 1


class RecallDoc(msgspec.Struct, frozen=True, kw_only=True):
    """Beyond the contract: what boot needs from recall without opening the vector store —
    the agent's rules and hot ("key") memories, and counts by tier."""

    CAP_LISTS: ClassVar[tuple[str, ...]] = ("llm_pending", "key_memories")

    agent: str
    updated: datetime
    key_memories: list[str]
    memories: int
    hot: int
    cold: int
    integrity: Integrity
    version: int = 1
    llm_pending: list[list[str]] = msgspec.field(default_factory=list)  # [role, sender, text, event id, ts]
    # the key memories that belong to one person (text -> person): a briefing for another
    # person leaves them out (workers.recall.people)
    key_owners: dict[str, str] = msgspec.field(default_factory=dict)


class Triage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Claude's second opinion on a finding (``workers.traces.triage``): is it a real
    failure, how severe, why. Without ``ANTHROPIC_API_KEY`` there is none."""

    keep: bool
    severity: Severity
    reason: str = ""


class Finding(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A failure signal in the agent's tool and run events (contract: Traces). Every text
    in it is redacted. Beyond the contract (readers ignore them): the session, the tool,
    how often it happened (a loop's length, a failure's sessions), the error and the words
    (the user's correction or frustration, the agent's claim) as redacted excerpts; for a
    doom loop whose call later worked, when (``resolved_ts``) and the call that worked just
    before it in that chain (``resolved_after``: its redacted command, else its tool; empty
    when none came between); and ``loop_call``, a digest of the loop's call (its tool and
    command, else its redacted parameters), by which the same call succeeding in a later
    chain or session resolves it."""

    id: str
    signal: Signal
    severity: Severity
    summary: str
    events: list[str]
    first_ts: datetime
    last_ts: datetime
    session: str = ""
    tool: str = ""
    count: int = 0
    error: str = ""
    quote: str = ""
    triage: Triage | None = None
    resolved_ts: datetime | None = None
    resolved_after: str = ""
    loop_call: str = ""


class TraceStep(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One event of a chain, reduced to what the detectors read (texts redacted).

    ``kind``: ``in`` / ``out`` (a message received / sent), ``call`` / ``result`` (a tool),
    ``run_start`` / ``run_end``. ``keys`` are digests of a call's parameters (name and
    redacted value), ``command`` its redacted ``command`` parameter; a result carries its
    call's (and the call's event id), and is ``failed`` with its ``error``; a sent message
    may be a ``question``."""

    kind: str
    event: str
    ts: datetime
    tool: str = ""
    call_id: str = ""
    call: str = ""  # a result's call (its event id)
    call_ts: datetime | None = None  # and that call's time: a finding listing the call starts there
    keys: list[str] = msgspec.field(default_factory=list)
    command: str = ""
    failed: bool = False
    error: str = ""
    text: str = ""
    question: bool = False


class DoomLoop(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The failing attempts in a row that are the same call as the first of them."""

    tool: str
    keys: list[str]
    command: str
    count: int
    events: list[str]
    first_ts: datetime
    first_error: str
    finding: str = ""  # the finding's id, once the loop is long enough to be one


class Upset(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The chain's last user message, when it was dissatisfied, and what followed it."""

    event: str
    ts: datetime
    text: str
    after: int = 0  # messages since
    resolved: bool = False  # one of them apologised or tried again


class TraceChain(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A session's current chain of events (the reference's ConversationChain), bounded to
    its last steps; ``events`` counts all it had."""

    id: str
    session: str
    started: datetime
    last_ts: datetime
    steps: list[TraceStep]
    events: int = 0
    loop: DoomLoop | None = None
    upset: Upset | None = None


class FailurePrint(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A tool failure's fingerprint (tool, parameters, normalised error) and the sessions
    it happened in: the same failure in a second session is a ``repeat_fail``."""

    key: str
    tool: str
    error: str
    sessions: list[str]
    events: list[str]
    first_ts: datetime
    last_ts: datetime


class TraceDoc(msgspec.Struct, frozen=True, kw_only=True):
    """Failure findings of one agent (contract: Traces), newest last. ``chains`` and
    ``failures`` go beyond the contract: the analyzer's state, so it runs event by event."""

    CAP_LISTS: ClassVar[tuple[str, ...]] = ("findings",)

    updated: datetime
    findings: list[Finding]
    integrity: Integrity
    version: int = 1
    chains: list[TraceChain] = msgspec.field(default_factory=list)
    failures: list[FailurePrint] = msgspec.field(default_factory=list)


class Operation(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A tool call and its result (contract: pending operations). ``preview`` is the
    redacted start of the result or error; ``seen`` once the agent has it. Beyond the
    contract: the session, the runtime's call id, ``open`` while the turn that made the
    call is still running (a result then reaches the agent directly), and ``request``,
    what the call asked (a redacted excerpt of its params: "rebuild the search index"),
    so that three spawned tasks are not three identical lines; ``orphaned`` when it was
    failed for want of a result within ``CORTEX_TRACES_ORPHAN_HOURS``. A call whose result
    says it was accepted and runs in a child session (OpenClaw's ``sessions_spawn``:
    ``{status: "accepted", childSessionKey, runId}``) waits on that session:
    ``child_session`` and ``child_run``, and ``child_reply``, the redacted start of the
    child's last assistant message so far (its result when the child's run ends)."""

    id: str
    tool: str
    status: OperationStatus
    started: datetime
    seen: bool
    finished: datetime | None = None
    preview: str | None = None
    session: str = ""
    call_id: str = ""
    open: bool = False
    request: str = ""
    orphaned: bool = False  # failed for want of a result; a result arriving later still completes it
    child_session: str = ""  # the session the call's accepted task runs in (its end finishes the call)
    child_run: str = ""  # that task's run id, as the accepted result named it
    child_reply: str = ""  # the child session's last assistant message so far (redacted excerpt)


class OperationsDoc(msgspec.Struct, frozen=True, kw_only=True):
    CAP_LISTS: ClassVar[tuple[str, ...]] = ("operations",)

    updated: datetime
    operations: list[Operation]
    integrity: Integrity
    version: int = 1


class WindowMessage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A message of the session window the model reads next (its text cut, ``workers.extraction``)."""

    id: str
    role: Role
    text: str
    ts: datetime
    sender: str = ""


class ModelThread(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A topic the model found that the patterns did not."""

    id: str
    title: str
    at: datetime  # the trigger of the window it was last found in
    summary: str = ""
    status: ThreadStatus = "open"


class ModelDecision(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    what: str
    at: datetime
    why: str = ""
    who: str = ""


class ModelCommitment(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    who: str
    what: str
    at: datetime
    source_event: str  # the window's last message
    due: str | None = None
    status: CommitmentStatus = "open"


class ModelFact(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    subject: str
    predicate: str
    object: str
    at: datetime


class ModelRule(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    text: str
    at: datetime


class ExtractionDoc(msgspec.Struct, frozen=True, kw_only=True):
    """What a model read in the agent's conversation beyond the patterns (``workers.extraction``,
    only with a model configured): the threads, decisions, commitments, facts and rules the
    patterns missed, the ids of pattern items it judged wrong (``dropped``), and the messages
    of the session window not read yet. The briefing shows the patterns' items without the
    dropped ones and with the model's; the pattern documents themselves are unchanged."""

    CAP_LISTS: ClassVar[tuple[str, ...]] = ("window", "dropped", "facts", "rules", "decisions", "commitments",
                                            "threads")

    updated: datetime
    integrity: Integrity
    threads: list[ModelThread] = msgspec.field(default_factory=list)
    decisions: list[ModelDecision] = msgspec.field(default_factory=list)
    commitments: list[ModelCommitment] = msgspec.field(default_factory=list)
    facts: list[ModelFact] = msgspec.field(default_factory=list)
    rules: list[ModelRule] = msgspec.field(default_factory=list)
    dropped: list[str] = msgspec.field(default_factory=list)
    window: list[WindowMessage] = msgspec.field(default_factory=list)
    version: int = 1


DOCUMENTS: tuple[type[msgspec.Struct], ...] = (
    ThreadsDoc, DecisionsDoc, CommitmentsDoc, SnapshotDoc, NarrativeDoc, BootDoc, KnowledgeDoc, ChannelsDoc, RecallDoc,
    TraceDoc, OperationsDoc, ExtractionDoc,
)
