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
