"""Priority classes: the workers a session start or a turn waits for get the cores first.

Every worker is of one class (``WorkerSpec.priority``). *Latency* workers make what an agent
waits for: the threads and decisions documents a briefing is cut from, the briefing itself
(boot) and the request APIs (api). *Throughput* workers catch up — recall's indexing,
knowledge, narrative, traces, channels, snapshot, extraction — and the briefing reads a source
still behind as of its last cut (``shared.inputs``), so one that runs later holds no session
start beyond the wait's bound.

On a shared machine (``cortex worker NAME`` a process each: the bench, systemd units, a
compose file) the kernel shares the cores between runnable processes by their niceness: a
process running only throughput workers raises its own to
``CORTEX_RUNTIME_THROUGHPUT_NICENESS`` (10 by default; 0: every process alike), so a burst of
indexing waits for a core while a threads batch is ready, and takes every core left idle. A
process with a latency worker among its workers (``cortex up``, ``cortex demo``: all of them
in one) keeps the niceness it was started with. Niceness is only raised here, never lowered
(that needs privileges): a process started under ``nice -n 15`` stays there.

In Kubernetes each worker is its own pod, in its own cgroup: niceness orders the threads of
one container only, and what shares a node's cores between pods is their CPU requests (the
cgroup's weight) — docs/operations.md says what to set.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from shared.config import Settings

log = logging.getLogger(__name__)


class _Classed(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def priority(self) -> str: ...


def process_niceness(specs: Iterable[_Classed], settings: Settings) -> int:
    """The niceness a process running ``specs`` takes: the throughput niceness when every one
    of them is a throughput worker, else 0 (its most urgent worker decides)."""
    classes = {spec.priority for spec in specs}
    return settings.runtime.throughput_niceness if classes == {"throughput"} else 0


def _threads() -> list[int]:
    """This process's threads (Linux: a thread's niceness is its own, ``setpriority`` on the
    process id reaches only the calling thread); the calling one alone where /proc is not."""
    with contextlib.suppress(OSError, ValueError):
        return sorted(int(entry.name) for entry in Path("/proc/self/task").iterdir())
    return [0]


def prioritize(specs: Iterable[_Classed], settings: Settings) -> int:
    """Raise this process's niceness — every thread it has now; the ones it starts later inherit
    it — to what its workers' class asks (``process_niceness``); never lower it. Returns the
    niceness it runs at, and logs it."""
    specs = list(specs)
    wanted = process_niceness(specs, settings)
    now = before = os.getpriority(os.PRIO_PROCESS, 0)
    if wanted > now:
        for thread in _threads():
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                os.setpriority(os.PRIO_PROCESS, thread, wanted)
        now = os.getpriority(os.PRIO_PROCESS, 0)
    group = _own_autogroup(wanted)
    # said when it lowered the process's priority; a process left as it was started is not news
    # (at DEBUG: a user's error on start stays the one line it is)
    level = logging.INFO if now != before or group is not None else logging.DEBUG
    log.log(level, "process_priority", extra={"workers": ",".join(s.name for s in specs), "niceness": now,
                                              "autogroup": group if group is not None else "",
                                              "classes": ",".join(sorted({s.priority for s in specs}))})
    return now


def _own_autogroup(wanted: int) -> int | None:
    """With the kernel's autogroups on (``/proc/sys/kernel/sched_autogroup_enabled``), the cores are
    shared between *sessions* first, each session's group at its own niceness, and a thread's
    niceness orders it only within its session: a worker started in a session of its own (`cortex
    bench`, a service manager's ``setsid``) competed with the others as an equal whatever its niceness.
    A session leader — the session is its own and its children's — raises its group's niceness too
    (``/proc/self/autogroup``); a process in a session it does not lead (a shell's) leaves the group,
    which it shares. Returns the group's niceness, None when there is no group of its own to set."""
    if os.getsid(0) != os.getpid():
        return None
    path = Path("/proc/self/autogroup")
    try:
        current = int(path.read_text().split("nice")[1])
        if wanted > current:
            path.write_text(str(wanted))
            current = int(path.read_text().split("nice")[1])
    except (OSError, IndexError, ValueError):  # no autogroups here (or not writable): threads' niceness only
        return None
    return current
