"""Every command's arguments say what they are in `--help` (issue 44 item 6: `--nats-url` and
the positional arguments had no help text on 17 commands)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from workers.cli import build_parser


def commands(parser: argparse.ArgumentParser, path: str = "cortex") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}")


def test_every_argument_of_every_command_has_help_text() -> None:
    silent = []
    for path, parser in commands(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._VersionAction | argparse._SubParsersAction):
                continue
            if not (action.help or "").strip():
                silent.append(f"{path} {action.option_strings[0] if action.option_strings else action.dest}")
    assert not silent, f"no help text: {silent}"
