"""`cortex demo`, the README's main job, end to end: its own nats-server, every worker,
the embedded store and model, the bundled conversation, a BOOTSTRAP with every section."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_cortex_demo_prints_a_complete_bootstrap(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_") and k != "ANTHROPIC_API_KEY"}
    done = subprocess.run([sys.executable, "-m", "workers", "demo"], capture_output=True, text=True, timeout=240,
                          env={**env, "HOME": str(tmp_path)}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    for section in ("## 🧵 Active Threads", "## 🎯 Recent Decisions", "## 📋 Commitments", "## 🧠 Known Facts",
                    "## 📌 Rules & Key Memories", "## 🔥 Last Session Snapshot"):
        assert section in out, section
    assert "kubernetes cluster upgrade" in out and "Maria works at Acme Analytics GmbH\n" in out  # the name as written
    assert out.rstrip().endswith("(docs/integration.md).") and "`cortex mcp --agent AGENT`" in out  # what next
    # every worker had caught up when it was printed
    assert "is lagging" not in out and "are lagging" not in out and "No data yet" not in out
