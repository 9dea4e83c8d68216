"""Plain-text tables of the API replies: the ``cortex`` commands print them, the MCP tools
return them to a model. One rendering, so a person and an agent read the same thing.

Pure functions from reply Structs to text; ``width`` cuts long cells (``None``: never).
"""

from __future__ import annotations

from collections.abc import Sequence

from schemas.api import CommitmentsReply, DecisionsReply, RecallReply, SearchReply, StatusReply, ThreadsReply

Rows = tuple[list[str], list[list[str]]]


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int | None = 60) -> str:
    cells = [[c if width is None or len(c) <= width else c[: width - 1] + "…" for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    line = "  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True))
    body = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join([line.rstrip(), *body])


def thread_rows(reply: ThreadsReply) -> Rows:
    return (["id", "status", "priority", "title", "waiting for", "last activity"],
            [[t.id, t.status, t.priority, t.title, t.waiting_for or "", t.last_activity.isoformat()]
             for t in reply.threads])


def decision_rows(reply: DecisionsReply) -> Rows:
    return (["id", "date", "impact", "who", "what"], [[d.id, d.date, d.impact, d.who, d.what] for d in reply.decisions])


def commitment_rows(reply: CommitmentsReply) -> Rows:
    return (["id", "status", "who", "what", "due"],
            [[c.id, c.status, c.who, c.what, c.due or ""] for c in reply.commitments])


def memory_rows(reply: RecallReply, id_chars: int | None = 8) -> Rows:
    """Ranked memories; ``id_chars`` shortens the ids (``None``: whole, as ``forget`` needs them)."""
    return (["score", "type", "scope", "memory", "id"],
            [[f"{m.score:.3f}", m.type, m.scope, m.content + (" (superseded)" if m.superseded_by else ""),
              m.id[:id_chars] if id_chars else m.id] for m in reply.memories])


def hit_rows(reply: SearchReply) -> Rows:
    return (["score", "kind", "id", "text"], [[f"{h.score:.3f}", h.kind, h.id, h.text] for h in reply.hits])


def status_text(reply: StatusReply, width: int | None = 60) -> str:
    """The agent's counts and mood, then each worker's lag for the agent's partition."""
    counts = ", ".join(f"{name.replace('_', ' ')} {value}" for name, value in reply.counts.items())
    rows = [[w.worker, str(w.pending) if w.pending >= 0 else "no consumer", str(w.checkpoint), w.last_event_ts or ""]
            for w in reply.workers]
    table = render_table(["worker", "pending", "checkpoint", "last event"], rows, width)
    return f"{reply.agent}: {counts}; mood {reply.mood}\n\n{table}"
