"""What the briefing's sections share (``shared.briefing``): each lives in its worker's
folder, and no worker imports another's, so the pieces two or more of them use live here.

* Fitting blocks into a section's budget (``section``, ``fit_blocks``, ``clip``,
  ``bounded``): every section, and boot's frame, keep whole items within a budget the same
  way (the reference's layout: a heading, the items, a blank line).
* Claude's wording (``enhance_threads``, ``enhance_decisions``, ``enhance_commitments``):
  the narrative worker keeps an overlay of reworded items (``NarrativeDoc.enhanced``,
  ``workers.narrative.enhance``); the threads, decisions and commitments sections show the
  items in it. Applied at render time, so an item newer than the last batch shows its
  extracted text.
* "Said already" (``said_before``): the narrative's quotes and the rules under Rules & Key
  Memories leave out what a sentence the work sections show already says.
* ``describe_age`` ("3h 5m ago"), the state line's and the snapshot's, and ``false_claims``
  (the quotes of claims the trace analyzer found false), the threads' and commitments'.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import timedelta

import msgspec

from schemas.docs import Commitment, Decision, Enhancements, Finding, Thread
from workers.render import fact_parts

_replace = msgspec.structs.replace
_CLIPPED = "…"


def clip(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, marked with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    if limit <= len(_CLIPPED):
        return text[: max(limit, 0)]
    return text[: limit - len(_CLIPPED)] + _CLIPPED


def bounded(text: str, budget: int) -> str:
    """A whole section within ``budget``, still ending with its newline when cut."""
    if len(text) <= budget:
        return text
    return clip(text.rstrip("\n"), budget - 1) + "\n"


def fit_blocks(blocks: Sequence[str], budget: int) -> list[str]:
    """The leading blocks whose newline-joined length stays within ``budget``.

    Whole blocks only, so an item is never cut in the middle; but when not even the
    first fits, it is clipped rather than dropped, so a section with data is never empty.
    """
    taken: list[str] = []
    used = 0
    for block in blocks:
        cost = len(block) + 1
        if used + cost > budget:
            if not taken and budget > 1:
                taken.append(clip(block, budget - 1))
            break
        taken.append(block)
        used += cost
    return taken


def section(heading: str, blocks: Sequence[str], budget: int) -> tuple[str, int]:
    """A section of ``heading`` and as many blocks as its budget holds, and that count.

    The text ends with a newline, so sections joined by newlines are separated by one
    blank line (the reference's layout). No blocks, no section.
    """
    kept = fit_blocks(blocks, budget - len(heading) - 1)
    if not kept:
        return "", 0
    return "\n".join([heading, *kept, ""]), len(kept)


def describe_age(age: timedelta) -> str:
    """``just now``, ``42m ago``, ``3h 5m ago``, ``2d 4h ago``."""
    minutes = int(age.total_seconds() // 60)
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{minutes}m ago"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h {minutes}m ago"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h ago"


def said_parts(said: Sequence[str]) -> list[str]:
    """The parts of the sentences ``said`` that ``said_before`` looks for."""
    return [p for text in said for p in fact_parts(text)]


def said_before(memory: str, said: Sequence[str]) -> bool:
    """Whether one of the parts ``said`` (``said_parts``) is in ``memory``, or one of its
    parts in one of them."""
    lowered = memory.lower()
    mine = fact_parts(memory)
    return any(part in lowered for part in said) or any(part in other for part in mine for other in said)


def false_claims(findings: Sequence[Finding]) -> list[str]:
    """The quotes of the claims the trace analyzer found false (``hallucination`` findings)."""
    return [f.quote for f in findings if f.signal == "hallucination" and f.quote]


def thread_basis(t: Thread) -> str:
    """What a thread's overlay was written from: once its title or summary change, it is stale."""
    return hashlib.sha256(f"{t.title}\0{t.summary}".encode()).hexdigest()[:12]


def enhance_threads(threads: Sequence[Thread], overlay: Enhancements | None) -> list[Thread]:
    if overlay is None or not overlay.threads:
        return list(threads)
    def worded(t: Thread) -> Thread:
        e = overlay.threads.get(t.id)
        if e is None or e.basis != thread_basis(t):
            return t  # none, or written from a title and summary that have changed since
        return _replace(t, title=e.title or t.title, summary=e.summary or t.summary)

    return [worded(t) for t in threads]


def enhance_decisions(decisions: Sequence[Decision], overlay: Enhancements | None) -> list[Decision]:
    if overlay is None or not overlay.decisions:
        return list(decisions)
    return [_replace(d, what=e.what or d.what, why=e.why or d.why) if (e := overlay.decisions.get(d.id)) else d
            for d in decisions]


def enhance_commitments(commitments: Sequence[Commitment], overlay: Enhancements | None) -> list[Commitment]:
    if overlay is None or not overlay.commitments:
        return list(commitments)
    return [_replace(c, what=e.what or c.what) if (e := overlay.commitments.get(c.id)) else c for c in commitments]
