"""The embedded shard's vector index, built beside the worker (issue 39).

The edge engine never runs its optimizer by itself: every point stays in one appendable
segment without an HNSW index, so an agent's dense search scans all of its vectors (100 k
memories of one agent: ~15 ms of CPU a search; with the index ~0.3 ms). ``optimize()``
builds the index (~0.36 ms of CPU a point), but it holds the GIL for the whole build
(measured: no other Python thread ran during a 20 s build), so in the worker's process it
would stop the event loop — every query and every event — for tens of seconds.

So the index is built **beside** the worker, on a copy:

1. when the rule (:func:`due`) says so, the store flushes, copies the shard's directory
   (under its write lock only: reads go on; ~1 s for 100 k points) and starts
   ``python -m workers.recall.store_index <copy> <dim> <policy>`` — a child process at
   a lower priority that loads the copy, optimizes it and exits;
2. meanwhile every write the store makes is applied to the live shard as before and kept
   (the engine's operation object itself: it can be applied again);
3. when the child succeeded, the store (both its locks held) flushes and closes the live
   shard, renames it aside (``<name>.old``), moves the copy in its place, loads it, applies
   the writes kept since the copy, flushes, and drops the old directory (renamed to
   ``<name>.trash`` first, so a half-deleted directory is never mistaken for a whole one).
   Queries wait for this step only: one load of the shard (~0.7 s at 100 k points).

A crash at any point loses nothing: until the old directory is renamed to ``.trash`` it
holds every write (flushed before it was closed), and :func:`recover` (at open) puts it
back in place of a half-made swap; a leftover copy or trash is deleted.

The index changes no result anything writes: what the worker writes comes from exact reads
(the near-duplicate lookup and upkeep's neighbours ask ``exact``; scrolls and counts do
not use vectors), so a replay into a store indexed at other moments stores the same points.
The query's fused search uses the index for an agent holding more points than the engine's
full-scan threshold (~6 700 vectors of 384 floats); below it the engine reads the agent's
points from the payload index and scores them exactly, indexed or not.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import uuid
from pathlib import Path

import msgspec
from qdrant_edge import (
    Distance,
    EdgeConfig,
    EdgeOptimizersConfig,
    EdgeShard,
    EdgeSparseVectorParams,
    EdgeVectorParams,
    HnswIndexConfig,
    Modifier,
)

from workers.recall.store_base import DENSE, SPARSE

FLOAT_BYTES = 4
# The child yields the CPU to the workers: the index is never urgent.
CHILD_NICENESS = 10
# Qdrant's defaults for the graph (edges per node, candidates while building)
HNSW_M = 16
HNSW_EF_CONSTRUCT = 100


class IndexPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """When the store builds its index. The defaults are the engine's own thresholds; tests
    lower them to build over a few hundred points."""

    # Qdrant's full_scan_threshold (KB of vectors; its default), given to the index: an agent
    # with fewer vectors in a segment is searched exactly through the payload index, so an
    # index helps only past it.
    full_scan_kb: int = 10_000
    # Qdrant's indexing_threshold (KB of vectors): the optimizer indexes a segment past it.
    indexing_kb: int = 10_000
    # points written between two looks at the shard (a look: ~0.1 ms)
    check_every: int = 1_000

    def full_scan_points(self, dim: int) -> int:
        return self.full_scan_kb * 1024 // (dim * FLOAT_BYTES)


def due(policy: IndexPolicy, dim: int, *, points: int, indexed: int, largest_agent: int) -> bool:
    """Is a build worth its cost? Only when some agent is past the full-scan threshold (below
    it no search of the agent uses an index: a store of many small agents never pays for one),
    and the points not yet indexed reach that threshold and half the indexed ones (each build
    indexes the new points and may merge segments: growing by half keeps the total work a
    small multiple of the store)."""
    threshold = policy.full_scan_points(dim)
    return largest_agent >= threshold and points - indexed >= max(threshold, indexed // 2)


def shard_config(dim: int, policy: IndexPolicy | None = None) -> EdgeConfig:
    """The shard's configuration; the index's and the optimizer's only where the optimizer
    runs (the child: the built shard keeps them, the live one has nothing to do with them)."""
    return EdgeConfig(
        vectors={DENSE: EdgeVectorParams(size=dim, distance=Distance.Cosine)},
        sparse_vectors={SPARSE: EdgeSparseVectorParams(modifier=Modifier.Idf)},
        hnsw_config=None if policy is None else HnswIndexConfig(
            m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT, full_scan_threshold=policy.full_scan_kb),
        optimizers=None if policy is None else EdgeOptimizersConfig(indexing_threshold=policy.indexing_kb),
    )


def aside(live: Path, what: str) -> Path:
    """The directory beside the live shard's for ``what`` (``old``, ``trash``, ``build-…``)."""
    return live.with_name(f"{live.name}.{what}")


def new_copy(live: Path) -> Path:
    """A copy's directory, named for this build only: a child left running by a killed worker
    (where ``die_with_parent`` cannot ask for it to die too: not Linux) may still write into
    its own copy while the next worker builds (its copy is deleted at that worker's open;
    what the orphan writes there afterwards goes nowhere)."""
    return aside(live, f"build-{uuid.uuid4().hex[:12]}")


def recover(live: Path) -> None:
    """Finish what a crash left of a build: an ``.old`` directory means the swap had not
    completed (the live directory may lack writes), so it is put back; copies and a trash
    are deleted."""
    old = aside(live, "old")
    if old.exists():
        shutil.rmtree(live, ignore_errors=True)
        os.replace(old, live)
    for leftover in (*live.parent.glob(f"{live.name}.build-*"), aside(live, "trash")):
        shutil.rmtree(leftover, ignore_errors=True)


# prctl(2): the signal a process gets when the thread that started it exits
PR_SET_PDEATHSIG = 1


def child_command(copy: Path, dim: int, policy: IndexPolicy) -> list[str]:
    return [sys.executable, "-m", "workers.recall.store_index", str(copy), str(dim),
            msgspec.json.encode(policy).decode(), str(os.getpid())]


def die_with_parent(parent: int) -> None:
    """Be killed when the process that started this one dies (SIGKILLed included: a build
    left running would index a copy nobody puts in place, at up to ~1 GB of memory). Linux
    only (elsewhere a build outlives a killed worker; its copy is deleted at the next open).
    The signal is asked for first, then the parent checked: one that died before the ask
    was answered leaves this process to another parent."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:
        raise SystemExit(f"the worker {parent} that started this build is gone")


def build(copy: Path, dim: int, policy: IndexPolicy) -> bool:
    """Optimize the shard at ``copy`` (the child's work): True if any segment changed."""
    shard = EdgeShard.load(str(copy), shard_config(dim, policy))
    try:
        changed = shard.optimize()
        shard.flush()
    finally:
        shard.close()
    return bool(changed)


def main(argv: list[str]) -> int:
    copy, dim, policy = Path(argv[0]), int(argv[1]), msgspec.json.decode(argv[2], type=IndexPolicy)
    die_with_parent(int(argv[3]))
    os.nice(CHILD_NICENESS)
    build(copy, dim, policy)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
