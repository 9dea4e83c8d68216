"""What every generator here does with the files it makes: write those out of date, or,
with ``--check``, name them and fail (CI runs each with ``--check``)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def stale(files: dict[Path, str]) -> list[Path]:
    """The files whose text on disk is not the generated one (or that are missing)."""
    return [path for path, text in files.items() if not path.exists() or path.read_text() != text]


def write_or_check(files: dict[Path, str], check: bool, command: str) -> int:
    """``check``: exit status 1 and a line per out-of-date file (``run python <command>``);
    else the out-of-date files written, each said."""
    out_of_date = stale(files)
    if check:
        for path in out_of_date:
            print(f"out of date: {path.relative_to(ROOT)} (run python {command})", file=sys.stderr)
        return 1 if out_of_date else 0
    for path in out_of_date:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[path])
        print(f"wrote {path.relative_to(ROOT)}")
    return 0
