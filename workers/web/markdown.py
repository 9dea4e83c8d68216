"""The briefing's markdown as HTML: the few constructs the BOOTSTRAP uses (headings, bullet
lists, paragraphs, ``**bold**``, ``*italic*``, ```code```, ``> quotes``), every character of the
text escaped first — a message that says ``<script>`` shows as text. Pure."""

from __future__ import annotations

import html
import re

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?![*\w])")
_CODE = re.compile(r"`([^`]+)`")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^(\s*)[-*•]\s+(.*)$")


def inline(text: str) -> str:
    """One line's inline markup, escaped."""
    out = html.escape(text, quote=False)
    out = _CODE.sub(r"<code>\1</code>", out)
    out = _BOLD.sub(r"<strong>\1</strong>", out)
    return _ITALIC.sub(r"<em>\1</em>", out)


class _Blocks:
    """The HTML being built and the open list or paragraph."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.items: list[str] = []
        self.para: list[str] = []

    def flush(self) -> None:
        if self.items:
            self.out.append("<ul>" + "".join(f"<li>{i}</li>" for i in self.items) + "</ul>")
            self.items = []
        if self.para:
            self.out.append("<p>" + "<br>".join(self.para) + "</p>")
            self.para = []

    def line(self, raw: str) -> None:
        text = raw.rstrip()
        if not text.strip():
            self.flush()
        elif heading := _HEADING.match(text):
            self.flush()
            level = min(len(heading.group(1)) + 1, 6)  # the page's own title is the h1
            self.out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif bullet := _BULLET.match(text):
            if self.para:
                self.flush()
            self.items.append(inline(bullet.group(2)))
        elif text.startswith(">"):
            self.flush()
            self.out.append(f"<blockquote>{inline(text.lstrip('> '))}</blockquote>")
        elif self.items and raw.startswith("  "):
            self.items[-1] += "<br>" + inline(text.strip())  # a list item's continuation
        else:
            if self.items:
                self.flush()
            self.para.append(inline(text))


def to_html(markdown: str) -> str:
    blocks = _Blocks()
    for raw in markdown.splitlines():
        blocks.line(raw)
    blocks.flush()
    return "\n".join(blocks.out)
