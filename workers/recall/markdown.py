"""Split a markdown file into its H1–H4 section tree (the memory-directory indexer)."""

from __future__ import annotations

import hashlib
import re

import msgspec

_HEADING = re.compile(r"^(#{1,4})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^(```|~~~)")


class Section(msgspec.Struct, frozen=True, kw_only=True):
    headings: tuple[str, ...]  # the path of headings above this text, outermost first
    content: str


def split_sections(text: str) -> list[Section]:
    """Sections in file order; text before the first heading is a section with no headings.

    Headings inside fenced code blocks are text, not structure. Empty sections are left out.
    """
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    lines: list[str] = []
    in_fence = False

    def flush() -> None:
        body = "\n".join(lines).strip()
        if body:
            sections.append(Section(headings=tuple(h for _, h in stack), content=body))
        lines.clear()

    for line in text.splitlines():
        if _FENCE.match(line.strip()):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match is None:
            lines.append(line)
            continue
        flush()
        level = len(match.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, match.group(2).strip()))
    flush()
    return sections


def note_id(path: str, section: Section) -> str:
    """Derived from path, heading path and content: an unchanged section keeps its id."""
    digest = hashlib.sha256("\x1f".join([path, *section.headings, section.content]).encode()).hexdigest()
    return f"note:{digest[:32]}"
