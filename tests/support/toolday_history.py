# ruff: noqa: E501 - the conversation's messages are data, one a line
"""A 14-day history of an agent that works with tools (``forge``: albert and his DevOps agent),
as the OpenClaw gateway's ``@vainplex/nats-eventstore`` plugin stores it (schema-version-1
envelopes: ``scope.runId`` / ``scope.toolCallId``, epoch-millisecond ``ts``, legacy types).

The sibling of ``multiday_history`` (conversation) for the trace analyzer and the pending
operations. One session key for the DM with albert (``agent:forge:main``, as OpenClaw keeps
it across its daily resets: a new ``sessionId`` each morning, the same key), sub-agent sessions
of their own, every turn a run (``run.start`` … ``run.end``):

* day 1: ordinary work; ``web_fetch`` fails once (a timeout) and the retry works;
* day 2: a doom loop (``exec`` ``npm run build``, 4× "Module not found"), success claimed
  after it, the user corrects the agent; fixed the same afternoon (a lockfile reinstall);
  a ``git push`` fails with the token in its error (redaction);
* day 3: two ``sessions_spawn`` tasks outlive their run (search index, inbox summary);
* day 4: the search index task completes after 30 hours (past the 24 h orphan limit), and a
  sub-agent session checks the new index before the agent's evening session;
  the inbox task never does (orphaned after 24 h);
* day 5: a ``deploy`` job is started and fails that evening, before the 20:00 session;
* days 6, 7, 9, 10, 12, 13: nothing goes wrong; day 8: a correction of a wrong answer;
* day 11: ``backup_db`` fails once and is not retried (an unrecovered tool failure).

``store(until)`` is every store message up to the end of ``until`` plus a session start at
20:00 that day (the briefing the agent wakes up to); ``events(until)`` the same as the
contract events Cortex maps them to (``shared.openclaw``)."""

from __future__ import annotations

import hashlib
import itertools
import json
from datetime import UTC, datetime, timedelta
from typing import Any

AGENT = "forge"
USER = "telegram:@albert"
MAIN = "agent:forge:main"
SUBAGENT = "agent:forge:subagent:3c1d9e0a-5b7f-4e21-9a4c-8d2f6b1e0c77"  # a sessions_spawn child
START = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday: day 1
TOKEN = "ghp_R7fK2mQ9xLw4Tz8bN3vC6yH1jD5sA0pE2uG7"  # a GitHub token in an error: must reach no document
Store = tuple[str, bytes]  # (subject in the store's stream, payload bytes)

_seq = itertools.count(1)


def ms(day: int, hm: str, sec: int = 0) -> int:
    h, m = map(int, hm.split(":"))
    at = START + timedelta(days=day - 1, hours=h, minutes=m, seconds=sec)
    return int(at.timestamp() * 1000)


def _id(session: str, kind: str, stable: str | None) -> str:
    """The v1 plugin's id: ``evt-`` and 16 hex digits of its session, type and source id, when
    it has one (run, message, tool call); else a uuid-like counter."""
    if stable is None:
        return f"0b7e5e2c-1f4a-4c59-9d7e-{next(_seq):012d}"
    return "evt-" + hashlib.sha256(f"{session}:{kind}:{stable}".encode()).hexdigest()[:16]


def envelope(kind: str, at: int, session: str, payload: dict[str, Any], stable: str | None = None,
             **scope: str) -> Store:
    canonical = {"msg.in": "message.in.received", "msg.out": "message.out.sent", "session.start": "session.started",
                 "session.end": "session.ended", "tool.call": "tool.call.requested",
                 "tool.result": "tool.call.completed", "run.start": "run.started", "run.end": "run.completed",
                 "run.error": "run.failed", "session.compaction_start": "session.compaction.started",
                 "session.compaction_end": "session.compaction.completed"}[kind]
    body = {
        "id": _id(session, canonical, stable), "ts": at, "agent": AGENT, "session": session, "type": kind,
        "canonicalType": canonical, "legacyType": kind, "schemaVersion": 1, "source": {"plugin": "nats-eventstore"},
        "actor": {"agentId": AGENT, "channel": "telegram"}, "scope": {"sessionKey": session, **scope},
        "trace": {"correlationId": scope.get("runId", session)}, "visibility": "internal", "payload": payload,
    }
    return f"openclaw.events.{AGENT}.{kind.replace('.', '_')}", json.dumps(body, ensure_ascii=False).encode()


class Day:
    """One day's store messages, written in the order the gateway fires its hooks."""

    def __init__(self, day: int) -> None:
        self.day = day
        self.out: list[Store] = []
        self.run: str | None = None
        self.session_id = 0

    def at(self, hm: str, sec: int = 0) -> int:
        return ms(self.day, hm, sec)

    def start(self, hm: str, session: str = MAIN) -> None:
        self.session_id += 1
        sid = f"d{self.day:02d}{self.session_id}"
        self.out.append(envelope("session.start", self.at(hm), session, {"sessionId": sid}, sessionId=sid))

    def end(self, hm: str, session: str = MAIN) -> None:
        sid = f"d{self.day:02d}{self.session_id}"
        self.out.append(envelope("session.end", self.at(hm), session, {"sessionId": sid, "messageCount": 6},
                                 sessionId=sid))

    def user(self, hm: str, text: str, session: str = MAIN) -> None:
        mid = f"m{self.day}-{len(self.out)}"
        self.out.append(envelope("msg.in", self.at(hm), session,
                                 {"from": USER, "content": text, "timestamp": self.at(hm), "channel": "telegram"},
                                 mid, messageId=mid))

    def begin(self, hm: str, prompt: str, session: str = MAIN) -> None:
        self.run = f"run-{self.day}-{len(self.out)}"
        self.out.append(envelope("run.start", self.at(hm, 1), session, {"prompt": prompt}, self.run, runId=self.run))

    def agent(self, hm: str, text: str, session: str = MAIN) -> None:
        mid = f"o{self.day}-{len(self.out)}"
        self.out.append(envelope("msg.out", self.at(hm, 30), session,
                                 {"to": USER, "content": text, "success": True, "channel": "telegram"}, messageId=mid))

    def finish(self, hm: str, session: str = MAIN, error: str | None = None) -> None:
        assert self.run is not None
        payload: dict[str, Any] = {"success": error is None, "durationMs": 40_000}
        if error:
            payload["error"] = error
        self.out.append(envelope("run.end", self.at(hm, 40), session, payload, self.run, runId=self.run))
        self.run = None

    def call(self, hm: str, tool: str, params: dict[str, Any], cid: str, session: str = MAIN, sec: int = 5) -> None:
        scope = {"toolCallId": cid, **({"runId": self.run} if self.run else {})}
        self.out.append(envelope("tool.call", self.at(hm, sec), session, {"toolName": tool, "params": params}, cid,
                                 **scope))

    def result(self, hm: str, tool: str, params: dict[str, Any], cid: str, *, text: str | None = None,
               error: str | None = None, session: str = MAIN, sec: int = 10) -> None:
        payload: dict[str, Any] = {"toolName": tool, "params": params, "durationMs": 900}
        if error is not None:
            payload["error"] = error
        else:
            payload["result"] = {"content": [{"type": "text", "text": text or "ok"}]}
        self.out.append(envelope("tool.result", self.at(hm, sec), session, payload, cid, toolCallId=cid))

    def tool(self, hm: str, tool: str, params: dict[str, Any], cid: str, *, text: str | None = None,
             error: str | None = None, session: str = MAIN) -> None:
        self.call(hm, tool, params, cid, session)
        self.result(hm, tool, params, cid, text=text, error=error, session=session)

    def turn(self, hm: str, prompt: str, answer: str, *tools: tuple[str, dict[str, Any], str]) -> None:
        """A user's message, a run that calls ``tools`` (each succeeding) and answers."""
        self.user(hm, prompt)
        self.begin(hm, prompt)
        for i, (tool, params, text) in enumerate(tools):
            self.tool(hm, tool, params, f"tc-{self.day}-{hm}-{i}", text=text)
        self.agent(hm, answer)
        self.finish(hm)


def _days() -> dict[int, list[Store]]:
    days: dict[int, list[Store]] = {}

    d = Day(1)
    d.start("08:55")
    d.turn("09:00", "Good morning! What's on the CI dashboard?", "All green: 14 pipelines passed overnight.",
           ("exec", {"command": "gh run list --limit 14"}, "14 completed success"))
    d.user("09:30", "Fetch the release notes of nginx 1.27 and tell me what changed for HTTP/3.")
    d.begin("09:30", "release notes")
    d.tool("09:30", "web_fetch", {"url": "https://nginx.org/en/CHANGES-1.27"}, "tc-1-wf-1",
           error="fetch failed: ETIMEDOUT after 30000 ms")
    d.tool("09:31", "web_fetch", {"url": "https://nginx.org/en/CHANGES-1.27"}, "tc-1-wf-2",
           text="Changes with nginx 1.27.0: HTTP/3 is no longer experimental …")
    d.agent("09:31", "nginx 1.27 made HTTP/3 stable (no longer experimental) and added QUIC retry by default.")
    d.finish("09:31")
    d.turn("11:00", "Thanks, that's all for now.", "You're welcome!")
    days[1] = d.out

    d = Day(2)
    d.start("08:50")
    d.user("09:00", "The frontend build is red since last night, please fix it.")
    d.begin("09:00", "fix the build")
    build = {"command": "npm run build", "cwd": "/srv/app/frontend"}
    for i in range(4):
        d.tool(f"09:0{i + 1}", "exec", build, f"tc-2-b{i}", error="Module not found: Error: Can't resolve '@acme/ui' in '/srv/app/frontend/src'")
    d.agent("09:06", "Done ✅ the frontend build is fixed.")
    d.finish("09:06")
    d.user("09:08", "No, that's wrong, the build is still red on CI!")
    d.begin("09:08", "still red")
    d.tool("09:10", "exec", {"command": "rm -rf node_modules && npm ci", "cwd": "/srv/app/frontend"}, "tc-2-ci",
           text="added 1432 packages in 41s")
    d.tool("09:12", "exec", build, "tc-2-b9", text="built in 38.2s")
    d.agent("09:13", "You're right, sorry. The lockfile was stale: after a clean `npm ci` the build passes locally and on CI.")
    d.finish("09:13")
    d.user("14:00", "Push the fix to the release branch.")
    d.begin("14:00", "push")
    push = {"command": "git push origin release/3.2", "cwd": "/srv/app"}
    d.tool("14:01", "exec", push, "tc-2-p1",
           error=f"remote: Invalid username or token. fatal: Authentication failed for 'https://forge:{TOKEN}@github.com/acme/app.git/'")
    d.tool("14:03", "exec", {"command": "gh auth refresh && git push origin release/3.2", "cwd": "/srv/app"}, "tc-2-p2",
           text="To github.com:acme/app.git  a1b2c3d..e4f5a6b  release/3.2 -> release/3.2")
    d.agent("14:04", "Pushed to release/3.2 after refreshing the GitHub credentials.")
    d.finish("14:04")
    d.user("14:10", "Perfect, thanks!")
    d.end("15:00")
    days[2] = d.out

    d = Day(3)
    d.start("08:50")
    d.user("10:00", "Rebuild the search index and summarise the support inbox, both can run in the background.")
    d.begin("10:00", "background tasks")
    d.call("10:01", "sessions_spawn", {"task": "Rebuild the search index for docs.acme.dev", "label": "reindex"}, "tc-3-s1")
    d.call("10:01", "sessions_spawn", {"task": "Summarise the support inbox of the last week", "label": "inbox"}, "tc-3-s2", sec=20)
    d.agent("10:02", "Both tasks are running in the background; I'll report when they finish.")
    d.finish("10:02")
    d.turn("16:00", "How is disk usage on db-1?", "db-1 is at 61% disk usage.",
           ("exec", {"command": "ssh db-1 df -h /var/lib/postgresql"}, "/dev/nvme0n1p1 500G 305G 195G 61%"))
    d.end("17:00")
    days[3] = d.out

    d = Day(4)
    d.start("08:50")
    d.turn("09:00", "Morning. Any alerts?", "No alerts overnight.",
           ("exec", {"command": "amtool alert query"}, "No alerts"))
    d.end("10:00")
    d.result("16:00", "sessions_spawn", {"task": "Rebuild the search index for docs.acme.dev", "label": "reindex"}, "tc-3-s1",
             text="Search index rebuilt: 18 204 documents in 3 h 12 min, 0 errors.")
    d.start("16:10", SUBAGENT)  # the sub-agent that checks the new index: its own session, its own briefing
    d.begin("16:10", "check the index", SUBAGENT)
    d.tool("16:11", "web_fetch", {"url": "https://docs.acme.dev/search?q=invoice"}, "tc-4-sub", text="12 hits",
           session=SUBAGENT)
    d.agent("16:12", "The new index answers: 12 hits for 'invoice'.", SUBAGENT)
    d.finish("16:12", SUBAGENT)
    d.end("16:20", SUBAGENT)
    days[4] = d.out

    d = Day(5)
    d.start("08:50")
    d.user("17:00", "Deploy release 3.2 to production tonight, it's a long job.")
    d.begin("17:00", "deploy")
    d.call("17:01", "deploy_job", {"release": "3.2", "env": "prod", "window": "18:30"}, "tc-5-d1")
    d.agent("17:02", "The production deploy of 3.2 is scheduled for 18:30; I'll tell you how it went.")
    d.finish("17:02")
    d.end("18:00")
    # before the evening's session start: the store is in event-time order and the 20:00 start
    # comes last (a result after it told the 20:00 briefing of a failure at 23:10, "just now")
    d.result("19:40", "deploy_job", {"release": "3.2", "env": "prod", "window": "18:30"}, "tc-5-d1",
             error="migration 0042_add_invoice_index failed: lock timeout on table invoices; rolled back to 3.1")
    days[5] = d.out

    for n, (question, answer, tool) in {
        6: ("Is the 3.1 rollback healthy?", "Yes, 3.1 serves all traffic, error rate 0.1%.",
            ("exec", {"command": "kubectl -n prod rollout status deploy/app"}, "deployment \"app\" successfully rolled out")),
        7: ("Anything urgent this sunday?", "Nothing urgent; all pipelines are green.",
            ("exec", {"command": "gh run list --limit 5"}, "5 completed success")),
        9: ("Rotate the staging TLS certificate.", "The staging certificate is renewed until 2026-06-09.",
            ("exec", {"command": "certbot renew --cert-name staging.acme.dev"}, "Congratulations, all renewals succeeded")),
        10: ("How many open PRs do we have?", "There are 7 open pull requests, 2 of them waiting for your review.",
             ("exec", {"command": "gh pr list --state open"}, "7 open pull requests")),
        12: ("Check the backup from last night.", "Last night's backup is complete: 41 GB, verified.",
             ("exec", {"command": "restic snapshots --latest 1"}, "snapshot 9f2c41aa saved, 41.2 GiB")),
        13: ("Are the certificates all valid for 30 days?", "Yes, every certificate is valid for at least 58 more days.",
             ("exec", {"command": "certcheck --all --days 30"}, "all 12 certificates OK")),
        14: ("Good morning, status?", "All systems green, no open incidents.",
             ("exec", {"command": "amtool alert query"}, "No alerts")),
    }.items():
        d = Day(n)
        d.start("08:50")
        d.turn("09:00", question, answer, tool)
        d.end("10:00")
        days[n] = d.out

    d = Day(8)
    d.start("08:50")
    d.turn("09:00", "Which Postgres version runs on db-1?", "db-1 runs PostgreSQL 14.",
           ("exec", {"command": "ssh db-1 cat /etc/postgresql-common/version"}, "16"))
    d.user("09:05", "That's wrong, it's 16 — you read the file and still said 14.")
    d.begin("09:05", "wrong version")
    d.agent("09:06", "Sorry, you're right: db-1 runs PostgreSQL 16.")
    d.finish("09:06")
    d.end("10:00")
    days[8] = d.out

    d = Day(11)
    d.start("08:50")
    d.user("09:00", "Take a manual backup of the billing database before the migration.")
    d.begin("09:00", "backup")
    d.tool("09:01", "backup_db", {"database": "billing", "target": "s3://acme-backups/billing/"}, "tc-11-b1",
           error="AccessDenied: s3:PutObject on acme-backups/billing/ (role forge-backup)")
    d.agent("09:02", "The backup could not be written: the forge-backup role may not write to s3://acme-backups/billing/.")
    d.finish("09:02")
    d.end("10:00")
    days[11] = d.out
    return days


DAYS = _days()


def store(until: int, since: int = 1) -> list[Store]:
    """The store messages of days ``since``..``until`` (in event-time order) and the session
    start at 20:00 on ``until``."""
    out = [m for day in range(since, until + 1) for m in DAYS.get(day, [])]
    out.sort(key=lambda m: json.loads(m[1])["ts"])  # a late result is stored when it happens
    sid = f"check{until:02d}"
    check = envelope("session.start", ms(until, "20:00"), MAIN, {"sessionId": sid}, sessionId=sid)
    return [*out, check]


def events(until: int, since: int = 1) -> list[dict[str, Any]]:
    """``store(until, since)`` as the contract events Cortex maps them to, for ``cortex publish``."""
    import msgspec

    from shared.openclaw import Mapped, map_store_event

    out = []
    for subject, data in store(until, since):
        mapped = map_store_event(subject.rsplit(".", 1)[1], data, subject.split(".")[-2])
        assert isinstance(mapped, Mapped), mapped
        event = msgspec.to_builtins(mapped.event)
        out.append({"type": _TYPE[subject.rsplit(".", 1)[1]], **event})
    return out


_TYPE = {"msg_in": "msg.received", "msg_out": "msg.sent", "session_start": "session.start",
         "session_end": "session.end", "tool_call": "tool.call", "tool_result": "tool.result",
         "run_start": "run.start", "run_end": "run.end", "run_error": "run.error"}
