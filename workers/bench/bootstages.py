"""Where a session start's BootDoc time went, stage by stage, after ``cortex bench --boot-trace``.

``python -m workers.bench.bootstages WORKDIR [--over MS]`` joins, by stream sequence, each
freshness rate's session starts (``boot-starts-<phase>-<rate>.json``: published, first BootDoc
seen, complete BootDoc seen — the bench's clock) with the boot worker's DEBUG lines
(``boot-*.log``, JSON): ``trigger_stages`` of the early path and of the consume loop
(``workers.boot.early.Stages``) and ``sources_waited`` (``shared.inputs``: each source's wait and
as-of read). Every time is wall-clock on the one machine, in ms from the start's publish.
It prints, per rate, p50 / p90 / max of each stage for all the starts and for those whose
first BootDoc took longer than ``--over`` (default 1 000 ms), and who wrote each document.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

# (label, the stage's end, measured from the publish) in the order a start goes through them
EARLY = (("stored in the stream", "stored"), ("delivered to the early consumer", "delivered"),
         ("its agent's previous trigger done", "chained"), ("a reading slot (PARALLEL)", "slot"),
         ("stored-document check", "checked"), ("sources waited for and read", "read"),
         ("written by the early path", "written"))
LOOP = (("reached by the loop", "loop_reached"), ("loop took the early reading", "loop_took_early"),
        ("loop read the sources itself", "loop_read"), ("committed by the loop", "committed"))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


Line = dict[str, Any]


def _lines(workdir: Path) -> tuple[dict[int, Line], dict[int, Line], dict[int, list[Line]], list[Line]]:
    early: dict[int, Line] = {}
    loop: dict[int, Line] = {}
    sources: dict[int, list[Line]] = defaultdict(list)
    lags: list[Line] = []
    for log in sorted(workdir.glob("boot-*.log")):
        for raw in log.read_text(errors="replace").splitlines():
            if not raw.startswith("{"):
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            event = line.get("event")
            if event == "trigger_stages":
                (early if line.get("path") == "early" else loop)[int(line["seq"])] = line
            elif event == "sources_waited" and line.get("worker") == "boot":
                sources[int(line["seq"])].append(line)
            elif event == "loop_lag":
                lags.append(line)
    return early, loop, sources, lags


def _at(line: Line | None, stage: str) -> float | None:
    """The stage's wall-clock time in a ``trigger_stages`` line."""
    if line is None or f"{stage}_ms" not in line:
        return None
    return float(line["t0"]) + float(line[f"{stage}_ms"]) / 1000


def rows(workdir: Path, starts_file: Path) -> list[Line]:
    """One row a session start: each stage's ms from its publish, who wrote it, its sources."""
    early, loop, sources, _ = _lines(workdir)
    out = []
    for start in json.loads(starts_file.read_text()):
        seq, published = int(start["seq"]), float(start["published"])
        row: dict[str, Any] = {"seq": seq}
        e, lp = early.get(seq), loop.get(seq)
        if e is not None:
            row["stored"] = float(e["t0"]) - published
        for _, stage in EARLY[1:]:
            at = _at(e, stage)
            if at is not None:
                row[stage] = at - published
        for _, stage in LOOP:
            at = _at(lp, stage)
            if at is not None:
                row[stage] = at - published
        for key in ("boot", "complete"):
            if start.get(key) is not None:
                row[key] = float(start[key]) - published
        row["writer"] = ("early" if e is not None and e.get("outcome") == "written"
                         else "loop" if lp is not None else (e or {}).get("outcome", "?"))
        out.append({k: (v * 1000 if isinstance(v, float) else v) for k, v in row.items()}
                   | _longest(sources.get(seq, [])))
    return out


def _longest(lines: list[Line]) -> dict[str, tuple[str, float]]:
    """The source waited for longest and the slowest as-of read (name, ms) over a trigger's
    ``sources_waited`` lines (the early path's and the loop's)."""
    out = {}
    for key, field in (("longest_wait", "waited_ms"), ("longest_read", "read_ms")):
        most: dict[str, float] = {}
        for line in lines:
            for name, ms in (line.get(field) or {}).items():
                most[name] = max(most.get(name, 0.0), float(ms))
        if most:
            name = max(most, key=lambda k: most[k])
            out[key] = (name, most[name])
    return out


def _table(title: str, selected: list[Line]) -> list[str]:
    lines = [f"{title}: {len(selected)} session starts; written by "
             + ", ".join(f"{w} {n}" for w, n in Counter(r["writer"] for r in selected).most_common())]
    if not selected:
        return lines
    lines.append(f"  {'ms from the publish to …':<38} {'n':>4} {'p50':>8} {'p90':>8} {'max':>8}")
    labels = [*EARLY, *LOOP, ("first BootDoc seen by the bench", "boot"), ("complete BootDoc seen", "complete")]
    for label, stage in labels:
        values = [r[stage] for r in selected if stage in r]
        if values:
            lines.append(f"  {label:<38} {len(values):>4} {_pct(values, 0.5):>8.0f} {_pct(values, 0.9):>8.0f} "
                         f"{max(values):>8.0f}")
    for key, label in (("longest_wait", "longest wait for one source"), ("longest_read", "longest as-of read")):
        named = [r[key] for r in selected if key in r]
        if named:
            ms = [v for _, v in named]
            who = Counter(name for name, v in named if v >= _pct(ms, 0.5)).most_common(3)
            lines.append(f"  {label:<38} {len(ms):>4} {_pct(ms, 0.5):>8.0f} {_pct(ms, 0.9):>8.0f} {max(ms):>8.0f}"
                         f"   (at or above p50: {', '.join(f'{n} {c}' for n, c in who)})")
    return lines


def _lag(workdir: Path, starts_file: Path) -> str:
    """Boot's event-loop lag (``loop_lag``, each second's largest) while the rate published."""
    starts = json.loads(starts_file.read_text())
    if not starts:
        return "  event-loop lag: no session starts"
    begin = min(float(s["published"]) for s in starts)
    end = max(float(s["published"]) for s in starts)
    worst = [float(line["max_ms"]) for line in _lines(workdir)[3] if begin <= float(line["at"]) <= end + 1]
    if not worst:
        return "  event-loop lag: no loop_lag lines in the window"
    return (f"  boot's event-loop lag, each second's largest while publishing: n {len(worst)}, "
            f"p50 {_pct(worst, 0.5):.0f}, p90 {_pct(worst, 0.9):.0f}, max {max(worst):.0f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--over", type=float, default=1000.0, help="a slow BootDoc: longer than this (ms)")
    args = parser.parse_args(argv)
    files = sorted(args.workdir.glob("boot-starts-*.json"), key=lambda p: (p.stat().st_mtime, p.name))
    if not files:
        print(f"no boot-starts-*.json in {args.workdir} (run cortex bench --boot-trace --workdir)", file=sys.stderr)
        return 1
    for path in files:
        found = rows(args.workdir, path)
        print(f"== {path.stem.removeprefix('boot-starts-')}")
        print("\n".join(_table("all", found)))
        slow = [r for r in found if r.get("boot", 0) > args.over]
        print("\n".join(_table(f"first BootDoc over {args.over:g} ms", slow)))
        print(_lag(args.workdir, path))
        missing = [r["seq"] for r in found if "boot" not in r]
        if missing:
            print(f"  no BootDoc seen: {len(missing)} (seq {missing[:10]}{' …' if len(missing) > 10 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
