"""promtool for tests/ops, set up by the test run itself (the README's ``pytest`` does all
set-up on a fresh machine): Debian's ``prometheus`` package is downloaded (``apt-get
download``: no install, no server set up, no root needed once the package lists exist) and
only its ``usr/bin/promtool`` is put beside the venv's python, where later runs find it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = "prometheus"
ENABLE = "apt-get install prometheus"  # the one command that enables the promtool tests by hand
TIMEOUT_S = 600  # a 19 MB download from a slow mirror


def beside_python() -> Path:
    return Path(sys.executable).parent / "promtool"


def find() -> Path | None:
    """An installed promtool: the one beside the venv's python first, then PATH's."""
    if beside_python().is_file():
        return beside_python()
    found = shutil.which("promtool")
    return Path(found) if found else None


def _apt(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["apt-get", *args], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S,
                          env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})


def _download(cwd: Path) -> str:
    """The package's .deb in ``cwd``; "" when there is one, else why not."""
    done = _apt("download", "-q", PACKAGE, cwd=cwd)
    if done.returncode != 0 and os.geteuid() == 0:  # a fresh image has no package lists yet
        _apt("update", "-qq", cwd=cwd)
        done = _apt("download", "-q", PACKAGE, cwd=cwd)
    return "" if done.returncode == 0 else f"apt-get download {PACKAGE} failed: {done.stderr.strip()[-300:]}"


def install(dest: Path) -> str:
    """promtool from the package, at ``dest`` (written whole, then renamed into place: a test
    run beside this one never sees half a file). "" on success, else why it could not be."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        return "apt-get and dpkg-deb are not here (not Debian)"
    with tempfile.TemporaryDirectory(prefix="cortex-promtool-") as tmp:
        work = Path(tmp)
        if why := _download(work):
            return why
        debs = sorted(work.glob(f"{PACKAGE}_*.deb"))
        if not debs:
            return f"apt-get download {PACKAGE} left no .deb"
        unpacked = subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(work / "root")], capture_output=True,
                                  text=True, timeout=TIMEOUT_S)
        binary = work / "root" / "usr" / "bin" / "promtool"
        if unpacked.returncode != 0 or not binary.is_file():
            return f"{debs[-1].name} has no usr/bin/promtool: {unpacked.stderr.strip()[-300:]}"
        staged = dest.with_name(f".{dest.name}.{os.getpid()}")
        try:
            shutil.copy2(binary, staged)
            os.replace(staged, dest)
        except OSError as exc:
            return f"cannot write {dest}: {exc}"
    return ""


def ensure() -> tuple[Path | None, str]:
    """promtool's path, installing it the first time; or None and why it is missing."""
    found = find()
    if found is not None:
        return found, ""
    why = install(beside_python())
    return (beside_python(), "") if not why else (None, why)
