"""Leases: exactly one active instance per consumer (contract: Consumers, instances).

A lease is a key in ``cortex_leases`` named after the consumer, written with a per-message
TTL. The holder renews it with compare-and-set every ttl/3; a standby polls until the key
expires and then creates it. Before every commit the consume loop calls ``check`` — a
fence that stops an instance whose lease may have lapsed (a long pause) from writing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import NamedTuple

import nats.js.errors
from nats.js.client import JetStreamContext
from nats.js.kv import KeyValue

from shared import metrics
from shared.errors import LeaseLost, TransientError, api_codes, is_transient
from shared.kv import kv_read
from shared.names import BUCKET_LEASES

log = logging.getLogger(__name__)

_WRONG_LAST = (10071, 10164)
LAPSE_POLL_S = 0.25  # how often a refused holder's key is read while waiting for it to lapse
LAPSE_SLACK_S = 1.0  # beyond the holder's TTL, for the server to expire the key
# A one-off run (a replay) holds its leases at least this long between renewals: a run beside a
# busy machine's workers must not fail on a pause of a second or two; if it dies, the workers
# wait this long. ``cortex_leases`` keeps a key at least this long (``bucket_max_age_s``) — every
# key is written with its holder's own TTL (a per-message TTL), so a worker's short lease still
# lapses at its own TTL, and a replay beside workers with a 2 s lease is not held to 2 s.
ONE_OFF_MIN_TTL_S = 10


def bucket_max_age_s(lease_ttl_s: int) -> float:
    """The max age ``cortex_leases`` is made with: the longest TTL a lease is written with."""
    return float(max(lease_ttl_s, ONE_OFF_MIN_TTL_S))


class Holder(NamedTuple):
    instance: str | None  # None: nobody held the lease
    ttl_s: int  # the TTL it was written with (0 when nobody held it)


async def holdable_ttl(js: JetStreamContext, wanted_s: int) -> int:
    """The TTL a lease can really be held with: ``cortex_leases``'s own max age (made by
    ``cortex init`` from its CORTEX_RUNTIME_LEASE_TTL_S) removes a key no later, whatever
    TTL it was written with — an instance renewing at a third of a longer TTL would see its
    key expire, a standby take it, and lose it ("taken by another instance") again and again."""
    try:
        info = await js.stream_info(f"KV_{BUCKET_LEASES}")
    except Exception:  # not made yet, or unreachable: the lease's own requests will say so
        return wanted_s
    max_age = info.config.max_age or 0.0
    if 0 < max_age < wanted_s:
        capped = max(1, int(max_age))
        log.warning("lease_ttl_capped", extra={"wanted_s": wanted_s, "bucket_max_age_s": max_age, "ttl_s": capped})
        return capped
    return wanted_s


class LeaseRefused(Exception):
    """``Lease.take_over`` would take the lease from a holder it must not interrupt."""


class Lease:
    def __init__(self, js: JetStreamContext, consumer: str, instance: str, ttl_s: int,
                 label: str | None = None) -> None:
        self._js = js
        self.consumer = consumer
        self.instance = instance
        self.ttl_s = max(1, int(ttl_s))
        self.label = label or consumer  # the cortex_worker_active gauge's worker label
        self._revision = 0
        self._renewed = 0.0
        self.held = False

    async def acquire(self, stop: asyncio.Event) -> bool:
        """Wait until this instance holds the lease (True) or ``stop`` is set (False)."""
        announced = False
        while not stop.is_set():
            try:
                kv = await self._js.key_value(BUCKET_LEASES)
                self._revision = await kv.create(self.consumer, self.instance.encode(), msg_ttl=self.ttl_s)
                self._renewed = time.monotonic()
                self.held = True
                metrics.ACTIVE.labels(self.label).set(1)
                log.info("lease_acquired", extra={"consumer": self.consumer, "instance": self.instance})
                return True
            except nats.js.errors.KeyNotFoundError:
                continue  # the holder's key lapsed between the create and nats-py's look at it: create again
            except nats.js.errors.KeyWrongLastSequenceError:
                if not announced:
                    log.info("lease_standby", extra={"consumer": self.consumer, "instance": self.instance})
                    announced = True
            except Exception as exc:
                if not is_transient(exc):
                    raise
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=min(1.0, self.ttl_s / 3))
        return False

    async def take_over(self, refuse: Callable[[str], str | None] | None = None,
                        say: Callable[[str], None] | None = None) -> Holder:
        """Take the lease now, from whoever holds it, in one compare-and-set on the holder's
        revision (a standby cannot slip in between). ``refuse(holder)`` may return a reason
        not to take it from that holder (raised as ``LeaseRefused``) — unless that holder is
        gone: its key is first watched for as long as its TTL, and taken once it lapses
        unrenewed (a replay or forget that was killed), with ``say`` told why it waits.
        Returns the previous holder; its instance may still write until its fence closes,
        ``ttl_s`` after its last renewal, so a caller that needs it stopped waits that long."""
        kv = await self._js.key_value(BUCKET_LEASES)
        for _ in range(20):
            raw, revision = await kv_read(kv, self.consumer)
            holder = Holder(None, 0)
            if raw is not None:
                instance = raw.decode(errors="replace")
                holder = Holder(instance, await self._ttl_of_current())
                reason = refuse(instance) if refuse is not None else None
                if reason is not None:
                    if not await self._lapses(kv, raw, holder.ttl_s, revision, say):
                        raise LeaseRefused(reason)
                    continue  # gone unrenewed (or handed on): read it again
            try:
                ack = await self._js.publish(f"$KV.{BUCKET_LEASES}.{self.consumer}", self.instance.encode(),
                                             headers={"Nats-Expected-Last-Subject-Sequence": str(revision)},
                                             msg_ttl=self.ttl_s)
            except nats.js.errors.APIError as exc:
                if api_codes(exc)[1] in _WRONG_LAST:
                    continue  # renewed or taken meanwhile: read it again
                raise
            self._revision = ack.seq
            self._renewed = time.monotonic()
            self.held = True
            log.info("lease_taken_over", extra={"consumer": self.consumer, "instance": self.instance,
                                                "from": holder.instance})
            return holder
        raise TransientError(f"the lease of {self.consumer} changed hands 20 times while being taken over")

    async def _lapses(self, kv: KeyValue, instance: bytes, ttl_s: int, revision: int,
                      say: Callable[[str], None] | None) -> bool:
        """Whether the holder ``instance``, whose key is at ``revision``, has stopped: a running
        holder renews its key every third of its TTL, so within one TTL the key is either
        renewed (False) or gone — expired, given back, or taken by another instance (True)."""
        wait_s = max(ttl_s, 1) + LAPSE_SLACK_S
        if say is not None:
            who = instance.decode(errors="replace")
            say(f"waiting up to {wait_s:g}s for {who} to renew the lease of {self.consumer} (running) or let it "
                "lapse (gone)")
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            await asyncio.sleep(LAPSE_POLL_S)
            raw, now = await kv_read(kv, self.consumer)
            if now != revision:
                return raw != instance
        return False  # neither within its TTL: count it as running

    async def _ttl_of_current(self) -> int:
        """The TTL the holder wrote its lease with (its own setting, which may differ from ours)."""
        try:
            msg = await self._js.get_msg(f"KV_{BUCKET_LEASES}", subject=f"$KV.{BUCKET_LEASES}.{self.consumer}")
        except nats.js.errors.NotFoundError:
            return 0
        text = str((msg.headers or {}).get("Nats-TTL", "")).strip().removesuffix("s")
        return int(text) if text.isdigit() else self.ttl_s

    async def _renew(self) -> None:
        headers = {"Nats-Expected-Last-Subject-Sequence": str(self._revision)}
        ack = await self._js.publish(f"$KV.{BUCKET_LEASES}.{self.consumer}", self.instance.encode(),
                                     headers=headers, msg_ttl=self.ttl_s)
        self._revision = ack.seq
        self._renewed = time.monotonic()

    async def keep_alive(self, on_lost: Callable[[], None]) -> None:
        """Renew until cancelled; call ``on_lost`` when the lease is gone."""
        while True:
            await asyncio.sleep(self.ttl_s / 3)
            try:
                await self._renew()
            except nats.js.errors.APIError as exc:
                if api_codes(exc)[1] in _WRONG_LAST:
                    self._lose("taken by another instance", on_lost)
                    return
            except Exception as exc:
                if not is_transient(exc):
                    raise
            if time.monotonic() - self._renewed > self.ttl_s:
                self._lose("could not renew within the TTL", on_lost)
                return

    def _lose(self, why: str, on_lost: Callable[[], None]) -> None:
        self.held = False
        metrics.ACTIVE.labels(self.label).set(0)
        log.warning("lease_lost", extra={"consumer": self.consumer, "why": why})
        on_lost()

    def check(self) -> None:
        """Fence: raise LeaseLost unless the lease was renewed recently enough to be ours."""
        if not self.held or time.monotonic() - self._renewed > self.ttl_s * 0.8:
            raise LeaseLost(self.consumer)

    async def release(self) -> None:
        """Give the lease back: delete its key while it still names this instance — also when
        the last renewal's ack was never seen (the keeper cancelled in flight) or the lease
        lapsed here unrenewed, so a standby (or a forget) need not wait out the TTL."""
        if not self._revision:
            return  # never held
        self.held = False
        metrics.ACTIVE.labels(self.label).set(0)
        revision, self._revision = self._revision, 0
        with contextlib.suppress(Exception):
            kv = await self._js.key_value(BUCKET_LEASES)
            for _ in range(3):
                try:
                    await kv.delete(self.consumer, last=revision)
                    return
                except nats.js.errors.APIError as exc:
                    if api_codes(exc)[1] not in _WRONG_LAST:
                        raise
                raw, revision = await kv_read(kv, self.consumer)
                if raw != self.instance.encode():
                    return  # expired, or another instance's now
