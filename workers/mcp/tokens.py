"""Bearer tokens of ``cortex mcp --http --tokens PATH``: which agent each token stands for.

PATH is a file of lines ``<agent> <token>`` (``#`` starts a comment; an agent may have several
tokens, for rotation), or a directory — a Kubernetes Secret mounted as a volume — whose files
are named after agents and hold their tokens, one a line (hidden entries such as the kubelet's
``..data`` are skipped). A token never stands for two agents, is at least ``MIN_TOKEN_CHARS``
long and has no whitespace.

The table is read again when PATH changes (checked at most once a ``RECHECK_S``), so removing a
line or a Secret key revokes a token without a restart; a PATH that cannot be read or parsed
any more authenticates nobody until it is fixed (fail closed), and says why in the log.
Only sha256 digests of the tokens are kept in memory.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from pathlib import Path

from schemas.events import is_valid_agent

log = logging.getLogger(__name__)

MIN_TOKEN_CHARS = 16
RECHECK_S = 1.0
MAX_FILE_BYTES = 1 << 20


class TokenFileError(ValueError):
    """The token file or directory cannot be used; the message says where and why."""


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def _check(agent: str, token: str, where: str) -> None:
    if not is_valid_agent(agent):
        raise TokenFileError(f"{where}: {agent!r} is not an agent id (letters, digits, _ and -, at most 64)")
    if len(token) < MIN_TOKEN_CHARS:
        raise TokenFileError(f"{where}: the token of {agent} is shorter than {MIN_TOKEN_CHARS} characters")


def _add(table: dict[bytes, str], agent: str, token: str, where: str) -> None:
    _check(agent, token, where)
    key = digest(token)
    if table.get(key, agent) != agent:
        raise TokenFileError(f"{where}: one token stands for both {table[key]} and {agent}")
    table[key] = agent


def parse_lines(text: str, source: str) -> dict[bytes, str]:
    """``<agent> <token>`` lines → {sha256(token): agent}."""
    table: dict[bytes, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2:
            raise TokenFileError(f"{source}:{number}: expected '<agent> <token>'")
        _add(table, fields[0], fields[1], f"{source}:{number}")
    return table


def parse_directory(files: dict[str, str], source: str) -> dict[bytes, str]:
    """{file name (the agent): its text (tokens, one a line)} → {sha256(token): agent}."""
    table: dict[bytes, str] = {}
    for agent, text in sorted(files.items()):
        for token in (line.strip() for line in text.splitlines()):
            if token:
                _add(table, agent, token, f"{source}/{agent}")
    return table


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise TokenFileError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
    return path.read_text(encoding="utf-8")


def _entries(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if not p.name.startswith(".") and p.is_file())


def load(path: Path) -> dict[bytes, str]:
    """The table of a token file or directory, or a TokenFileError."""
    try:
        if path.is_dir():
            return parse_directory({p.name: _read(p) for p in _entries(path)}, str(path))
        return parse_lines(_read(path), str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenFileError(f"{path}: cannot be read ({exc})") from exc


def fingerprint(path: Path) -> tuple[tuple[str, int, int], ...]:
    """What changes when the tokens may have: names, sizes and modification times (a Secret's
    update swaps the kubelet's symlinks, which changes the files' times)."""
    try:
        paths = _entries(path) if path.is_dir() else [path]
        return tuple((p.name, (s := os.stat(p)).st_size, s.st_mtime_ns) for p in paths)
    except OSError:
        return (("", -1, -1),)


class TokenTable:
    """The tokens at ``path``, read at start (a bad file is a TokenFileError then) and again
    when they change; ``agent_for(token)`` is the agent, or None for a token it does not hold."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._table = load(path)
        self._seen = fingerprint(path)
        self._checked = time.monotonic()

    @property
    def agents(self) -> list[str]:
        return sorted(set(self._table.values()))

    def agent_for(self, token: str) -> str | None:
        """Looked up by the token's sha256: the lookup's timing tells nothing about a held token."""
        self._refresh()
        return self._table.get(digest(token))

    def _refresh(self) -> None:
        if time.monotonic() - self._checked < RECHECK_S:
            return
        self._checked = time.monotonic()
        seen = fingerprint(self.path)
        if seen == self._seen:
            return
        self._seen = seen
        try:
            self._table = load(self.path)
        except TokenFileError as exc:
            self._table = {}
            log.error("mcp_tokens_unusable", extra={"reason": str(exc)})
            return
        log.info("mcp_tokens_reloaded", extra={"agents": len(set(self._table.values()))})
