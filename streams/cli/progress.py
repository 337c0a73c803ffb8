"""One progress bar for the long commands: count, records/s, elapsed; quiet when stderr is not a terminal."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text


class RateColumn(ProgressColumn):
    """Records per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f} rec/s" if speed else "- rec/s", style="progress.data.speed")


def progress_bar(console: Console | None = None) -> Progress:
    """A bar with count, rate and elapsed time, on stderr."""
    console = console or Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not sys.stderr.isatty(),
    )


@contextlib.contextmanager
def stop_on_interrupt(stop: asyncio.Event) -> Iterator[None]:
    """Within a running loop: Ctrl-C (or SIGTERM) sets ``stop`` instead of killing the command."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        yield
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
