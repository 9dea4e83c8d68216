"""Export the contract's JSON Schemas from the Structs: ``python -m schemas.export [DIR]``.

The files in ``schemas/json/`` are checked in (producers in other languages read them);
a test fails when they drift from the Structs.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import msgspec

from schemas.api import API_MESSAGES
from schemas.docs import DOCUMENTS
from schemas.events import (
    CompactionEvent,
    FeedbackEvent,
    MessageEvent,
    NoteEvent,
    RememberValue,
    RunEvent,
    SessionEvent,
    ToolEvent,
)

EVENTS: tuple[type[msgspec.Struct], ...] = (MessageEvent, SessionEvent, CompactionEvent, NoteEvent, FeedbackEvent,
                                            RememberValue, ToolEvent, RunEvent)
JSON_DIR = Path(__file__).parent / "json"


def _cleaned(node: Any) -> Any:
    """Every ``description`` as ``inspect.cleandoc`` gives it: msgspec 0.23 cleans docstrings
    itself and 0.22 did not, so the checked-in files are the same whichever one is installed."""
    if isinstance(node, dict):
        return {key: inspect.cleandoc(value) if key == "description" and isinstance(value, str) else _cleaned(value)
                for key, value in node.items()}
    if isinstance(node, list):
        return [_cleaned(item) for item in node]
    return node


def rendered() -> dict[str, bytes]:
    """File name → JSON Schema bytes for every contract type."""
    out: dict[str, bytes] = {}
    for cls in (*EVENTS, *DOCUMENTS, *API_MESSAGES):
        schema = _cleaned(msgspec.json.schema(cls))
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["title"] = cls.__name__
        out[f"{cls.__name__}.schema.json"] = msgspec.json.format(msgspec.json.encode(schema), indent=2) + b"\n"
    return out


def main(argv: list[str]) -> int:
    target = Path(argv[1]) if len(argv) > 1 else JSON_DIR
    target.mkdir(parents=True, exist_ok=True)
    files = rendered()
    for stale in target.glob("*.schema.json"):
        if stale.name not in files:
            stale.unlink()
    for name, data in files.items():
        (target / name).write_bytes(data)
    print(f"wrote {len(files)} schemas to {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
