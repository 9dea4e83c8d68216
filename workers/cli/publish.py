"""``cortex publish FILE|-``: events from JSON lines, validated with the workers' own decoder.

A file is read as fast as the stream acknowledges it. Standard input may be a live producer
(``tail -f events.jsonl | cortex publish -``): a line is published the moment it arrives and
acknowledged before the command waits for more, so nothing sits in a buffer through a quiet
spell; the input is waited for on the event loop (a read blocking the loop held back the
line before it, the acknowledgements and Ctrl-C).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import difflib
import os
import stat
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any, BinaryIO

import msgspec
import nats.js.errors

from schemas.events import is_valid_agent
from shared.codec import Limits, Rejection, decode_event, event_limits, event_subject, nesting_depth, rejection_reason
from shared.config import Settings
from shared.names import KINDS, stored_form
from workers.cli.base import CliError
from workers.cli.common import NATS_URL_HELP, connected

CHUNK = 1 << 16
SETTLE_EVERY = 1000  # acknowledgements awaited at least this often (a file read at full speed)
ACK_TIMEOUT_S = 10.0
STDIN_HINT = "cortex publish: reading JSON lines from stdin, Ctrl-D to end"


def register(sub: Any) -> None:
    pub = sub.add_parser("publish", help="publish events from a JSON-lines file (- for stdin)",
                         description="Publish events, one JSON object a line; each line's subject comes from its "
                                     "\"type\" (msg.received, session.start, …) or its shape. Reports published, "
                                     "duplicate and rejected lines; exits 1 when a line was rejected.")
    pub.add_argument("file", help="JSON lines, one event per line; '-' reads stdin as lines arrive "
                                  "(a live producer: each line is published when it comes)")
    pub.add_argument("--timeout", type=float, default=ACK_TIMEOUT_S, metavar="SECONDS",
                     help=f"how long to wait for the stream to acknowledge a line before reporting it "
                          f"(default {ACK_TIMEOUT_S:g})")
    pub.add_argument("--nats-url", help=NATS_URL_HELP)
    pub.set_defaults(handler=cmd_publish)


class PublishReport(msgspec.Struct, kw_only=True):
    published: int = 0
    duplicates: int = 0
    rejected: list[tuple[int, str]] = msgspec.field(default_factory=list)

    def summary(self) -> str:
        lines = f" (lines {', '.join(str(n) for n, _ in self.rejected)})" if self.rejected else ""
        return f"published {self.published}, duplicates {self.duplicates}, rejected {len(self.rejected)}{lines}"


# what a line's "type" may say: every family's kinds, and the contract's three-token notes
EVENT_TYPES: tuple[str, ...] = (*(f"{family}.{kind}" for family, kinds in KINDS.items() for kind in sorted(kinds)),
                                "notes")
_TYPES_SHOWN = ", ".join([*(t for t in EVENT_TYPES if not t.startswith(("feedback.", "notes."))),
                          f"feedback.<kind> ({', '.join(sorted(KINDS['feedback']))})"])


def _shown(value: object) -> str:
    """A value as the line wrote it (JSON)."""
    return msgspec.json.encode(value).decode()


def _type_problem(told: object) -> str | None:
    """Why a line's ``"type"`` names no event type (as the user wrote it), or None."""
    if told is None or (isinstance(told, str) and told in EVENT_TYPES):
        return None
    shown = _shown(told)
    close = difflib.get_close_matches(told, EVENT_TYPES, n=1) if isinstance(told, str) else []
    hint = f"did you mean {close[0]}? " if close else ""
    return f"\"type\": {shown} is not an event type ({hint}one of {_TYPES_SHOWN})"


def _subject_problem(prefix: str, subject: object) -> str | None:
    """Why a line's own ``"subject"`` is no publish subject, in the form it was written, or None."""
    tokens = subject.split(".") if isinstance(subject, str) else []
    if len(tokens) == 3 and tokens[0] == prefix and tokens[1] == "notes" and is_valid_agent(tokens[2]):
        return None
    if (len(tokens) == 4 and tokens[0] == prefix and tokens[2] and is_valid_agent(tokens[2])
            and tokens[3] in KINDS.get(tokens[1], ())):
        return None
    return (f"\"subject\": {_shown(subject)} is no event subject (expected {prefix}.<family>.<agent>."
            f"<kind>, e.g. {prefix}.msg.<agent>.received; or leave it out and say \"type\")")


def _subject(payload: dict[str, Any], settings: Settings) -> str:
    """The line's subject (its own, or derived), or ``_Rejected`` saying why there is none."""
    if "subject" in payload:
        subject = payload.pop("subject")
        if (problem := _subject_problem(settings.prefix, subject)) is not None:
            raise _Rejected(problem)
        return str(subject)
    if (problem := _type_problem(payload.get("type"))) is not None:
        raise _Rejected(problem)
    agent = payload.get("agent")
    if isinstance(agent, str) and not is_valid_agent(agent):
        raise _Rejected(f"\"agent\": {_shown(agent)} is no agent id (expected ^[A-Za-z0-9_-]{{1,64}}$)")
    subject = event_subject(settings.prefix, payload)
    if subject is None:
        raise _Rejected("cannot tell the subject: add \"type\" (e.g. \"msg.received\")")
    tokens = subject.split(".")  # prefix, family, agent (checked above: no dots), kind
    kind = ".".join(tokens[3:])
    if tokens[1] == "feedback" and kind not in KINDS["feedback"]:  # told by "kind", not by "type"
        raise _Rejected(f"\"kind\": {_shown(kind)} is no feedback kind (one of "
                        f"{', '.join(sorted(KINDS['feedback']))})")
    return subject


class _Rejected(Exception):
    """A line's reason for rejection, found before the decoder."""


def _prepare_line(line: bytes, settings: Settings, limits: Limits) -> tuple[str, bytes, str] | str:
    """``(subject, payload, event id)`` for one line, or why it is rejected — in the terms the
    line used (its "type", its "subject"), never the stored subject the decoder reads."""
    depth = nesting_depth(line)
    if depth > limits.max_depth:
        return f"JSON nested too deeply: {depth} levels > {limits.max_depth}"
    line.decode()  # invalid UTF-8 raises here, with the byte it is at
    payload = msgspec.json.decode(line)
    if not isinstance(payload, dict):
        return "not a JSON object"
    try:
        subject = _subject(payload, settings)
    except _Rejected as why:
        return str(why)
    data = msgspec.json.encode(payload)
    stored = stored_form(settings.prefix, subject)
    decoded = decode_event(settings.prefix, stored, 0, data, limits)
    if isinstance(decoded, Rejection):
        return decoded.reason.replace(stored, subject)
    return subject, data, decoded.event.id


def prepare_line(number: int, line: bytes, settings: Settings, limits: Limits,
                 report: PublishReport) -> tuple[str, bytes, str] | None:
    """Validate one line with the workers' own decoder: (subject, payload, id), or None (blank,
    or rejected: recorded in ``report`` with its reason).

    Total: whatever a line holds (invalid UTF-8, nesting 1000 deep, a field over its limit)
    it is reported as rejected with a reason and the next line is read."""
    if not line.strip():
        return None
    try:
        prepared = _prepare_line(line, settings, limits)
    except msgspec.DecodeError as exc:
        prepared = f"malformed JSON: {exc}"
    except Exception as exc:  # untrusted input: every failure is this line's
        prepared = rejection_reason(exc)
    if isinstance(prepared, str):
        report.rejected.append((number, prepared))
        return None
    return prepared


def prepare_lines(
    lines: Iterable[bytes], settings: Settings, report: PublishReport
) -> Iterator[tuple[int, str, bytes, str]]:
    """``prepare_line`` over ``lines``: (line number, subject, payload, id) of the good ones."""
    limits = event_limits(settings)
    for number, line in enumerate(lines, start=1):
        prepared = prepare_line(number, line, settings, limits, report)
        if prepared is not None:
            yield number, *prepared


def _open(path: str) -> BinaryIO:
    """The file as bytes: a line that is not UTF-8 is that line's problem, not the file's."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from exc


def _waits(stream: BinaryIO) -> bool:
    """Can a read of ``stream`` wait for a writer (a pipe, a terminal, a socket)? A regular
    file's read never does (and the event loop cannot watch one)."""
    try:
        return not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError):
        return False


async def _readable(fd: int) -> None:
    """Until ``fd`` has data or its end (on the loop: a pending Ctrl-C cancels the wait)."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


async def chunks(stream: BinaryIO) -> AsyncIterator[bytes]:
    """The stream's bytes as they come; a read that would wait is waited for on the event
    loop, then reads what is there (the file stays blocking: it is shared with the shell)."""
    fd = stream.fileno()
    waits = _waits(stream)
    while True:
        if waits:
            try:
                await _readable(fd)
            except (PermissionError, OSError):  # not watchable after all (epoll refuses it): plain reads
                waits = False
        chunk = os.read(fd, CHUNK)
        if not chunk:
            return
        yield chunk


async def numbered_lines(stream: BinaryIO) -> AsyncIterator[tuple[int, bytes, bool]]:
    """(line number, line, whether more input is already here) for every line; the last
    line counts without its newline. ``False`` says the reader would wait next: the moment
    to have everything published acknowledged."""
    number = 0
    rest = b""
    async for chunk in chunks(stream):
        *complete, rest = (rest + chunk).split(b"\n")
        for i, line in enumerate(complete):
            number += 1
            yield number, line, i + 1 < len(complete)
    if rest:
        yield number + 1, rest, False


class Acks:
    """The acknowledgements still to come, each with its line; settled in one wait with a
    deadline (a future nobody answers was waited for forever)."""

    def __init__(self, report: PublishReport, timeout_s: float) -> None:
        self.report = report
        self.timeout_s = timeout_s
        self.pending: list[tuple[int, asyncio.Future[Any]]] = []

    def add(self, number: int, fut: asyncio.Future[Any]) -> None:
        self.pending.append((number, fut))

    async def settle(self) -> None:
        pending, self.pending = self.pending, []
        if not pending:
            return
        await asyncio.wait([f for _, f in pending], timeout=self.timeout_s)
        for number, fut in pending:
            self._count(number, fut)

    def _count(self, number: int, fut: asyncio.Future[Any]) -> None:
        if not fut.done():
            fut.cancel()  # gives back its place among nats-py's pending publishes
            self.report.rejected.append((number, f"no acknowledgement within {self.timeout_s:g} s (publishing the "
                                                 "line again is safe: its id deduplicates for 2 minutes)"))
            return
        exc = fut.exception()
        if isinstance(exc, nats.js.errors.NoStreamResponseError):
            raise CliError("no stream for cortex events: run `cortex init` first") from exc
        if exc is not None:
            self.report.rejected.append((number, f"publish failed: {exc}"))
        elif fut.result().duplicate:
            self.report.duplicates += 1
        else:
            self.report.published += 1


async def publish_stream(js: Any, stream: BinaryIO, settings: Settings, acks: Acks) -> None:
    limits = event_limits(settings)
    async for number, line, more in numbered_lines(stream):
        prepared = prepare_line(number, line, settings, limits, acks.report)
        if prepared is not None:
            subject, data, event_id = prepared
            acks.add(number, await js.publish_async(subject, data, headers={"Nats-Msg-Id": event_id}))
        if not more or len(acks.pending) >= SETTLE_EVERY:
            await acks.settle()
    await acks.settle()


def _report(report: PublishReport, interrupted: bool = False) -> None:
    for number, reason in report.rejected:
        print(f"line {number}: rejected: {reason}", file=sys.stderr)
    print(report.summary() + (" before Ctrl-C" if interrupted else ""), file=sys.stderr if interrupted else sys.stdout)


async def cmd_publish(args: argparse.Namespace, settings: Settings) -> int:
    if not 0 < args.timeout <= 600:
        raise CliError(f"--timeout {args.timeout:g}: expected seconds between 0 and 600")
    report = PublishReport()
    stream = _open(args.file)
    try:
        async with connected(settings, args.nats_url) as nc:
            if stream is sys.stdin.buffer and _at_a_terminal(stream):
                print(STDIN_HINT, file=sys.stderr, flush=True)
            try:
                await publish_stream(nc.jetstream(), stream, settings, Acks(report, args.timeout))
            except asyncio.CancelledError:  # Ctrl-C: say what got in, then stop as asked
                _report(report, interrupted=True)
                raise
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    _report(report)
    return 1 if report.rejected else 0


def _at_a_terminal(stream: BinaryIO) -> bool:
    with contextlib.suppress(ValueError, OSError):
        return stream.isatty()
    return False
