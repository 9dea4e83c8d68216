"""The pages of ``cortex web`` as HTML text: pure functions from what was read to the page.

Every value from a document or an event is escaped here (``esc``), once, where it meets
the markup. A page is readable without JavaScript; the only script (``static/live.js``)
swaps ``<main>`` for a fresh copy when the server says one of the page's documents
changed. Corrections are plain forms posted to the server (a forget first shows a
confirmation page), so everything works from the keyboard and without the script.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from datetime import datetime
from urllib.parse import quote

import msgspec

from schemas.api import MemoryReply, RecalledMemory
from schemas.docs import Commitment, Decision, Fact, Finding, Operation, SessionDigest, Thread, TimelineItem
from workers.web.markdown import to_html

# (path under the agent, the link's text, the KV bucket whose change refreshes it)
SECTIONS: tuple[tuple[str, str], ...] = (
    ("briefing", "Briefing"), ("threads", "Threads"), ("decisions", "Decisions"),
    ("commitments", "Commitments"), ("facts", "Facts"), ("memories", "Memories"), ("traces", "Traces"),
    ("timeline", "Timeline"),
)


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def when(ts: datetime | None) -> str:
    """A time as a person reads it (UTC, to the minute), in a ``<time>`` element."""
    if ts is None:
        return "—"
    return f'<time datetime="{esc(ts.isoformat())}">{esc(ts.strftime("%Y-%m-%d %H:%M"))}</time>'


def agent_url(agent: str, *parts: str) -> str:
    return "/agents/" + "/".join(quote(p, safe="") for p in (agent, *parts))


class Frame(msgspec.Struct, frozen=True, kw_only=True):
    """What every page around its content needs: the title, the agent and section it shows
    (None on the overview), the live-update source, a notice after a correction."""

    title: str
    agent: str | None = None
    section: str | None = None
    live: str | None = None
    notice: str | None = None


def layout(frame: Frame, body: str) -> str:
    live = f' data-live="{esc(frame.live)}"' if frame.live else ""
    notice = f'<p class="notice" role="status">{esc(frame.notice)}</p>' if frame.notice else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{esc(frame.title)} · Cortex</title>"
        '<link rel="stylesheet" href="/static/style.css"><script src="/static/live.js" defer></script>'
        f"</head><body{live}>"
        '<a class="skip" href="#main">Skip to content</a>'
        f"<header>{_navigation(frame)}</header>"
        f'<main id="main" tabindex="-1">{notice}<h1>{esc(frame.title)}</h1>{body}</main>'
        "</body></html>\n"
    )


def _navigation(frame: Frame) -> str:
    crumbs = '<a href="/">Agents</a>'
    if frame.agent is None:
        return f'<nav aria-label="Cortex">{crumbs}</nav>'
    links = []
    for path, label in SECTIONS:
        current = ' aria-current="page"' if path == frame.section else ""
        links.append(f'<li><a href="{agent_url(frame.agent, path)}"{current}>{label}</a></li>')
    return (f'<nav aria-label="Cortex">{crumbs} › <strong>{esc(frame.agent)}</strong></nav>'
            f'<nav aria-label="{esc(frame.agent)}"><ul class="sections">{"".join(links)}</ul></nav>')


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], empty: str, label: str) -> str:
    """Cells are HTML already (escaped by their makers)."""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    if not body:
        return f'<p class="empty">{esc(empty)}</p>'
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in headers)
    return f'<table aria-label="{esc(label)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def action(url: str, label: str, *, danger: bool = False, fields: Sequence[tuple[str, str]] = ()) -> str:
    """A correction: a form posting to ``url`` (a button, reachable with Tab, pressed with Enter)."""
    hidden = "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in fields)
    cls = ' class="danger"' if danger else ""
    return f'<form method="post" action="{esc(url)}" class="inline">{hidden}<button{cls}>{esc(label)}</button></form>'


def why(agent: str, kind: str, item_id: str) -> str:
    """The "why is this here?" link: the item's source events, read from the stream."""
    return f'<a href="{agent_url(agent, "source", kind, item_id)}" title="the messages it came from">why?</a>'


# --------------------------------------------------------------------------- overview


class AgentRow(msgspec.Struct, frozen=True, kw_only=True):
    agent: str
    last_activity: datetime | None
    lagging: list[str]
    pending: int
    findings: int
    open_commitments: int
    threads: int


def agents_page(rows: Sequence[AgentRow], notice: str | None = None) -> str:
    cells = ([f'<a href="{agent_url(r.agent, "briefing")}">{esc(r.agent)}</a>', when(r.last_activity),
              esc(", ".join(r.lagging) or "none") + (f" · {r.pending} events pending" if r.pending else ""),
              str(r.threads), str(r.open_commitments), str(r.findings)] for r in rows)
    body = table(["agent", "last activity", "lagging", "open threads", "open commitments", "findings"], cells,
                 "No agent has a document yet: publish events (`cortex publish`) and run the workers (`cortex up`).",
                 "agents")
    return layout(Frame(title="Agents", live="/live", notice=notice), body)


# --------------------------------------------------------------------------- one agent's pages


def briefing_page(agent: str, markdown: str, generated: datetime | None, lagging: Sequence[str]) -> str:
    lag = f'<p class="warn">Lagging when generated: {esc(", ".join(lagging))}</p>' if lagging else ""
    meta = (f'<p class="meta">As the agent would receive it now (generated {when(generated)}, '
            f"{len(markdown)} characters).</p>")
    body = meta + lag + f'<article class="briefing">{to_html(markdown)}</article>' if markdown else \
        '<p class="empty">No briefing yet: none of this agent\'s events is applied (are the workers running?).</p>'
    return layout(Frame(title=f"Briefing of {agent}", agent=agent, section="briefing", live=live_url(agent, "boot")),
                  body)


def live_url(agent: str, *watch: str) -> str:
    return agent_url(agent, "live") + "?" + "&".join(f"watch={w}" for w in watch)


def threads_page(agent: str, threads: Sequence[Thread], notice: str | None = None) -> str:
    rows = ([esc(t.title) + (f'<div class="sub">{esc(t.summary)}</div>' if t.summary else ""),
             esc(t.status), esc(t.priority),
             esc(t.waiting_for or ""), when(t.last_activity),
             why(agent, "thread", t.id) + (" " + action(agent_url(agent, "threads", t.id, "close"), "Close")
                                           if t.status == "open" else "")]
            for t in threads)
    body = table(["thread", "status", "priority", "waiting for", "last activity", ""], rows,
                 f"No threads of {agent}.", "threads")
    return layout(Frame(title=f"Threads of {agent}", agent=agent, section="threads",
                        live=live_url(agent, "threads"), notice=notice), body)


def decisions_page(agent: str, decisions: Sequence[Decision], notice: str | None = None) -> str:
    rows = ([esc(d.what) + (f'<div class="sub">because {esc(d.why)}</div>' if d.why else ""), esc(d.who),
             esc(d.impact), esc(d.date),
             why(agent, "decision", d.id) + " " + action(agent_url(agent, "decisions", d.id, "reject"), "Wrong")]
            for d in reversed(decisions))
    body = table(["decision", "who", "impact", "date", ""], rows, f"No decisions of {agent}.", "decisions")
    return layout(Frame(title=f"Decisions of {agent}", agent=agent, section="decisions",
                        live=live_url(agent, "decisions"), notice=notice), body)


def commitments_page(agent: str, commitments: Sequence[Commitment], notice: str | None = None) -> str:
    rows = ([esc(c.what), esc(c.who), esc(c.status), esc(c.due or ""), when(c.created),
             why(agent, "event", c.source_event) + (" " + action(agent_url(agent, "commitments", c.id, "done"),
                                                                 "Mark done") if c.status != "done" else "")
             + " " + action(agent_url(agent, "commitments", c.id, "reject"), "Not a commitment")]
            for c in commitments)
    body = table(["commitment", "who", "status", "due", "made", ""], rows, f"No commitments of {agent}.",
                 "commitments")
    return layout(Frame(title=f"Commitments of {agent}", agent=agent, section="commitments",
                        live=live_url(agent, "commitments"), notice=notice), body)


def facts_page(agent: str, facts: Sequence[Fact], names: dict[str, str]) -> str:
    rows = ([f"{f.relevance:.2f}", esc(names.get(f.subject, f.subject)), esc(f.predicate),
             esc(names.get(f.object, f.object)), esc(f.source), when(f.created_at), why(agent, "fact", f.id)]
            for f in facts)
    body = table(["relevance", "subject", "predicate", "object", "source", "learnt", ""], rows,
                 f"No facts known about {agent}'s world yet.", "facts")
    return layout(Frame(title=f"Facts of {agent}", agent=agent, section="facts", live=live_url(agent, "knowledge")),
                  body)


def search_form(agent: str, query: str) -> str:
    return (f'<form method="get" action="{agent_url(agent, "memories")}" role="search" class="search">'
            '<label for="q">Recall</label>'
            f'<input id="q" name="q" type="search" value="{esc(query)}" placeholder="what to recall, in words" '
            'autofocus><button>Search</button></form>')


def memory_actions(agent: str, m_id: str) -> str:
    return " ".join((why(agent, "memory", m_id), action(agent_url(agent, "memories", m_id, "pin"), "Pin"),
                     f'<a href="{agent_url(agent, "memories", m_id, "edit")}">Edit</a>',
                     f'<a href="{agent_url(agent, "memories", m_id, "forget")}" class="danger">Forget…</a>'))


def memories_page(agent: str, query: str, memories: Sequence[RecalledMemory] | None, tokens: int,
                  notice: str | None = None) -> str:
    """The recall search: each memory with its score and what made it (similarity to the
    query, then recency, frequency, type and scope weigh it into the score)."""
    if memories is None:
        results = '<p class="meta">Search the agent\'s memories as the agent would recall them.</p>'
    else:
        rows = ([esc(m.content), f'<span title="the ranked score">{m.score:.3f}</span>',
                 f'<span title="similarity to the query">{m.similarity:.3f}</span>',
                 esc(m.type), esc(m.scope), f'<code title="{esc(m.id)}">{esc(m.id[:8])}</code>',
                 memory_actions(agent, m.id)] for m in memories)
        results = (f'<p class="meta">{len(memories)} memories, {tokens} tokens. The score weighs the '
                   "similarity to the query by recency, how often the memory was used, its type and "
                   "its scope.</p>" if memories else "") + \
            table(["memory", "score", "similarity", "type", "scope", "id", ""], rows,
                  f"No memory of {agent} matches.", "memories")
    return layout(Frame(title=f"Memories of {agent}", agent=agent, section="memories", notice=notice),
                  search_form(agent, query) + results)


def memory_text(reply: MemoryReply) -> str:
    notes = ["pinned" if reply.pinned else "", f"replaced by {reply.superseded_by}" if reply.superseded_by else ""]
    said = ", ".join(n for n in notes if n)
    return (f"<blockquote>{esc(reply.content)}</blockquote>"
            f'<p class="meta">{esc(reply.type)} · {esc(reply.scope)} · from {esc(reply.source_event)} at '
            f"{when(reply.created_at)}{' · ' + esc(said) if said else ''}</p>")


def forget_page(agent: str, reply: MemoryReply) -> str:
    """The confirmation, as the CLI's destructive commands ask for one: nothing is removed
    until the person presses the button on this page."""
    url = agent_url(agent, "memories", reply.id, "forget")
    body = (f"{memory_text(reply)}<p>Forgetting removes this memory from the store: it is no longer recalled "
            "and no briefing mentions it. It is published as a <code>memory_forget</code> FeedbackEvent, so a "
            f"replay forgets it too.</p>{action(url, 'Forget this memory', danger=True, fields=[('confirm', 'yes')])} "
            f'<a href="{agent_url(agent, "memories")}">Cancel</a>')
    return layout(Frame(title="Forget this memory?", agent=agent, section="memories"), body)


def edit_page(agent: str, reply: MemoryReply) -> str:
    url = agent_url(agent, "memories", reply.id, "update")
    body = (f"{memory_text(reply)}<form method=\"post\" action=\"{esc(url)}\" class=\"edit\">"
            '<label for="content">New statement</label>'
            f'<textarea id="content" name="content" rows="4" required>{esc(reply.content)}</textarea>'
            '<button>Update</button></form><p class="meta">Published as a <code>memory_update</code> '
            "FeedbackEvent; the old statement stays in the memory's history.</p>")
    return layout(Frame(title="Change a memory", agent=agent, section="memories"), body)


def traces_page(agent: str, findings: Sequence[Finding], operations: Sequence[Operation]) -> str:
    rows = ([esc(f.severity), esc(f.signal), esc(f.summary), when(f.last_ts),
             " ".join(f'<a href="{agent_url(agent, "source", "event", e)}">{esc(e)}</a>' for e in f.events[:5])]
            for f in findings)
    ops = ([esc(o.status) + (" (unread)" if not o.seen else ""), esc(o.tool), esc(o.request or o.preview or ""),
            when(o.started), when(o.finished)] for o in operations)
    body = ("<h2>Findings</h2>" + table(["severity", "signal", "finding", "last", "events"], rows,
                                         "No failure patterns found.", "findings")
            + "<h2>Pending operations</h2>" + table(["status", "tool", "request", "started", "finished"], ops,
                                                    "No operation waits to be heard.", "operations"))
    return layout(Frame(title=f"Traces of {agent}", agent=agent, section="traces",
                        live=live_url(agent, "traces", "operations")), body)


def timeline_page(agent: str, items: Sequence[TimelineItem], sessions: Sequence[SessionDigest]) -> str:
    rows = ([when(i.ts), esc(i.kind), esc(i.text)] for i in items)
    digests = ([esc(s.session), when(s.started), when(s.ended), str(s.messages), esc(", ".join(s.speakers))]
               for s in sessions)
    body = (table(["when", "what", ""], rows, "No sessions or compactions yet.", "timeline")
            + "<h2>Sessions</h2>" + table(["session", "started", "ended", "messages", "speakers"], digests,
                                           "No session digests yet.", "sessions"))
    return layout(Frame(title=f"Timeline of {agent}", agent=agent, section="timeline",
                        live=live_url(agent, "narratives")), body)


class SourceEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One stored event as the source page shows it."""

    seq: int
    id: str
    kind: str
    ts: datetime
    who: str
    text: str
    session: str


def source_page(agent: str, what: str, found: Sequence[SourceEvent], scanned: int, complete: bool) -> str:
    rows = ([str(e.seq), when(e.ts), esc(e.kind), esc(e.who), f'<div class="said">{esc(e.text)}</div>',
             esc(e.session)] for e in found)
    tail = "" if complete else f" (stopped after {scanned} events: the rest of the stream was not read)"
    body = (f'<p class="meta">Where {esc(what)} came from: the events stored in the stream ({scanned} events of '
            f"{esc(agent)} read{esc(tail)}).</p>"
            + table(["seq", "when", "event", "who", "said", "session"], rows,
                    "No stored event matches: it may have been removed from the stream (retention, a forget).",
                    "source events"))
    return layout(Frame(title="Why is this here?", agent=agent), body)


def login_page(message: str | None = None) -> str:
    said = f'<p class="warn" role="alert">{esc(message)}</p>' if message else ""
    body = (f"{said}<p>This server serves the agents of its token file. Give the bearer token of your agent "
            "(the one its <code>cortex mcp --http --tokens</code> entry uses).</p>"
            '<form method="post" action="/login" class="edit"><label for="token">Token</label>'
            '<input id="token" name="token" type="password" autocomplete="off" required autofocus>'
            "<button>Sign in</button></form>")
    return layout(Frame(title="Sign in"), body)


def error_page(status: int, message: str, agent: str | None = None) -> str:
    return layout(Frame(title={403: "Not yours", 404: "Not found"}.get(status, "Cannot show this"), agent=agent),
                  f'<p class="warn" role="alert">{esc(message)}</p>')
