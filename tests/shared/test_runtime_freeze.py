"""A worker host leaves what its start-up made out of the cyclic collector's full collections
(``shared.runtime.freeze_start_up``): those objects are no longer scanned, and still there."""

from __future__ import annotations

import gc

from shared.runtime import freeze_start_up


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
