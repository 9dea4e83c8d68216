"""``python -m workers.bench.cpuprof OUT ARGS…``: run ``python -m workers ARGS…`` under cProfile
timed by the process's CPU clock (``time.process_time``), not the wall clock, and write the
profile to OUT when it exits.

A worker of the pipeline spends most of its wall time waiting (in ``epoll``) and, on a shared
machine, descheduled in the middle of a call; a wall-clock profile charges both to whatever
was running. The CPU clock charges only what the process computed, so the profiles of a
freshness run say where the fleet's CPU per event goes.
"""

from __future__ import annotations

import cProfile
import runpy
import sys
import time


def main() -> None:
    out, args = sys.argv[1], sys.argv[2:]
    sys.argv = ["workers", *args]
    profiler = cProfile.Profile(time.process_time)
    try:
        profiler.runcall(runpy.run_module, "workers", run_name="__main__", alter_sys=True)
    finally:  # the command's exit (its code, a signal's 128 + N) goes on once the profile is written
        profiler.dump_stats(out)


if __name__ == "__main__":
    main()
