"""The threads and decisions cores over fixed message sets: a digest of every revision, and
their CPU per message.

A change to a core's speed must not change what it derives. Run this before and after (on
two checkouts, the same corpora) and compare the digests: they cover every revision of every
threads, decisions and commitments document the cores write, message by message, over

* the bench backlog (``backlog(20000, 50, 7)``: the ``workers`` phase's message mix);
* the written eval sets (``workers/evals/data/briefing.json``, ``traces.json``'s messages are
  not conversations and are left out);
* the development split's real conversations (LoCoMo 0–4, QMSum's train meetings), when
  ``--locomo`` / ``--qmsum`` are given (the held-out and acceptance splits are never read).

``python -m workers.bench.coredigest --locomo …/locomo10.json --qmsum …/qmsum_root``
prints one line per set: messages, the digest, and µs of process CPU per message of each
core (best of ``--reps``). ``--profile FILE`` writes a cProfile of one pass instead.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import msgspec

from schemas.events import MessageEvent
from shared.config import Settings, load_settings
from workers.conversation.patterns import get_patterns

BRIEFING_SET = Path(__file__).resolve().parents[1] / "evals" / "data" / "briefing.json"


@dataclass
class MessageSet:
    name: str
    settings: Settings
    streams: list[list[MessageEvent]]  # one per agent, in stream order


def bench_set(events: int = 20000, agents: int = 50, seed: int = 7) -> MessageSet:
    from workers.bench.events import backlog

    per_agent: dict[str, list[MessageEvent]] = {}
    for ev in backlog(events, agents, seed):
        if ev.kind == "msg":
            per_agent.setdefault(ev.agent, []).append(msgspec.json.decode(ev.data, type=MessageEvent))
    return MessageSet("bench", load_settings({}), list(per_agent.values()))


def _messages(placed: Sequence[object]) -> list[MessageEvent]:
    return [p.event for p in placed if isinstance(p.event, MessageEvent)]  # type: ignore[attr-defined]


def briefing_set(path: Path = BRIEFING_SET) -> MessageSet:
    from workers.evals.briefing import conversation_events, eval_settings, load_dataset

    dataset = load_dataset(path)
    return MessageSet(path.stem, eval_settings(dataset),
                      [_messages(conversation_events(c)) for c in dataset.conversations])


def dev_set(locomo: str | None, qmsum: str | None) -> MessageSet:
    from workers.evals.briefing import conversation_events
    from workers.evals.real_eval import RealOptions, as_conversation, load_real_set, real_settings

    items, _ = load_real_set(RealOptions(split="dev", locomo=locomo, qmsum=qmsum))
    return MessageSet("dev", real_settings(load_settings({})),
                      [_messages(conversation_events(as_conversation(item.conv))) for item in items])


Core = Callable[[object, MessageEvent], object]


def cores(settings: Settings) -> dict[str, Core]:
    from workers.decisions import commitments as commitments_core
    from workers.decisions import core as decisions_core
    from workers.threads import core as threads_core

    patterns = get_patterns(settings.languages)
    tz = ZoneInfo(settings.timezone)
    return {
        "threads": lambda doc, ev: threads_core.apply_message(doc, ev, settings.threads, patterns),  # type: ignore[arg-type]
        "decisions": lambda doc, ev: decisions_core.apply_message(doc, ev, settings.decisions,  # type: ignore[arg-type]
                                                                  patterns, tz),
        "commitments": lambda doc, ev: commitments_core.apply_message(doc, ev, settings.commitments,  # type: ignore[arg-type]
                                                                      patterns, tz),
    }


def digest(mset: MessageSet) -> dict[str, str]:
    """Per core, a hash of every revision it writes over the set, in stream order."""
    out = {}
    for name, apply in cores(mset.settings).items():
        h = hashlib.sha256()
        for stream in mset.streams:
            doc: object = None
            for ev in stream:
                doc = apply(doc, ev)
                h.update(msgspec.json.encode(doc))
        out[name] = h.hexdigest()[:16]
    return out


def timing(mset: MessageSet, reps: int) -> dict[str, float]:
    """Per core, µs of process CPU per message, best of ``reps`` passes over the set."""
    n = sum(len(s) for s in mset.streams)
    out = {}
    for name, apply in cores(mset.settings).items():
        best = float("inf")
        for _ in range(reps):
            start = time.process_time()
            for stream in mset.streams:
                doc: object = None
                for ev in stream:
                    doc = apply(doc, ev)
            best = min(best, time.process_time() - start)
        out[name] = best / n * 1e6
    return out


def profile(mset: MessageSet, path: str, only: str | None) -> None:
    chosen = {k: v for k, v in cores(mset.settings).items() if only is None or k == only}
    prof = cProfile.Profile()
    prof.enable()
    for apply in chosen.values():
        for stream in mset.streams:
            doc: object = None
            for ev in stream:
                doc = apply(doc, ev)
    prof.disable()
    prof.dump_stats(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.bench.coredigest", description=__doc__.split("\n")[0])
    parser.add_argument("--locomo", help="LoCoMo's locomo10.json (the dev split's conversations 0-4)")
    parser.add_argument("--qmsum", help="QMSum's checkout (the dev split's train meetings)")
    parser.add_argument("--events", type=int, default=20000, help="bench backlog events (default 20000)")
    parser.add_argument("--reps", type=int, default=0, help="timed passes per core (0: digests only)")
    parser.add_argument("--only", help="one set: bench, briefing, dev")
    parser.add_argument("--profile", help="write a cProfile of one pass over the set(s) to this file")
    parser.add_argument("--core", help="with --profile: only this core (threads, decisions, commitments)")
    args = parser.parse_args(argv)
    sets: list[Callable[[], MessageSet]] = [lambda: bench_set(args.events), briefing_set]
    if args.locomo or args.qmsum:
        sets.append(lambda: dev_set(args.locomo, args.qmsum))
    for make in sets:
        mset = make()
        if args.only and mset.name != args.only:
            continue
        n = sum(len(s) for s in mset.streams)
        if args.profile:
            profile(mset, args.profile, args.core)
            print(f"{mset.name}: {n} messages, profile in {args.profile}")
            continue
        line = f"{mset.name}: {n} messages " + " ".join(f"{k}={v}" for k, v in digest(mset).items())
        if args.reps:
            line += " | µs/msg " + " ".join(f"{k}={v:.1f}" for k, v in timing(mset, args.reps).items())
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
