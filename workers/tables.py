"""Plain-text tables of the API replies: the ``cortex`` commands print them, the MCP tools
return them to a model. One rendering, so a person and an agent read the same thing.

Pure functions from reply Structs to text; ``width`` cuts long cells (``None``: never).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate

from wcwidth import wcswidth, wcwidth

from schemas.api import (
    CommitmentsReply,
    DecisionsReply,
    OperationsReply,
    RecallReply,
    SearchReply,
    StatusReply,
    ThreadsReply,
    TracesReply,
)
from schemas.docs import Finding
from workers.render import commitment_task, marker

Rows = tuple[list[str], list[list[str]]]


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal: a CJK character or an emoji two, a combining mark
    none (``len`` counted each one, so such cells pushed their row's columns out)."""
    return max(wcswidth(text), 0)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int | None = 60) -> str:
    """Columns as wide as their widest cell on screen, every row one line: a cell of several
    lines (a memory of a few messages) is one, its line breaks made spaces — else it broke
    the rows of its table apart. The long free text is each table's last column, so no line
    is padded to the width of another row's text. ``width`` is in columns too."""
    rows = [[_flat(c) for c in row] for row in rows]
    cells = rows if width is None else [[_cut(c, width) for c in row] for row in rows]
    if any(len(r) != len(headers) for r in cells):
        raise ValueError(f"every row needs {len(headers)} cells")
    shown = [[(c, display_width(c)) for c in row] for row in [[h.upper() for h in headers], *cells]]
    widths = [max(row[i][1] for row in shown) for i in range(len(headers))]
    return "\n".join("  ".join(c + " " * (w - n) for (c, n), w in zip(row, widths, strict=True)).rstrip()
                     for row in shown)


def _cut(cell: str, width: int) -> str:
    """``cell`` within ``width`` columns, cut between words with "…" ("… the plan is to use…",
    not "… to use Stri…"); a word longer than half the width is cut where the width falls."""
    if display_width(cell) <= width:
        return cell
    # the cut falls at the first character past width - 1 columns (one is left for the ellipsis)
    columns = accumulate(max(wcwidth(char), 0) for char in cell)
    end = next((i for i, used in enumerate(columns) if used > width - 1), len(cell) - 1)
    head = cell[:end]
    if head[-1:].isalnum() and cell[end : end + 1].isalnum():
        space = head.rfind(" ")
        if space > end // 2:
            head = head[:space]
    return head.rstrip(" ,;:-–—") + "…"


def _flat(cell: str) -> str:
    """One line of printable text: line breaks and tabs become spaces, any other control
    character (an escape sequence from a message) the replacement character."""
    if "\n" in cell or "\r" in cell or "\t" in cell:
        cell = " ".join(cell.split())
    return _CONTROL.sub("\ufffd", cell) if _CONTROL.search(cell) else cell


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def thread_rows(reply: ThreadsReply) -> Rows:
    return (["id", "status", "priority", "title", "waiting for", "last activity"],
            # a closed thread waits for nothing any more (its last wait is history)
            [[t.id, t.status, t.priority, t.title, (t.waiting_for or "") if t.status == "open" else "",
              t.last_activity.isoformat()] for t in reply.threads])


def decision_rows(reply: DecisionsReply) -> Rows:
    return (["id", "date", "impact", "who", "what"], [[d.id, d.date, d.impact, d.who, d.what] for d in reply.decisions])


def commitment_rows(reply: CommitmentsReply) -> Rows:
    return (["id", "status", "who", "due", "what"],
            [[c.id, c.status, c.who, c.due or "", commitment_task(c)] for c in reply.commitments])


def memory_rows(reply: RecallReply, id_chars: int | None = 8) -> Rows:
    """Ranked memories; ``id_chars`` shortens the ids (``None``: whole, as ``forget`` needs them)."""
    return (["score", "type", "scope", "id", "memory"],
            [[f"{m.score:.3f}", m.type, m.scope, m.id[:id_chars] if id_chars else m.id,
              m.content + (" (superseded)" if m.superseded_by else "")] for m in reply.memories])


def hit_rows(reply: SearchReply) -> Rows:
    return (["score", "kind", "id", "text"], [[f"{h.score:.3f}", h.kind, h.id, h.text] for h in reply.hits])


def status_text(reply: StatusReply, width: int | None = 60) -> str:
    """The agent's counts and mood, then each worker's lag for the agent's partition."""
    counts = ", ".join(f"{name.replace('_', ' ')} {value}" for name, value in reply.counts.items())
    rows = [[w.worker, str(w.pending) if w.pending >= 0 else "no consumer", str(w.checkpoint), w.last_event_ts or ""]
            for w in reply.workers]
    table = render_table(["worker", "pending", "checkpoint", "last event"], rows, width)
    return f"{reply.agent}: {counts}; mood {reply.mood}\n\n{table}"


def _severity(finding: Finding) -> str:
    if finding.triage is None:
        return finding.severity
    return f"{finding.severity} (triage: {'kept' if finding.triage.keep else 'dismissed'})"


def finding_rows(reply: TracesReply) -> Rows:
    """Findings, newest first; Claude's triage, where there is one, beside the severity."""
    return (["when", "severity", "signal", "session", "summary"],
            [[f.last_ts.isoformat(timespec="minutes"), _severity(f), f.signal, f.session, _finding_summary(f)]
             for f in reply.findings])


def _finding_summary(f: Finding) -> str:
    """The finding's summary; a doom loop the agent got out of says when (and after what)."""
    if f.resolved_ts is None:
        return f.summary
    after = f" after {f.resolved_after}" if f.resolved_after else ""
    return f"{f.summary} — worked at {f.resolved_ts.isoformat(timespec='minutes')}{after}"


def operation_rows(reply: OperationsReply) -> Rows:
    """Operations; a task still running in a child session (OpenClaw's ``sessions_spawn``)
    says which, where a result would be."""
    return (["started", "state", "tool", "id", "request", "result"],
            [[op.started.isoformat(timespec="minutes"), marker(op), op.tool, op.id, op.request,
              op.preview or (f"running in {op.child_session}" if op.status == "pending" and op.child_session else "")]
             for op in reply.operations])


def traces_text(agent: str, findings: TracesReply, operations: OperationsReply, width: int | None = 100) -> str:
    """The findings and then the operations, each as a table, or a line saying there are none."""
    parts = [render_table(*finding_rows(findings), width=width) if findings.findings
             else f"(no failure findings for {agent})"]
    if operations.operations:
        parts.append("Operations:\n" + render_table(*operation_rows(operations), width=width))
    return "\n\n".join(parts) + "\n"
