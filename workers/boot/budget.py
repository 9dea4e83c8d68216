"""The briefing's size: the hard limit of a BOOTSTRAP document and its sections' budgets
(design section 4.3).

The design's table splits the default 16000 characters between the sections (each
section's ``BriefingSection.chars``); a smaller or larger ``max_chars`` scales every
content section by the same factor. Header, state and footer are always included and keep
their budget whatever the scale: the document must still say when it was made and how
fresh it is.
"""

from __future__ import annotations

DESIGN_MAX_CHARS = 16000
HEADER_STATE_CHARS = 500
FOOTER_CHARS = 500
TRUNCATION_MARKER = "\n\n_[truncated to token budget]_"


def scaled(base: int, max_chars: int) -> int:
    """A budget of the design size (``DESIGN_MAX_CHARS``) scaled to ``max_chars``."""
    return int(base * (max_chars / DESIGN_MAX_CHARS))


def enforce_limit(text: str, max_chars: int) -> str:
    """The reference's hard cut: at most ``max_chars`` characters, then the marker."""
    limit = max(max_chars, 0)
    if len(text) <= limit:
        return text
    return text[:limit] + TRUNCATION_MARKER
