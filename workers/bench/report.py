"""The machine a run measured, the printed table and the JSON file."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

import msgspec

from shared.embedded import EmbeddedError, nats_server_binary
from workers.bench.results import Machine, Report, Row
from workers.compiled import status


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_mb() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def local_server_version() -> str:
    try:
        out = subprocess.run([nats_server_binary(), "--version"], check=False, capture_output=True, text=True,
                             timeout=10)
    except (EmbeddedError, OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip().removeprefix("nats-server: ") or "unknown"


def load_avg() -> list[float]:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return []


def machine(server: str, server_version: str, load_start: list[float]) -> Machine:
    return Machine(
        nproc=os.cpu_count() or 0, cpu_model=_cpu_model(), memory_mb=_memory_mb(),
        python=platform.python_version(), platform=platform.platform(), nats_server=server_version,
        nats_py=_version("nats-py"), msgspec_version=_version("msgspec"), server=server, load_avg_start=load_start,
        regex_cores=status(),
    )


def table(rows: list[Row]) -> str:
    """The rows as an aligned text table (also valid as the body of a Markdown table)."""
    header = ("section", "measurement", "value", "target", "result")
    cells = [header, *[(r.section, r.name, r.value, r.target, r.verdict) for r in rows]]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]

    def line(cols: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(c) for c in cells[1:])])


def summary(rows: list[Row]) -> str:
    counts = {v: sum(1 for r in rows if r.verdict == v) for v in ("pass", "miss", "n/a", "skipped", "failed")}
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n)


def write_json(report: Report, path: str) -> None:
    target = Path(path)
    if target.parent != Path():
        target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(msgspec.json.format(msgspec.json.encode(report), indent=2) + b"\n")
