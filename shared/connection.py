"""NATS connections built from Settings: auth, TLS, reconnect forever, logged state changes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import ssl
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import msgspec
import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.protocol.parser import AUTHORIZATION_VIOLATION, PERMISSIONS_ERR, STALE_CONNECTION

from shared.backoff import backoff_delay, jittered
from shared.config import Settings
from shared.natsio import message_size

log = logging.getLogger(__name__)


class ConnectError(Exception):
    """NATS could not be reached or refused us; the message is one readable line."""


class CredsFileError(ValueError):
    """``CORTEX_NATS_CREDS`` names a file that is not a user credentials file."""


class ConnectionLost(ConnectError):
    """A command's connection dropped and did not come back within its reconnects."""


# What a request or a JetStream call raises when the connection under it is gone.
LOST_ERRORS = (nats.errors.ConnectionClosedError, nats.errors.NoServersError, nats.errors.StaleConnectionError,
               nats.errors.ConnectionReconnectingError, nats.errors.ConnectionDrainingError,
               nats.errors.TimeoutError, nats.errors.OutboundBufferLimitError, OSError)


def lost_connection(exc: BaseException, nc: Client, url: str) -> ConnectionLost | None:
    """``exc`` raised while ``nc`` is not connected any more: the connection, not the
    command, failed. One line naming the URL (or the list of servers) and the last error the client saw."""
    if nc.is_connected or not isinstance(exc, LOST_ERRORS):
        return None
    last = nc.last_error
    reason = str(last) if last is not None and str(last) else "it dropped and did not come back"
    return ConnectionLost(f"lost the connection to NATS at {redact_url(url)} ({reason}); "
                          "is the server up and reachable?")


class InsecureServerError(nats.errors.Error):
    """TLS was asked for (a ``tls://`` URL or ``CORTEX_NATS_TLS_*``) and the server offers none."""

    def __str__(self) -> str:
        return ("the server does not offer TLS, but a tls:// URL or CORTEX_NATS_TLS_* asks for it: refusing to "
                "connect (the credentials would travel in clear)")


class _CortexClient(Client):
    """nats-py's client with three corrections, all on paths its public API does not reach.

    * **TLS before credentials.** nats-py upgrades to TLS only when the server's INFO requires
      it: with a ``tls://`` URL (or a TLS context) against a server without TLS it would send
      CONNECT, password included, in clear. The INFO line is processed before CONNECT is
      written, so refuse there — on every (re)connect — and upgrade where the server merely
      offers TLS.
    * **Headers count against the max payload.** nats-py compares the payload alone with the
      server's limit; the server counts the header block too and closes the connection when a
      message is over. A publish that would be over raises ``MaxPayloadError`` here instead,
      before anything is sent (``shared.natsio.message_size``).
    * **A server error is a disconnect, not the end.** nats-py closes the connection for good
      on any ``-ERR`` but a stale connection, so one over-size message (the server's "maximum
      payload exceeded") took every worker of a process off NATS for ever. Unless the server
      refused the credentials, reconnect as after any dropped connection.
    * **Acks in one write** (``publish_replies``, used by ``reply_all``): a batch's acks are one
      command in the buffer, not one ``publish`` each.
    * **A lean compare-and-set** (``publish_expecting``, used by ``shared.kv.kv_cas``): a
      document write without ``KeyValue.update``'s layers (a header dict checked and built, a
      request's two futures, the PubAck through ``json`` and a dataclass).
    * **A delivery's headers parsed with the name's whitespace test in C**
      (``_parse_header_lines``): the same dict as nats-py's for every block.
    """

    @staticmethod
    def _parse_header_lines(raw: bytes) -> dict[str, str]:
        """nats-py's ``Client._parse_header_lines`` (2.16: ``Name: Value`` a line, a name that does
        not decode as ASCII or holds whitespace skipped, the value decoded with ``replace``), the
        same dict for every block, with the name's whitespace found by one ``split`` in C where
        nats-py's generator called ``isspace`` a character: every delivery's headers pass here
        (a ``Nats-Msg-Id`` block ~1.5 → ~0.9 µs, each worker's every event; eighteenth round,
        docs/BENCHMARKS.md). An empty line has no ``:`` and is skipped with the others."""
        out: dict[str, str] = {}
        for line in raw.split(b"\r\n"):
            name, sep, value = line.partition(b":")
            if not sep:
                continue
            try:
                key = name.strip().decode("ascii")
            except UnicodeDecodeError:
                continue
            if key and key.split() != [key]:  # whitespace in the name (``str.split``'s is ``isspace``'s)
                continue
            out[key] = value.strip().decode("utf-8", "replace")
        return out

    async def _process_info(self, info: dict[str, Any], initial_connection: bool = False) -> None:
        if initial_connection and self._wants_tls():
            if not (info.get("tls_required") or info.get("tls_available")):
                raise InsecureServerError
            info["tls_required"] = True  # the caller's next step reads it: TLS before CONNECT
        await super()._process_info(info, initial_connection)

    def _wants_tls(self) -> bool:
        server = self._current_server
        return "tls" in self.options or (server is not None and server.uri.scheme == "tls")

    async def publish(self, subject: str, payload: bytes = b"", reply: str = "",
                      headers: dict[str, str] | None = None) -> None:
        if headers and message_size(payload, headers) > self.max_payload:
            raise nats.errors.MaxPayloadError
        await super().publish(subject, payload, reply, headers)

    async def publish_replies(self, replies: Sequence[tuple[str, bytes]]) -> bool:
        """Publish each ``(subject, payload)`` — JetStream acks to the reply subjects of
        delivered messages — as one command in the connection's buffer, where nats-py's
        ``Msg.ack`` is one ``publish`` each (subject checks, a command built, a flush asked).
        False, and nothing sent, when the connection is not up: the caller publishes them one
        by one (nats-py's rules for a reconnecting connection apply there)."""
        if not self.is_connected or self.is_draining_pubs:
            return False
        if not replies:
            return True
        cmd = b"".join(b"PUB %s %d\r\n%s\r\n" % (subject.encode(), len(payload), payload)
                       for subject, payload in replies)
        self.stats["out_msgs"] += len(replies)
        self.stats["out_bytes"] += sum(len(payload) for _, payload in replies)
        await self._send_command(cmd)
        if self._flush_queue is not None and self._flush_queue.empty():
            await self._flush_pending()
        return True

    async def publish_expecting(self, subject: str, payload: bytes, last: int, wait_s: float) -> int:
        """A JetStream publish that the stream takes only if ``subject``'s last sequence is
        ``last`` (a KV compare-and-set), and the sequence it was stored at: what nats-py's
        ``KeyValue.update`` does, for about half its CPU — one command with its one header,
        a future in the request map, the PubAck decoded by msgspec. Raises as ``update`` does:
        ``KeyWrongLastSequenceError`` on a conflict, the ``APIError`` of any other refusal,
        ``NoStreamResponseError`` when no stream takes the subject, nats-py's ``TimeoutError`` after
        ``wait_s``.
        Only for a connection that is up (``kv_cas`` asks ``update`` otherwise)."""
        if not self._resp_sub_prefix:
            await self._init_request_sub()
        assert self._resp_sub_prefix
        token = self._nuid.next().decode()
        header = b"NATS/1.0\r\nNats-Expected-Last-Subject-Sequence: %d\r\n\r\n" % last
        if len(header) + len(payload) > self.max_payload:
            raise nats.errors.MaxPayloadError
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._resp_map[token] = future
        timer = loop.call_later(wait_s, _time_out, future)
        try:
            await self._send_command(b"HPUB %s %s%s %d %d\r\n%s%s\r\n" % (
                subject.encode(), self._resp_sub_prefix, token.encode(), len(header),
                len(header) + len(payload), header, payload))
            self.stats["out_msgs"] += 1
            self.stats["out_bytes"] += len(payload)
            if self._flush_queue is not None and self._flush_queue.empty():
                await self._flush_pending()
            msg = await future
        finally:
            timer.cancel()
            self._resp_map.pop(token, None)
        if msg.headers and msg.headers.get("Status") == "503":
            raise nats.js.errors.NoStreamResponseError
        ack = _PUB_ACK.decode(msg.data)
        if ack.error is not None:
            try:
                raise nats.js.errors.APIError.from_error(ack.error)  # raises the code's own class
            except nats.js.errors.APIError as exc:
                if exc.err_code in (10071, 10164):  # the subject's last sequence is another
                    raise nats.js.errors.KeyWrongLastSequenceError(description=exc.description) from None
                raise
        return ack.seq

    async def _process_err(self, err_msg: str) -> None:
        final = AUTHORIZATION_VIOLATION in err_msg or PERMISSIONS_ERR in err_msg or STALE_CONNECTION in err_msg
        if final or not self.options.get("allow_reconnect") or not self.is_connected:
            await super()._process_err(err_msg)
            return
        self._err = nats.errors.Error(f"nats: {err_msg.strip(chr(39))}")
        await self._error_cb(self._err)
        await self._process_op_err(self._err)  # reconnects (nats-py's path for a dropped connection)


class _PubAck(msgspec.Struct):
    seq: int = 0
    error: dict[str, Any] | None = None


_PUB_ACK = msgspec.json.Decoder(_PubAck)


def _time_out(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(nats.errors.TimeoutError)


ACK = b""  # what nats-py's ``Msg.ack`` publishes (the server reads an empty body as +ACK)
TERM = Msg.Ack.Term
IN_PROGRESS = Msg.Ack.Progress


async def reply_all(marks: Sequence[tuple[Msg, bytes]]) -> None:
    """Answer delivered JetStream messages — ``ACK``, ``TERM`` or ``IN_PROGRESS`` each — in one
    write to their connection when it is up (``_CortexClient.publish_replies``), else one by one.
    Never raises, as the loop's acks never did: a message whose ack is lost is delivered again
    and skipped by the watermarks. A message acked or termed already is left alone (nats-py
    would raise for it), and one acked or termed here is marked so once it is handed over."""
    pending = [(msg, body) for msg, body in marks if msg.reply and not msg._ackd]
    if not pending:
        return
    client = pending[0][0]._client
    sent = False
    if isinstance(client, _CortexClient) and all(msg._client is client for msg, _ in pending):
        with contextlib.suppress(Exception):
            sent = await client.publish_replies([(msg.reply, body) for msg, body in pending])
    for msg, body in pending:
        if not sent:
            try:
                await msg._client.publish(msg.reply, body)
            except Exception:  # the connection's failure: delivered again, skipped then
                continue
        if body != IN_PROGRESS:
            msg._ackd = True


async def _open(opts: dict[str, Any]) -> Client:
    client = _CortexClient()
    await client.connect(**opts)
    return client


DEFAULT_URL = "nats://127.0.0.1:4222"
CONNECT_JITTER = 0.25  # ± a quarter of each wait before a (re)connect attempt


def server_urls(url: str | None) -> list[str]:
    """``CORTEX_NATS_URL`` as the list of servers it names: one URL or a comma-separated list
    (the ``NATS_URL`` convention, e.g. ``nats://n1:4222,nats://n2:4222,nats://n3:4222``)."""
    return [part.strip() for part in (url or "").split(",") if part.strip()] or [DEFAULT_URL]


def _redact_one(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port
    except ValueError:  # not a number: show what was given, without the user info
        port = None
        host = parts.netloc.rpartition("@")[2]
    if port:
        host = f"{host}:{port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def redact_url(url: str) -> str:
    """The URL (or comma-separated list of URLs) without user info, safe for logs."""
    return ",".join(_redact_one(part) for part in server_urls(url))


def _tls_context(settings: Settings) -> ssl.SSLContext | None:
    if not (settings.nats_tls_ca or settings.nats_tls_cert):
        return None
    for var, path in (("CORTEX_NATS_TLS_CA", settings.nats_tls_ca), ("CORTEX_NATS_TLS_CERT", settings.nats_tls_cert),
                      ("CORTEX_NATS_TLS_KEY", settings.nats_tls_key)):
        if path and not os.path.isfile(path):
            raise FileNotFoundError(f"{var}={path}: no such file")
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=settings.nats_tls_ca)
    if settings.nats_tls_cert:
        ctx.load_cert_chain(settings.nats_tls_cert, settings.nats_tls_key)
    return ctx


def _creds_block(lines: list[str], marker: str) -> str:
    """The line after the one holding ``marker`` (how nats-py reads a creds file)."""
    for i, line in enumerate(lines[:-1]):
        if marker in line:
            return lines[i + 1].strip()
    return ""


def check_creds_file(path: str) -> None:
    """A creds file must hold the user JWT and the user nkey seed blocks (``nsc generate creds``).

    nats-py reads the file only when the server asks for a signature, and without those
    blocks it fails with an unrelated ``TypeError`` or, lacking the JWT block, loops
    forever reading past the end of the file: check it before connecting.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"CORTEX_NATS_CREDS={path}: no such file")
    try:
        lines = Path(path).read_text(encoding="ascii").splitlines()
    except UnicodeDecodeError:
        lines = []
    jwt, seed = _creds_block(lines, "BEGIN NATS USER JWT"), _creds_block(lines, "BEGIN USER NKEY SEED")
    if jwt.count(".") != 2 or not seed.startswith("SU"):
        raise CredsFileError(f"CORTEX_NATS_CREDS={path}: not a NATS user credentials file (it needs the "
                             "'BEGIN NATS USER JWT' and 'BEGIN USER NKEY SEED' blocks `nsc generate creds` writes)")


SCHEMES = ("nats", "tls", "ws", "wss")
WEBSOCKET = ("ws", "wss")  # nats-py speaks these only with aiohttp installed (not a Cortex dependency)


class UrlSchemeError(ValueError):
    """A NATS URL with a scheme nats-py does not speak (``http://``): named, not looked up as a host."""


def _speaks_websocket() -> bool:
    import importlib.util

    return importlib.util.find_spec("aiohttp") is not None


def usable_schemes() -> str:
    """The schemes a URL may have here, as the hint of an error names them."""
    if _speaks_websocket():
        return "nats://, tls://, ws:// or wss://"
    return "nats:// or tls://"


def check_url_schemes(url: str) -> None:
    """Every server of the list has a scheme nats-py speaks here and a numeric port (if any)."""
    for part in server_urls(url):
        scheme = urlsplit(part).scheme.lower() if "://" in part else "nats"
        if scheme not in SCHEMES:
            raise UrlSchemeError(f"{redact_url(part)}: unsupported URL scheme {scheme + '://'!r} "
                                 f"(use {usable_schemes()})")
        if scheme in WEBSOCKET and not _speaks_websocket():
            raise UrlSchemeError(f"{redact_url(part)}: a {scheme}:// URL needs the aiohttp package, which is not "
                                 "installed (pip install aiohttp), or use nats:// or tls://")
        try:
            urlsplit(part if "://" in part else f"nats://{part}").port  # noqa: B018 - parses the port
        except ValueError:
            raise UrlSchemeError(f"{redact_url(part)}: the port is not a number (a list of servers is "
                                 "comma-separated: nats://n1:4222,nats://n2:4222)") from None


def connect_options(settings: Settings, name: str) -> dict[str, Any]:
    check_url_schemes(settings.nats_url or "")
    opts: dict[str, Any] = {
        "servers": server_urls(settings.nats_url),
        "name": name,
        "max_reconnect_attempts": -1,
        # nats-py waits the same time between reconnects for ever: each client its own, so that the
        # pods a server restart disconnected do not come back at it in step
        "reconnect_time_wait": round(jittered(1.0, CONNECT_JITTER, random.random()), 3),
        "connect_timeout": 5,
        "allow_reconnect": True,
    }
    if settings.nats_creds:
        check_creds_file(settings.nats_creds)
        opts["user_credentials"] = settings.nats_creds
    if settings.nats_user:
        opts["user"] = settings.nats_user
        opts["password"] = settings.nats_password or ""
    if settings.nats_token:
        opts["token"] = settings.nats_token
    tls = _tls_context(settings)
    if tls is not None:
        opts["tls"] = tls
    return opts


def _refused_credentials(settings: Settings) -> str:
    """Which of the configured credentials the server refused (never their values)."""
    named = []
    if settings.nats_creds:
        named.append(f"the user in CORTEX_NATS_CREDS={settings.nats_creds}")
    if settings.nats_user:
        named.append("CORTEX_NATS_USER/CORTEX_NATS_PASSWORD")
    if settings.nats_token:
        named.append("CORTEX_NATS_TOKEN")
    if any(urlsplit(part).username for part in server_urls(settings.nats_url)):
        named.append("the user info in CORTEX_NATS_URL")
    if not named:
        return ("the server requires credentials and none are set "
                "(CORTEX_NATS_USER/PASSWORD, CORTEX_NATS_TOKEN or CORTEX_NATS_CREDS)")
    return f"the server refused {' and '.join(named)}"


def _describe(exc: BaseException, settings: Settings) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, ModuleNotFoundError) and exc.name == "nkeys":
        return "a credentials file needs the nkeys package (pip install 'nats-py[nkeys]')"
    if "Authorization" in text or "authorization" in text:
        return f"authorization violation: {_refused_credentials(settings)}"
    return text


MISSING_CLIENT_CERT = ("the server requires a TLS client certificate (tls verify) and none is set: "
                       "set CORTEX_NATS_TLS_CERT and CORTEX_NATS_TLS_KEY")


async def _server_requires_client_cert(url: str) -> bool:
    """What the server's INFO line (sent in clear before the TLS handshake) says about ``tls_verify``."""
    parts = urlsplit(url if "://" in url else f"nats://{url}")
    if parts.scheme not in ("nats", "tls") or not parts.hostname:
        return False
    writer = None
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, parts.port or 4222), 2)
        line = await asyncio.wait_for(reader.readline(), 2)
        if not line.startswith(b"INFO "):
            return False
        return bool(json.loads(line[5:]).get("tls_verify"))
    except (OSError, TimeoutError, ValueError):
        return False
    finally:
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def _reason(exc: BaseException, settings: Settings) -> str:
    """One line on why a connect failed.

    A server that requires a client certificate ends the TLS 1.3 handshake only after
    the client has finished its half, so a client without a certificate sees "Connection
    lost", "Broken pipe" or the server's alert, whichever the race gives. The server's
    INFO line says so deterministically: ask it when no client certificate is set.
    """
    text = _describe(exc, settings)
    dropped = isinstance(exc, OSError) and not isinstance(exc, (ConnectionRefusedError, TimeoutError))
    if settings.nats_tls_cert or not (dropped or "EOF" in text) or "certificate verify failed" in text:
        return text
    for server in server_urls(settings.nats_url):
        if await _server_requires_client_cert(server):
            return MISSING_CLIENT_CERT
    return text


async def _probe(opts: dict[str, Any]) -> list[str]:
    """nats-py retries an initial connect forever when reconnects are unlimited: probe once
    without reconnects so a wrong URL or credential fails fast with the real reason. Every
    server of the list is tried (twice); returns the servers the cluster announced."""
    seen: list[Exception] = []

    async def remember(exc: Exception) -> None:
        seen.append(exc)

    try:
        quiet = {k: v for k, v in opts.items() if not k.endswith("_cb")}
        probe = await _open({**quiet, "allow_reconnect": False, "max_reconnect_attempts": 1,
                             "reconnect_time_wait": 0.1, "error_cb": remember})
    except Exception as exc:
        raise (seen[-1] if seen else exc) from exc
    announced = [urlunsplit((srv.scheme, srv.netloc, "", "", "")) for srv in probe.discovered_servers]
    await probe.close()
    return announced


def _with_announced(opts: dict[str, Any], announced: list[str]) -> None:
    """Remember the servers a cluster announced, so a later start-up attempt tries them too
    when every listed one is down. Not with TLS: nats-py verifies an announced IP address
    against the listed host's name only for servers it discovered itself."""
    if "tls" in opts or any(urlsplit(s).scheme in ("tls", "wss") for s in opts["servers"]):
        return
    listed = {urlsplit(s if "://" in s else f"nats://{s}").netloc.rpartition("@")[2] for s in opts["servers"]}
    opts["servers"] = [*opts["servers"], *(a for a in announced if urlsplit(a).netloc not in listed)]


def _current(nc: Client | None) -> str:
    """The server a connection is on now (for logs), or "" when it is on none."""
    server = nc.connected_url if nc is not None else None
    return redact_url(urlunsplit((server.scheme, server.netloc, "", "", ""))) if server else ""


def _checked_options(settings: Settings, name: str) -> dict[str, Any]:
    try:
        return connect_options(settings, name)
    except (OSError, ssl.SSLError, CredsFileError, UrlSchemeError) as exc:
        raise ConnectError(f"cannot connect to NATS: {exc}") from exc


def _error_logger(settings: Settings, on_error: Any, level: int = logging.WARNING) -> Any:
    async def error_cb(exc: Exception) -> None:
        log.log(level, "nats_error", extra={"error": _describe(exc, settings)})
        if on_error:
            on_error(exc)

    return error_cb


def _closed_logger(url: str, on_closed: Any) -> Any:
    async def closed_cb() -> None:
        log.debug("nats_closed", extra={"url": url})
        if on_closed:
            on_closed()

    return closed_cb


async def _stopped_during(delay: float, stop: asyncio.Event | None) -> bool:
    """Wait ``delay`` before the next attempt; True when ``stop`` was set meanwhile."""
    if stop is None:
        await asyncio.sleep(delay)
        return False
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=delay)
    return stop.is_set()


CLI_RECONNECTS = 3  # a command's connection tries this many reconnects (~1 s apart), then it is closed


class _DropLimit:
    """Closes a connection dropped more than ``limit`` times (-1: never). nats-py counts
    reconnect attempts per server and forgets them at every completed handshake, so against
    a server that accepts and drops each connection ``max_reconnect_attempts`` never ran out:
    a command reconnected until a request of its timed out (or for ever, if it waited without
    one). Counting the drops themselves bounds it; the pending request then fails at once."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self.closing: asyncio.Task[None] | None = None  # referenced, so not collected mid-way

    def dropped(self, nc: Client | None) -> None:
        if self.limit < 0 or nc is None or nc.is_closed or self.closing is not None:
            return
        self.count += 1
        if self.count > self.limit:
            self.closing = asyncio.create_task(nc.close(), name="nats-close-after-drops")


async def connect(settings: Settings, name: str, *, retry_forever: bool = False,
                  on_state: Any = None, stop: asyncio.Event | None = None, inbox_prefix: str | None = None,
                  on_error: Any = None, max_reconnects: int | None = None, on_closed: Any = None) -> Client:
    """Connect to NATS. CLI commands fail fast; workers (``retry_forever``) keep trying.

    Once connected, a worker's connection reconnects forever; a command's only
    ``CLI_RECONNECTS`` times (``max_reconnects`` overrides, -1: forever): a server that
    accepts and then drops every connection closes it, and the command ends with one line
    (``ConnectionLost``) instead of retrying for ever. ``inbox_prefix`` (e.g. ``_INBOX_<agent>``)
    lets a user confined to one agent receive its replies without a permission on anyone
    else's; ``on_error`` sees each error the server reports asynchronously (a permissions
    violation, say); ``on_closed`` is called once the connection is closed for good."""
    url = redact_url(settings.nats_url or DEFAULT_URL)

    error_cb = _error_logger(settings, on_error, logging.WARNING if retry_forever else logging.DEBUG)
    holder: list[Client] = []
    if max_reconnects is None:
        max_reconnects = -1 if retry_forever else CLI_RECONNECTS
    drops = _DropLimit(max_reconnects)

    async def disconnected_cb() -> None:
        closing = not retry_forever or (bool(holder) and (holder[0].is_closed or holder[0].is_draining))
        log.log(logging.DEBUG if closing else logging.WARNING, "nats_disconnected", extra={"url": url})
        if on_state:
            on_state(False)
        drops.dropped(holder[0] if holder else None)

    async def reconnected_cb() -> None:
        log.info("nats_reconnected", extra={"url": url, "server": _current(holder[0] if holder else None)})
        if on_state:
            on_state(True)

    opts = _checked_options(settings, name)
    opts["max_reconnect_attempts"] = max_reconnects
    opts.update({"inbox_prefix": inbox_prefix} if inbox_prefix else {})
    opts.update(error_cb=error_cb, disconnected_cb=disconnected_cb,
                reconnected_cb=reconnected_cb, closed_cb=_closed_logger(url, on_closed))
    attempt = 0
    while True:
        attempt += 1
        try:
            _with_announced(opts, await _probe(opts))
            nc = await _open(opts)
            holder.append(nc)
            log.log(logging.INFO if retry_forever else logging.DEBUG, "nats_connected",
                    extra={"url": url, "server": _current(nc)})
            if on_state:
                on_state(True)
            return nc
        except Exception as exc:
            reason = await _reason(exc, settings)
            if not retry_forever:
                raise ConnectError(f"cannot connect to NATS at {url}: {reason}") from exc
            delay = round(jittered(backoff_delay(attempt, 0.5, 10.0), CONNECT_JITTER, random.random()), 3)
            log.warning("nats_connect_failed", extra={"url": url, "error": reason, "retry_in_s": delay})
            if await _stopped_during(delay, stop):  # SIGTERM while NATS is unreachable
                raise ConnectError(f"stopped while connecting to NATS at {url}") from exc
