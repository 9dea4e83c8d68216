"""The regex cores compiled with mypyc where the install can; pure Python where it cannot.

Everything else about the package is in pyproject.toml. This file only adds the extension
modules: ``workers.compiled.MODULES`` compiled by mypyc (mypy's compiler) to C and built with
the machine's C compiler — the threads and decisions workers' per-message work, ~30-40 % less
CPU (docs/BENCHMARKS.md, the twenty-second and twenty-third rounds). The ``.py`` files are
installed either way; Python imports the extension module where one was built.

``CORTEX_COMPILE`` decides:

* unset or ``auto``: compile when mypy is importable (pyproject.toml's build requirements bring
  it), a C compiler is on PATH and Python's headers are installed; otherwise — or when the
  compile fails — install the pure-Python package and say why (``pip install -v`` shows it);
* ``0``: pure Python, nothing compiled (CI's install; mypy is then not needed);
* ``1``: compile or fail the install.

An editable install (``pip install -e``) stays pure unless ``CORTEX_COMPILE=1``: its extension
modules would be built into the source tree, beside the ``.py`` files they would then shadow
(an edit to a compiled module would do nothing until the next build). ``cortex --version``
says which is installed.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
_COMPILED = runpy.run_path(str(HERE / "workers" / "compiled.py"))
MODULES: tuple[str, ...] = _COMPILED["MODULES"]


def _say(text: str) -> None:
    print(f"cortex build: {text}", file=sys.stderr, flush=True)


def _cannot_compile() -> str | None:
    """Why this build cannot compile the cores, or None when it can."""
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypy (mypyc) is not installed where the package is built"
    missing: str | None = _COMPILED["missing_toolchain"]()
    return missing


def _wanted() -> tuple[bool, bool]:
    """(compile, forced) from CORTEX_COMPILE and the kind of build."""
    choice = os.environ.get("CORTEX_COMPILE", "auto").strip().lower()
    if choice in {"0", "no", "false", "off"}:
        _say("CORTEX_COMPILE=0: pure Python")
        return False, False
    forced = choice in {"1", "yes", "true", "on"}
    if not forced and choice not in {"", "auto"}:
        sys.exit(f"cortex build: CORTEX_COMPILE={choice!r}: use 0, 1 or auto")
    if not forced and any(cmd in sys.argv for cmd in ("editable_wheel", "develop")):
        _say("an editable install stays pure Python (CORTEX_COMPILE=1 compiles into the source tree)")
        return False, False
    reason = _cannot_compile()
    if reason is not None:
        if forced:
            sys.exit(f"cortex build: CORTEX_COMPILE=1 but {reason}")
        _say(f"pure Python: {reason}")
        return False, False
    return True, forced


class _BuildExt(build_ext):
    """build_ext that leaves the pure-Python package in place when the C compile fails
    (unless CORTEX_COMPILE=1)."""

    forced = False

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            if self.forced:
                raise
            for ext in self.extensions:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            _say(f"pure Python: the C compile failed ({exc})")


def _extensions() -> dict[str, Any]:
    wanted, forced = _wanted()
    if not wanted:
        return {}
    from mypyc.build import mypycify

    paths = [str(Path(*m.split("."))) + ".py" for m in MODULES]
    try:
        ext_modules = mypycify(paths, opt_level=os.environ.get("CORTEX_COMPILE_OPT", "3"))
    except (Exception, SystemExit) as exc:  # mypy's errors end in SystemExit
        if forced:
            raise
        _say(f"pure Python: mypyc could not compile the cores ({exc!r})")
        return {}
    _say(f"compiling {len(MODULES)} core modules with mypyc")
    _BuildExt.forced = forced
    return {"ext_modules": ext_modules, "cmdclass": {"build_ext": _BuildExt}}


os.chdir(HERE)  # mypycify takes paths relative to the project
setup(**_extensions())
