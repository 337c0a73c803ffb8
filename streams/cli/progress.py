"""One progress bar for the long commands: count, records/s, elapsed; quiet when stderr is not a terminal."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator

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

from streams.kafka.ranges import Plan, Range, read_range
from streams.messages import Record
from streams.settings import Settings


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


BatchHandler = Callable[[list[Record]], Awaitable[Counter[str]]]


async def consume_range(
    settings: Settings, wanted: Range, description: str, handle: BatchHandler
) -> tuple[Counter[str], bool]:
    """Read a topic range batch by batch with a progress bar; Ctrl-C stops after the current batch.

    Returns the summed counts ``handle`` reported and whether the run was interrupted.
    """
    counts: Counter[str] = Counter()
    stop = asyncio.Event()
    with progress_bar() as progress, stop_on_interrupt(stop):
        task = progress.add_task(description, total=None)

        def on_plan(plan: Plan) -> None:
            progress.update(task, total=plan.total)

        async for batch in read_range(settings, wanted, on_plan, stop):
            counts += await handle(batch)
            progress.advance(task, len(batch))
    return counts, stop.is_set()


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
