"""Whether a worker's model answers: the state ``cortex status`` shows and the gate that keeps
an unreachable model from holding a worker back.

When a call ends without an answer because the model cannot be reached (``UNREACHABLE``
causes), the worker's model is *unreachable* from then on: its calls take the structured path
at once, without a request, while the deferred calls (``shared.llm.deferred``) are asked
again in the background — the first that is answered makes it reachable again. With no
deferred call to ask, a call after the probe delay (doubling up to ``CORTEX_LLM_PROBE_MAX_MS``)
is let through to find out (after a refused key or an unknown model, the longest delay at
once: a setting is not fixed in a second).

The state is operational, not derived: it goes to ``health.<consumer>`` in
``cortex_llm_cache`` (wall-clock times, for a person) and the ``cortex_llm_unreachable`` gauge,
never into a document.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Literal

import msgspec

from shared.backoff import backoff_delay
from shared.llm.metrics import LLM_UNREACHABLE
from shared.llm.providers import ProviderFailure

log = logging.getLogger(__name__)


class LlmHealth(msgspec.Struct, frozen=True, kw_only=True):
    """One worker's model as ``cortex status`` shows it."""

    state: Literal["ok", "unreachable"]
    since: datetime  # wall clock: when this state began
    cause: str = ""  # the failure that made it unreachable ("auth: HTTP 401")
    deferred: int = 0  # calls that fell back, waiting to be asked again
    provider: str = ""
    model: str = ""


Report = Callable[[LlmHealth], Awaitable[None]]


class Availability:
    """The model's state for one client (one consumer of a worker, or one API)."""

    def __init__(self, name: str, probe_base_s: float, probe_max_s: float, report: Report | None = None,
                 provider: str = "", model: str = "") -> None:
        self.name = name
        self.unreachable = False
        self.cause = ""
        self.since = datetime.now(UTC)
        self._probe_base_s = probe_base_s
        self._probe_max_s = probe_max_s
        self._failures = 0
        self._retry_at = 0.0  # monotonic: no request before it while unreachable
        self._report = report
        self._provider = provider
        self._model = model
        self._gauge = LLM_UNREACHABLE.labels(name)
        self._gauge.set(0)

    def may_call(self, deferred: int) -> bool:
        """Whether a call may go to the model now: always while it answers; while it is
        unreachable, only when nothing deferred is being asked again and the probe delay
        has passed (so a worker never waits on a model known to be down)."""
        return not self.unreachable or (deferred == 0 and time.monotonic() >= self._retry_at)

    def wait_s(self) -> float:
        """How long the background asker waits before its next try."""
        return max(0.0, self._retry_at - time.monotonic()) if self.unreachable else 0.0

    async def failed(self, failure: ProviderFailure, deferred: int) -> None:
        """A call ended without an answer for ``failure``: unreachable (or still), the next
        try after the probe delay."""
        self._failures += 1
        wait = backoff_delay(self._failures, self._probe_base_s, self._probe_max_s)
        if failure.permanent:  # a key or a model setting is not fixed in a second: the longest wait
            wait = self._probe_max_s
        if failure.retry_after_s is not None:  # the API said when: no sooner (nor later than the cap)
            wait = max(wait, min(failure.retry_after_s, self._probe_max_s))
        self._retry_at = time.monotonic() + wait
        self.cause = str(failure)
        if not self.unreachable:
            self.unreachable = True
            self.since = datetime.now(UTC)
            self._gauge.set(1)
            log.warning("llm_unreachable", extra={"client": self.name, "cause": self.cause})
            await self.report(deferred)

    async def answered(self, deferred: int) -> None:
        """The model answered: reachable again."""
        self._failures = 0
        if self.unreachable:
            self.unreachable = False
            self.since = datetime.now(UTC)
            self._gauge.set(0)
            log.info("llm_reachable", extra={"client": self.name, "deferred": deferred})
            await self.report(deferred)

    async def report(self, deferred: int) -> None:
        """Tell ``cortex status`` (best effort: the bucket may be what is down)."""
        if self._report is None:
            return
        health = LlmHealth(state="unreachable" if self.unreachable else "ok", since=self.since,
                           cause=self.cause if self.unreachable else "", deferred=deferred,
                           provider=self._provider, model=self._model)
        try:
            await self._report(health)
        except Exception as exc:  # operational state only: the next transition writes it again
            log.debug("llm_health_unwritten", extra={"client": self.name, "error": repr(exc)})
