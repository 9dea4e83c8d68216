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
