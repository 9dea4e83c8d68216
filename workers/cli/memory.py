"""``cortex index DIR --agent A``, ``cortex memory pin|forget AGENT ID``, ``cortex facts AGENT``."""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from schemas.docs import KnowledgeDoc
from schemas.events import FeedbackEvent, NoteEvent
from shared.config import Settings
from shared.kv import kv_read
from shared.names import BUCKET_KNOWLEDGE
from workers.cli import CliError
from workers.cli.common import connected
from workers.cli.query import _agent, render_table
from workers.recall.markdown import note_id, split_sections


def register(sub: Any) -> None:
    index = sub.add_parser("index", help="publish a memory directory's markdown sections as NoteEvents")
    index.add_argument("dir")
    index.add_argument("--agent", required=True)
    index.add_argument("--nats-url")
    index.set_defaults(handler=cmd_index)

    memory = sub.add_parser("memory", help="pin or forget a recall memory")
    msub = memory.add_subparsers(dest="action", required=True)
    for action, kind, text in (("pin", "memory_pin", "never expires, always eligible"),
                               ("forget", "memory_forget", "removed from the store")):
        p = msub.add_parser(action, help=f"{action} a memory ({text})")
        p.add_argument("agent")
        p.add_argument("id")
        p.add_argument("--nats-url")
        p.set_defaults(handler=cmd_memory, kind=kind)

    facts = sub.add_parser("facts", help="print the agent's known facts (optionally about one entity)")
    facts.add_argument("agent")
    facts.add_argument("--entity", help="an entity value or id, e.g. Maria or person:maria")
    facts.add_argument("--nats-url")
    facts.set_defaults(handler=cmd_facts)


def _state_path(settings: Settings, agent: str) -> Path:
    return Path(settings.data_path) / "index" / f"{agent}.json"


def _notes(root: Path, agent: str) -> list[NoteEvent]:
    notes = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(microsecond=0)
        for section in split_sections(path.read_text(encoding="utf-8", errors="replace")):
            notes.append(NoteEvent(id=note_id(rel, section), agent=agent, ts=mtime, path=rel,
                                   headings=list(section.headings), content=section.content))
    return notes


async def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    root = Path(args.dir)
    if not root.is_dir():
        raise CliError(f"{root} is not a directory")
    notes = _notes(root, agent)
    state_path = _state_path(settings, agent)
    known: set[str] = set(json.loads(state_path.read_text())) if state_path.exists() else set()
    todo = [n for n in notes if n.id not in known]
    async with connected(settings, args.nats_url) as nc:
        js = nc.jetstream()
        for i, note in enumerate(todo, 1):
            await js.publish(f"{settings.prefix}.notes.{agent}", msgspec.json.encode(note),
                             headers={"Nats-Msg-Id": note.id})
            known.add(note.id)
            if i % 50 == 0 or i == len(todo):
                print(f"\rindex: {i}/{len(todo)} sections", end="", file=sys.stderr, flush=True)
    if todo:
        print(file=sys.stderr)
    state_path.parent.mkdir(parents=True, exist_ok=True)
    state_path.write_text(json.dumps(sorted(known)))
    print(f"indexed {len(notes)} sections from {root}: {len(todo)} new, {len(notes) - len(todo)} unchanged")
    return 0


async def cmd_memory(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    event = FeedbackEvent(id=f"fb-{uuid.uuid4().hex}", agent=agent, ts=datetime.now(UTC), kind=args.kind,
                          target=args.id, actor="cli")
    async with connected(settings, args.nats_url) as nc:
        await nc.jetstream().publish(f"{settings.prefix}.feedback.{agent}.{args.kind}", msgspec.json.encode(event),
                                     headers={"Nats-Msg-Id": event.id})
    print(f"published {args.kind} for {args.id}; the recall worker applies it")
    return 0


async def cmd_facts(args: argparse.Namespace, settings: Settings) -> int:
    agent = _agent(args.agent)
    async with connected(settings, args.nats_url) as nc:
        raw, _ = await kv_read(await nc.jetstream().key_value(BUCKET_KNOWLEDGE), agent)
    if raw is None:
        print(f"(no knowledge for {agent} yet)")
        return 0
    doc = msgspec.json.decode(raw, type=KnowledgeDoc)
    names = {e.id: e.value for e in doc.entities}
    wanted = args.entity.lower() if args.entity else None
    ids = {e.id for e in doc.entities if wanted in (e.id.lower(), e.value.lower())} if wanted else None
    facts = [f for f in doc.facts if ids is None or f.subject in ids or f.object in ids]
    facts.sort(key=lambda f: (-f.relevance, f.id))
    rows = [[f"{f.relevance:.2f}", names.get(f.subject, f.subject), f.predicate, names.get(f.object, f.object),
             f.source] for f in facts]
    print(render_table(["relevance", "subject", "predicate", "object", "source"], rows) if rows
          else "(no facts match)")
    if args.entity is None:
        print(f"\n{len(doc.entities)} entities, {len(doc.facts)} facts")
    return 0
