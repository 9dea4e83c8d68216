"""What a message with an attachment says, as the text recall indexes.

OpenClaw's media understanding (``tools.media``: on whenever a vision or speech provider
is configured) turns a message that carries an image, a voice note or a video into a
body of blocks before the agent sees it::

    [Image]
    User text:
    Here's our latest work from last weekend.
    Description:
    a painting of a sunset over a lake

With several attachments the person's text comes first, once (``User text:``), and the
blocks are numbered (``[Image 1/2]``). That body is what the agent is given and what
OpenClaw's ``message:preprocessed`` hook carries (its ``message_received`` hook runs
before media understanding: the person's text alone), so it is the ``content`` a gateway
publishes for such a message (docs/integration.md). Indexed as it stands, the block's
labels ("Image", "User text", "Description") would be words of every such turn, and the
description would read as if the person had said it. :func:`media_text` splits the body into what the person wrote
and what their attachments show, each findable on its own: the turn ``Here's our latest
work from last weekend.`` and ``[image: a painting of a sunset over a lake]`` (recall
keeps them as two memories of the message, ``workers.recall.capture``). A description's
opening "a photo of" / "the image shows" is dropped: every description says it, and it
made every photo match a question that says "photo". Any other text is returned as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# "[Image]", "[Audio 2/3]", "[Video 1]": the header of one attachment's block.
_BLOCK = re.compile(r"\[(Image|Audio|Video)(?:\s+\d+(?:/\d+)?)?\]", re.IGNORECASE)
_OPENING = re.compile(r"^(?:this is |there is )?(?:a|an|the) (?:photo|photograph|photography|picture|image|pic)"
                      r"(?: of| shows| showing)?\s+", re.IGNORECASE)
_LABEL = re.compile(r"(User text|Description|Transcript):\s*(.*)", re.IGNORECASE)


@dataclass(frozen=True)
class MediaText:
    """A message split into the person's own words and what each attachment shows
    (``(kind, text)``: kind ``image``, ``audio`` or ``video``, in the body's order)."""

    said: str
    attachments: tuple[tuple[str, str], ...] = ()

    def shown(self) -> str:
        """What the attachments show, one ``[image: …]`` each ("" without any)."""
        return " ".join(f"[{kind}: {text}]" for kind, text in self.attachments)

    def turn(self) -> str:
        """The text of the message's own turn: what the person said, or what they showed
        when they wrote nothing."""
        return self.said or self.shown()


def _starts_media_body(lines: list[str]) -> bool:
    first = lines[0].strip() if lines else ""
    return bool(_BLOCK.fullmatch(first)) or first.lower().startswith("user text:")


def _parse(lines: list[str]) -> MediaText | None:
    said: list[str] = []
    attachments: list[tuple[str, list[str]]] = []
    kind: str | None = None
    current: list[str] | None = None
    for line in lines:
        stripped = line.strip()
        if header := _BLOCK.fullmatch(stripped):
            kind, current = header.group(1).lower(), None
        elif label := _LABEL.fullmatch(stripped):
            if label.group(1).lower() == "user text":
                current = said
            elif kind is None:
                return None  # a description outside any block: not a media body
            else:
                attachments.append((kind, []))
                current = attachments[-1][1]
            if label.group(2):
                current.append(label.group(2))
        elif current is not None:
            current.append(stripped)
    if not attachments:
        return None
    shown = tuple((k, _OPENING.sub("", " ".join(" ".join(parts).split()))) for k, parts in attachments)
    return MediaText(said=" ".join(" ".join(said).split()), attachments=tuple((k, t) for k, t in shown if t))


def media_text(content: str) -> MediaText:
    """The person's words and their attachments' descriptions or transcripts, when
    ``content`` is a media-understanding body; otherwise all of it is what they said."""
    lines = content.strip().splitlines()
    parsed = _parse(lines) if _starts_media_body(lines) else None
    return parsed if parsed is not None else MediaText(said=content.strip())


def turn_text(content: str) -> str:
    """The text of a message's own turn memory (:meth:`MediaText.turn`)."""
    return media_text(content).turn()
