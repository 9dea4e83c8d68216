"""Failure classes the consume loop acts on."""

from __future__ import annotations

import asyncio

import nats.errors
import nats.js.errors


class TransientError(Exception):
    """A dependency is unavailable (store, LLM, NATS): retry without limit, report not-ready."""


class RebuildRequired(Exception):
    """Documents must be derived again from the stream: a document bucket vanished and is
    back, empty (from sequence 1), or one agent's stored document could not be read
    (``DocumentCorrupt``: from that agent's first event)."""


class DocumentCorrupt(RebuildRequired):
    """An agent's stored document is undecodable or invalid (garbage bytes, the wrong
    shape, out-of-range times). It has been deleted; the consume loop rewinds to the
    agent's first event, so the document is derived again exactly as a replay would, and
    every other document skips what it holds by its watermark."""

    def __init__(self, bucket: str, agent: str, reason: str) -> None:
        super().__init__(f"{bucket}/{agent}: {reason}")
        self.bucket = bucket
        self.agent = agent
        self.reason = reason


class ConsumerLost(Exception):
    """The worker's durable consumer is gone from the server: deleted, or kept in the server's
    memory (``RuntimeSettings.consumer_state_in_memory``) by a server that restarted. The worker
    creates it again and starts a new loop, which rewinds it to the checkpoint as every start does."""


class InvalidEvent(Exception):
    """The handler found the event itself invalid, which decoding could not tell (e.g. an id
    its store cannot hold): bad input, dead-lettered at once with this message as the
    reason, never retried (the contract's "the worker carries on")."""


class DocumentTooLarge(ValueError):
    """A document cannot be made to fit one KV value (or one part): a permanent failure of
    the events that made it, never retried."""


class UnwritableDocuments(Exception):
    """Documents of a batch that can never be written (``is_unwritable``): the events that
    changed them, by stream sequence, with the reason. The other documents of the batch
    are written; the consume loop dead-letters these events and carries on."""

    def __init__(self, failures: dict[int, str]) -> None:
        super().__init__(f"{len(failures)} event(s) made documents that cannot be written")
        self.failures = failures


class WorkerCannotRun(Exception):
    """This worker cannot run with these settings until an operator acts (e.g. a memory store
    built for another CORTEX_LANGUAGE): it stops with one line; the other workers of the
    process go on."""


class LeaseLost(Exception):
    """Another instance holds this consumer's lease: stop applying immediately."""


_TRANSIENT_NATS = (
    nats.errors.TimeoutError,
    nats.errors.NoRespondersError,
    nats.errors.ConnectionClosedError,
    nats.errors.ConnectionReconnectingError,
    nats.errors.StaleConnectionError,
    nats.errors.OutboundBufferLimitError,
    nats.js.errors.ServiceUnavailableError,
    nats.js.errors.BucketNotFoundError,
    nats.js.errors.NoStreamResponseError,  # the stream or bucket behind a subject is gone (for now)
    asyncio.TimeoutError,
    ConnectionError,
    OSError,
)


# JetStream: "message size exceeds maximum allowed" (a bucket's max value size)
_TOO_LARGE_ERR_CODES = frozenset({10054})


def api_codes(exc: BaseException) -> tuple[int | None, int | None]:
    """(code, err_code) of a JetStream API error; (None, None) of anything else. nats-py's
    key-value errors (KeyNotFoundError, KeyDeletedError, KeyWrongLastSequenceError) are API
    errors that never set either attribute, so reading them directly raises AttributeError."""
    if not isinstance(exc, nats.js.errors.APIError):
        return None, None
    return getattr(exc, "code", None), getattr(exc, "err_code", None)


def is_unwritable(exc: BaseException) -> bool:
    """True for write failures that every retry would repeat: the value is too large for
    the server or the bucket. (Other store errors stay transient: a full disk is freed.)"""
    if isinstance(exc, DocumentTooLarge | nats.errors.MaxPayloadError):
        return True
    return api_codes(exc)[1] in _TOO_LARGE_ERR_CODES


def is_transient(exc: BaseException) -> bool:
    """True for failures that say nothing about the event itself."""
    if isinstance(exc, TransientError | LeaseLost):
        return True
    if api_codes(exc)[0] in (503, 408):
        return True
    return isinstance(exc, _TRANSIENT_NATS)
