"""``cortex mcp --agent A [--http HOST:PORT]``: the agent's tools over the Model Context Protocol;
``cortex mcp --http HOST:PORT --tokens PATH``: every agent of a token file on one server, each
request bound to the agent its bearer token stands for."""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import Any

import msgspec

from shared.config import Settings
from workers.cli.base import CliError
from workers.cli.common import resolve_url
from workers.cli.query import _agent

DEFAULT_TIMEOUT_S = 10.0
HELP = "serve the agent's tools over MCP (stdio; --http HOST:PORT for streamable HTTP)"
DESCRIPTION = (HELP + ". Over stdio, and over HTTP with --agent, one server serves one agent; over HTTP with "
               "--tokens, one server serves every agent of the token file, each request the agent its bearer "
               "token stands for.")


def register(sub: Any) -> None:
    p = sub.add_parser("mcp", help=HELP, description=DESCRIPTION)
    p.add_argument("--agent", help="the agent whose tools these are (the tenant boundary); not with --tokens")
    p.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    p.add_argument("--tokens", metavar="PATH", type=Path,
                   help="with --http: bearer tokens of the agents, a file of '<agent> <token>' lines or a directory "
                        "of files named after agents (a mounted Kubernetes Secret); re-read when it changes")
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


def parse_listen(text: str, flag: str = "--http", example: str = "127.0.0.1:8765",
                 lowest_port: int = 1) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8000`` for IPv6) → (host, port), the value of ``flag``: the
    port from ``lowest_port`` (0: a free one) to 65535."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not lowest_port <= int(port) <= 65535:
        raise CliError(f"{flag} {text!r}: expected HOST:PORT, e.g. {example}")
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


def check_mode(args: argparse.Namespace) -> None:
    """stdio serves one agent; HTTP one agent (``--agent``) or the token file's (``--tokens``)."""
    if args.tokens is not None and not args.http:
        raise CliError("--tokens needs --http: stdio serves the one agent of --agent")
    if args.tokens is not None and args.agent is not None:
        raise CliError("--tokens binds each request to the agent its token stands for: leave out --agent")
    if args.tokens is None and args.agent is None:
        raise CliError("--agent is required (or --http with --tokens, for every agent of a token file)")
    if args.print_config and args.tokens is not None:
        raise CliError("--print-config prints one agent's stdio entry: give --agent, not --tokens")
    if not 0 < args.timeout <= 600:
        raise CliError(f"--timeout {args.timeout:g}: expected seconds between 0 and 600")


def load_tokens(path: Path) -> Any:
    from workers.mcp.tokens import TokenFileError, TokenTable

    try:
        table = TokenTable(path)
    except TokenFileError as exc:
        raise CliError(f"--tokens {exc}") from exc
    if not table.agents:
        raise CliError(f"--tokens {path}: no tokens in it, so no request could be served")
    return table


def announce(sock: socket.socket, whom: str, nats: str) -> None:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"cortex: MCP tools of {whom} at http://{shown}:{port}/mcp (NATS {nats}); Ctrl-C to stop",
          file=sys.stderr, flush=True)


async def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    check_mode(args)
    if args.print_config:
        from workers.cli.mcpconfig import host_config

        print(host_config(settings, _agent(args.agent), args.nats_url or settings.nats_url,
                          None if args.timeout == DEFAULT_TIMEOUT_S else args.timeout))
        return 0
    settings = msgspec.structs.replace(settings, nats_url=resolve_url(settings, args.nats_url))
    if args.tokens is not None:
        return await serve_tokens(args, settings)
    from workers.mcp.gateway import Gateway
    from workers.mcp.server import build_server, serve_http, serve_stdio

    agent = _agent(args.agent)
    sock = listen_socket(*parse_listen(args.http)) if args.http else None
    gateway = Gateway(settings, agent, args.timeout)
    server = build_server(gateway, otel=args.otel)
    try:
        if sock is not None:
            announce(sock, agent, gateway.url)
            await serve_http(server, sock)
        else:
            await serve_stdio(server)
    finally:
        await gateway.close()
    return 0


async def serve_tokens(args: argparse.Namespace, settings: Settings) -> int:
    """Every agent of the token file behind its bearer tokens, on one HTTP server."""
    from workers.mcp.gateway import Gateways
    from workers.mcp.server import serve_http, token_server

    tokens = load_tokens(args.tokens)
    sock = listen_socket(*parse_listen(args.http))
    gateways = Gateways(settings, args.timeout)
    try:
        announce(sock, f"{len(tokens.agents)} agents, each behind its bearer tokens", gateways.url)
        await serve_http(token_server(gateways, otel=args.otel), sock, tokens)
    finally:
        await gateways.close()
    return 0
