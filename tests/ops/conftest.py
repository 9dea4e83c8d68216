"""The operations tests import their helpers (ops_support.py beside this file) and the
deploy/ and examples/ scripts by path: none of them is part of an installed package."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for path in (HERE, HERE.parents[1] / "deploy", HERE.parents[1] / "examples"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
