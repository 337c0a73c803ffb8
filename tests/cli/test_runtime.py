"""Process set-up of the long-running commands."""

from __future__ import annotations

import gc

from streams.cli.runtime import COLLECT_EVERY, freeze_start_up


def test_freeze_start_up_takes_what_exists_out_of_the_collectors_reach() -> None:
    kept = [object() for _ in range(10)]  # something made before the freeze
    thresholds = gc.get_threshold()
    try:
        freeze_start_up()
        assert gc.get_freeze_count() >= len(kept)
        assert not any(x is kept for x in gc.get_objects())  # the frozen list is no longer tracked
        assert gc.get_threshold() == COLLECT_EVERY != thresholds  # and what follows is collected less often
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    assert any(x is kept for x in gc.get_objects())
