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

Bounded per agent: at most ``max_operations``; when more, finished operations the agent has
seen go first (oldest first), then unread ones, then pending ones. Every preview is a
redacted excerpt. Returns a new document (``msgspec.structs.replace``: ``integrity``, owned
by the shell, and fields not named here are carried over), never mutates its input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

import msgspec

from schemas.docs import Integrity, Operation, OperationsDoc
from schemas.events import FeedbackEvent, RunEvent, SessionEvent, ToolEvent
from shared.config import TracesSettings, parse_redact_patterns
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


def is_unread(op: Operation) -> bool:
    """A result the agent has not been shown (``[NEW RESULT]`` / ``[FAILED]``)."""
    return op.status != "pending" and not op.seen


def is_waiting(op: Operation) -> bool:
    """Still pending after its turn ended (``[PENDING]``); a call in a running turn is not."""
    return op.status == "pending" and not op.open


def marker(op: Operation) -> str:
    """The design's marker of an operation the agent must hear about (``[PENDING]``,
    ``[NEW RESULT]``, ``[FAILED]``), else its plain status."""
    if is_waiting(op):
        return "[PENDING]"
    if is_unread(op):
        return "[FAILED]" if op.status == "failed" else "[NEW RESULT]"
    return op.status


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


def _matching(ops: list[Operation], event: ToolEvent, config: OperationsConfig) -> int | None:
    """The index of the pending operation a result answers — or of an orphaned one: a task
    that took longer than ``orphan_hours`` still delivers its result (it was told as failed,
    "no result within 24 h", and its real result was dropped). Without a call id (npm's
    plugin 0.2 sends none) the oldest open call of the tool in the session whose request
    the result's params repeat, else the oldest: two spawned tasks finishing in the other
    order were each told with the other's result."""
    candidates = [i for i, op in enumerate(ops) if op.status == "pending" or op.orphaned]
    if event.call_id:
        return next((i for i in candidates if ops[i].call_id == event.call_id), None)
    same_tool = [i for i in candidates if ops[i].tool == event.tool and ops[i].session == event.session
                 and not ops[i].call_id]
    if event.params is not None and len(same_tool) > 1:
        asked = call_request(event.params, config.redact)
        return next((i for i in same_tool if ops[i].request == asked), same_tool[0])
    return same_tool[0] if same_tool else None


def _finish(op: Operation, event: ToolEvent, config: OperationsConfig) -> Operation:
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


def acknowledged(event: FeedbackEvent) -> set[str]:
    """The operation ids an ``operation_seen`` event names."""
    ids = {i for i in event.value if isinstance(i, str)} if isinstance(event.value, list) else set()
    return ids | ({event.target} if event.target else set())


def _seen(ops: list[Operation], ids: Iterable[str]) -> list[Operation] | None:
    wanted = set(ids)
    if not any(op.id in wanted and is_unread(op) for op in ops):
        return None
    return [_replace(op, seen=True) if op.id in wanted and is_unread(op) else op for op in ops]


OperationEvent = ToolEvent | RunEvent | SessionEvent | FeedbackEvent


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
    if _ends_turn(event, kind):
        ended = _turn_ended(ops, event.session)
        return ended if ended != ops else None
    return None


def apply_operation_event(
    doc: OperationsDoc | None, event: OperationEvent, kind: str, config: OperationsConfig
) -> OperationsDoc | None:
    """The document after one event of its agent (``kind``: the subject's last token);
    None when nothing changed."""
    base = doc if doc is not None else empty_operations_doc(event.ts)
    ops = orphaned(base.operations, event.ts, config.orphan_after)
    changed = _changed(ops, event, kind, config)
    if changed is None and ops == base.operations:
        return None
    ops = _retire(changed if changed is not None else ops, config.max_operations)
    return _replace(base, updated=event.ts if event.ts > base.updated else base.updated, operations=ops)
