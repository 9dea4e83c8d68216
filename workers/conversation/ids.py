"""Deterministic ids for derived items: a replay must produce the same ids."""

from __future__ import annotations

import hashlib
from collections.abc import Container
from typing import Final

ID_HEX_CHARS: Final = 16


def derive_id(event_id: str, kind: str, index: int) -> str:
    """The first 16 hex digits of sha256("<event id>:<kind>:<index>")."""
    return hashlib.sha256(f"{event_id}:{kind}:{index}".encode()).hexdigest()[:ID_HEX_CHARS]


def unique_id(event_id: str, kind: str, index: int, taken: Container[str]) -> str:
    """``derive_id``, unless the document holds that id already (a publisher reused an
    event id): then the first of ``derive_id("<event id>#1", …)``, ``#2``, … it does not
    hold. Ids stay unique within a document, so a correction names one item, and stay a
    function of the events (the document is), so a replay makes the same ones."""
    candidate = derive_id(event_id, kind, index)
    reuse = 0
    while candidate in taken:
        reuse += 1
        candidate = derive_id(f"{event_id}#{reuse}", kind, index)
    return candidate
