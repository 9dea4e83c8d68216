"""The ``cortex`` command line. Only this layer reads the environment and configures logging."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from typing import Any

from shared.config import Settings, SettingsError
from shared.connection import ConnectError
from shared.embedded import EmbeddedError
from shared.errors import WorkerCannotRun
from shared.provision import ReplicasUnavailable
from workers.cli.base import CliError, Command, run_command

__all__ = ["CliError", "Command", "build_parser", "main", "run_command"]


class _Version(argparse._VersionAction):
    """``cortex --version``: the release and whether the regex cores run compiled (mypyc) or as
    pure Python (setup.py, workers/compiled.py) — looked up only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from workers.compiled import status

        parser._print_message(f"{self.version}; regex cores: {status()}\n", sys.stdout)
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    from workers import __version__
    from workers.bench import cli as bench_cli
    from workers.cli import diff, memory, ops, query, replay, run
    from workers.cli import mcp as mcp_cli
    from workers.cli import web as web_cli
    from workers.evals import cli as evals_cli

    parser = argparse.ArgumentParser(prog="cortex", description="Conversation intelligence for LLM agents.")
    parser.add_argument("--version", action=_Version, version=f"cortex {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run.register(sub)
    ops.register(sub)
    ops.register_backup(sub)
    query.register(sub)
    replay.register(sub)
    memory.register(sub)
    memory.register_forget(sub)
    diff.register(sub)
    mcp_cli.register(sub)
    web_cli.register(sub)
    bench_cli.register(sub)
    evals_cli.register(sub)
    return parser


def _quiet_connection_noise(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A server that refuses a connection closes its socket; nats-py can leave a future
    holding that reset unretrieved, and asyncio would print it as a traceback. The
    command reports the refusal (or the lost connection) itself, in one line."""
    exc = context.get("exception")
    if isinstance(exc, ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
        return
    # asyncio names the task "future" when nobody retrieved its exception, "task" when
    # asyncio.run() cancels it at shutdown or a pending one is garbage-collected
    task = context.get("future") or context.get("task")
    if isinstance(exc, asyncio.InvalidStateError) and _in_reconnect(task):
        return  # nats-py's reconnect task, ended under it by a close once the command gave up
    if exc is None and _in_reconnect(task) and context.get("message") == "Task was destroyed but it is pending!":
        return  # a reconnect nats-py superseded by another (an EOF read while it was still finishing)
    loop.default_exception_handler(context)


def _in_reconnect(future: Any) -> bool:
    coro = future.get_coro() if isinstance(future, asyncio.Task) else None
    return getattr(coro, "__qualname__", "").endswith("_attempt_reconnect")


async def _run(handler: Command, args: argparse.Namespace, settings: Settings) -> int:
    asyncio.get_running_loop().set_exception_handler(_quiet_connection_noise)
    return await handler(args, settings)


SIGPIPE_EXIT = 128 + 13  # what a shell reports for a command killed by SIGPIPE (`cortex status | head -1`)


def _stdout_gone() -> int:
    """The reader of our output went away (``| head``): stop quietly, as Unix tools do.
    Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return SIGPIPE_EXIT


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # Interactive commands stay quiet unless asked; long-running ones log at the setting.
    quiet = args.command not in ("up", "worker") and "CORTEX_LOG_LEVEL" not in os.environ
    handler: Command = args.handler
    try:
        code = run_command(lambda settings: _run(handler, args, settings), quiet=quiet)
        sys.stdout.flush()  # inside the guard: a closed pipe surfaces here, not at exit
        return code
    except BrokenPipeError:
        return _stdout_gone()
    except (CliError, ConnectError, EmbeddedError, SettingsError, WorkerCannotRun, ReplicasUnavailable) as exc:
        print(f"cortex: {exc}", file=sys.stderr)
        return getattr(exc, "code", 1)


if __name__ == "__main__":
    sys.exit(main())
