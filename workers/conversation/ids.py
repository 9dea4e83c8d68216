"""Deterministic ids for derived items: a replay must produce the same ids."""

from __future__ import annotations

import hashlib
from typing import Final

ID_HEX_CHARS: Final = 16


def derive_id(event_id: str, kind: str, index: int) -> str:
    """The first 16 hex digits of sha256("<event id>:<kind>:<index>")."""
    return hashlib.sha256(f"{event_id}:{kind}:{index}".encode()).hexdigest()[:ID_HEX_CHARS]
