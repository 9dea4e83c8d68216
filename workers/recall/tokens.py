"""Token estimate and budget trimming of the semantic-memory design (``pkg/tokenizer``).

The estimate blends two rules of thumb, ~1.3 tokens per word and ~4 bytes per token,
and takes their mean: ``(int(words·1.3) + bytes // 4) // 2``. Bytes, not characters, as
in the reference: non-ASCII text (German umlauts, emoji) costs more tokens, and the UTF-8
length leans the same way.

``format_memories_with_budget`` keeps memories in ranked order while they fit (each
costs its estimate plus 2 for the ``---`` separator) and stops at the first that does
not, so a lower-ranked memory never displaces a better one. One deliberate addition to
the reference: when even the first memory is larger than the whole budget it is
truncated to fit rather than dropped, so a recall over one long note section never
comes back empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

DEFAULT_BUDGET_TOKENS = 2000
SEPARATOR = "\n---\n"
SEPARATOR_TOKENS = 2
ELLIPSIS = "..."


class BudgetedText(NamedTuple):
    text: str
    included: int  # how many memories (from the front) are in ``text``
    tokens: int  # the budget they used, separators included


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    words = len(text.split())
    word_estimate = int(words * 1.3)
    byte_estimate = len(text.encode("utf-8")) // 4
    return (word_estimate + byte_estimate) // 2


def truncate_to_token_budget(text: str, budget: int) -> str:
    """Cut ``text`` to about ``budget`` tokens at a word boundary, marking the cut with ``...``."""
    if budget <= 0:
        return ""
    if estimate_tokens(text) <= budget:
        return text
    max_chars = budget * 4
    if max_chars >= len(text):
        return text
    truncated = text[:max_chars]
    last_space = truncated.rfind(" ")
    if last_space > max_chars // 2:
        truncated = truncated[:last_space]
    return truncated + ELLIPSIS


def format_memories_with_budget(memories: Sequence[str], budget: int = DEFAULT_BUDGET_TOKENS) -> BudgetedText:
    """Join ranked memory texts with ``---`` separators within ``budget`` estimated tokens."""
    if budget <= 0 or not memories:
        return BudgetedText("", 0, 0)
    parts: list[str] = []
    used = 0
    for text in memories:
        cost = estimate_tokens(text) + SEPARATOR_TOKENS
        if used + cost > budget:
            if not parts:
                return _truncated_first(text, budget)
            break
        parts.append(text)
        used += cost
    return BudgetedText(SEPARATOR.join(parts), len(parts), used)


def _truncated_first(text: str, budget: int) -> BudgetedText:
    room = budget - SEPARATOR_TOKENS
    cut = truncate_to_token_budget(text, room)
    # The 4-bytes rule can overshoot for multi-byte text: shrink until the estimate fits.
    while cut and estimate_tokens(cut) > room:
        room -= max(1, room // 10)
        cut = truncate_to_token_budget(text, room)
    if not cut:
        return BudgetedText("", 0, 0)
    return BudgetedText(cut, 1, estimate_tokens(cut) + SEPARATOR_TOKENS)
