# ruff: noqa: E501 - the conversation's messages are data, one a line
"""A 15-day history of one agent (``atlas``: albert and claudia), as the contract's events.

Several sessions a day, English and German: threads that open, go quiet, are resumed and
closed; a decision reversed a week later (Redis, then Memcached "after all"); promises with
due dates kept and not kept; an employer that changes (Acme Analytics GmbH, then Globex
Corp); a doom loop on day 3 and no tool failure after; compactions; sessions that end
frustrated and ones that end well. ``history(day)`` is every event up to the end of ``day``
plus a session start at 20:00 that day (the briefing the agent wakes up to)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

A, U, B = "atlas", "albert", "claudia"
AGENT = A
START = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday: day 1
Event = dict[str, Any]
_ids = itertools.count(1)


def ts(day: int, hm: str) -> str:
    h, m = map(int, hm.split(":"))
    return (START + timedelta(days=day - 1, hours=h, minutes=m)).strftime("%Y-%m-%dT%H:%M:%SZ")


def ev(kind: str, day: int, hm: str, session: str, **kw: Any) -> Event:
    return {"type": kind, "id": f"md-{next(_ids):04d}", "agent": A, "session": session, "ts": ts(day, hm), **kw}


def start(day: int, hm: str, s: str) -> Event:
    return ev("session.start", day, hm, s, channel="webchat")


def end(day: int, hm: str, s: str) -> Event:
    return ev("session.end", day, hm, s, channel="webchat")


def u(day: int, hm: str, s: str, text: str) -> Event:
    return ev("msg.received", day, hm, s, role="user", sender=U, channel="webchat", content=text)


def a(day: int, hm: str, s: str, text: str) -> Event:
    return ev("msg.sent", day, hm, s, role="assistant", sender=B, channel="webchat", content=text)


def call(day: int, hm: str, s: str, tool: str, params: Any, cid: str) -> Event:
    return ev("tool.call", day, hm, s, tool=tool, call_id=cid, params=params)


def res(day: int, hm: str, s: str, tool: str, cid: str, error: str | None = None, result: str | None = None) -> Event:
    kw: dict[str, Any] = {"error": error} if error else {"result": result or "ok"}
    return ev("tool.result", day, hm, s, tool=tool, call_id=cid, duration_ms=1200, **kw)


def compaction(day: int, hm: str, s: str, msgs: list[tuple[str, str, str]]) -> list[Event]:
    before = ev(
        "compaction.before",
        day,
        hm,
        s,
        message_count=len(msgs) + 4,
        compacting_count=len(msgs),
        messages=[{"role": r, "content": c, "ts": ts(day, t)} for r, c, t in msgs],
    )
    return [before, ev("compaction.after", day, hm, s, message_count=4)]


days: dict[int, list[Event]] = {}
s = "s-d01-a"
days[1] = [
    start(1, "09:00", s),
    u(1, "09:02", s, "Good morning! Regarding the payment gateway integration: we need the Stripe sandbox keys first."),
    a(1, "09:05", s, "For the payment gateway integration the plan is to use Stripe webhooks with idempotency keys."),
    u(1, "09:20", s, "We decided to cache the product catalog with Redis because the catalog API is too slow."),
    a(1, "09:25", s, "I'll write the webhook handler for the payment gateway by Friday."),
    u(1, "09:40", s, "Good. Maria works at Acme Analytics GmbH, she owns the reporting side."),
    a(1, "09:42", s, "Noted. I'll write the migration guide for the billing schema by Thursday."),
    end(1, "10:00", s),
]
s = "s-d01-b"
days[1] += [
    start(1, "14:00", s),
    u(1, "14:01", s, "Let's look at the search indexing pipeline: the nightly reindex takes three hours."),
    a(1, "14:05", s, "For the search indexing pipeline I am waiting for the Elasticsearch credentials from Jonas."),
    u(1, "14:30", s, "Ok, keep me posted."),
    *compaction(
        1,
        "14:40",
        s,
        [
            ("user", "Let's look at the search indexing pipeline: the nightly reindex takes three hours.", "14:01"),
            (
                "assistant",
                "For the search indexing pipeline I am waiting for the Elasticsearch credentials from Jonas.",
                "14:05",
            ),
        ],
    ),
    end(1, "15:00", s),
]
s = "s-d02-a"
days[2] = [
    start(2, "09:30", s),
    u(2, "09:31", s, "Back to the payment gateway integration: the sandbox keys arrived."),
    a(2, "09:40", s, "Great. I'll send Maria the API spec tomorrow."),
    call(2, "09:45", s, "run_tests", {"suite": "payments"}, "c1"),
    res(2, "09:46", s, "run_tests", "c1", result="42 passed"),
    a(2, "09:50", s, "The payment tests pass (42 passed)."),
    end(2, "10:10", s),
]
s = "s-d02-b"
days[2] += [
    start(2, "16:00", s),
    u(2, "16:01", s, "Jetzt zu dem Onboarding-Flow: die Registrierung bricht auf Mobilgeräten ab, echt nervig."),
    a(2, "16:05", s, "Beim Onboarding-Flow warte auf die Crash-Logs von Jonas, dann schaue ich mir den Safari-Bug an."),
    u(2, "16:20", s, "Das ist mist, schon wieder kaputt. Damn, this sucks."),
    end(2, "16:30", s),
]
s = "s-d03-a"
days[3] = [
    start(3, "09:00", s),
    a(3, "09:10", s, "I sent Maria the API spec, that's done."),
    u(3, "09:15", s, "Thanks. Deploy the payment gateway to staging please."),
    *[
        x
        for i in range(4)
        for x in (
            call(3, f"09:{20 + i}", s, "deploy_staging", {"service": "payments", "ref": "main"}, f"c3-{i}"),
            res(3, f"09:{20 + i}", s, "deploy_staging", f"c3-{i}", error="ImagePullBackOff: registry auth failed"),
        )
    ],
    a(3, "09:30", s, "The staging deploy is done and payments run on staging."),
    u(3, "09:32", s, "No, that's wrong, the deploy failed! Stop claiming success, this sucks."),
    end(3, "09:40", s),
]
s = "s-d03-b"
days[3] += [
    start(3, "15:00", s),
    u(3, "15:01", s, "Regarding the staging registry credentials: the token expired, I renewed it."),
    call(3, "15:05", s, "deploy_staging", {"service": "payments", "ref": "main"}, "c3-9"),
    res(3, "15:06", s, "deploy_staging", "c3-9", result="deployed payments@main"),
    a(3, "15:08", s, "Staging deploy worked this time: payments@main is live on staging."),
    end(3, "15:30", s),
]
s = "s-d04-a"
days[4] = [
    start(4, "10:00", s),
    a(4, "10:05", s, "The webhook handler for the payment gateway is done ✅ with idempotency keys."),
    u(4, "10:10", s, "Nice work!"),
    end(4, "10:30", s),
]
s = "s-d05-a"
days[5] = [
    start(5, "09:00", s),
    u(5, "09:01", s, "Regarding the search indexing pipeline: did Jonas send the credentials?"),
    a(
        5,
        "09:03",
        s,
        "Not yet, the search indexing pipeline is still blocked by the missing Elasticsearch credentials.",
    ),
    u(
        5,
        "09:30",
        s,
        "Wir haben beschlossen, den Release auf den 20. März zu verschieben, weil der Payment-Provider noch nicht freigegeben hat.",
    ),
    end(5, "09:45", s),
]
s = "s-d07-a"
days[7] = [
    start(7, "11:00", s),
    u(7, "11:01", s, "Quick sunday check: anything urgent?"),
    a(7, "11:02", s, "Nothing urgent. The payment gateway is on staging, the search indexing still waits for Jonas."),
    end(7, "11:10", s),
]
s = "s-d08-a"
days[8] = [
    start(8, "09:00", s),
    u(8, "09:01", s, "Back to the product catalog cache: Redis cluster licensing is too expensive for us."),
    u(
        8,
        "09:05",
        s,
        "We decided to switch the catalog cache from Redis to Memcached after all, because the Redis cluster license costs too much.",
    ),
    a(8, "09:10", s, "Understood, Memcached it is. I'll migrate the catalog cache to Memcached by Wednesday."),
    end(8, "09:40", s),
]
s = "s-d09-a"
days[9] = [
    start(9, "14:00", s),
    u(9, "14:01", s, "Regarding the search indexing pipeline: Jonas finally sent the credentials."),
    a(9, "14:30", s, "The search indexing pipeline is fixed, the reindex now takes 20 minutes ✅"),
    u(9, "14:31", s, "Brilliant!"),
    end(9, "14:45", s),
]
s = "s-d10-a"
days[10] = [
    start(10, "09:00", s),
    a(10, "09:05", s, "The catalog cache migration to Memcached is done, all services read from Memcached."),
    u(10, "09:06", s, "Awesome."),
    *compaction(
        10,
        "09:20",
        s,
        [
            ("user", "Awesome.", "09:06"),
            (
                "assistant",
                "The catalog cache migration to Memcached is done, all services read from Memcached.",
                "09:05",
            ),
        ],
    ),
    end(10, "09:30", s),
]
s = "s-d11-a"
days[11] = [
    start(11, "10:00", s),
    u(11, "10:01", s, "Let's discuss the quarterly report export: finance wants CSV and PDF."),
    a(11, "10:05", s, "For the quarterly report export the plan is to generate CSV first and render the PDF from it."),
    end(11, "10:30", s),
]
s = "s-d12-a"
days[12] = [
    start(12, "09:00", s),
    u(12, "09:01", s, "Zurück zum Onboarding-Flow: Jonas hat die Crash-Logs endlich geschickt."),
    a(12, "09:10", s, "Beim Onboarding-Flow liegt es am Safari-Autofill. Ich werde den Fix morgen einbauen."),
    end(12, "09:30", s),
]
s = "s-d13-a"
days[13] = [
    start(13, "09:00", s),
    u(13, "09:01", s, "By the way, Maria works at Globex Corp now, she left Acme last week."),
    a(13, "09:03", s, "Noted, I'll send the reporting questions to Maria at Globex Corp."),
    u(13, "09:20", s, "Regarding the quarterly report export: finance needs it by 2026-03-20."),
    end(13, "09:40", s),
]
s = "s-d14-a"
days[14] = [
    start(14, "15:00", s),
    a(14, "15:05", s, "Der Onboarding-Flow ist gefixt, die Registrierung auf Mobilgeräten funktioniert wieder."),
    u(14, "15:10", s, "Perfekt, mega! Great work this week."),
    end(14, "15:20", s),
]
s = "s-d15-a"
days[15] = [
    start(15, "09:00", s),
    u(
        15,
        "09:01",
        s,
        "Regarding the quarterly report export: the CSV part works, the PDF renderer crashes on long tables.",
    ),
    a(15, "09:05", s, "For the quarterly report export I'm waiting for the PDF library upgrade first."),
    end(15, "09:30", s),
]


def history(until: int, since: int = 1) -> list[Event]:
    """The events of days ``since``..``until`` and the session start at 20:00 on ``until``."""
    events = [e for day in range(since, until + 1) for e in days.get(day, [])]
    return [*events, {**start(until, "20:00", f"s-check-d{until:02d}"), "id": f"md-check-{until:02d}"}]
