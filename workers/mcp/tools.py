"""The agent's tools: one declaration each — name, description, arguments (a Struct, whose
JSON Schema is the tool's input schema), the reply it returns (its output schema) and how
it runs: a request to a ``cortex.api.<service>.<agent>`` API (``api_tool``) or a published
FeedbackEvent. Nothing here goes around the APIs or the stream.

Adding a tool is one more entry in ``TOOLS``; a new API is ``api_tool(...)`` with its
arguments Struct (whose fields are a subset of the API's request, so the arguments *are*
the request body) and a renderer from ``workers.tables``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, TypeVar

import msgspec
from msgspec import Meta

from schemas.api import (
    CommitmentsReply,
    DecisionsReply,
    MemoryReply,
    RecallReply,
    SearchReply,
    StatusReply,
    ThreadsReply,
    TracesReply,
)
from schemas.docs import BootDoc
from schemas.events import is_memory_id
from schemas.types import MEMORY_ID_PATTERN, CommitmentStatus, MemoryScope, MemoryType, ThreadStatus
from shared.names import api_subject, feedback_subject, published_subject
from workers.mcp.gateway import Gateway, ToolError, inbox_prefix
from workers.recall.capture import remembered_id
from workers.tables import (
    Rows,
    commitment_rows,
    decision_rows,
    finding_rows,
    hit_rows,
    memory_rows,
    render_table,
    status_text,
    thread_rows,
)

MAX_QUERY_CHARS = 4000
REPLY = TypeVar("REPLY", bound=msgspec.Struct)


class ToolResult(msgspec.Struct, kw_only=True):
    """What a tool returns: readable text for the model, the structured reply beside it."""

    text: str
    data: dict[str, Any]


Run = Callable[[Gateway, Any], Awaitable[ToolResult]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    args: type[msgspec.Struct]
    output: type[msgspec.Struct]
    run: Run
    read_only: bool = True
    feedback: str | None = None  # the FeedbackEvent kind it publishes (its NATS permission)
    service: str | None = None  # the cortex.api.<service>.<agent> it asks (api_tool)


class Args(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Tool arguments: unknown ones are refused, so a model learns the schema at once."""


# maxLength is advertised in the schema and checked in __post_init__, for a message that says what to do
RecallQuery = Annotated[str, Meta(
    min_length=1, extra_json_schema={"maxLength": MAX_QUERY_CHARS},
    description=f"what to remember, in a few words or as a question; at most {MAX_QUERY_CHARS} characters")]
SearchQuery = Annotated[str, Meta(
    min_length=1, extra_json_schema={"maxLength": MAX_QUERY_CHARS},
    description=f"the words to find; at most {MAX_QUERY_CHARS} characters")]


def _check_query(query: str) -> None:
    if len(query) > MAX_QUERY_CHARS:
        raise ValueError(f"the query is {len(query)} characters long and at most {MAX_QUERY_CHARS} are allowed: "
                         "ask with the few words that matter")
    if not query.strip():
        raise ValueError("the query is blank: say what to look for")


class RecallArgs(Args):
    query: RecallQuery
    limit: Annotated[int, Meta(ge=1, le=200, description="at most this many memories (default 10)")] | None = None
    budget_tokens: Annotated[int, Meta(ge=50, le=100000, description=(
        "token budget of the memories returned, about 4 characters a token (default 2000)"))] | None = None
    as_of: Annotated[datetime | None, Meta(description=(
        "what was believed at this time (RFC 3339, e.g. 2026-03-05T12:00:00Z): memories said by then and not yet "
        "replaced by a newer statement; left out: what is believed now"))] = None
    person: Annotated[str, Meta(min_length=1, max_length=256, description=(
        "the person this agent is talking with (a user id, sender or peer id): their memories and the agent's "
        "shared ones, never another person's; left out: every memory of the agent"))] | None = None

    def __post_init__(self) -> None:
        _check_query(self.query)


class RememberArgs(Args):
    content: Annotated[str, Meta(min_length=1, description=(
        "the memory: one standalone statement worth recalling in a later session; at most 64 KiB"))]
    type: Annotated[MemoryType | None, Meta(description=(
        "rule (a constraint), procedure (how-to), fact, episode (what happened), preference; "
        "left out: Cortex classifies the text"))] = None
    scope: Annotated[MemoryScope | None, Meta(description=(
        "permanent, project, session (forgotten after a day idle) or ttl (time-bound, 30 days); "
        "left out: from the text's cues, else permanent"))] = None
    person: Annotated[str, Meta(min_length=1, max_length=256, description=(
        "the person the memory belongs to (a user id, sender or peer id): a recall for them finds it, a recall "
        "for another person does not; left out: shared by all of this agent's conversations"))] | None = None


class ForgetArgs(Args):
    # the pattern is advertised in the schema and checked in __post_init__, for a message that says what to do
    id: Annotated[str, Meta(min_length=1, max_length=128, extra_json_schema={"pattern": MEMORY_ID_PATTERN},
                            description="the memory's id (a UUID) from cortex_recall or cortex_remember")]

    def __post_init__(self) -> None:
        _check_memory_id(self.id, "nothing was forgotten")


class UpdateArgs(Args):
    id: Annotated[str, Meta(min_length=1, max_length=128, extra_json_schema={"pattern": MEMORY_ID_PATTERN},
                            description="the memory's id (a UUID) from cortex_recall or cortex_remember")]
    content: Annotated[str, Meta(min_length=1, description=(
        "the memory's new statement, standalone; the one it replaces is kept in its history; at most 64 KiB"))]
    type: Annotated[MemoryType | None, Meta(description="a new type; left out: the memory keeps its own")] = None
    scope: Annotated[MemoryScope | None, Meta(description="a new scope; left out: the memory keeps its own")] = None

    def __post_init__(self) -> None:
        _check_memory_id(self.id, "nothing was updated")


class HistoryArgs(Args):
    id: Annotated[str, Meta(min_length=1, max_length=128, extra_json_schema={"pattern": MEMORY_ID_PATTERN},
                            description="the memory's id (a UUID) from cortex_recall or cortex_remember")]

    def __post_init__(self) -> None:
        _check_memory_id(self.id, "nothing was looked up")


def _check_memory_id(memory_id: str, outcome: str) -> None:
    if not is_memory_id(memory_id):
        shown = memory_id if len(memory_id) <= 40 else memory_id[:40] + "…"
        raise ValueError(f"{shown!r} is not a memory id, so {outcome}: give the id (a UUID such as "
                         "1b4e28ba-2fa1-11d2-883f-0016d3cca427) that cortex_recall or cortex_remember returned")


class SearchArgs(Args):
    query: SearchQuery
    limit: Annotated[int, Meta(ge=1, le=500, description="at most this many hits (default 50)")] | None = None

    def __post_init__(self) -> None:
        _check_query(self.query)


class NoArgs(Args):
    pass


class BootArgs(Args, omit_defaults=True):  # no person: the request body `{}` as before
    person: Annotated[str, Meta(min_length=1, max_length=256, description=(
        "the person this agent is talking with (a user id, sender or peer id): the briefing leaves out the memories "
        "of other people; left out: the agent's whole briefing"))] | None = None


class ThreadsArgs(Args):
    status: Annotated[ThreadStatus | None, Meta(description="only open or only closed threads (default both)")] = None


class DecisionsArgs(Args):
    since: Annotated[str | None, Meta(description=(
        "only decisions on or after this date: YYYY-MM-DD or an RFC 3339 time"))] = None


class CommitmentsArgs(Args):
    status: Annotated[CommitmentStatus | None, Meta(description="only open, overdue or done ones (default all)")] = None


class Published(msgspec.Struct, kw_only=True):
    """What ``cortex_remember`` / ``cortex_forget`` published: the memory and the event."""

    memory_id: str
    event_id: str


# ------------------------------------------------------------------ rendering


def _table(rows: Rows, empty: str) -> str:
    return render_table(*rows, width=None) if rows[1] else empty


def _threads_text(reply: ThreadsReply, agent: str) -> str:
    return _table(thread_rows(reply), f"(no threads for {agent} match)")


def _decisions_text(reply: DecisionsReply, agent: str) -> str:
    return _table(decision_rows(reply), f"(no decisions for {agent} match)")


def _commitments_text(reply: CommitmentsReply, agent: str) -> str:
    return _table(commitment_rows(reply), f"(no commitments for {agent} match)")


def _traces_text(reply: TracesReply, agent: str) -> str:
    return _table(finding_rows(reply), f"(no failure findings for {agent})")


def _recall_text(reply: RecallReply, agent: str) -> str:
    if not reply.memories:
        return f"(no memories of {agent} match)"
    table = render_table(*memory_rows(reply, id_chars=None), width=None)
    return f"{table}\n\n{len(reply.memories)} memories, {reply.tokens} tokens"


def _search_text(reply: SearchReply, agent: str) -> str:
    return _table(hit_rows(reply), f"(nothing of {agent} matches)")


def _status_text(reply: StatusReply, agent: str) -> str:
    return status_text(reply, width=None)


def _boot_text(doc: BootDoc, agent: str) -> str:
    if doc.lagging:
        return f"{doc.markdown}\n\n(behind the latest events when assembled: {', '.join(doc.lagging)})"
    return doc.markdown


# ------------------------------------------------------------------ declarations


def _decode(raw: bytes, reply: type[REPLY], worker: str) -> REPLY:
    try:
        return msgspec.json.decode(raw, type=reply)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ToolError(f"Cortex's {worker} worker sent a reply this server cannot read ({exc}); "
                        "it may be a different version.") from exc


def has_no_data(status: StatusReply) -> bool:
    """Nothing derived for the agent at all: no counts, no worker has seen one of its events."""
    return not any(status.counts.values()) and not any(w.last_event_ts for w in status.workers)


async def require_data(gw: Gateway) -> None:
    """An empty answer is fine, unless Cortex has nothing at all for the agent: say so."""
    status = _decode(await gw.request("status", b"{}", "api"), StatusReply, "api")
    if has_no_data(status):
        raise ToolError(f"Cortex has no data for agent {gw.agent!r} yet: none of its conversation events has "
                        f"been processed; check that its gateway publishes to "
                        f"{published_subject(gw.settings.prefix, 'msg', gw.agent, '*')} and that the workers run.")


def api_tool(name: str, *, service: str, worker: str, args: type[Args], reply: type[REPLY],
             render: Callable[[REPLY, str], str], empty: Callable[[REPLY], bool], description: str) -> Tool:
    """A tool that is one request to ``cortex.api.<service>.<agent>``: the arguments are the
    request body, the reply is the structured result and, rendered, the text."""

    async def run(gw: Gateway, arguments: Any) -> ToolResult:
        result = _decode(await gw.request(service, msgspec.json.encode(arguments), worker), reply, worker)
        if empty(result):
            await require_data(gw)
        return ToolResult(text=render(result, gw.agent), data=msgspec.to_builtins(result))

    return Tool(name=name, description=description, args=args, output=reply, run=run, service=service)


async def _remember(gw: Gateway, arguments: RememberArgs) -> ToolResult:
    content = arguments.content.strip()
    if not content:
        raise ToolError("The memory is blank: give the statement to remember.")
    size, limit = len(content.encode()), gw.settings.runtime.max_content_bytes
    if size > limit:
        raise ToolError(f"The memory is {size} bytes long and Cortex keeps at most {limit} bytes per memory: "
                        "split it into shorter statements.")
    value = msgspec.to_builtins(msgspec.structs.replace(arguments, content=content))
    event = await gw.publish_feedback("remember", value=value)
    memory = remembered_id(gw.agent, event.id)
    return ToolResult(
        text=(f"Remembered for {gw.agent} as memory {memory}: Cortex's recall worker stores it within seconds and "
              "cortex_recall finds it then (a memory it already holds is refreshed instead of duplicated)."),
        data=msgspec.to_builtins(Published(memory_id=memory, event_id=event.id)))


async def _forget(gw: Gateway, arguments: ForgetArgs) -> ToolResult:
    event = await gw.publish_feedback("memory_forget", target=arguments.id)
    return ToolResult(
        text=(f"Asked Cortex to forget memory {arguments.id} of {gw.agent}: the recall worker removes it within "
              "seconds (an id that names none of this agent's memories changes nothing)."),
        data=msgspec.to_builtins(Published(memory_id=arguments.id, event_id=event.id)))


async def _update(gw: Gateway, arguments: UpdateArgs) -> ToolResult:
    content = arguments.content.strip()
    if not content:
        raise ToolError("The new statement is blank: give the memory's new text.")
    size, limit = len(content.encode()), gw.settings.runtime.max_content_bytes
    if size > limit:
        raise ToolError(f"The statement is {size} bytes long and Cortex keeps at most {limit} bytes per memory.")
    value = {k: v for k, v in (("content", content), ("type", arguments.type), ("scope", arguments.scope))
             if v is not None}
    event = await gw.publish_feedback("memory_update", target=arguments.id, value=value)
    return ToolResult(
        text=(f"Asked Cortex to update memory {arguments.id} of {gw.agent}: the recall worker applies it within "
              "seconds and keeps the statement it replaces (cortex_history lists every version; an id that names "
              "none of this agent's memories changes nothing)."),
        data=msgspec.to_builtins(Published(memory_id=arguments.id, event_id=event.id)))


def _history_text(reply: MemoryReply, agent: str) -> str:
    lines = [f"memory {reply.id} of {agent} ({reply.type}, {reply.scope}"
             + (f", replaced by {reply.superseded_by})" if reply.superseded_by else ")")]
    for n, version in enumerate(reply.versions, 1):
        current = " (current)" if n == len(reply.versions) else ""
        lines.append(f"{n}. {version.at.isoformat()}  {version.event}{current}\n   {version.content}")
    return "\n".join(lines)


TOOLS: tuple[Tool, ...] = (
    api_tool(
        "cortex_recall", service="recall", worker="recall", args=RecallArgs, reply=RecallReply,
        render=_recall_text, empty=lambda r: not r.memories,
        description=(
            "Search this agent's long-term memories — facts, rules, preferences, procedures and past episodes "
            "captured from its conversations and notes, and what cortex_remember stored — by meaning and "
            "keywords. Returns the best memories ranked by relevance, recency, use and type, within a token "
            "budget (default 2000 tokens, about 4 characters each; at most `limit`, default 10): a table of "
            "score, type, scope, the memory's id (for cortex_forget) and its full text, then the count and "
            "the tokens used. Use it before answering anything that depends on earlier sessions.")),
    Tool(
        name="cortex_remember", args=RememberArgs, output=Published, run=_remember, read_only=False,
        feedback="remember",
        description=(
            "Store an explicit long-term memory for this agent: one standalone statement worth recalling in a "
            "later session (a fact, a rule, a preference, a procedure, an episode). Cortex's recall worker "
            "stores it within seconds, after which cortex_recall finds it; a statement it already holds is "
            "merged, not duplicated. Returns the memory's id (for cortex_forget). At most 64 KiB.")),
    Tool(
        name="cortex_forget", args=ForgetArgs, output=Published, run=_forget, read_only=False,
        feedback="memory_forget",
        description=(
            "Remove one of this agent's memories by its id, the UUID cortex_recall or cortex_remember returned. "
            "The recall worker deletes it within seconds; a UUID that names none of this agent's memories "
            "changes nothing, and anything that is not a memory id is refused. It cannot be undone.")),
    Tool(
        name="cortex_update", args=UpdateArgs, output=Published, run=_update, read_only=False,
        feedback="memory_update",
        description=(
            "Change one of this agent's memories — by the id cortex_recall or cortex_remember returned — to a new "
            "statement (and optionally type or scope). The recall worker applies it within seconds: the memory "
            "keeps its id and provenance, what the new statement contradicts is superseded, and the statement it "
            "replaces stays in its history (cortex_history). Knowledge facts are not edited this way.")),
    api_tool(
        "cortex_history", service="memory", worker="recall", args=HistoryArgs, reply=MemoryReply,
        render=_history_text, empty=lambda r: False,
        description=(
            "One memory of this agent by its id, with every version of its statement — oldest first, the current "
            "one last — each with the event that made it and when (an update, or the message, note or remember "
            "it came from); whether a newer memory replaced it.")),
    api_tool(
        "cortex_search", service="search", worker="api", args=SearchArgs, reply=SearchReply,
        render=_search_text, empty=lambda r: not r.hits,
        description=(
            "Keyword search across this agent's conversation threads, decisions, commitments, facts and "
            "entities (memories: use cortex_recall). Returns a table of hits — score (the share of the query's "
            "words found, weighted by kind), kind, id, text — best first, at most `limit` (default 50).")),
    api_tool(
        "cortex_stats", service="status", worker="api", args=NoArgs, reply=StatusReply,
        render=_status_text, empty=has_no_data,
        description=(
            "How much Cortex knows about this agent and whether it is current: open and closed threads, "
            "decisions, open and overdue commitments, facts, entities, channels, the session mood, then each "
            "worker's backlog of unprocessed events and the time of the last event it applied. Check it when "
            "other tools seem to miss recent conversation.")),
    api_tool(
        "cortex_threads", service="threads", worker="api", args=ThreadsArgs, reply=ThreadsReply,
        render=_threads_text, empty=lambda r: not r.threads,
        description=(
            "This agent's conversation threads (the topics it is working on): a table of id, status (open or "
            "closed), priority, title, what the thread waits for, last activity — open threads first, by "
            "priority, then the most recent; at most 50.")),
    api_tool(
        "cortex_decisions", service="decisions", worker="api", args=DecisionsArgs, reply=DecisionsReply,
        render=_decisions_text, empty=lambda r: not r.decisions,
        description=(
            "Decisions made in this agent's conversations: a table of id, date, impact, who, what — the newest "
            "first, at most 50; `since` keeps those on or after a date.")),
    api_tool(
        "cortex_commitments", service="commitments", worker="api", args=CommitmentsArgs, reply=CommitmentsReply,
        render=_commitments_text, empty=lambda r: not r.commitments,
        description=(
            "Promises and tasks from this agent's conversations (\"I'll fix the build tomorrow\"): a table of "
            "id, status (open, overdue, done), who, due, what — open and overdue ones first, the newest first; "
            "at most 50.")),
    api_tool(
        "cortex_traces", service="traces", worker="api", args=NoArgs, reply=TracesReply,
        render=_traces_text, empty=lambda r: not r.findings,
        description=(
            "Failure patterns Cortex found in this agent's own tool calls, runs and conversation: doom loops "
            "(the same failing call again and again), tool failures left unrecovered or repeated across "
            "sessions, the user's corrections and frustration, success claimed after a failed tool result. A "
            "table of when, severity, signal, session and a one-line summary (secrets and personal data "
            "redacted), the newest first; at most 50. Read it to avoid repeating a past mistake.")),
    api_tool(
        "cortex_boot", service="boot", worker="boot", args=BootArgs, reply=BootDoc,
        render=_boot_text, empty=lambda d: d.generated_at.timestamp() == 0,  # boot's "now" with no event at all
        description=(
            "This agent's BOOTSTRAP briefing, assembled now: the session mood, open threads with their "
            "priorities and what they wait for, recent decisions, open commitments, key memories and facts, "
            "as markdown within the boot budget (16000 characters unless configured). Call it at the start "
            "of a session to pick up where the agent left off; a note at the end names any worker that was "
            "behind the latest events.")),
)


def nats_permissions(agent: str, prefix: str = "cortex", tools: tuple[Tool, ...] = TOOLS) -> dict[str, list[str]]:
    """What ``cortex mcp --agent <agent>`` publishes and subscribes to, and nothing more: the
    agent's APIs, the feedback kinds its tools publish, replies on the agent's own inbox."""
    kinds = sorted({tool.feedback for tool in tools if tool.feedback})
    return {"publish": [api_subject(prefix, "*", agent), *(feedback_subject(prefix, agent, kind) for kind in kinds)],
            "subscribe": [f"{inbox_prefix(agent)}.>"]}
