"""Which of the regex cores' modules run compiled (mypyc) and which as pure Python.

``setup.py`` compiles ``MODULES`` with mypyc when the install can (a C compiler, Python's
headers and mypy where the package is built; ``CORTEX_COMPILE=0`` never, ``=1`` always or
fail): each module then has an extension module beside its ``.py``, and Python's import picks
the extension. The ``.py`` files stay installed — the fallback and the source of tracebacks.
Compiled or not, every output is the same (tests/workers/test_compiled.py compares them).

This file is read by ``setup.py`` before the package is installed: standard library only.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import shlex
import shutil
import sysconfig
from pathlib import Path

# th22's nine (docs/BENCHMARKS.md, "Twenty-second round: the threads core in one pass") and the
# decisions and commitments cores (mc23): the per-message work of the threads and decisions workers
MODULES: tuple[str, ...] = (
    "workers.threads.topics",
    "workers.threads.waits",
    "workers.threads.core",
    "workers.threads.summary",
    "workers.threads.corrections",
    "workers.conversation.signals",
    "workers.conversation.sentences",
    "workers.conversation.patterns",
    "workers.conversation.statements",
    "workers.decisions.core",
    "workers.decisions.commitments",
)


def missing_toolchain() -> str | None:
    """Why this machine cannot build the extension modules (no C compiler, no Python headers),
    or None when it can. ``setup.py`` and tests/workers/test_compiled.py both ask this."""
    cc = sysconfig.get_config_var("CC") or "cc"
    if shutil.which(shlex.split(cc)[0]) is None:
        return f"no C compiler ({cc}) on PATH"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "Python's headers (Python.h) are not installed"
    return None


def is_compiled(module: str) -> bool:
    """Whether importing ``module`` loads an extension module (without importing it)."""
    spec = importlib.util.find_spec(module)
    origin = spec.origin if spec is not None else None
    return origin is not None and origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def compiled_modules() -> list[str]:
    return [m for m in MODULES if is_compiled(m)]


def status() -> str:
    """One line for ``cortex --version`` and ``cortex bench``: ``compiled (mypyc, 11 of 11
    core modules)``, ``pure Python`` or, for a partial build, which ones."""
    done = compiled_modules()
    if not done:
        return "pure Python"
    if len(done) == len(MODULES):
        return f"compiled (mypyc, {len(done)} of {len(MODULES)} core modules)"
    return f"partly compiled (mypyc, {len(done)} of {len(MODULES)} core modules: {', '.join(done)})"
