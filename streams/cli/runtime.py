"""Process set-up shared by the long-running commands (``worker``, ``gateway``)."""

from __future__ import annotations

import gc


def freeze_start_up() -> None:
    """Move everything made so far (modules, settings, the app and its agents) out of the cyclic
    garbage collector's reach, as CPython's ``gc.freeze`` documentation advises for servers.

    Without it every full collection walks the whole start-up heap: in the worker the last one
    before this point walked 121,000 objects in 59 ms, a pause of the one event loop every agent and
    every lookup waits on; after it a full collection at 100 records/s took 5 ms (measured with
    ``gc.callbacks``). What is made afterwards is collected less often than CPython's default
    (:data:`COLLECT_EVERY`).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*COLLECT_EVERY)


COLLECT_EVERY = (10_000, 20, 100)
"""The collector's thresholds after start-up (CPython's default: 700, 10, 10). A worker's records are
short-lived objects freed by reference counting, yet at the default every 700 allocations start a
young collection and every 70,000 a full one: at 20,000 preloaded records the worker spent 1.2 s in
3,355 collections (27 full, ~20 ms each), about 8 % of the run; with these, 0.39 s in 126 (a young
one ~1.8 ms), 5 % more records/s and 5 % less CPU per record (BENCHMARKS.md, P2)."""
