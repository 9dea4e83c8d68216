"""The regex cores compiled with mypyc (setup.py, workers/compiled.py) derive exactly what the
pure-Python modules derive.

The package is built here twice over from this checkout's sources: one wheel with
``CORTEX_COMPILE=1`` (``pip wheel``, as ``pip install .`` builds), unpacked as the compiled tree and,
without its extension modules, as the pure tree. Whichever of them the test run itself imported,
both trees run the threads, decisions and commitments cores in processes of their own
(tests/support/core_runner.py) on the same messages — the bench backlog, the written eval set,
hypothesis-made messages in every language (CJK, emoji, German) — and every revision's digest
must agree.

The build costs a C compile (~45 s of CPU, 1-2 min at the machine's load): it is kept in
``$CORTEX_CI_CACHE`` (``~/.cache/cortex-ci``; ``off``: a temporary directory) under a hash of
the sources, so it runs once per source change, not once per test run. Skipped — with the
reason — only where no C compiler or no Python headers exist.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as examples
from hypothesis import strategies as st

from workers.compiled import MODULES, missing_toolchain

pytestmark = pytest.mark.timeout(1800)  # the first test builds the wheel (cached afterwards)

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "tests" / "support" / "core_runner.py"
SOURCES = ("workers", "shared", "schemas")
SKIP_PARTS = {"__pycache__", ".mypy_cache"}


def _no_compiler() -> str | None:
    missing = missing_toolchain()
    return None if missing is None else f"{missing}: the cores cannot be compiled here"


def _source_files() -> list[Path]:
    files = [ROOT / "setup.py", ROOT / "pyproject.toml", ROOT / "README.md"]
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*")):
            rel = path.relative_to(ROOT)
            if (path.is_file() and not SKIP_PARTS & set(rel.parts) and path.suffix not in {".so", ".pyc"}
                    and rel.parts[:3] != ("workers", "recall", "data")):
                files.append(path)
    return files


def _source_key(files: list[Path]) -> str:
    h = hashlib.sha256(sys.version.encode())
    for path in files:
        if path.name == "README.md":  # the wheel's description only
            continue
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:24]


def _build(dest: Path, files: list[Path]) -> None:
    """The wheel ``pip install .`` builds with CORTEX_COMPILE=1, unpacked into dest/compiled and,
    without its extension modules, dest/pure."""
    src = dest / "src"
    for path in files:
        target = src / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    env = {**os.environ, "CORTEX_COMPILE": "1"}
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dest / "wheel"), str(src)],
                         capture_output=True, text=True, env=env, timeout=1500, check=False)
    assert out.returncode == 0, f"the compiled build failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    [wheel] = (dest / "wheel").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(dest / "compiled")
    shutil.copytree(dest / "compiled", dest / "pure", ignore=shutil.ignore_patterns("*.so"))
    shutil.rmtree(src)
    shutil.rmtree(dest / "wheel")


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if (reason := _no_compiler()) is not None:
        pytest.skip(reason)
    files = _source_files()
    key = f"mypyc-{_source_key(files)}"
    cache = os.environ.get("CORTEX_CI_CACHE") or str(Path(os.environ.get("XDG_CACHE_HOME") or
                                                          Path.home() / ".cache") / "cortex-ci")
    base = tmp_path_factory.mktemp("mypyc") if cache == "off" else Path(cache)
    done = base / key
    if not (done / ".complete").exists():
        base.mkdir(parents=True, exist_ok=True)
        for old in base.glob("mypyc-*"):  # one build kept, the sources' latest (and builds under way)
            if ".partial" not in old.name or time.time() - old.stat().st_mtime > 3600:
                shutil.rmtree(old, ignore_errors=True)
        partial = Path(tempfile.mkdtemp(prefix=f"{key}.partial-", dir=base))  # another run may build too
        _build(partial, files)
        (partial / ".complete").touch()
        try:
            partial.rename(done)
        except OSError:  # another run finished first: its build is the same
            shutil.rmtree(partial, ignore_errors=True)
    return done


class Runner:
    def __init__(self, tree: Path, tmp: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen([sys.executable, str(RUNNER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env, cwd=tmp)

    def ask(self, request: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, "the core runner stopped"
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


@pytest.fixture(scope="module")
def runners(trees: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Runner, Runner]]:
    tmp = tmp_path_factory.mktemp("runners")  # the working directory: no source tree on sys.path
    pair = (Runner(trees / "compiled", tmp), Runner(trees / "pure", tmp))
    yield pair
    for runner in pair:
        runner.close()


def test_the_compiled_tree_runs_compiled_modules_and_the_pure_tree_none(trees: Path,
                                                                       runners: tuple[Runner, Runner]) -> None:
    compiled, pure = runners
    suffixes = {p.relative_to(trees / "compiled").as_posix().split(".")[0].replace("/", ".")
                for p in (trees / "compiled").rglob("*.so")}
    assert set(MODULES) <= suffixes  # every chosen module has its extension module
    assert not list((trees / "pure").rglob("*.so"))
    got = compiled.ask({"status": True})["ok"]
    assert got["status"] == f"compiled (mypyc, {len(MODULES)} of {len(MODULES)} core modules)"
    assert got["file"].endswith(".so") and got["file"].startswith(str(trees / "compiled"))
    got = pure.ask({"status": True})["ok"]
    assert got["status"] == "pure Python" and got["file"] == str(trees / "pure" / "workers" / "threads" / "core.py")
    version = subprocess.run([sys.executable, "-m", "workers", "--version"], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(trees / "compiled")}, cwd=trees, timeout=120,
                             check=False)
    assert f"regex cores: compiled (mypyc, {len(MODULES)} of {len(MODULES)}" in version.stdout, version


@pytest.mark.parametrize("request_", [{"set": "bench", "events": 20000}, {"set": "briefing"}],
                         ids=["bench-backlog", "written-briefing-set"])
def test_compiled_and_pure_cores_derive_the_same_documents(runners: tuple[Runner, Runner],
                                                           request_: dict[str, Any]) -> None:
    compiled, pure = runners
    got = compiled.ask(request_)
    assert "ok" in got, got
    assert got == pure.ask(request_)


FRAGMENTS = (
    "let's use Redis for the cache", "we decided to drop the legacy endpoint", "I'll send you the logs by Friday",
    "Actually no, let's not do that.", "back to the auth migration:", "the login bug is fixed now", "done.",
    "Can you check the release pipeline?", "TODO: pin the client library", "we still need to decide", "?",
    "Wir haben entschieden, Redis für den Cache zu nehmen.", "Ich schicke dir morgen die Zahlen.",
    "Die Datenbankmigration ist erledigt.", "我们决定用Redis做缓存。", "明天之前我会把报告发给你。",
    "数据库迁移的问题还没解决？", "来週までにテストを終わらせます。", "決定：Redisを使います。",
    "마이그레이션은 다음 주로 미룹니다.", "Мы решили отключить старый эндпоинт.", "🚀 shipped!", "```x = 1```",
    "https://example.com/a?b=c", "\n\n", "  ", "#", "—", "…",
)
TEXT = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), min_size=1, max_size=6).map(" ".join)
MESSAGE = st.tuples(st.sampled_from(("user", "assistant")), TEXT, st.integers(0, 3 * 86400))
STREAMS = st.lists(st.lists(MESSAGE, min_size=1, max_size=12), min_size=1, max_size=3)
START = datetime(2026, 2, 17, 8, 0, tzinfo=UTC)


def _events(streams: list[list[tuple[str, str, int]]]) -> list[list[dict[str, Any]]]:
    out = []
    for a, stream in enumerate(streams):
        seconds = 0
        events = []
        for i, (role, text, gap) in enumerate(stream):
            seconds += gap
            events.append({"id": f"e{a}-{i}", "agent": f"agent{a}", "session": "s1",
                           "ts": (START + timedelta(seconds=seconds)).isoformat(), "role": role, "content": text})
        out.append(events)
    return out


@given(streams=STREAMS, language=st.sampled_from(("both", "all")))
@examples(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_compiled_and_pure_cores_agree_on_any_messages(runners: tuple[Runner, Runner],
                                                       streams: list[list[tuple[str, str, int]]],
                                                       language: str) -> None:
    compiled, pure = runners
    request = {"streams": _events(streams), "env": {"CORTEX_LANGUAGE": language}}
    got = compiled.ask(request)
    assert got == pure.ask(request)
    assert "ok" in got, got  # a message both trees fail on is still a bug
