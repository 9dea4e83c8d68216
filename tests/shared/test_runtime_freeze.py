"""A worker host leaves what its start-up made out of the cyclic collector's full collections
(``shared.runtime.freeze_start_up``): those objects are no longer scanned, and still there."""

from __future__ import annotations

import asyncio
import gc
import signal

from shared.config import load_settings
from shared.runtime import WorkerHost, freeze_start_up


def test_what_start_up_made_is_frozen_out_of_the_collections_and_kept() -> None:
    gc.unfreeze()
    made = [{"table": i} for i in range(1000)]  # a start-up table: tracked containers
    assert any(obj is made for obj in gc.get_objects())
    try:
        freeze_start_up()
        assert gc.get_freeze_count() >= len(made)
        assert not any(obj is made for obj in gc.get_objects())  # no collection scans it
        assert made[999] == {"table": 999}
    finally:
        gc.unfreeze()


async def test_only_a_host_that_owns_its_process_freezes_its_start_up() -> None:
    """`cortex up` and `cortex worker` install the stop signals and own their process; a host a
    test starts in its own process does not freeze (it would keep every cycle made before)."""
    host = WorkerHost(load_settings({}), [], "test")
    assert not host.owns_process
    loop = asyncio.get_running_loop()
    try:
        host.install_signal_handlers()
        assert host.owns_process
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


def test_a_host_that_owns_its_process_collects_its_young_objects_less_often_and_still_frees_cycles() -> None:
    """``freeze_start_up`` sets ``COLLECTOR_THRESHOLDS``: thousands of tracked containers an event
    loop keeps for a while (a batch's documents) stay young without a collection, where the
    default 700 collected them every few dozen events; a cycle that is garbage is still freed."""
    import weakref

    from shared.runtime import COLLECTOR_THRESHOLDS

    before = gc.get_threshold()
    gc.unfreeze()
    try:
        freeze_start_up()
        assert gc.get_threshold() == COLLECTOR_THRESHOLDS
        assert COLLECTOR_THRESHOLDS[0] >= 10_000
        gc.collect(0)
        kept = [{"n": i} for i in range(5000)]  # tracked containers alive: no young collection ran
        assert gc.get_count()[0] >= len(kept) - 500  # (net of what was freed meanwhile; < 700 at 700)

        class Node:
            other: object = None

        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
        gc.collect()
        assert gone() is None
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
