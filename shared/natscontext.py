"""Where a NATS user's tools find the server when Cortex's own variable is unset: ``NATS_URL``,
else the ``nats`` CLI's selected context (``NATS_CONTEXT``, else the name in
``$XDG_CONFIG_HOME/nats/context.txt``, read from ``nats/context/<name>.json``; without
``XDG_CONFIG_HOME``, under ``~/.config``), the layout of nats-io/jsm.go's ``natscontext``.

Read at the entry point only (``shared.config.load_settings``), from the environment it is given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import msgspec


class NatsContext(msgspec.Struct, frozen=True, kw_only=True):
    """The fields of a context file Cortex uses (the file has more: nkey, JetStream domain, …)."""

    name: str = ""
    url: str = ""
    user: str = ""
    password: str = ""
    token: str = ""
    creds: str = ""
    cert: str = ""
    key: str = ""
    ca: str = ""


class ServerChoice(msgspec.Struct, frozen=True, kw_only=True):
    """The server the NATS conventions name, and which of them named it (for the line that says so)."""

    url: str
    origin: str
    context: NatsContext | None = None


_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,255}")  # no path separators: a context name is a file name


def _config_root(env: Mapping[str, str]) -> Path | None:
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg)
    home = env.get("HOME")
    return Path(home) / ".config" if home else None


def _expand(path: str, env: Mapping[str, str]) -> str:
    """``~`` and ``$VAR`` in a context's file paths, as the nats CLI expands them."""
    path = re.sub(r"\$(\w+)|\$\{(\w+)\}", lambda m: env.get(m.group(1) or m.group(2), m.group(0)), path)
    home = env.get("HOME")
    return home + path[1:] if home and path.startswith("~") else path


def selected_context(env: Mapping[str, str]) -> NatsContext | None:
    """The nats CLI's current context, or None (none selected, no such file, not readable or
    not a context: the CLI would not connect with it either)."""
    root = _config_root(env)
    if root is None:
        return None
    name = env.get("NATS_CONTEXT", "").strip()
    try:
        if not name:
            name = (root / "nats" / "context.txt").read_text(encoding="utf-8").strip()
        if not _NAME_RE.fullmatch(name):
            return None
        raw = (root / "nats" / "context" / f"{name}.json").read_bytes()
        context = msgspec.json.decode(raw, type=NatsContext)
    except (OSError, UnicodeDecodeError, msgspec.DecodeError):
        return None
    return msgspec.structs.replace(context, name=name, creds=_expand(context.creds, env),
                                   cert=_expand(context.cert, env), key=_expand(context.key, env),
                                   ca=_expand(context.ca, env))


def conventional_server(env: Mapping[str, str]) -> ServerChoice | None:
    """``NATS_URL``, else the selected context's URL, else None."""
    url = env.get("NATS_URL", "").strip()
    if url:
        return ServerChoice(url=url, origin="NATS_URL")
    context = selected_context(env)
    if context is None or not context.url.strip():
        return None
    return ServerChoice(url=context.url.strip(), origin=f"the nats CLI's context {context.name!r}", context=context)
