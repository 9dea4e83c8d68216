"""The one place nats-py's internals are reached.

nats-py keeps a JetStream context's connection and API prefix private (``_nc``,
``_prefix``), a key-value handle's context and bucket (``KeyValue._js``, ``_name``), and
the server's INFO too (``Client._server_info``); Cortex needs them for
requests the library does not make (a direct get up to a sequence, stream info by subject,
its own pull fetcher) and to size values below the server's max payload. Every module goes
through these functions; ``tests/shared/test_natsio.py`` fails when an upgrade of nats-py
moves what they read, so CI catches it rather than a worker at run time.

One more place reaches inside nats-py, by design: ``shared.connection._CortexClient``, the client
subclass, publishes a batch of acks and a KV compare-and-set through the client's own send buffer
and request map (``_send_command``, ``_resp_map``) and marks messages acked (``Msg._ackd``);
``tests/shared/test_kv_cas.py`` and ``tests/shared/test_replies.py`` fail when an upgrade moves those.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue, _is_key_valid


def connection(js: JetStreamContext) -> Client:
    """The connection a JetStream context was made from."""
    nc: Client = js._nc
    return nc


def api_prefix(js: JetStreamContext) -> str:
    """The context's JetStream API prefix: ``$JS.API``, ``$JS.<domain>.API`` or the one given."""
    prefix: str = js._prefix
    return prefix


def kv_location(kv: KeyValue) -> tuple[JetStreamContext, str]:
    """The JetStream context a key-value handle was opened on and its bucket's name."""
    js: JetStreamContext = kv._js
    bucket: str = kv._name
    return js, bucket


def kv_writer(kv: KeyValue) -> tuple[Client, str, float]:
    """What a write to a key-value handle goes through: the connection, the subject prefix its
    keys are put under (``$KV.<bucket>.``, or the domain's or the mirror's) and the context's
    request timeout — ``shared.kv.kv_cas``'s lean compare-and-set publishes there itself."""
    js: JetStreamContext = kv._js
    prefix: str = kv._pre
    timeout: float = js._timeout
    return connection(js), prefix, timeout


def kv_key_valid(key: str) -> bool:
    """Whether nats-py's own key check (``KeyValue.put``/``update``) accepts ``key``."""
    return bool(_is_key_valid(key))


def server_info(nc: Client) -> dict[str, Any]:
    """The INFO of the server the connection talks to ({} before it connected)."""
    info: dict[str, Any] | None = getattr(nc, "_server_info", None)
    return info or {}


def max_payload(js: JetStreamContext | None, default: int) -> int:
    """The largest message the connected server takes; ``default`` without a connection
    (a handler made for a test without a server)."""
    nc = getattr(js, "_nc", None)
    return int(nc.max_payload) if isinstance(nc, Client) else default


_HEADER_LINE = len(b"NATS/1.0\r\n")


def message_size(payload: bytes, headers: Mapping[str, str] | None) -> int:
    """What the server counts against its max payload for one publish: the payload and, when
    there are headers, the whole header block (``NATS/1.0``, one ``key: value`` line each and
    the blank line), as nats-py writes it. nats-py itself compares the payload alone, so a
    message with headers just under the limit went out and the server closed the connection."""
    if not headers:
        return len(payload)
    lines = sum(len(k.strip().encode()) + len(v.strip().encode()) + 4 for k, v in headers.items() if k.strip())
    return len(payload) + _HEADER_LINE + lines + 2


async def api_batch(js: JetStreamContext, subject: str, payload: bytes, wait_s: float) -> list[Msg]:
    """A JetStream API request answered by several messages (a batched direct get: ``batch``
    in the request) — every message the server sent up to its end-of-batch status (``204``),
    or, the request found nothing (``404``), none. Another status raises, as for one reply.
    One request and its reply inbox's subscription, instead of a request a message."""
    nc = connection(js)
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)
    try:
        await nc.publish(f"{api_prefix(js)}.{subject}", payload, reply=inbox)
        out: list[Msg] = []
        while True:
            msg = await sub.next_msg(timeout=wait_s)
            status = (msg.headers or {}).get("Status")
            if status is None:
                out.append(msg)
            elif status in ("204", "404"):
                return out
            else:
                raise nats.js.errors.APIError.from_msg(msg)
    finally:
        await sub.unsubscribe()


class _NextBySubject(msgspec.Struct):
    seq: int
    next_by_subj: str
    batch: int


async def direct_range(js: JetStreamContext, stream: str, subject: str, from_seq: int, before_seq: int,
                       wait_s: float, batch: int) -> list[tuple[int, Msg]]:
    """Every message stored on ``subject`` in ``stream`` from sequence ``from_seq`` to before
    ``before_seq``, oldest first, with its sequence — ``batch`` to a request (a batched direct
    get, nats-server 2.11+), not a request a message: a derivation's events, a key's history."""
    out: list[tuple[int, Msg]] = []
    seq = from_seq
    while seq < before_seq:
        request = msgspec.json.encode(_NextBySubject(seq=seq, next_by_subj=subject, batch=batch))
        msgs = await api_batch(js, f"DIRECT.GET.{stream}", request, wait_s)
        if not msgs:
            break
        for msg in msgs:
            found = int((msg.headers or {})["Nats-Sequence"])
            if found >= before_seq:
                return out
            out.append((found, msg))
            seq = found + 1
    return out


async def api_request(js: JetStreamContext, subject: str, payload: bytes, wait_s: float) -> Msg:
    """A JetStream API request nats-py does not make itself: ``subject`` below the API
    prefix (``DIRECT.GET.KV_x``, ``STREAM.INFO.KV_x``), on the context's connection."""
    return await connection(js).request(f"{api_prefix(js)}.{subject}", payload, timeout=wait_s)


class _AckFloor(msgspec.Struct):
    stream_seq: int = 0


class ConsumerState(msgspec.Struct, frozen=True):
    """What a consumer's info says of its progress — the fields of nats-py's ``ConsumerInfo``
    the watermark tracker reads, and nothing else decoded: ``ack_floor`` (every message up to
    its ``stream_seq`` is acked), its pending (``num_pending``: not delivered yet) and unacked
    (``num_ack_pending``) messages, the pull requests waiting (``num_waiting``)."""

    num_pending: int = 0
    num_ack_pending: int = 0
    num_waiting: int = 0
    ack_floor: _AckFloor | None = None
    error: dict[str, Any] | None = None

    @property
    def acked(self) -> int:
        """Its ack floor's stream sequence (0: nothing acked)."""
        return self.ack_floor.stream_seq if self.ack_floor is not None else 0


_CONSUMER_STATE = msgspec.json.Decoder(ConsumerState)


async def consumer_state(js: JetStreamContext, stream: str, consumer: str) -> ConsumerState:
    """``JetStreamContext.consumer_info`` for what a wait reads of it: the same request, its
    reply decoded by msgspec into four fields instead of ``json`` and nats-py's dataclasses (the
    consumer's whole config and cluster: ~31 µs of the client a request, 123–131 → 92–96 µs, which
    boot makes 0.16–0.18 times an event; docs/BENCHMARKS.md, twenty-first round). Raises as
    ``consumer_info`` does: ``NotFoundError`` for no such consumer (or stream), the code's
    ``APIError`` for another refusal, ``ServiceUnavailableError`` when nothing answers, nats-py's
    ``TimeoutError`` after the context's timeout."""
    timeout: float = js._timeout
    try:
        msg = await connection(js).request(f"{api_prefix(js)}.CONSUMER.INFO.{stream}.{consumer}", b"",
                                           timeout=timeout)
    except nats.errors.NoRespondersError:
        raise nats.js.errors.ServiceUnavailableError from None
    state = _CONSUMER_STATE.decode(msg.data)
    if state.error is not None:
        raise nats.js.errors.APIError.from_error(state.error)  # raises the code's own class
    return state
