"""What every command module builds on: ``CliError`` (one line, an exit code), the
``Command`` type and ``run_command``, the wrapper every entry point runs a command in.
Command modules import this module, never the package (``workers.cli`` imports them)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from shared.config import Settings, SettingsError, load_settings
from shared.logs import configure

Command = Callable[[argparse.Namespace, Settings], Coroutine[Any, Any, int]]


class CliError(Exception):
    """A user-facing failure: printed as one line, exit code 1 (or ``code``)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def run_command(command: Callable[[Settings], Coroutine[Any, Any, int]], *, quiet: bool) -> int:
    """What every entry point does around its command: load the settings (an invalid one, or
    one of a worker's own settings its host reads at start-up: one line on stderr, exit 2),
    configure logging (WARNING when ``quiet``, else the setting) and run ``command(settings)``
    to its exit code (130 on Ctrl-C)."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"cortex: {exc}", file=sys.stderr)
        return 2
    configure("WARNING" if quiet else settings.log_level, settings.log_format)
    try:
        return asyncio.run(command(settings))
    except KeyboardInterrupt:
        return 130
    except SettingsError as exc:  # a worker's own settings, read when its host starts (WorkerSpec.config)
        print(f"cortex: {exc}", file=sys.stderr)
        return 2

