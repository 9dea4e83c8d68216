"""tests/support/promtool_setup.py: the test run sets promtool up by itself. The package
comes from a stand-in ``apt-get`` on PATH that hands out a real .deb built here with
``dpkg-deb --build`` (no network); the unpacking is the real dpkg-deb's."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import promtool_setup
import pytest

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb is not here (not Debian)")

PROMTOOL = "#!/bin/sh\necho 'promtool, version 2.42.0'\n"


def _deb(tmp: Path, with_promtool: bool = True) -> Path:
    tree = tmp / "pkg"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text("Package: prometheus\nVersion: 2.42.0\nArchitecture: all\n"
                                             "Maintainer: test <t@example.org>\nDescription: stand-in\n")
    (tree / "usr" / "bin").mkdir(parents=True)
    (tree / "usr" / "bin" / ("promtool" if with_promtool else "prometheus")).write_text(PROMTOOL)
    (tree / "usr" / "bin").joinpath("promtool" if with_promtool else "prometheus").chmod(0o755)
    deb = tmp / "prometheus_2.42.0_all.deb"
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(tree), str(deb)], check=True,
                   capture_output=True)
    return deb


def _fake_apt(tmp: Path, monkeypatch: pytest.MonkeyPatch, deb: Path | None) -> Path:
    """``apt-get download prometheus`` copies ``deb`` into its working directory (or fails
    when there is none); every call is logged."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    log = tmp / "apt.log"
    body = f'cp "{deb}" . && exit 0' if deb else "echo 'E: Unable to locate package prometheus' >&2; exit 100"
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> "{log}"\n[ "$1" = download ] || exit 0\n{body}\n')
    (bin_dir / "apt-get").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(shutil.which('dpkg-deb') or '').parent}")
    return log


def test_promtool_is_unpacked_from_the_package_to_where_it_is_asked_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _fake_apt(tmp_path, monkeypatch, _deb(tmp_path))
    dest = tmp_path / "venv-bin" / "promtool"
    dest.parent.mkdir()
    assert promtool_setup.install(dest) == ""
    assert subprocess.run([str(dest)], capture_output=True, text=True).stdout == "promtool, version 2.42.0\n"
    assert "download -q prometheus" in log.read_text()
    assert [p.name for p in dest.parent.iterdir()] == ["promtool"]  # no staged copy left behind


def test_a_package_that_cannot_be_had_says_why_and_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_apt(tmp_path, monkeypatch, None)
    dest = tmp_path / "promtool"
    why = promtool_setup.install(dest)
    assert why.startswith("apt-get download prometheus failed") and "Unable to locate package" in why
    assert not dest.exists()


def test_a_package_without_promtool_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_apt(tmp_path, monkeypatch, _deb(tmp_path, with_promtool=False))
    dest = tmp_path / "promtool"
    assert "has no usr/bin/promtool" in promtool_setup.install(dest)
    assert not dest.exists()


def test_without_apt_get_nothing_is_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert promtool_setup.install(tmp_path / "promtool") == "apt-get and dpkg-deb are not here (not Debian)"


def test_an_installed_promtool_is_used_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _fake_apt(tmp_path, monkeypatch, _deb(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "bin" / "promtool").write_text(PROMTOOL)
    (tmp_path / "bin" / "promtool").chmod(0o755)
    assert promtool_setup.ensure() == (tmp_path / "bin" / "promtool", "")  # PATH's: no download
    assert not log.exists()
    (tmp_path / "bin" / "promtool").unlink()
    assert promtool_setup.ensure() == (tmp_path / "venv" / "bin" / "promtool", "")  # installed beside python
    assert promtool_setup.find() == tmp_path / "venv" / "bin" / "promtool"
