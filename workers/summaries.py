"""A thread's summary as the threads worker composes it, and as its readers take it apart.

The threads worker writes ``Thread.summary`` as what the thread is about and where it stands
(``compose_summary``); a reader that shows a part of it elsewhere — the briefing's decisions
list, a wait on its own line, the narrative's completed work — recomposes it without that part,
and only when the summary is still the composed one (``is_composed``). Two workers' folders
read it (threads writes it and briefs it, the narrative quotes it), so it lives here, beside
``workers.render``. Pure.
"""

from __future__ import annotations

import re
from typing import Final

from schemas.docs import Thread
from workers.render import clip_words

DECIDED_CHARS: Final = 140
WAITING_CHARS: Final = 80
MIN_REST_WORDS: Final = 3
_END: Final = ".!?…。！？"
CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


_FRAME_WORDS: Final = 3  # "Regarding the", "As for the", "Zum": at most this many words before the title


def without_title_frame(summary: str, title: str) -> str:
    """A closing sentence without the frame that names its thread's title again: a closed
    thread is about the sentence that closed it, so the multi-day history's day 3 read
    "✅ staging registry credentials: Regarding the staging registry credentials: the token
    expired, I renewed it." Up to three words, the title, a colon, comma or dash, and at
    least three words after it: "The token expired, I renewed it." (Under ✅ a dropped "We
    finished the" says nothing the mark does not; "The auth migration is done ✅ …" goes on
    past the title without a mark and stays as it is.)"""
    if not title.strip():
        return summary
    frame = re.match(rf"(?:\S+\s+){{0,{_FRAME_WORDS}}}{re.escape(title.strip())}\s*(?::|,|\s[—–-])\s+", summary,
                     re.IGNORECASE)
    if frame is None:
        return summary
    rest = summary[frame.end():]
    if len(rest.split()) < MIN_REST_WORDS:
        return summary
    return rest[:1].upper() + rest[1:]


def _sentence(text: str) -> str:
    text = text.strip()
    if not text or text[-1] in _END:
        return text
    return text + ("。" if CJK.match(text[-1]) else ".")


def compose_summary(thread: Thread, *, decided: bool = True, waiting: bool = True) -> str:
    """``about`` and where the thread stands, in short sentences.

    A reader with the decision or the wait shown elsewhere (a briefing's decisions list, a
    line of its own) asks for the summary without it: ``decided`` / ``waiting`` False."""
    parts = [_sentence(thread.about or thread.title)]
    if decided and thread.decisions:
        parts.append(_sentence(f"Decided: {clip_words(thread.decisions[-1], DECIDED_CHARS)}"))
    # a closed thread's about is the sentence that closed it; what it waited for is over
    if waiting and thread.status == "open" and thread.waiting_for and not said_in(thread.waiting_for, parts[0]):
        parts.append(_sentence(f"Waiting for: {clip_words(thread.waiting_for, WAITING_CHARS)}"))
    return " ".join(parts)


def is_composed(thread: Thread) -> bool:
    """Whether the thread's summary is ``compose_summary``'s (not one written elsewhere — an
    imported thread, an older version's): only then may a reader recompose it without a part."""
    return bool(thread.about) and " ".join(thread.summary.split()) == " ".join(compose_summary(thread).split())


def said_in(part: str, text: str) -> bool:
    """Whether ``text`` says ``part`` already (whitespace and case aside)."""
    needle = " ".join(part.split()).lower()
    return bool(needle) and needle in " ".join(text.split()).lower()
