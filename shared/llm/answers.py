"""Reading a model's tool answer: its shape, then its items one by one (pure).

Every LLM path that asks for items through a tool (the narrative's wording, the extraction
worker's reading) reads the answer the same way: an answer without the tool's shape is no
answer (the client asks again, ``Check``), and within it one malformed item costs that item,
not the answer; a runaway answer is not read to its end.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Any

import msgspec


def has_shape(decoder: msgspec.json.Decoder[Any], text: str) -> bool:
    """Whether ``text`` decodes as the tool's answer."""
    try:
        decoder.decode(text)
    except msgspec.DecodeError:
        return False
    return True


def decoded_items(raws: Iterable[msgspec.Raw], decoder: msgspec.json.Decoder[Any], read: int,
                  keep: int | None = None) -> list[Any]:
    """The items of ``raws`` that decode, of the first ``read``; at most ``keep`` of them."""
    out: list[Any] = []
    for raw in islice(raws, read):
        try:
            out.append(decoder.decode(raw))
        except msgspec.DecodeError:  # one malformed item costs that item
            continue
        if len(out) == keep:
            break
    return out
