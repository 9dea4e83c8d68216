"""``cortex index DIR --agent A``, ``cortex memory pin|forget AGENT ID``, ``cortex memory update AGENT ID TEXT``,
``cortex memory show AGENT ID [--history]``, ``cortex memory consolidate AGENT --dry-run``, ``cortex facts AGENT``."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from schemas.api import ConsolidateReply, ConsolidateRequest, MemoryReply, MemoryRequest
from schemas.docs import KnowledgeDoc
from schemas.events import FeedbackEvent, NoteEvent, is_memory_id
from shared.asof import DocReader
from shared.config import Settings
from shared.errors import TransientError
from shared.llm import NO_MODEL, LlmClient, started_llm
from shared.names import BUCKET_KNOWLEDGE, api_subject, notes_subject, published_subject
from workers.cli.base import CliError
from workers.cli.common import AGENT_HELP, NATS_URL_HELP, add_json_flag, connected, print_json, require_data
from workers.cli.query import _agent, event_time, publish_correction, request_api
from workers.recall.markdown import (
    SUMMARY_PURPOSE,
    SUMMARY_SYSTEM,
    needs_summary,
    note_id,
    note_time,
    split_sections,
    summary_id,
    summary_prompt,
    summary_text,
)
from workers.recall.models import MEMORY_SCOPES, MEMORY_TYPES
from workers.render import entity_names
from workers.tables import render_table

if TYPE_CHECKING:
    from shared.forget import ForgetRecord, Mode


def register(sub: Any) -> None:
    index = sub.add_parser("index", help="publish a memory directory's markdown sections as NoteEvents")
    index.add_argument("dir", help="the memory directory: every *.md file under it, split into sections by heading")
    index.add_argument("--agent", required=True, help=AGENT_HELP)
    index.add_argument("--summarize", action="store_true",
                       help="also a one-sentence summary of each section by Claude (needs ANTHROPIC_API_KEY)")
    index.add_argument("--nats-url", help=NATS_URL_HELP)
    index.set_defaults(handler=cmd_index)

    memory = sub.add_parser("memory", help="pin or forget a recall memory; what consolidation would merge")
    msub = memory.add_subparsers(dest="action", required=True)
    for action, kind, text in (("pin", "memory_pin", "never expires, always eligible"),
                               ("forget", "memory_forget", "removed from the store")):
        p = msub.add_parser(action, help=f"{action} a memory ({text})")
        p.add_argument("agent", help=AGENT_HELP)
        p.add_argument("id", help="the memory's whole id (`cortex recall AGENT QUERY --full-ids` prints them)")
        p.add_argument("--nats-url", help=NATS_URL_HELP)
        p.set_defaults(handler=cmd_memory, kind=kind)
    update = msub.add_parser("update", help="change a memory's statement (the old one stays in its history)")
    update.add_argument("agent", help=AGENT_HELP)
    update.add_argument("id", help="the memory's whole id (`cortex recall AGENT QUERY --full-ids` prints them)")
    update.add_argument("content", help="the memory's new statement")
    update.add_argument("--type", choices=MEMORY_TYPES, help="a new type (default: the memory's own)")
    update.add_argument("--scope", choices=MEMORY_SCOPES, help="a new scope (default: the memory's own)")
    update.add_argument("--nats-url", help=NATS_URL_HELP)
    update.set_defaults(handler=cmd_update)
    show = msub.add_parser("show", help="one memory by its id (--history: every version, each with its event)")
    show.add_argument("agent", help=AGENT_HELP)
    show.add_argument("id", help="the memory's whole id (`cortex recall AGENT QUERY --full-ids` prints them)")
    show.add_argument("--history", action="store_true",
                      help="every version of its statement, oldest first, with the event that made it")
    show.add_argument("--json", action="store_true", help="the API's reply as JSON")
    show.add_argument("--nats-url", help=NATS_URL_HELP)
    show.set_defaults(handler=cmd_show)
    consolidate = msub.add_parser("consolidate", help="what the agent's next session start would merge and expire")
    consolidate.add_argument("agent", help=AGENT_HELP)
    # a report is all this command makes (consolidation runs at session starts, through the stream): the flag
    # says so, and is no longer required to say it
    consolidate.add_argument("--dry-run", action="store_true",
                             help="report only, as always (consolidation itself runs at session starts, through "
                                  "the stream)")
    consolidate.add_argument("--json", action="store_true", help="the API's reply as JSON")
    consolidate.add_argument("--nats-url", help=NATS_URL_HELP)
    consolidate.set_defaults(handler=cmd_consolidate)

    facts = sub.add_parser("facts", help="print the agent's known facts (optionally about one entity)")
    facts.add_argument("agent", help=AGENT_HELP)
    facts.add_argument("--entity", help="an entity value or id, e.g. Maria or person:maria")
    add_json_flag(facts, "the facts (and their entities) of the KnowledgeDoc")
    facts.add_argument("--nats-url", help=NATS_URL_HELP)
    facts.set_defaults(handler=cmd_facts)


def _state_path(settings: Settings, agent: str) -> Path:
    return Path(settings.data_path) / "index" / f"{agent}.json"


def _notes(root: Path, agent: str, timezone: str, now: datetime) -> list[NoteEvent]:
    """The sections of the directory's notes, each at its note's time (``note_time``: a daily
    note's day, else ``now``, the agent's latest event time — never a file's mtime)."""
    notes = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        ts = note_time(rel, timezone, now)
        for section in split_sections(path.read_text(encoding="utf-8", errors="replace")):
            notes.append(NoteEvent(id=note_id(rel, section), agent=agent, ts=ts, path=rel,
                                   headings=list(section.headings), content=section.content))
    return notes


def _save_state(path: Path, known: set[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sorted(known)))


def _scan(root: Path, agent: str, state_path: Path, timezone: str, now: datetime) -> tuple[list[NoteEvent], set[str]]:
    known: set[str] = set(json.loads(state_path.read_text())) if state_path.exists() else set()
    return _notes(root, agent, timezone, now), known


Publish = Callable[[FeedbackEvent], Awaitable[None]]


async def summarize_notes(llm: LlmClient, notes: Sequence[NoteEvent], publish: Publish,
                          progress: Callable[[int, int], None] = lambda i, n: None) -> tuple[list[str], int]:
    """Claude's one-sentence summary of each note, published as a ``remember`` event
    (``workers.recall.markdown``); returns the summary ids published and how many Claude
    did not give (refused, rejected, over the day's budget: asked again on a later run).
    A model that cannot be reached within the call's bound stops it (TransientError) after
    what was published."""
    done: list[str] = []
    missed = 0
    for i, note in enumerate(notes, 1):
        answer = await llm.answer(agent=note.agent, purpose=SUMMARY_PURPOSE, system=SUMMARY_SYSTEM,
                                  prompt=summary_prompt(note.path, note.headings, note.content), when=note.ts,
                                  max_tokens=256, replayed=False)
        if answer.outcome in NO_MODEL:
            raise TransientError(f"LLM unavailable ({SUMMARY_PURPOSE}): {llm.availability.cause or answer.outcome}")
        text = summary_text(note.path, note.headings, answer.text)
        if text is None:
            missed += 1
        else:
            event = FeedbackEvent(id=summary_id(note.id), agent=note.agent, ts=note.ts, kind="remember",
                                  value={"content": text, "type": "fact", "scope": "permanent"}, actor="cortex-index")
            await publish(event)
            done.append(event.id)
        progress(i, len(notes))
    return done, missed


async def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    root = Path(args.dir)
    if not await asyncio.to_thread(root.is_dir):
        raise CliError(f"{root} is not a directory")
    if args.summarize and settings.model_provider is None:
        raise CliError("--summarize asks a model for the summaries: set ANTHROPIC_API_KEY (or CORTEX_LLM_PROVIDER "
                       "with its key or base URL)")
    state_path = _state_path(settings, agent)
    tty = _at_a_terminal_out()
    async with connected(settings, args.nats_url) as nc:
        now = await event_time(nc, agent)
        notes, known = await asyncio.to_thread(_scan, root, agent, state_path, settings.timezone, now)
        todo = [n for n in notes if n.id not in known]
        js = nc.jetstream()
        for i, note in enumerate(todo, 1):
            await js.publish(notes_subject(settings.prefix, agent), msgspec.json.encode(note),  # the contract's
                             headers={"Nats-Msg-Id": note.id})
            known.add(note.id)
            if tty and (i % 50 == 0 or i == len(todo)):  # a redrawn line; in a log, the summary says it
                print(f"\rindex: {i}/{len(todo)} sections", end="\n" if i == len(todo) else "", file=sys.stderr,
                      flush=True)
        summarized = await _summaries(js, settings, notes, known, state_path) if args.summarize else ""
    await asyncio.to_thread(_save_state, state_path, known)
    print(f"indexed {len(notes)} sections from {root}: {len(todo)} new, {len(notes) - len(todo)} unchanged"
          + summarized)
    return 0


async def _summaries(js: Any, settings: Settings, notes: Sequence[NoteEvent], known: set[str],
                     state_path: Path) -> str:
    """Summaries of the sections that have none yet (``known`` gains their ids); the
    report's tail. An outage ends the command after saving what was done."""
    wanted = [n for n in notes if summary_id(n.id) not in known and needs_summary(n.content)]

    async def publish(event: FeedbackEvent) -> None:
        await js.publish(published_subject(settings.prefix, "feedback", event.agent, "remember"),
                         msgspec.json.encode(event), headers={"Nats-Msg-Id": event.id})
        known.add(event.id)

    tty = _at_a_terminal_out()

    def progress(i: int, n: int) -> None:
        if tty:  # off a terminal (a log) only the summary line
            print(f"\rsummarize: {i}/{n} sections", end="\n" if i == n else "", file=sys.stderr, flush=True)

    llm = await started_llm(settings, js)
    try:
        done, missed = await summarize_notes(llm, wanted, publish, progress)
    except TransientError as exc:
        await asyncio.to_thread(_save_state, state_path, known)
        raise CliError(f"{exc}: the summaries made so far are published; run the command again to go on") from exc
    finally:
        await llm.aclose()
    tail = f"; {len(done)} summaries" if wanted else "; every section long enough has a summary"
    return tail + (f" ({missed} not given by Claude: asked again next time)" if missed else "")


async def cmd_memory(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    if not is_memory_id(args.id):
        raise CliError(f"{args.id!r} is not a memory id (a whole UUID such as 1b4e28ba-2fa1-11d2-883f-0016d3cca427; "
                       "`cortex recall AGENT QUERY --full-ids` prints them): nothing was published")
    async with connected(settings, args.nats_url) as nc:
        await publish_correction(nc, settings, agent, args.kind, args.id)
    print(f"published {args.kind} for {args.id}; the recall worker applies it")
    return 0


def _memory_id(value: str) -> str:
    if not is_memory_id(value):
        raise CliError(f"{value!r} is not a memory id (a whole UUID such as 1b4e28ba-2fa1-11d2-883f-0016d3cca427; "
                       "`cortex recall AGENT QUERY --full-ids` prints them): nothing was published")
    return value


async def cmd_update(args: argparse.Namespace, settings: Settings) -> int:
    agent, memory_id = _agent(args.agent), _memory_id(args.id)
    content = args.content.strip()
    if not content:
        raise CliError("the new statement is blank: nothing was published")
    value = {k: v for k, v in (("content", content), ("type", args.type), ("scope", args.scope)) if v is not None}
    async with connected(settings, args.nats_url) as nc:
        event = await publish_correction(nc, settings, agent, "memory_update", memory_id, value)
    print(f"published memory_update for {memory_id} (event {event.id}); the recall worker applies it "
          f"(`cortex memory show {agent} {memory_id} --history` lists every version)")
    return 0


def memory_text(reply: MemoryReply, history: bool) -> str:
    """A memory as a person reads it; with ``history`` every version with its event."""
    head = f"{reply.id}  {reply.type}  {reply.scope}  from {reply.source_event} at {reply.created_at.isoformat()}"
    notes = [f"replaced by {reply.superseded_by}" + (f" at {reply.superseded_at.isoformat()}"
                                                     if reply.superseded_at else "")] if reply.superseded_by else []
    notes += ["pinned"] if reply.pinned else []
    notes += [f"absorbed {len(reply.merged_from)} near-duplicates"] if reply.merged_from else []
    lines = [head + (f" ({'; '.join(notes)})" if notes else ""), "", reply.content]
    if history:
        lines += ["", f"{len(reply.versions)} versions, oldest first:"]
        lines += [f"{n}. {v.at.isoformat()}  {v.event}  {v.type}  {_line(v.content)}"
                  for n, v in enumerate(reply.versions, 1)]
    return "\n".join(lines)


async def cmd_show(args: argparse.Namespace, settings: Settings) -> int:
    agent, memory_id = _agent(args.agent), _memory_id(args.id)
    async with connected(settings, args.nats_url) as nc:
        raw = await request_api(nc, api_subject(settings.prefix, "memory", agent),
                                msgspec.json.encode(MemoryRequest(id=memory_id)))
    reply = msgspec.json.decode(raw, type=MemoryReply)
    print(raw.decode() if args.json else memory_text(reply, args.history))
    return 0


def consolidation_text(reply: ConsolidateReply) -> str:
    """The plan as a person reads it: a headline, then each survivor and what folds into it."""
    folded = sum(len(m.removed) for m in reply.merges)
    head = (f"{reply.agent}: {reply.memories} memories as of {reply.now.isoformat()}; the next session start "
            f"would fold {folded} into {len(reply.merges)}, expire {len(reply.expired)} and decay "
            f"{len(reply.decayed)} (nothing changes now)")
    lines = [head]
    for merge in reply.merges:
        lines += ["", f"keep  {merge.kept[:8]}  {merge.type}  {_line(merge.content)}"]
        lines += [f"  fold  {m.id[:8]}  {m.similarity:.3f}  {_line(m.content)}" for m in merge.removed]
    for label, ids in (("expire", reply.expired), ("decay", reply.decayed)):
        if ids:
            lines += ["", f"{label}: {' '.join(i[:8] for i in ids)}"]
    return "\n".join(lines)


def _line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


async def cmd_consolidate(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    async with connected(settings, args.nats_url) as nc:
        raw = await request_api(nc, api_subject(settings.prefix, "consolidate", agent),
                                msgspec.json.encode(ConsolidateRequest()))
        reply = msgspec.json.decode(raw, type=ConsolidateReply)
        if not reply.memories:
            await require_data(nc, settings, agent)
    print(raw.decode() if args.json else consolidation_text(reply))
    return 0


async def cmd_facts(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    async with connected(settings, args.nats_url) as nc:
        doc = await DocReader(nc.jetstream()).latest(BUCKET_KNOWLEDGE, agent, KnowledgeDoc)  # joins the parts
        if doc is None:
            await require_data(nc, settings, agent)
    if doc is None:
        if args.json:
            print_json({"entities": [], "facts": [], "replaced": []})
        else:
            print(f"(no knowledge for {agent} yet)")
        return 0
    names = entity_names(doc.entities)
    wanted = args.entity.lower() if args.entity else None
    ids = {e.id for e in doc.entities if wanted in (e.id.lower(), e.value.lower())} if wanted else None
    facts = [f for f in doc.facts if ids is None or f.subject in ids or f.object in ids]
    facts.sort(key=lambda f: (-f.relevance, f.id))
    from workers.knowledge.briefing import current_facts

    # "Maria works at Acme Analytics GmbH" two weeks before "… at Globex Corp": both are kept,
    # the older one says it was replaced (the briefing shows only the newer)
    current = {f.id for f in current_facts(doc.facts)}
    if args.json:
        named = {f.subject for f in facts} | {f.object for f in facts}
        print_json({"entities": [e for e in doc.entities if ids is None or e.id in named], "facts": facts,
                    "replaced": [f.id for f in facts if f.id not in current]})
        return 0
    rows = [[f"{f.relevance:.2f}", names.get(f.subject, f.subject), f.predicate,
             names.get(f.object, f.object) + ("" if f.id in current else " (replaced)"), f.source] for f in facts]
    print(render_table(["relevance", "subject", "predicate", "object", "source"], rows) if rows
          else "(no facts match)")
    if args.entity is None:
        print(f"\n{len(doc.entities)} entities, {len(doc.facts)} facts")
    return 0


def register_forget(sub: Any) -> None:
    p = sub.add_parser("forget", help="remove an agent everywhere: events, documents, memories, dead letters")
    p.add_argument("agent", help=AGENT_HELP)
    p.add_argument("--yes", action="store_true",
                   help="confirm without being asked (required when not at a terminal): this cannot be undone")
    p.add_argument("--status", action="store_true",
                   help="show the agent's last forget (complete, pending on the recall worker, or interrupted)")
    p.add_argument("--wait", type=float, default=60.0, metavar="SECONDS",
                   help="how long to wait for the recall worker to delete the memories (default 60); "
                        "a forget still pending then completes on its own")
    p.add_argument("--nats-url", help=NATS_URL_HELP)
    p.set_defaults(handler=cmd_forget)


PENDING = 3  # exit code: the forget completes on its own (the recall worker has not applied it yet)


def _store_eraser(settings: Settings, agent: str) -> Callable[[Sequence[Mode]], Awaitable[str]]:
    """Delete the agent's memories from the store directly, from the collections of ``modes``
    (their recall worker is not running): the shadow workers' one first when there is one (so
    that a store that cannot be opened stops the forget before anything is removed)."""
    async def erase(modes: Sequence[Mode]) -> str:
        from workers.recall.spec import missing_stack

        if (missing := missing_stack()) is not None:  # a slim install: no store to open here
            raise CliError(f"cannot delete the memories of {agent} from here: {missing}")
        from shared.names import memory_collection
        from workers.recall.embedders import make_embedder
        from workers.recall.store import StoreUnavailable, collection_exists, store_for

        def run() -> None:
            embedder = make_embedder(settings.embedder)
            for shadow in [mode == "shadow" for mode in modes]:
                if shadow and not collection_exists(settings, memory_collection(shadow=True)):
                    continue  # never ran in shadow mode: nothing to delete, nothing to make
                store = store_for(settings, embedder.name, embedder.dim, shadow=shadow)
                try:
                    store.delete_agent(agent)
                    store.flush()
                finally:
                    store.close()

        try:
            await asyncio.to_thread(run)
        except StoreUnavailable as exc:
            raise CliError(f"cannot open the memory store to forget {agent}: {exc}") from exc
        return "deleted from the store"

    return erase


async def _consumers_of(js: Any, settings: Settings, agent: str) -> list[str]:
    """Every existing consumer that applies the agent's events (live and shadow)."""
    from shared.names import EVENTS_STREAM, agent_consumer
    from workers.registry import consuming_workers

    existing = {info.name for info in await js.consumers_info(EVENTS_STREAM)}
    wanted = [agent_consumer(w, agent, settings.partitions, shadow)
              for w in consuming_workers() for shadow in (False, True)]
    return [c for c in wanted if c in existing]


def describe_forget(record: ForgetRecord) -> str:
    r, agent = record.report, record.agent
    removed = (f"{r.events} events, {r.documents} documents, {r.dead_letters} dead letters, "
               f"{r.usage_keys} usage counters, {r.llm_answers} cached LLM answers"
               + (f", {r.llm_pending} LLM calls waiting for the model" if r.llm_pending else ""))
    if record.state == "complete":
        return f"forgot {agent}: {removed}; memories {r.memories}"
    if record.state == "pending":
        return (f"forgot {agent}: {removed}; memories pending: the recall worker deletes them when it applies "
                f"the forget (stream sequence {record.marker_seq}); `cortex forget {agent} --status` says when")
    if record.state == "aborted":
        return f"forget of {agent} aborted ({record.error}): nothing was removed"
    return (f"forget of {agent} {'interrupted' if record.error else 'running'} while {record.step} "
            f"(started {record.started:%Y-%m-%d %H:%M:%S} UTC): run `cortex forget {agent} --yes` again to finish it")


async def _forget_status(args: argparse.Namespace, settings: Settings, agent: str) -> int:
    from shared.forget import forget_status

    async with connected(settings, args.nats_url) as nc:
        record = await forget_status(nc.jetstream(), agent)
    if record is None:
        raise CliError(f"no forget of {agent} is recorded")
    print(describe_forget(record))
    return {"complete": 0, "pending": PENDING}.get(record.state, 1)


def _at_a_terminal_out() -> bool:
    """Progress redrawn with ``\\r`` is for a person watching stderr, not for a log file."""
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except ValueError:  # a closed stream
        return False


def _at_a_terminal() -> bool:
    """A person can be asked: stdin and stderr are both terminals (not a script, CI or a job)."""
    try:
        return sys.stdin is not None and sys.stderr is not None and sys.stdin.isatty() and sys.stderr.isatty()
    except ValueError:  # a closed stream
        return False


async def _typed_line(fd: int, prompt: str) -> str | None:
    """``prompt`` on stderr, then the line typed at the terminal ``fd`` (without its newline), or None if input ends
    (Ctrl-D) or Ctrl-C comes before Enter. Waited for on the event loop, not in a thread: a
    thread blocked in a read is joined at exit, so Ctrl-C would wait for Enter.

    Ctrl-C is taken here, through the loop's own signal handling, and unblocked while the
    question is open: a process that inherited SIGINT ignored or blocked (a parent that
    ignores it, as a test runner's worker can) would otherwise wait at the prompt forever,
    the ^C shown and nothing done. The prompt is shown only once Ctrl-C is taken: a ^C typed
    the moment it appeared fell, in that process, on the inherited SIG_IGN (the README's test
    command hung so on a fresh clone run as a background job). Whatever was there before is put
    back afterwards."""
    loop = asyncio.get_running_loop()
    readable = asyncio.Event()
    interrupted: list[bool] = []
    typed = bytearray()

    def interrupt() -> None:
        interrupted.append(True)
        readable.set()

    loop.add_reader(fd, readable.set)
    previous = signal.getsignal(signal.SIGINT)
    try:
        loop.add_signal_handler(signal.SIGINT, interrupt)
        handled = True
    except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or no signals here
        handled = False
    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        print(prompt, end="", file=sys.stderr, flush=True)
        while b"\n" not in typed:
            await readable.wait()
            readable.clear()
            if interrupted:
                return None
            chunk = os.read(fd, 4096)  # a terminal in line mode: readable means a line (or end of input)
            if not chunk:
                return None
            typed += chunk
    finally:
        loop.remove_reader(fd)
        if blocked:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        if handled:
            loop.remove_signal_handler(signal.SIGINT)
            if previous is not None:
                signal.signal(signal.SIGINT, previous)  # asyncio.run's, or what the process inherited
    return typed.split(b"\n", 1)[0].decode(errors="replace")


async def _confirmed(agent: str) -> bool:
    """Ask at the terminal, as careful destructive commands do: true only if the agent id is
    typed back exactly. Anything else, end of input or Ctrl-C is a no."""
    print(f"this removes every event, document, memory and dead letter of {agent}; it cannot be undone.",
          file=sys.stderr)
    try:
        line = await _typed_line(sys.stdin.fileno(), f"Type the agent id ({agent}) to confirm: ")
    except asyncio.CancelledError:  # Ctrl-C (asyncio.run cancels the command): a no, not a traceback
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        line = None
    if line is None:
        print(file=sys.stderr)  # end the prompt's line (after ^C or ^D)
    return line is not None and line.strip() == agent


async def cmd_forget(args: argparse.Namespace, settings: Settings) -> int:
    from shared.forget import AgentForget, ForgetError
    from shared.names import agent_consumer
    from workers.registry import doc_buckets

    agent = _agent(args.agent)
    if args.status:
        return await _forget_status(args, settings, agent)
    if not args.yes:
        if not _at_a_terminal():
            raise CliError(f"this removes every event, document, memory and dead letter of {agent}: "
                           "add --yes (or run it in a terminal to be asked)")
        if not await _confirmed(agent):
            raise CliError(f"forget of {agent} cancelled: nothing was removed")
    async with connected(settings, args.nats_url) as nc:
        js = nc.jetstream()
        consumers = await _consumers_of(js, settings, agent)
        shadow_recall = agent_consumer("recall", agent, settings.partitions, shadow=True)
        forget = AgentForget(js, prefix=settings.prefix, agent=agent, consumers=consumers,
                             recall_consumer=agent_consumer("recall", agent, settings.partitions),
                             shadow_recall_consumer=shadow_recall if shadow_recall in consumers else "",
                             lease_ttl_s=settings.runtime.lease_ttl_s, erase_memories=_store_eraser(settings, agent),
                             say=lambda step: print(f"forget: {step}", file=sys.stderr, flush=True),
                             replicas=settings.replicas, buckets=doc_buckets())
        try:
            record = await forget.run(args.wait)
        except ForgetError as exc:
            raise CliError(str(exc)) from exc
    if settings.workspace:
        (Path(settings.workspace) / agent / "BOOTSTRAP.md").unlink(missing_ok=True)
    print(describe_forget(record))
    return PENDING if record.state == "pending" else 0
