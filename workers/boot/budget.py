"""Section budgets and the hard size limit of a BOOTSTRAP document (design section 4.3).

The design's table splits the default 16000 characters between the sections; a smaller
or larger ``max_chars`` scales every content section by the same factor. Header, state
and footer are always included and keep their budget whatever the scale: the document
must still say when it was made and how fresh it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DESIGN_MAX_CHARS = 16000
TRUNCATION_MARKER = "\n\n_[truncated to token budget]_"
_CLIPPED = "…"


@dataclass(frozen=True)
class Budgets:
    """Characters per section, headings included."""

    header_state: int = 500
    snapshot: int = 1000
    narrative: int = 2000
    threads: int = 8000
    decisions: int = 3000
    # Sections the design table predates (commitments, pending operations and lessons,
    # knowledge, channels, recall):
    # small shares, so a full document stays close to the table's total.
    commitments: int = 1000
    operations: int = 600
    lessons: int = 800
    facts: int = 800
    channels: int = 600
    memories: int = 1000
    footer: int = 500


DESIGN_BUDGETS = Budgets()


def scaled(base: int, max_chars: int) -> int:
    """A budget of the design size (``DESIGN_MAX_CHARS``) scaled to ``max_chars``."""
    return int(base * (max_chars / DESIGN_MAX_CHARS))


def scaled_budgets(max_chars: int) -> Budgets:
    """The design table scaled to ``max_chars`` (header, state and footer unscaled)."""
    d = DESIGN_BUDGETS

    def s(base: int) -> int:
        return scaled(base, max_chars)

    return Budgets(
        header_state=d.header_state,
        snapshot=s(d.snapshot),
        narrative=s(d.narrative),
        threads=s(d.threads),
        decisions=s(d.decisions),
        commitments=s(d.commitments),
        operations=s(d.operations),
        lessons=s(d.lessons),
        facts=s(d.facts),
        channels=s(d.channels),
        memories=s(d.memories),
        footer=d.footer,
    )


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


def enforce_limit(text: str, max_chars: int) -> str:
    """The reference's hard cut: at most ``max_chars`` characters, then the marker."""
    limit = max(max_chars, 0)
    if len(text) <= limit:
        return text
    return text[:limit] + TRUNCATION_MARKER
