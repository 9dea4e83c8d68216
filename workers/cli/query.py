"""Reading and correcting an agent's state: ``cortex boot|threads|decisions|commitments|traces AGENT``,
``cortex thread close|priority``, ``cortex commitment done|reject``, ``cortex decision reject`` (corrections
are events)."""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from datetime import UTC, date, datetime, time
from typing import Any

import msgspec
import nats.errors

from schemas.api import (
    BootRequest,
    CommitmentsReply,
    DecisionsReply,
    ErrorBody,
    ErrorReply,
    OperationsReply,
    OperationsRequest,
    RecallReply,
    RecallRequest,
    ThreadsReply,
    TracesReply,
    TracesRequest,
)
from schemas.docs import BootDoc, CommitmentsDoc, DecisionsDoc, NarrativeDoc, ThreadsDoc
from schemas.events import FeedbackEvent, is_valid_agent
from schemas.types import PRIORITIES, SEVERITIES, SIGNALS, FeedbackKind
from shared.asof import DocReader
from shared.config import Settings
from shared.feedback import publish_feedback, publish_time
from shared.kv import kv_read
from shared.names import (
    BUCKET_BOOT,
    BUCKET_COMMITMENTS,
    BUCKET_DECISIONS,
    BUCKET_NARRATIVES,
    BUCKET_THREADS,
    api_subject,
)
from workers.cli.base import CliError
from workers.cli.common import AGENT_HELP, NATS_URL_HELP, add_json_flag, connected, print_json, require_data
from workers.tables import (
    Rows,
    commitment_rows,
    decision_rows,
    memory_rows,
    render_table,
    thread_rows,
    traces_text,
)


def _register_recall(sub: Any) -> None:
    recall = sub.add_parser("recall", help="print ranked memories within a token budget")
    recall.add_argument("agent", help=AGENT_HELP)
    recall.add_argument("query", help="what to recall, in words (hybrid: meaning and keywords)")
    recall.add_argument("--project", help="prefer memories of this project (the request's project)")
    recall.add_argument("--budget", type=int, help="token budget (default CORTEX_RECALL_BUDGET_TOKENS)")
    recall.add_argument("--limit", type=int, help="at most this many memories (default CORTEX_RECALL_LIMIT)")
    recall.add_argument("--history", action="store_true",
                        help="also memories a newer one contradicted (marked 'superseded')")
    recall.add_argument("--as-of", metavar="DATE",
                        help="what was believed then: YYYY-MM-DD (the end of that day in CORTEX_TIMEZONE) or an "
                             "RFC 3339 time; memories said later, or superseded by then, are left out")
    recall.add_argument("--person", help="the person the agent talks with: their memories and the shared ones, "
                                         "never another person's")
    recall.add_argument("--full-ids", action="store_true",
                        help="print each memory's whole id (what `cortex memory pin|forget` takes), not its first 8")
    add_json_flag(recall)
    recall.add_argument("--nats-url", help=NATS_URL_HELP)
    recall.set_defaults(handler=cmd_recall)


def register(sub: Any) -> None:
    boot = sub.add_parser("boot", help="print the agent's BOOTSTRAP markdown")
    boot.add_argument("agent", help=AGENT_HELP)
    boot.add_argument("--fresh", action="store_true", help="ask the boot API for a new assembly")
    add_json_flag(boot, "the BootDoc (stored, or the API's reply with --fresh)")
    boot.add_argument("--nats-url", help=NATS_URL_HELP)
    boot.set_defaults(handler=cmd_boot)
    narrative = sub.add_parser("narrative", help="print the agent's narrative (the last 24 hours)")
    narrative.add_argument("agent", help=AGENT_HELP)
    narrative.add_argument("--fresh", action="store_true",
                           help="made now from the latest threads, decisions and timeline (structured)")
    add_json_flag(narrative, "the stored NarrativeDoc")
    narrative.add_argument("--nats-url", help=NATS_URL_HELP)
    narrative.set_defaults(handler=cmd_narrative)
    for name, helptext in (("threads", "the agent's threads"), ("decisions", "the agent's decisions"),
                           ("commitments", "the agent's commitments")):
        p = sub.add_parser(name, help=f"print {helptext} as a table")
        p.add_argument("agent", help=AGENT_HELP)
        add_json_flag(p)
        p.add_argument("--nats-url", help=NATS_URL_HELP)
        p.set_defaults(handler=cmd_table, table=name)

    traces = sub.add_parser("traces", help="print the failure patterns found in the agent's tool and run events",
                            description="Findings of the trace analyzer (newest first) and the operations the "
                                        "agent still has to hear about ([PENDING], [NEW RESULT], [FAILED]).")
    traces.add_argument("agent", help=AGENT_HELP)
    traces.add_argument("--signal", choices=SIGNALS, help="only this signal")
    traces.add_argument("--severity", choices=SEVERITIES, help="at least this severity")
    traces.add_argument("--all", action="store_true",
                        help="also findings Claude's triage dismissed, and every operation")
    traces.add_argument("--limit", type=int, help="at most this many findings (default 50)")
    add_json_flag(traces, "the two API replies ({\"findings\": …, \"operations\": …})")
    traces.add_argument("--nats-url", help=NATS_URL_HELP)
    traces.set_defaults(handler=cmd_traces)

    _register_recall(sub)
    _register_corrections(sub)


def _correction(parent: Any, name: str, help_text: str, kind: str, noun: str, listing: str) -> Any:
    """``cortex <item> <name> AGENT ID``: one FeedbackEvent of ``kind`` about the item."""
    parser = parent.add_parser(name, help=help_text)
    parser.add_argument("agent", help=AGENT_HELP)
    parser.add_argument("id", help=f"the {noun}'s id (`{listing}` lists them)")
    parser.set_defaults(handler=cmd_feedback, kind=kind, level=None)  # a priority's level: its own argument
    return parser


def _register_corrections(sub: Any) -> None:
    tsub = sub.add_parser("thread", help="correct a thread: close it or set its priority").add_subparsers(
        dest="action", required=True)
    close = _correction(tsub, "close", "close a thread", "thread_close", "thread", "cortex threads AGENT")
    prio = _correction(tsub, "priority", "set a thread's priority", "thread_priority", "thread", "cortex threads AGENT")
    prio.add_argument("level", choices=PRIORITIES, help="the new priority: " + ", ".join(PRIORITIES))
    csub = sub.add_parser("commitment", help="correct a commitment").add_subparsers(dest="action", required=True)
    done = _correction(csub, "done", "mark a commitment done", "commitment_done", "commitment",
                       "cortex commitments AGENT")
    reject = _correction(csub, "reject", "say it is not a commitment: it leaves the agent's commitments",
                         "commitment_reject", "commitment", "cortex commitments AGENT")
    dsub = sub.add_parser("decision", help="correct a decision").add_subparsers(dest="action", required=True)
    wrong = _correction(dsub, "reject", "say the decision is wrong: it leaves the agent's decisions",
                        "decision_reject", "decision", "cortex decisions AGENT --json")
    for p in (close, prio, done, reject, wrong):
        p.add_argument("--nats-url", help=NATS_URL_HELP)
        p.add_argument("--actor", default="cli", help="who made the correction, as the event's actor (default cli)")


def _agent(value: str) -> str:
    if not is_valid_agent(value):
        raise CliError(f"invalid agent id {value!r}: expected ^[A-Za-z0-9_-]{{1,64}}$")
    return value


# a service that answers 503 ("temporarily unavailable …; ask again": a store reopening after a lost
# lease, a leader election) is asked again this long, the waits doubling from the first
UNAVAILABLE_RETRY_S = 10.0
_FIRST_RETRY_S = 0.1


async def request_api(nc: Any, subject: str, body: bytes, retry_s: float = UNAVAILABLE_RETRY_S) -> bytes:
    """A service's reply; its error as a ``CliError``. A reply that says "ask again" (503) is
    asked again for up to ``retry_s`` — what the user would do — and its message is the error
    only when the service is still unavailable then."""
    deadline = asyncio.get_running_loop().time() + retry_s
    wait = _FIRST_RETRY_S
    while True:
        try:
            reply = await nc.request(subject, body, timeout=5)
        except nats.errors.NoRespondersError as exc:
            raise CliError(f"no service answers {subject}: is the worker running (`cortex up`)?") from exc
        except nats.errors.TimeoutError as exc:
            if not nc.is_connected:
                raise  # the connection dropped, not the service: `connected` says so
            raise CliError(f"{subject} did not answer within 5s") from exc
        if not (reply.headers and reply.headers.get("Nats-Service-Error")):
            return bytes(reply.data)
        try:
            err: ErrorBody | None = msgspec.json.decode(reply.data, type=ErrorReply).error if reply.data else None
        except msgspec.DecodeError:
            err = None  # the header's text is the message
        left = deadline - asyncio.get_running_loop().time()
        if err is None or err.code != 503 or left <= 0:
            raise CliError(err.message if err else reply.headers["Nats-Service-Error"])
        await asyncio.sleep(min(wait, left))
        wait *= 2


async def cmd_boot(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    async with connected(settings, args.nats_url) as nc:
        if args.fresh:
            raw = await request_api(nc, api_subject(settings.prefix, "boot", agent), msgspec.json.encode(BootRequest()))
            fresh = msgspec.json.decode(raw, type=BootDoc)
            if fresh.generated_at.timestamp() == 0:  # the API's "now" when no document has an event yet
                await require_data(nc, settings, agent)
                raise CliError(f"no document of {agent} yet to brief from: its events are not applied yet "
                               "(are the workers running?)")
            if args.json:
                print_json(raw)
            else:
                print(fresh.markdown)
            return 0
        raw_doc, _ = await kv_read(await nc.jetstream().key_value(BUCKET_BOOT), agent)
        if raw_doc is None:
            await require_data(nc, settings, agent)
            raise CliError(f"no BOOTSTRAP document for {agent} yet (try --fresh)")
    if args.json:
        print_json(raw_doc)
        return 0
    doc = msgspec.json.decode(raw_doc, type=BootDoc)
    print(doc.markdown)
    if doc.lagging:
        print(f"\n(lagging when generated: {', '.join(doc.lagging)})", file=sys.stderr)
    return 0


async def cmd_narrative(args: argparse.Namespace, settings: Settings) -> int:
    """The narrative document as the narrative worker last wrote it (at a session end or a
    compaction), or with ``--fresh`` one made now: the structured narrative of the latest
    threads and decisions and the timeline the worker keeps, as of the agent's latest event."""
    from zoneinfo import ZoneInfo

    from workers.narrative.worker import structured_narrative

    agent = _agent(args.agent)
    if args.json and args.fresh:
        raise CliError("--json prints the stored NarrativeDoc; --fresh makes a narrative as text: choose one")
    async with connected(settings, args.nats_url) as nc:
        reader = DocReader(nc.jetstream())
        narrative = await reader.latest(BUCKET_NARRATIVES, agent, NarrativeDoc)
        threads = await reader.latest(BUCKET_THREADS, agent, ThreadsDoc) if args.fresh else None
        decisions = await reader.latest(BUCKET_DECISIONS, agent, DecisionsDoc) if args.fresh else None
        commitments = await reader.latest(BUCKET_COMMITMENTS, agent, CommitmentsDoc) if args.fresh else None
        docs = [d for d in (narrative, threads, decisions) if d is not None]
        if not docs or (not args.fresh and not (narrative and narrative.markdown)):
            await require_data(nc, settings, agent)
    if args.fresh:
        stamps = [d.integrity.last_event_ts for d in docs if d.integrity.last_event_ts is not None]
        stamps += [i.ts for i in (narrative.timeline if narrative else [])]
        if not stamps:
            raise CliError(f"no document of {agent} yet to make a narrative from (are the workers running?)")
        print(structured_narrative(max(stamps), ZoneInfo(settings.timezone), threads, decisions,
                                   narrative.timeline if narrative else [],
                                   narrative.enhanced if narrative else None,
                                   narrative.sessions if narrative else [], commitments).rstrip("\n"))
        return 0
    if narrative is None or not narrative.markdown:
        raise CliError(f"no narrative for {agent} yet: one is made at a session end or a compaction (try --fresh)")
    if args.json:
        print_json(narrative)
        return 0
    print(narrative.markdown.rstrip("\n"))
    print(f"\n({narrative.source}, {narrative.ts.isoformat()})", file=sys.stderr)
    return 0


def _rows(table: str, raw: bytes) -> Rows:
    if table == "threads":
        return thread_rows(msgspec.json.decode(raw, type=ThreadsReply))
    if table == "decisions":
        return decision_rows(msgspec.json.decode(raw, type=DecisionsReply))
    return commitment_rows(msgspec.json.decode(raw, type=CommitmentsReply))


async def cmd_table(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    async with connected(settings, args.nats_url) as nc:
        raw = await request_api(nc, api_subject(settings.prefix, args.table, agent), b"{}")
        headers, rows = _rows(args.table, raw)
        if not rows:
            await require_data(nc, settings, agent)
    if args.json:
        print_json(raw)
    else:
        print(render_table(headers, rows) if rows else f"(no {args.table} for {agent})")
    return 0


async def cmd_traces(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    req = TracesRequest(signal=args.signal, severity=args.severity, dismissed=args.all, limit=args.limit)
    async with connected(settings, args.nats_url) as nc:
        raw = await request_api(nc, api_subject(settings.prefix, "traces", agent), msgspec.json.encode(req))
        findings = msgspec.json.decode(raw, type=TracesReply)
        raw = await request_api(nc, api_subject(settings.prefix, "operations", agent),
                                msgspec.json.encode(OperationsRequest(unread=not args.all)))
        operations = msgspec.json.decode(raw, type=OperationsReply)
        if not findings.findings and not operations.operations:
            await require_data(nc, settings, agent)
    if args.json:
        print_json({"findings": findings, "operations": operations})
    else:
        print(traces_text(agent, findings, operations), end="")
    return 0


async def cmd_recall(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    req = RecallRequest(query=args.query, project=args.project, limit=args.limit, budget_tokens=args.budget,
                        history=args.history, as_of=as_of_time(args.as_of, settings.timezone) if args.as_of else None,
                        person=args.person or None)
    async with connected(settings, args.nats_url) as nc:
        raw = await request_api(nc, api_subject(settings.prefix, "recall", agent), msgspec.json.encode(req))
        reply = msgspec.json.decode(raw, type=RecallReply)
        if not reply.memories:
            await require_data(nc, settings, agent)
    if args.json:
        print_json(raw)
        return 0
    if not reply.memories:
        print(f"(no memories of {agent} match)")
        return 0
    print(render_table(*memory_rows(reply, None if args.full_ids else 8), width=80))
    print(f"\n{len(reply.memories)} memories, {reply.tokens} tokens")
    return 0


def as_of_time(value: str, timezone: str) -> datetime:
    """``--as-of``: an RFC 3339 time, or a date meaning the end of that day in ``timezone``."""
    from zoneinfo import ZoneInfo

    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            return datetime.combine(day, time.max, tzinfo=ZoneInfo(timezone)).astimezone(UTC)
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise CliError(f"--as-of takes YYYY-MM-DD or an RFC 3339 time such as 2026-03-05T12:00:00Z, "
                       f"not {value!r}") from exc
    if when.tzinfo is None:
        raise CliError(f"--as-of {value!r} has no time zone: add Z or an offset such as +01:00")
    return when


async def event_time(nc: Any, agent: str) -> datetime:
    """The time of the feedback a command publishes for ``agent``: its latest event time
    applied — the newest watermark among the documents a briefing reads, as the boot API's
    "now" (``shared.feedback.publish_time``: the wall clock only for an agent without any),
    read here so that no worker but the owning one needs to run (contract: Time and replay)."""
    from shared.runtime import briefings
    from workers.registry import all_specs

    reader = DocReader(nc.jetstream())
    docs = await asyncio.gather(*(reader.latest(b.bucket, agent, b.doc_type)
                                  for _, b in briefings(all_specs().values())))
    return publish_time(d.integrity.last_event_ts for d in docs if d is not None)


async def check_target(nc: Any, settings: Settings, agent: str, kind: str, target: str) -> None:
    """A correction names a thread, commitment or decision the agent has (its latest document), or
    nothing is published: the owning worker would drop an unknown id without a word."""
    reader = DocReader(nc.jetstream())
    ids: list[str] | None = None
    if kind in ("commitment_done", "commitment_reject"):
        what = "commitment"
        if (commitments := await reader.latest(BUCKET_COMMITMENTS, agent, CommitmentsDoc)) is not None:
            ids = [c.id for c in commitments.commitments]
    elif kind == "decision_reject":
        what = "decision"
        if (decisions := await reader.latest(BUCKET_DECISIONS, agent, DecisionsDoc)) is not None:
            ids = [d.id for d in decisions.decisions]
    else:
        what = "thread"
        if (threads := await reader.latest(BUCKET_THREADS, agent, ThreadsDoc)) is not None:
            ids = [t.id for t in threads.threads]
    if ids is None:
        await require_data(nc, settings, agent)
    if target not in (ids or []):
        raise CliError(f"{agent} has no {what} {target!r}: nothing was published (`cortex {what}s {agent}` lists "
                       "the ids)")


async def publish_correction(nc: Any, settings: Settings, agent: str, kind: FeedbackKind, target: str,
                             value: Any = None, actor: str = "cli") -> FeedbackEvent:
    """A person's correction as a FeedbackEvent at the agent's latest event time (``event_time``),
    published for the owning worker to apply in stream order, so it replays: what every
    correcting command and ``cortex web`` publish."""
    event = FeedbackEvent(id=f"fb-{uuid.uuid4().hex}", agent=agent, ts=await event_time(nc, agent), kind=kind,
                          target=target, value=value, actor=actor)
    await publish_feedback(nc.jetstream(), settings.prefix, event)
    return event


async def cmd_feedback(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    async with connected(settings, args.nats_url) as nc:
        await check_target(nc, settings, agent, args.kind, args.id)
        event = await publish_correction(nc, settings, agent, args.kind, args.id, args.level,
                                         args.actor)
    print(f"published {args.kind} for {args.id} (event {event.id}); the owning worker applies it")
    return 0
