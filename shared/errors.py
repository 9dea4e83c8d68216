"""Failure classes the consume loop acts on."""

from __future__ import annotations

import asyncio

import nats.errors
import nats.js.errors


class TransientError(Exception):
    """A dependency is unavailable (store, LLM, NATS): retry without limit, report not-ready."""


class RebuildRequired(Exception):
    """A document bucket vanished and is back, empty: the worker must rebuild from the stream."""


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


def is_transient(exc: BaseException) -> bool:
    """True for failures that say nothing about the event itself."""
    if isinstance(exc, TransientError | LeaseLost):
        return True
    if isinstance(exc, nats.js.errors.APIError) and exc.code in (503, 408):
        return True
    return isinstance(exc, _TRANSIENT_NATS)
