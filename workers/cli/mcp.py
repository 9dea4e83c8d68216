"""``cortex mcp --agent A [--http HOST:PORT]``: the agent's tools over the Model Context Protocol."""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Any

import msgspec

from shared.config import Settings
from workers.cli.base import CliError
from workers.cli.common import resolve_url
from workers.cli.query import _agent

DEFAULT_TIMEOUT_S = 10.0
HELP = "serve the agent's tools over MCP (stdio; --http HOST:PORT for streamable HTTP)"


def register(sub: Any) -> None:
    p = sub.add_parser("mcp", help=HELP, description=HELP + ". One server serves one agent.")
    p.add_argument("--agent", required=True, help="the agent whose tools these are (the tenant boundary)")
    p.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    p.add_argument("--nats-url", help="NATS server (default: CORTEX_NATS_URL, else a local `cortex up`)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                   help="seconds to wait for a Cortex API before the tool reports it (default 10)")
    p.add_argument("--otel", action="store_true",
                   help="keep the MCP SDK's OpenTelemetry span per message (for a host that installs an exporter; "
                        "off by default: without one it is a no-op that still costs CPU on every call)")
    p.add_argument("--print-config", action="store_true",
                   help="print the MCP host entry ({\"mcpServers\": …} JSON) that starts this server: this install's "
                        "cortex by its absolute path, and the connection settings given (none: the local `cortex up`)")
    p.set_defaults(handler=cmd_mcp)


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8000`` for IPv6) → (host, port)."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise CliError(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    return host, int(port)


def listen_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound now so that a port in use is one clear line, not a log."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise CliError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


async def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    from workers.mcp.gateway import Gateway
    from workers.mcp.server import build_server, serve_http, serve_stdio

    agent = _agent(args.agent)
    if not 0 < args.timeout <= 600:
        raise CliError(f"--timeout {args.timeout:g}: expected seconds between 0 and 600")
    if args.print_config:
        from workers.cli.mcpconfig import host_config

        print(host_config(settings, agent, args.nats_url or settings.nats_url,
                          None if args.timeout == DEFAULT_TIMEOUT_S else args.timeout))
        return 0
    sock = listen_socket(*parse_listen(args.http)) if args.http else None
    gateway = Gateway(msgspec.structs.replace(settings, nats_url=resolve_url(settings, args.nats_url)), agent,
                      args.timeout)
    server = build_server(gateway, otel=args.otel)
    try:
        if sock is not None:
            host, port = sock.getsockname()[:2]
            shown = f"[{host}]" if ":" in host else host
            print(f"cortex: MCP tools of {agent} at http://{shown}:{port}/mcp (NATS {gateway.url}); Ctrl-C to stop",
                  file=sys.stderr, flush=True)
            await serve_http(server, sock)
        else:
            await serve_stdio(server)
    finally:
        await gateway.close()
    return 0
