"""``cortex replay [--worker W] [--agent A] [--force]``: rebuild derived state from the stream."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import msgspec

from schemas.events import is_valid_agent
from shared.config import Settings
from shared.errors import is_transient
from shared.replay import ReplayError, ReplayProgress, run_replay
from shared.runtime import WorkerHost
from workers import __version__
from workers.cli.base import CliError
from workers.cli.common import NATS_URL_HELP, connected, resolve_url
from workers.cli.specs import select_specs
from workers.registry import all_specs


def register(sub: Any) -> None:
    p = sub.add_parser("replay", help="rebuild derived state from the stream (live traffic keeps flowing)")
    p.add_argument("--worker", help="comma-separated workers to replay (default: every consuming worker)")
    p.add_argument("--agent", help="rebuild only this agent's documents")
    p.add_argument("--force", action="store_true", help="replay even when the stream no longer starts at 1")
    p.add_argument("--nats-url", help=NATS_URL_HELP)
    p.set_defaults(handler=cmd_replay)


class Reporter:
    """Progress on stderr: each worker's phase, or its sequence, rate and ETA. On a terminal
    one line redrawn every second; otherwise a line when a phase changes, else every 10 s
    (a log, not a wall of identical lines)."""

    QUIET_S = 10.0

    def __init__(self, tty: bool) -> None:
        self._tty = tty
        self._phases: list[str] = []
        self._printed = 0.0
        self.started = time.monotonic()

    def __call__(self, progress: list[ReplayProgress]) -> None:
        now = time.monotonic()
        line = "replay: " + "  ".join(p.describe(now) for p in progress)
        phases = [p.phase if not p.done else "done" for p in progress]
        if self._tty:
            print(f"\r\033[K{line}", end="", file=sys.stderr, flush=True)
        elif phases != self._phases or now - self._printed >= self.QUIET_S:
            print(line, file=sys.stderr, flush=True)
            self._printed = now
        self._phases = phases

    def finish(self) -> None:
        if self._tty:
            print(file=sys.stderr, flush=True)


async def cmd_replay(args: argparse.Namespace, settings: Settings) -> int:
    if args.agent is not None and not is_valid_agent(args.agent):
        raise CliError(f"invalid agent id {args.agent!r}")
    specs = [s for s in select_specs(args.worker) if s.build is not None]
    if not specs:
        raise CliError("nothing to replay: the named workers consume no events")
    url = resolve_url(settings, args.nats_url)
    # every worker in the catalog: a composed worker replayed alone derives an event-derived source
    # its history no longer reaches from the events (shared.derive), as a live one does
    host = WorkerHost(msgspec.structs.replace(settings, nats_url=url), specs, __version__,
                      catalog=all_specs().values())
    report = Reporter(sys.stderr.isatty())
    async with connected(settings, url, max_reconnects=-1) as nc:  # a long replay rides out a server restart
        try:
            await run_replay(host, nc.jetstream(), specs, args.agent, args.force, report)
        except ReplayError as exc:
            raise CliError(str(exc)) from exc
        except Exception as exc:
            if not is_transient(exc):
                raise
            raise CliError(f"the replay stopped: NATS did not answer ({type(exc).__name__}: {exc}) — a cluster "
                           "electing a leader, or a lost connection; run it again") from exc
        finally:
            report.finish()
    scope = f"agent {args.agent}" if args.agent else "all agents"
    print(f"replayed {', '.join(s.name for s in specs)} for {scope} in {time.monotonic() - report.started:.1f} s")
    return 0
