"""``cortex web [--listen HOST:PORT] [--tokens PATH]``: what Cortex knows about each agent, in a
browser, live, with the CLI's corrections (``workers/web``). On loopback by default; on any other
address only behind the bearer tokens of ``cortex mcp --http --tokens`` (each token sees its
own agent)."""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import Any

import msgspec

from shared.config import Settings
from shared.connection import connect
from workers.cli.base import CliError
from workers.cli.common import NATS_URL_HELP, resolve_url
from workers.cli.mcp import listen_socket, load_tokens, parse_listen

DEFAULT_LISTEN = "127.0.0.1:8780"
DEFAULT_TIMEOUT_S = 10.0
HELP = "see and correct what Cortex knows about each agent, in a browser, live"
OPEN_WARNING = ("cortex web: no --tokens: anyone who can reach this address on this machine sees and corrects "
                "every agent")


def register(sub: Any) -> None:
    p = sub.add_parser("web", help=HELP, description=HELP + ". Serves pages at http://HOST:PORT/ (loopback by "
                       "default); any other address needs --tokens.")
    p.add_argument("--listen", metavar="HOST:PORT", default=DEFAULT_LISTEN,
                   help=f"the address to serve on (default {DEFAULT_LISTEN}; port 0: a free one)")
    p.add_argument("--tokens", metavar="PATH", type=Path,
                   help="bearer tokens of the agents, as `cortex mcp --http --tokens` takes them: each token sees "
                        "only its own agent; required on a non-loopback address")
    p.add_argument("--nats-url", help=NATS_URL_HELP)
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                   help="seconds to wait for a Cortex API before a page says it did not answer (default 10)")
    p.set_defaults(handler=cmd_web)


def open_socket(listen: str, tokens: Path | None) -> socket.socket:
    """The bound socket; a non-loopback address without tokens is refused before binding."""
    from workers.web.app import is_loopback

    host, port = parse_listen(listen, "--listen", DEFAULT_LISTEN, lowest_port=0)  # 0: a free port
    if not is_loopback(host) and tokens is None:
        raise CliError(f"--listen {listen}: not a loopback address, so every page would be open to the network; "
                       "add --tokens PATH (the agents' bearer tokens, as `cortex mcp --http --tokens` takes them)")
    sock = listen_socket(host, port)
    sock.listen(128)  # connections wait in the backlog from now on: the URL printed next is never refused
    return sock


def page_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


async def serve_web(settings: Settings, sock: socket.socket, tokens: Any, api_timeout: float) -> None:
    """Serve until SIGINT or SIGTERM (uvicorn's graceful shutdown), on one NATS connection that
    reconnects for as long as the server runs."""
    import uvicorn

    from workers.web.app import Web, build_app, is_loopback

    nc = await connect(settings, "cortex-web", max_reconnects=-1)
    try:
        web = Web(nc, settings, tokens, api_timeout, loopback=is_loopback(sock.getsockname()[0]))
        config = uvicorn.Config(build_app(web), log_level="warning", lifespan="off", timeout_graceful_shutdown=2)
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        await nc.close()


async def cmd_web(args: argparse.Namespace, settings: Settings) -> int:
    if not 0 < args.timeout <= 600:
        raise CliError(f"--timeout {args.timeout:g}: expected seconds between 0 and 600")
    tokens = load_tokens(args.tokens) if args.tokens is not None else None
    sock = open_socket(args.listen, args.tokens)
    settings = msgspec.structs.replace(settings, nats_url=resolve_url(settings, args.nats_url))
    if tokens is None:
        print(OPEN_WARNING, file=sys.stderr, flush=True)
    print(f"cortex web: {page_url(sock)} (NATS {settings.nats_url}); Ctrl-C to stop", file=sys.stderr, flush=True)
    await serve_web(settings, sock, tokens, args.timeout)
    return 0
