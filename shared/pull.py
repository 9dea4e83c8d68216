"""Pull batches from a durable JetStream consumer without nats-py's per-message waits.

nats-py's ``PullSubscription.fetch`` awaits every message separately (an
``asyncio.wait_for`` per message) and, once the consumer is caught up, holds a batch
open until it is full or the fetch timeout ends: a single new event waits up to the
whole timeout (1 s by default) before a worker sees it. Measured on the benchmark's
backlog (docs/BENCHMARKS.md) the fetch alone was half of a worker's CPU.

``PullFetcher`` speaks the same pull protocol (``$JS.API.CONSUMER.MSG.NEXT``) on its
own inbox subscription: messages are appended to a buffer by the subscription's
callback and a fetch takes whatever is there. At most one pull request is open at a
time; it ends when the server has delivered its batch or sent a status (404 no
messages, 408 expired, 409 conflict) — or, if a reconnect lost that status, when its
``expires`` has passed. Every request gets its own reply subject (``<inbox>.<n>``), so
the status that ends an earlier request — late when the loop was busy — never ends the
one that is open now (a worker stopping on that mistake left a whole batch unacked). A
fetch returns once messages are in hand and two event-loop
turns brought no more (no timer), so a caught-up worker sees a new event at once while
a backlog still comes in full batches; what the open request delivers later is taken by
the next fetch, in stream order (one inbox, one request at a time).

A fetch with a ``linger_s`` (the throughput workers': ``CORTEX_RUNTIME_THROUGHPUT_LINGER_MS``)
asks, while idle, for one message; once it is in hand the fetch sleeps up to ``linger_s`` — no
request open, so no delivery wakes the process — and then asks for everything stored meanwhile
without waiting (``no_wait``), which the server sends back to back. A worker whose events come one
at a time at live rates takes them a few at a time, and pays its per-batch work (the wake-ups, a
commit, the checkpoint and the acks) once for all of them: measured at 100 msg/s, the throughput
workers' CPU per event fell by ~40 % (docs/BENCHMARKS.md, issue 39, fourteenth round). A lone
event is returned at the linger's end; a request for many still open (a backlog's) is taken from
as it delivers, and ends the linger when ``enough`` are in hand.

A trigger published (a session start: ``wake_on``, the published subjects of the events that
composed documents are made for) ends a linger at once and keeps the fetches from lingering for
``URGENT_S`` after it: a session start waits for every source to apply the events before it
(``workers.boot.early``), so a source must not sleep on them — and with that, the linger need not
be short for the briefing's sake (issue 39, seventeenth round). The wake is a core subscription:
the server sends a fetcher the few triggers, never the events between them.

The messages are ordinary ``nats.aio.msg.Msg`` objects: ``ack``, ``nak``, ``term`` and
``metadata`` work as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque

import msgspec
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js.client import JetStreamContext

from shared.natsio import api_prefix, connection

_STATUS = "Status"
_HEARTBEAT = "100"
_REQUEST_ENDED = frozenset({"404", "408", "409"})
_IDLE_TURNS = 2  # event-loop turns without a new message before a partial batch is taken
_EXPIRY_SLACK_S = 0.5  # after a request's expiry, how long a missing 408 may still arrive
_STOP_WAIT_S = 2.0  # at most this long a stop waits for the open request's last deliveries
# after a trigger is published (``wake_on``), the fetches take what they find without lingering
# this long: the trigger's own store may follow its core delivery by a moment
URGENT_S = 0.05


_V1_ACK_TOKENS = 9  # $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<ts>.<pending>


def _ack_token(msg: Msg, index: int) -> int | None:
    """Token ``index`` of the message's v1 ack subject: one split, instead of nats-py's whole
    metadata (a dataclass and a datetime per message, ~6 % of a regex worker's loop)."""
    reply = msg.reply or ""
    if reply.startswith("$JS.ACK."):
        tokens = reply.split(".")
        if len(tokens) == _V1_ACK_TOKENS:
            return int(tokens[index])
    return None  # the domain form (and anything else): nats-py parses it


def stream_seq(msg: Msg) -> int:
    """The message's stream sequence."""
    seq = _ack_token(msg, 5)
    return int(msg.metadata.sequence.stream) if seq is None else seq


def pending_after(msg: Msg) -> int:
    """How many messages the consumer had still to deliver after this one, as it was sent."""
    pending = _ack_token(msg, 8)
    return int(msg.metadata.num_pending or 0) if pending is None else pending


def consumer_seq(msg: Msg) -> int:
    """The message's delivery number on its consumer (one more for every message the server
    hands out, redeliveries included)."""
    seq = _ack_token(msg, 6)
    return int(msg.metadata.sequence.consumer) if seq is None else seq


class PullRequest(msgspec.Struct, omit_defaults=True):
    batch: int
    expires: int | None = None  # nanoseconds
    no_wait: bool = False


_ENCODE = msgspec.json.Encoder().encode


class PullFetcher:
    """Batches from ``stream``/``consumer``; ``start`` before the first ``fetch``, ``stop`` after."""

    def __init__(self, nc: Client, stream: str, consumer: str, prefix: str = "$JS.API",
                 wake_on: tuple[str, ...] = ()) -> None:
        self._nc = nc
        self._wake_on = wake_on  # core subjects whose publishes end a linger (triggers)
        self._wakes: list[Subscription] = []
        self._urgent_until = 0.0  # until then no fetch lingers (a trigger was published)
        self._next = f"{prefix}.CONSUMER.MSG.NEXT.{stream}.{consumer}"
        self._inbox = ""
        self._sub: Subscription | None = None
        self._buffer: deque[Msg] = deque()
        self._arrived = asyncio.Event()
        self._request_no = 0  # the open (or last) request replies to <inbox>.<request_no>
        self._open = 0  # messages the open request may still deliver; 0 = no request open
        self._open_until = 0.0  # monotonic time after which the open request is surely over
        self._error: Msg | None = None
        # while a fetch lingers: wakes it when the buffer holds ``_want`` messages, the open
        # request ends or an error arrives (not at every message: the linger is a timer)
        self._want = 0
        self._filled = asyncio.Event()
        self._ends = 0  # requests the server ended with a status (404, 408, 409, an error)
        self._hurried = False  # ``hurry``: no fetch lingers any more
        self.wakes = 0  # triggers seen on ``wake_on``

    async def start(self) -> None:
        self._inbox = self._nc.new_inbox()
        self._sub = await self._nc.subscribe(f"{self._inbox}.*", cb=self._on_message)
        for subject in self._wake_on:
            self._wakes.append(await self._nc.subscribe(subject, cb=self._on_wake))

    async def stop(self) -> None:
        """Give back (nak) every message delivered but not taken, so a stopping worker
        leaves nothing unacked.

        First the open request is waited out — until its end arrives or it expires, at most
        ``_STOP_WAIT_S`` — without giving anything back: a message nak'd while a request is
        open is redelivered at once to that same request. Then the subscription is drained
        (what is already on its way through the client still arrives) and everything held
        is nak'd. A fetch's ``wait_s`` is its request's lifetime, so fetches shorter than
        ``_STOP_WAIT_S`` are always waited out."""
        if self._sub is None:
            return
        await self._unwake()
        until = min(self._open_until, time.monotonic() + _STOP_WAIT_S)
        with contextlib.suppress(Exception):
            while self._open and (remaining := until - time.monotonic()) > 0:
                self._arrived.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        await self._arrived.wait()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_STOP_WAIT_S):
                await self._sub.drain()  # type: ignore[no-untyped-call]
        self._sub = None
        await self._give_back()

    async def abandon(self) -> None:
        """Stop at once, giving nothing back: for a consumer that acks nothing (``AckPolicy.NONE``),
        whose deliveries no one waits for."""
        sub, self._sub = self._sub, None
        self._buffer.clear()
        self._open = 0
        await self._unwake()
        if sub is not None:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def _unwake(self) -> None:
        wakes, self._wakes = self._wakes, []
        for wake in wakes:
            with contextlib.suppress(Exception):
                await wake.unsubscribe()

    async def _on_wake(self, msg: Msg) -> None:
        """A trigger was published: a linger ends now, and none starts for ``URGENT_S``."""
        self._urgent_until = time.monotonic() + URGENT_S
        self.wakes += 1
        if self._want:
            self._filled.set()

    def _urgent(self) -> bool:
        return time.monotonic() < self._urgent_until

    async def _give_back(self) -> None:
        while self._buffer:
            with contextlib.suppress(Exception):
                await self._buffer.popleft().nak()

    async def _on_message(self, msg: Msg) -> None:
        status = msg.headers.get(_STATUS) if msg.headers else None
        if status is None or msg.data:
            self._buffer.append(msg)
            if self._open:
                self._open -= 1
        elif status == _HEARTBEAT:
            return
        elif msg.subject != f"{self._inbox}.{self._request_no}":
            return  # the end of an earlier request, already given up on: not the open one's
        else:
            self._open = 0  # the request is over, whatever the status says
            self._ends += 1
            if status not in _REQUEST_ENDED:
                self._error = msg
        self._arrived.set()
        if self._want and (len(self._buffer) >= self._want or not self._open or self._error is not None):
            self._filled.set()

    def hurry(self) -> None:
        """Its owner stops: from now on no fetch waits — one lingering returns what it holds, one
        waiting for a first message returns none (a stop no longer waits for the idle tick)."""
        self._hurried = True
        self._filled.set()
        self._arrived.set()

    def buffered(self) -> list[Msg]:
        """The messages delivered and not taken yet (a heartbeat keeps them from their ack wait)."""
        return list(self._buffer)

    def _take(self, batch: int) -> list[Msg]:
        buffer = self._buffer
        count = min(batch, len(buffer))
        return [buffer.popleft() for _ in range(count)]

    def _raise_error(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise nats.js.errors.APIError.from_msg(error)

    async def fetch(self, batch: int, wait_s: float, linger_s: float = 0.0, enough: int | None = None) -> list[Msg]:
        """Up to ``batch`` messages; an empty list when none arrived within ``wait_s``. With
        ``linger_s``, once a message is in hand, more are waited for up to that long, or until
        ``enough`` (at most ``batch``; default ``batch``) are in hand, before they are taken.

        Raises the server's error for a status other than 404/408/409 (503: no
        JetStream responders), like nats-py's fetch.
        """
        if self._sub is None:
            raise RuntimeError("PullFetcher.start() first")
        deadline = time.monotonic() + wait_s
        lingering = linger_s > 0 and not self._hurried
        while True:
            self._raise_error()
            if self._buffer:
                await self._gather(batch)
                want = batch if enough is None else max(1, min(enough, batch))
                if lingering and len(self._buffer) < want:  # urgent (a trigger): no sleep, the rest asked at once
                    await self._linger(batch, want, linger_s, max(wait_s, linger_s))
                return self._take(batch)
            if self._hurried:
                return []
            now = time.monotonic()
            if self._open and now > self._open_until:
                self._open = 0  # its 408 was lost (a reconnect): the server has forgotten it
            if not self._open:  # lingering: one message wakes it, the linger asks for the rest
                await self._request(1 if lingering else batch, max(0.01, deadline - now))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return []
            self._arrived.clear()
            if self._buffer or self._error is not None:
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._arrived.wait()
            if not self._buffer and self._error is None and time.monotonic() >= deadline:
                return []

    async def poll(self, batch: int, expires_s: float) -> list[Msg]:
        """Up to ``batch`` messages that have arrived, without waiting; when fewer did and no
        request is open, one is opened for the rest (lasting ``expires_s``), so the next poll
        finds them. What a consume loop that holds messages already reads ahead with."""
        self._raise_error()
        taken = self._take(batch)
        await self.ask(batch - len(taken), expires_s)
        return taken

    async def ask(self, room: int, expires_s: float) -> None:
        """Have up to ``room`` messages (those buffered included) on their way: a request for
        the rest when none is open. What arrives while the caller is busy is at hand after."""
        if self._open and time.monotonic() > self._open_until:
            self._open = 0  # its 408 was lost (a reconnect): the server has forgotten it
        if not self._open and room > len(self._buffer):
            await self._request(room - len(self._buffer), expires_s)

    async def _gather(self, batch: int) -> None:
        """While an open request is still delivering (a backlog), let what is already on
        the socket arrive before taking a batch: a few event-loop turns, no timer, so a
        lone live event is not delayed but a backlog comes in full batches."""
        idle = 0
        while self._open and len(self._buffer) < batch and idle < _IDLE_TURNS:
            before = len(self._buffer)
            await asyncio.sleep(0)
            idle = idle + 1 if len(self._buffer) == before else 0

    async def _linger(self, batch: int, want: int, linger_s: float, expires_s: float) -> None:
        """Wait up to ``linger_s`` for ``want`` messages in hand, then ask for what came meanwhile.

        While the open request still delivers (one asked for many: a backlog's), its messages are
        taken as they come. Once none is open — a lingering fetch asks for one message at a time
        while idle — the rest of the linger is a timer: nothing is delivered, so nothing wakes the
        process, and at its end one request without waiting (``no_wait``) for up to ``batch`` brings
        everything that was stored meanwhile, back to back — read in a few socket reads instead of
        one wake-up each; the fetch returns once ``want`` are in hand or the server has ended it
        (what it still delivers, a backlog's rest, the next fetch or poll takes). No sleep when a
        batch is stored already (the last message says how many follow it): a backlog is not held
        back. Ends early on ``hurry`` or a server error (raised by the next fetch); a cancellation
        leaves what arrived in the buffer, which ``stop`` gives back."""
        deadline = time.monotonic() + linger_s
        self._want = want
        try:
            while not self._enough(want) and not self._batch_stored(want) and not self._urgent():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                if self._open and time.monotonic() > self._open_until:
                    self._open = 0  # its 408 was lost (a reconnect): the server has forgotten it
                self._filled.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        await self._filled.wait()
            if self._open or self._enough(want):
                return
            ends = self._ends
            await self._request(batch - len(self._buffer), expires_s, no_wait=True)
            until = self._open_until
            while self._open and self._ends == ends and not self._enough(want):
                self._filled.clear()
                remaining = until - time.monotonic()
                if remaining <= 0:
                    self._open = 0  # its end was lost (a reconnect): the server has forgotten it
                    return
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        await self._filled.wait()
        finally:
            self._want = 0

    def _batch_stored(self, want: int) -> bool:
        """Are ``want`` messages at hand or stored behind the last one (the consumer behind by a
        batch or more: nothing to wait for)? A few stored behind it still linger for more."""
        buffer = self._buffer
        return bool(buffer) and len(buffer) + pending_after(buffer[-1]) >= want

    def _enough(self, want: int) -> bool:
        return len(self._buffer) >= want or self._error is not None or self._hurried

    async def _request(self, batch: int, expires_s: float, *, no_wait: bool = False) -> None:
        """A pull request for ``batch`` messages lasting ``expires_s``; ``no_wait``: ended by the
        server as soon as it has delivered what it holds (``expires_s`` then bounds only how long
        its end is waited for)."""
        self._request_no += 1
        self._open = batch
        self._open_until = time.monotonic() + expires_s + _EXPIRY_SLACK_S
        request = (PullRequest(batch=batch, no_wait=True) if no_wait
                   else PullRequest(batch=batch, expires=int(expires_s * 1e9)))
        await self._nc.publish(self._next, _ENCODE(request), reply=f"{self._inbox}.{self._request_no}")


def fetcher_for(js: JetStreamContext, stream: str, consumer: str, wake_on: tuple[str, ...] = ()) -> PullFetcher:
    """A fetcher on the connection and API prefix of ``js`` (nats-py keeps both private)."""
    return PullFetcher(connection(js), stream, consumer, prefix=api_prefix(js), wake_on=wake_on)
