"""Pending operations as a pure function over one agent's ``OperationsDoc``.

From the unified-brain design (``seeds/004``, "Pending Operations Lifecycle"): an operation
is dispatched ``pending``, becomes ``completed`` or ``failed`` when its result arrives, and
stays unread until the agent has been shown it — the design's ``[PENDING]``, ``[NEW
RESULT]`` and ``[FAILED]`` lines in the next context, then ``acknowledgeCompletedOps``. A
pending operation nobody will ever answer (the design's "orphaned from prior session") is
failed and shown once.

Here an operation is a tool call (``cortex.tool.<agent>.call``), its result the matching
``result`` (same ``call_id``; without one, the oldest open call of the same tool in the
session). What the agent has seen follows from the stream:

* a result arriving while the turn that made the call is still running reaches the agent
  directly: it is ``seen`` at once (almost every tool call is such a one, and never shown);
* a turn ends with its run's ``end`` or ``error``, or with its session's ``end``; a call
  still pending then is what the design calls a pending operation (a spawned task, a
  long job), and a result arriving after it is unread;
* a briefing that shows an unread result publishes an ``operation_seen`` FeedbackEvent
  naming it (``target``, or a list in ``value``); applied here it marks the result seen,
  so the next briefing does not repeat it (the design's acknowledgement);
* a call still pending ``orphan_hours`` (event time) after it was made is failed as
  orphaned and unread — the design failed them at the next start-up, which a stream has
  no equivalent of; its result, should it still come, completes it (unread again).

A task handed to a child session answers at once (Cortex goes further than the design
here): OpenClaw's ``sessions_spawn`` "returns immediately" with ``{status: "accepted",
childSessionKey, runId}`` — as the result itself, its ``details`` or the JSON text of its
content block — and the sub-agent runs in that session. Such a result is no result: the
call stays pending, waiting on the child (``child_session``, ``child_run``). The child's
assistant messages are remembered as it goes (``child_reply``, the last one, a redacted
excerpt: session-sync and contract producers carry them; npm's plugin publishes no
assistant text of a sub-agent). The child's run ``end`` (or one with the call's run id)
completes the call, unread, with that reply as its result — or, with none on the stream,
a pointer to the child's session; a failed run (``success: false``, ``error``) fails it
with the run's error; the child session's ``end`` before its run ended completes it with
the reply, or fails it when there is none. Orphaning and a late completion work as for
any call. A child is followed only within its agent's document: a sub-agent of another
agent id (OpenClaw's ``agentId`` param) is stored under that agent, and the call is
orphaned after ``orphan_hours``. The announce OpenClaw posts to the requester's session
when the child ends (``subagent-announce.ts``: a run whose prompt it is, or a message) is
read when it names the child's session key (the newest format's ``session_key:``, the
oldest's stats line) or comes with the run id ``announce:v1:<key>:<run>``: the agent has
the outcome in that run, so the call is seen; a call still waiting (a child under another
agent) is finished by it, with the status and result it says; a pointer is replaced by the
reply. The middle format names only the child's session id: it is not matched (docs/traces.md,
"Tasks in a child session").

Bounded per agent: at most ``max_operations``; when more, finished operations the agent has
seen go first (oldest first), then unread ones, then pending ones. Every preview is a
redacted excerpt. Returns a new document (``msgspec.structs.replace``: ``integrity``, owned
by the shell, and fields not named here are carried over), never mutates its input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

import msgspec

from schemas.docs import Integrity, Operation, OperationsDoc
from schemas.events import FeedbackEvent, MessageEvent, RunEvent, SessionEvent, ToolEvent
from shared.config import TracesSettings, parse_redact_patterns
from shared.openclaw import contract_session
from workers.render import is_unread
from workers.traces.redact import as_text, excerpt
from workers.traces.tools import result_text, tool_error

_replace = msgspec.structs.replace

PREVIEW_CHARS: Final = 200
REQUEST_CHARS: Final = 80
SEEN_KIND: Final = "operation_seen"
# the params that say what a call asks, first found first ("task" of a spawned session, …)
REQUEST_KEYS: Final = ("task", "description", "prompt", "instruction", "instructions", "goal", "query", "question",
                       "message", "command", "cmd", "title", "subject", "name", "url", "path", "file")
_MAX_PARAMS_SHOWN: Final = 6
_ACCEPTED_JSON_CHARS: Final = 4096  # a content block's text read as the accepted JSON only when this short
CHILD_FAILED: Final = "the sub-agent's run failed"
CHILD_SILENT: Final = "the sub-agent's session ended without a reply"
_ANNOUNCE_CHARS: Final = 65_536  # of an announce read for its status and result
_ANNOUNCE_HEADER_CHARS: Final = 4096  # …and of its header, for the status (a line that never ends: quadratic)
# OpenClaw's announce of a finished sub-agent (src/agents/subagent-announce.ts), its result:
# the newest wraps it in markers, earlier ones put it under "Result:" / "Findings:" up to "Stats:"
_ANNOUNCE_RESULT: Final = (
    re.compile(r"<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>[ \t]*\n?(.*?)\n?<<<END_UNTRUSTED_CHILD_RESULT>>>", re.S),
    re.compile(r"^(?:Result|Findings):[ \t]*\n(.*?)(?=\n\nStats:|\Z)", re.S | re.M),
)
# …and its status: "status: completed successfully", or 'A subagent task "…" just failed: boom.'
_ANNOUNCE_STATUS: Final = (re.compile(r"^status:[ \t]*(.+?)[ \t]*$", re.M),
                           re.compile(r'" just (.+?)\.[ \t]*$', re.M))
_NO_OUTPUT: Final = "(no output)"


@dataclass(frozen=True, slots=True)
class OperationsConfig:
    orphan_after: timedelta
    max_operations: int
    redact: tuple[re.Pattern[str], ...]


def operations_config(settings: TracesSettings) -> OperationsConfig:
    return OperationsConfig(orphan_after=timedelta(hours=settings.orphan_hours),
                            max_operations=settings.max_operations,
                            redact=parse_redact_patterns(settings.redact_patterns))


def empty_operations_doc(ts: datetime) -> OperationsDoc:
    return OperationsDoc(updated=ts, operations=[], integrity=Integrity())


def orphaned(ops: list[Operation], now: datetime, orphan_after: timedelta) -> list[Operation]:
    """``ops`` as of ``now``: a call still pending ``orphan_after`` after it was made is failed
    as orphaned, finished at that deadline (not whenever a later event noticed it). The boot
    applies it at its trigger too: a briefing reads the documents as they were just before
    its session's start, and a task pending for 34 hours was still told as ``[PENDING]``."""
    hours = int(orphan_after.total_seconds() // 3600)
    reason = f"no result within {hours} h (orphaned)"
    return [
        _replace(op, status="failed", finished=op.started + orphan_after, preview=reason, open=False, seen=False,
                 orphaned=True)
        if op.status == "pending" and now - op.started > orphan_after else op
        for op in ops
    ]


def _retire(ops: list[Operation], limit: int) -> list[Operation]:
    """At most ``limit`` operations: seen ones leave first, then unread, then pending."""
    surplus = len(ops) - limit
    if surplus <= 0:
        return ops
    order = sorted(range(len(ops)), key=lambda i: (0 if ops[i].seen else 1 if ops[i].status != "pending" else 2,
                                                   ops[i].started, i))
    leaving = set(order[:surplus])
    return [op for i, op in enumerate(ops) if i not in leaving]


def _accepted_objects(result: Any) -> list[Mapping[str, Any]]:
    """Where a result may say it was accepted: itself, its ``details``, the JSON text of its
    content blocks or of itself (OpenClaw's ``jsonResult``: both the text and the details)."""
    found: list[Mapping[str, Any]] = []
    texts: list[str] = [result] if isinstance(result, str) else []
    if isinstance(result, Mapping):
        found.append(result)
        if isinstance(details := result.get("details"), Mapping):
            found.append(details)
        content = result.get("content")
        if isinstance(content, list):
            texts += [b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
    for raw in texts:
        text = raw.strip()
        if text.startswith("{") and len(text) <= _ACCEPTED_JSON_CHARS:
            try:
                value = msgspec.json.decode(text)
            except msgspec.DecodeError:
                continue
            if isinstance(value, Mapping):
                found.append(value)
    return found


def spawned_child(result: Any) -> tuple[str, str] | None:
    """``(child session, run id)`` of a result that says its task was accepted and runs in a
    child session (OpenClaw's ``sessions_spawn``: ``{status: "accepted", childSessionKey,
    runId}``), the session key as the stream stores it (``contract_session``); else None."""
    for found in _accepted_objects(result):
        key = found.get("childSessionKey")
        if found.get("status") == "accepted" and isinstance(key, str) and key.strip():
            run = found.get("runId")
            return contract_session(key.strip()), run.strip() if isinstance(run, str) else ""
    return None


def _matching(ops: list[Operation], event: ToolEvent, config: OperationsConfig) -> int | None:
    """The index of the pending operation a result answers — or of an orphaned one: a task
    that took longer than ``orphan_hours`` still delivers its result (it was told as failed,
    "no result within 24 h", and its real result was dropped). Without a call id (npm's
    plugin 0.2 sends none) the oldest open call of the tool in the session whose request
    the result's params repeat, else the oldest: two spawned tasks finishing in the other
    order were each told with the other's result."""
    candidates = [i for i, op in enumerate(ops) if (op.status == "pending" or op.orphaned) and not op.child_session]
    if event.call_id:
        return next((i for i in candidates if ops[i].call_id == event.call_id), None)
    same_tool = [i for i in candidates if ops[i].tool == event.tool and ops[i].session == event.session
                 and not ops[i].call_id]
    if event.params is not None and len(same_tool) > 1:
        asked = call_request(event.params, config.redact)
        return next((i for i in same_tool if ops[i].request == asked), same_tool[0])
    return same_tool[0] if same_tool else None


def _finish(op: Operation, event: ToolEvent, config: OperationsConfig) -> Operation:
    child = spawned_child(event.result) if event.error is None else None
    if child is not None:  # accepted: the task runs on in the child session
        return _replace(op, status="pending", finished=None, preview=None, seen=False, orphaned=False,
                        child_session=child[0], child_run=child[1])
    error = tool_error(event.error, event.result)
    text = as_text(error) if error is not None else result_text(event.result) if event.result is not None else ""
    preview = excerpt(text, PREVIEW_CHARS, config.redact) or None
    return _replace(op, status="failed" if error is not None else "completed", finished=event.ts,
                    preview=preview, seen=op.open, open=False, orphaned=False)


def call_request(params: object, redact: Iterable[re.Pattern[str]] = ()) -> str:
    """What a call asks, from its params, as a redacted excerpt: a text param that says it
    (``REQUEST_KEYS``, in that order), else the first few scalar params as ``name=value``,
    else the params as compact JSON; "" for none."""
    if params is None or params in ({}, [], ""):
        return ""
    text = ""
    if isinstance(params, dict):
        named = {str(k).lower(): v for k, v in params.items()}
        text = next((v for k in REQUEST_KEYS if isinstance(v := named.get(k), str) and v.strip()), "")
        if not text:
            scalars = [(k, v) for k, v in params.items() if isinstance(v, str | int | float)]
            text = ", ".join(f"{k}={v}" for k, v in scalars[:_MAX_PARAMS_SHOWN])
    return excerpt(text or as_text(params), REQUEST_CHARS, tuple(redact))


def _tool(ops: list[Operation], event: ToolEvent, kind: str, config: OperationsConfig) -> list[Operation] | None:
    if kind == "call":
        if any(op.id == event.id for op in ops):
            return None  # the same call again (a republished event)
        return [*ops, Operation(id=event.id, tool=event.tool, status="pending", started=event.ts, seen=False,
                                session=event.session, call_id=event.call_id or "", open=True,
                                request=call_request(event.params, config.redact))]
    index = _matching(ops, event, config)
    if index is None:
        return None  # a result of a call before the document's memory, or answered already
    return [*ops[:index], _finish(ops[index], event, config), *ops[index + 1:]]


def _turn_ended(ops: list[Operation], session: str) -> list[Operation]:
    return [_replace(op, open=False) if op.open and op.session == session else op for op in ops]


def _waits_on(op: Operation, session: str, run_id: str | None = None) -> bool:
    """The call waits (or was given up waiting: orphaned) on this child session or run."""
    return bool(op.child_session) and (op.status == "pending" or op.orphaned) and (
        op.child_session == session or (bool(run_id) and op.child_run == run_id))


def _child_said(ops: list[Operation], event: MessageEvent, config: OperationsConfig) -> list[Operation] | None:
    """The child's latest assistant message, remembered by the calls waiting on it."""
    if event.role != "assistant":
        return None
    reply = excerpt(event.content, PREVIEW_CHARS, config.redact)
    if not reply:
        return None
    changed = [_replace(op, child_reply=reply) if _waits_on(op, event.session) and op.child_reply != reply else op
               for op in ops]
    return changed if changed != ops else None


def _pointer(op: Operation) -> str:
    """The result of a child that finished without a reply on the stream: where to read it."""
    return f"the sub-agent finished; its reply is in its session {op.child_session}"


def _child_done(op: Operation, ts: datetime, error: str | None, config: OperationsConfig) -> Operation:
    """The child's task finished: its last reply is the call's result, or ``error`` its failure."""
    text = error if error is not None else op.child_reply or _pointer(op)
    return _replace(op, status="failed" if error is not None else "completed", finished=ts,
                    preview=excerpt(text, PREVIEW_CHARS, config.redact) or None, seen=False, open=False,
                    orphaned=False, child_reply="")


def _names(text: str, op: Operation) -> bool:
    """``text`` names the call's child session: its key whole (not the start of a longer key,
    a nested sub-agent's), or followed by ``:<its run id>`` (the announce's run id)."""
    key = op.child_session
    start = text.find(key)
    while start >= 0:
        end = start + len(key)
        if end == len(text) or not (text[end].isalnum() or text[end] in "-_:") or \
                (op.child_run and text.startswith(f":{op.child_run}", end)):
            return True
        start = text.find(key, start + 1)
    return False


def announce_outcome(text: str) -> tuple[str | None, str]:
    """``(error, result)`` of an announce of a finished sub-agent: ``error`` None when it
    succeeded ("completed successfully", or a status it does not say), else the failure
    ("failed: <reason>", "timed out"); ``result`` the sub-agent's reply ("" for none)."""
    head = text[:_ANNOUNCE_CHARS]
    found = [m for p in _ANNOUNCE_RESULT if (m := p.search(head))]
    result = found[0].group(1).strip() if found else ""
    header = head[:min([_ANNOUNCE_HEADER_CHARS, *(m.start() for m in found)])]  # a line of the result is no status
    status = next((m.group(1).strip() for p in _ANNOUNCE_STATUS if (m := p.search(header))), "")
    error: str | None = None
    if status.lower().startswith("failed"):
        error = status.partition(":")[2].strip() or "failed"
    elif status.lower().startswith("timed out"):
        error = "timed out"
    return error, "" if result == _NO_OUTPUT else result


def _told(op: Operation) -> bool:
    """The agent has had the call's outcome (it was shown, or reached it in its turn)."""
    return op.status != "pending" and not op.orphaned and op.seen


def _announced(ops: list[Operation], session: str, text: str | None, ts: datetime, config: OperationsConfig,
               run_id: str | None = None) -> list[Operation] | None:
    """OpenClaw's announce of a finished sub-agent reached the requester — a run whose prompt
    it is, or a message of the requester's session — naming the child's session key (the
    newest format's ``session_key:``, the oldest's ``sessionKey`` in its stats line; the run
    id ``announce:v1:<key>:<run>``): the agent has the outcome now (seen). A call still
    waiting is finished by it, with its result and status; a finished one whose result was
    only a pointer to the child's session gets the reply."""
    if not text and not run_id:
        return None
    hits = {i for i, op in enumerate(ops) if op.child_session and op.child_session != session and not _told(op)
            and any(_names(t, op) for t in (text, run_id) if t)}
    if not hits:
        return None
    error, result = announce_outcome(text or "")
    reply = excerpt(result, PREVIEW_CHARS, config.redact)
    return [_told_by_announce(op, ts, error, reply, config) if i in hits else op for i, op in enumerate(ops)]


def _told_by_announce(op: Operation, ts: datetime, error: str | None, reply: str,
                      config: OperationsConfig) -> Operation:
    if op.status == "pending" or op.orphaned:
        return _replace(_child_done(_replace(op, child_reply=reply or op.child_reply), ts, error, config), seen=True)
    if reply and op.preview == excerpt(_pointer(op), PREVIEW_CHARS, config.redact):
        return _replace(op, preview=reply, seen=True)
    return _replace(op, seen=True)


def _children_done(ops: list[Operation], event: RunEvent | SessionEvent, kind: str,
                   config: OperationsConfig) -> list[Operation]:
    """The calls whose child session's run ended (or failed), or whose child session ended."""
    out = []
    for op in ops:
        if isinstance(event, RunEvent) and _waits_on(op, event.session, event.run_id):
            failed = kind == "error" or event.success is False
            out.append(_child_done(op, event.ts, (event.error or CHILD_FAILED) if failed else None, config))
        elif isinstance(event, SessionEvent) and _waits_on(op, event.session):
            out.append(_child_done(op, event.ts, None if op.child_reply else CHILD_SILENT, config))
        else:
            out.append(op)
    return out


def acknowledged(event: FeedbackEvent) -> set[str]:
    """The operation ids an ``operation_seen`` event names."""
    ids = {i for i in event.value if isinstance(i, str)} if isinstance(event.value, list) else set()
    return ids | ({event.target} if event.target else set())


def _seen(ops: list[Operation], ids: Iterable[str]) -> list[Operation] | None:
    wanted = set(ids)
    if not any(op.id in wanted and is_unread(op) for op in ops):
        return None
    return [_replace(op, seen=True) if op.id in wanted and is_unread(op) else op for op in ops]


OperationEvent = ToolEvent | RunEvent | SessionEvent | FeedbackEvent | MessageEvent


def _ends_turn(event: OperationEvent, kind: str) -> bool:
    return (isinstance(event, RunEvent) and kind in ("end", "error")) or (isinstance(event, SessionEvent)
                                                                          and kind == "end")


def _changed(
    ops: list[Operation], event: OperationEvent, kind: str, config: OperationsConfig
) -> list[Operation] | None:
    if isinstance(event, ToolEvent):
        return _tool(ops, event, kind, config)
    if isinstance(event, FeedbackEvent):
        return _seen(ops, acknowledged(event)) if event.kind == SEEN_KIND else None
    if isinstance(event, MessageEvent):
        if event.role == "assistant":
            return _child_said(ops, event, config)
        return _announced(ops, event.session, event.content, event.ts, config)
    if isinstance(event, RunEvent) and kind == "start":
        return _announced(ops, event.session, event.prompt, event.ts, config, event.run_id)
    if _ends_turn(event, kind):
        ended = _turn_ended(_children_done(ops, event, kind, config), event.session)
        return ended if ended != ops else None
    return None


def _concerns_a_child(doc: OperationsDoc | None, event: MessageEvent) -> bool:
    """A sub-agent's reply in a child session a call waits on, or a message naming such a child
    (an announce); a plain substring test: most messages leave here."""
    if doc is None:
        return False
    if event.role == "assistant":
        return any(_waits_on(op, event.session) for op in doc.operations)
    return any(op.child_session and not _told(op) and op.child_session in event.content for op in doc.operations)


def apply_operation_event(
    doc: OperationsDoc | None, event: OperationEvent, kind: str, config: OperationsConfig
) -> OperationsDoc | None:
    """The document after one event of its agent (``kind``: the subject's last token);
    None when nothing changed. A message matters only in a child session a call waits on."""
    if isinstance(event, MessageEvent) and not _concerns_a_child(doc, event):
        return None
    base = doc if doc is not None else empty_operations_doc(event.ts)
    ops = orphaned(base.operations, event.ts, config.orphan_after)
    changed = _changed(ops, event, kind, config)
    if changed is None and ops == base.operations:
        return None
    ops = _retire(changed if changed is not None else ops, config.max_operations)
    return _replace(base, updated=event.ts if event.ts > base.updated else base.updated, operations=ops)
