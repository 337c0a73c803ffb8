"""Process set-up shared by the long-running commands (``worker``, ``gateway``, ``mcp``, ``serve``): their
settings with the options given, the event loop they run on, the garbage collector after start-up."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Coroutine
from typing import Any

from streams.errors import ConfigurationError
from streams.settings import Settings, get_settings, load_settings


def check_port(port: int | None) -> None:
    """Refuse a ``--port`` no socket can have (None: not given).

    Raises:
        ConfigurationError: the port is not from 0 to 65535.
    """
    if port is not None and not 0 <= port <= 65535:
        raise ConfigurationError(f"--port must be from 0 to 65535, not {port}")


def settings_with(**given: Any) -> Settings:
    """The settings, with each option given (not None) in place of the environment's setting of its name.

    Raises:
        ConfigurationError: a setting cannot work.
    """
    overrides = {name: value for name, value in given.items() if value is not None}
    return load_settings(**overrides) if overrides else get_settings()


def run_on_loop(settings: Settings, main: Coroutine[Any, Any, Any]) -> None:
    """Run ``main`` to its end on the event loop ``EC_EVENT_LOOP`` names: uvloop moves large records with
    less CPU than asyncio's own."""
    if settings.event_loop == "uvloop":
        import uvloop

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(main)
    else:
        asyncio.run(main)


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
