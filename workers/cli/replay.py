"""``cortex replay [--worker W] [--agent A] [--force]``: rebuild derived state from the stream."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec

from schemas.events import is_valid_agent
from shared.config import Settings
from shared.replay import ReplayError, ReplayProgress, run_replay
from shared.runtime import WorkerHost
from workers import __version__
from workers.cli import CliError
from workers.cli.common import connected, resolve_url
from workers.cli.run import select_specs


def register(sub: Any) -> None:
    p = sub.add_parser("replay", help="rebuild derived state from the stream (live traffic keeps flowing)")
    p.add_argument("--worker", help="comma-separated workers to replay (default: every consuming worker)")
    p.add_argument("--agent", help="rebuild only this agent's documents")
    p.add_argument("--force", action="store_true", help="replay even when the stream no longer starts at 1")
    p.add_argument("--nats-url")
    p.set_defaults(handler=cmd_replay)


def _report(progress: list[ReplayProgress]) -> None:
    parts = [f"{p.worker} {'done' if p.done else f'{p.applied}/{p.target}'}" for p in progress]
    print("replay: " + "  ".join(parts), file=sys.stderr, flush=True)


async def cmd_replay(args: argparse.Namespace, settings: Settings) -> int:
    if args.agent is not None and not is_valid_agent(args.agent):
        raise CliError(f"invalid agent id {args.agent!r}")
    specs = [s for s in select_specs(args.worker) if s.build is not None]
    if not specs:
        raise CliError("nothing to replay: the named workers consume no events")
    url = resolve_url(settings, args.nats_url)
    host = WorkerHost(msgspec.structs.replace(settings, nats_url=url), specs, __version__)
    async with connected(settings, url) as nc:
        try:
            await run_replay(host, nc.jetstream(), specs, args.agent, args.force, _report)
        except ReplayError as exc:
            raise CliError(str(exc)) from exc
    scope = f"agent {args.agent}" if args.agent else "all agents"
    print(f"replayed {', '.join(s.name for s in specs)} for {scope}")
    return 0
