"""``cortex mcp --agent A --print-config``: the MCP host entry that starts this install's server.

A host (Claude Desktop, Claude Code, OpenClaw) starts the server itself, without the shell's
PATH or variables, and ``cortex`` on a package index is another project: the entry names
the absolute path of the ``cortex`` beside this interpreter, and the connection settings
the command was run with — or, with none (the local case), the data dir through which the
server finds the running ``cortex up``.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import msgspec

from shared.config import Settings


class HostEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One server of a host's ``mcpServers`` (the stdio form every host reads)."""

    command: str
    args: list[str]
    env: dict[str, str]


def cortex_command() -> list[str]:
    """How to start this install's ``cortex``: its script, or the interpreter with ``-m workers``
    where no script is installed (a source tree run with ``python -m workers``)."""
    for scripts in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        script = Path(scripts) / "cortex"
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "workers"]


_PASSED_ON = (("CORTEX_NATS_CREDS", "nats_creds"), ("CORTEX_NATS_USER", "nats_user"),
              ("CORTEX_NATS_PASSWORD", "nats_password"), ("CORTEX_NATS_TOKEN", "nats_token"),
              ("CORTEX_NATS_TLS_CA", "nats_tls_ca"), ("CORTEX_NATS_TLS_CERT", "nats_tls_cert"),
              ("CORTEX_NATS_TLS_KEY", "nats_tls_key"))


def _connection_env(settings: Settings, url: str | None) -> dict[str, str]:
    env: dict[str, str] = {}
    if url:
        env["CORTEX_NATS_URL"] = url
    else:  # the local case: the server reads the URL of `cortex up`'s embedded NATS from the data dir
        env["CORTEX_DATA_DIR"] = os.path.abspath(settings.data_path)
    settings_values = msgspec.structs.asdict(settings)
    for variable, field in _PASSED_ON:
        value = settings_values[field]
        if value:
            env[variable] = os.path.abspath(value) if variable.endswith(("_CREDS", "_CA", "_CERT", "_KEY")) else value
    if settings.prefix != "cortex":
        env["CORTEX_PREFIX"] = settings.prefix
    return env


def host_entry(settings: Settings, agent: str, url: str | None, timeout_s: float | None = None) -> HostEntry:
    """The entry for ``agent``: this install's command, and the environment it needs (``url``:
    the server the command was given, by flag or setting; None: the local ``cortex up``)."""
    command, *args = cortex_command()
    args += ["mcp", "--agent", agent]
    if timeout_s is not None:
        args += ["--timeout", f"{timeout_s:g}"]
    return HostEntry(command=command, args=args, env=_connection_env(settings, url))


def host_config(settings: Settings, agent: str, url: str | None, timeout_s: float | None = None) -> str:
    """``{"mcpServers": {"cortex": …}}`` as indented JSON: what Claude Desktop's
    claude_desktop_config.json, a project's .mcp.json and ``claude mcp add-json`` take."""
    entry = host_entry(settings, agent, url, timeout_s)
    return msgspec.json.format(msgspec.json.encode({"mcpServers": {"cortex": entry}}), indent=2).decode()
