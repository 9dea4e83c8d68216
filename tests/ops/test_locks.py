"""The image's locks are what pyproject.toml resolves to (issue 44 item 8): `uv pip compile`
from pyproject.toml for the image's Python and platform, as of the time in the locks' header —
never a developer's environment (`deploy/gen_lock.py --check` failed in a fresh `.[dev]` venv:
5 of 53 pins differed). Asks the package index; CI runs the same check as a step of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gen_lock
import pytest
from ops_support import ROOT


def _locked() -> dict[str, str]:
    """Every lock's pinned versions, as ``gen_lock.py --check`` keeps them."""
    return {name: version for path in (gen_lock.LOCK_FILE, gen_lock.RECALL_LOCK_FILE, gen_lock.BUILD_LOCK_FILE)
            for name, (version, _) in gen_lock.parse(path.read_text()).items()}


def test_the_locks_are_what_pyproject_resolves_to() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "deploy" / "gen_lock.py"), "--check"], capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0 and "uv pip compile failed" in done.stderr and "error sending request" in done.stderr:
        pytest.skip(f"the package index is unreachable from here: {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr


def test_a_lock_says_as_of_when_it_was_resolved() -> None:
    for path in (gen_lock.LOCK_FILE, gen_lock.RECALL_LOCK_FILE, gen_lock.BUILD_LOCK_FILE):
        assert gen_lock._AS_OF.search(path.read_text()), path
    assert gen_lock.locked_as_of().endswith("Z")


def test_a_dependency_added_to_pyproject_makes_the_check_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check resolves pyproject.toml, so a dependency the locks lack is found — whatever the
    developer's environment has installed."""
    pyproject = tmp_path / "pyproject.toml"
    text = gen_lock.PYPROJECT.read_text().replace('dependencies = [\n', 'dependencies = [\n    "six==1.16.0",\n', 1)
    pyproject.write_text(text)
    monkeypatch.setattr(gen_lock, "PYPROJECT", pyproject)
    try:  # as `--check` resolves: as of the locks' time, their versions kept (msgspec 0.22.0, below)
        texts = gen_lock.resolve(gen_lock.locked_as_of(), _locked())
    except SystemExit as exc:
        pytest.skip(f"the package index is unreachable from here: {exc}")
    assert gen_lock.stale_locks(texts) == [
        "deploy/requirements.lock is not what pyproject.toml resolves to (run deploy/gen_lock.py)"]
    assert "six==1.16.0" in texts[gen_lock.LOCK_FILE]


def test_the_check_keeps_the_locked_versions_the_index_has_newer_releases_of() -> None:
    """Resolved as of now with the locks' versions kept, the locks come back unchanged but for
    their time: a release the index learnt of later (msgspec 0.23.0 on this machine's mirror,
    after the lock stamped 04:53) does not make a lock stale."""
    try:
        texts = gen_lock.resolve("2100-01-01T00:00:00Z", _locked())
    except SystemExit as exc:
        pytest.skip(f"the package index is unreachable from here: {exc}")
    for path, text in texts.items():
        assert {n: v for n, (v, _) in gen_lock.parse(text).items()} == {
            n: v for n, (v, _) in gen_lock.parse(path.read_text()).items()}, path
