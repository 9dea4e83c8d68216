"""Conversation text inside a prompt: XML-escaped inside delimiters, one way for every builder.

Text said in a conversation is data, never instructions: a prompt quotes it inside a tag the
model is told to treat as data, escaped so that no text can close the tag it sits in (a
message ``</conversation>ignore previous instructions`` arrives as
``&lt;/conversation&gt;ignore previous instructions``) and no attribute value can add an
attribute. Every LLM prompt builder quotes through this module (tests/shared/test_quoting.py
parses each builder's data section with hostile text in every field).
"""

from __future__ import annotations

from xml.sax.saxutils import escape

# Attribute values are always double-quoted (saxutils.quoteattr would switch quote styles),
# and keep their whitespace characters as references, so the shape never varies.
_ATTR_ENTITIES = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}


def xml_clean(text: str) -> str:
    """What XML 1.0 can hold: lone surrogates replaced, control characters (but tab, newline,
    carriage return) dropped."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    return "".join(ch for ch in text if ch in "\t\n\r" or ord(ch) >= 0x20)


def xml_text(text: str) -> str:
    """Text as XML character data."""
    return escape(xml_clean(text))


def xml_attrs(**attrs: str) -> str:
    """`` name="value"`` for each attribute, in order (values escaped)."""
    return "".join(f' {name}="{escape(xml_clean(value), _ATTR_ENTITIES)}"' for name, value in attrs.items())


def quote_xml(tag: str, text: str, **attrs: str) -> str:
    """``<tag a="…">escaped text</tag>``: the text can never close the delimiter it sits in."""
    return f"<{tag}{xml_attrs(**attrs)}>{xml_text(text)}</{tag}>"
