"""One progress bar for the long commands: count, records/s, elapsed; quiet when stderr is not a terminal.

The commands that read a topic range (``replay compare``, ``ledger rebuild``, ``ledger check``,
``ledger rebuild-judgements``) read it with :func:`streams.kafka.ranges.consume_range` under this bar.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections import Counter
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

from streams.kafka.ranges import BatchHandler, Plan, Range, consume_range
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


async def consume_with_progress(
    settings: Settings, wanted: Range, description: str, handle: BatchHandler
) -> tuple[Counter[str], bool]:
    """:func:`streams.kafka.ranges.consume_range` with a progress bar; Ctrl-C stops after the current batch.

    Returns the summed counts ``handle`` reported and whether the run was interrupted.
    """
    stop = asyncio.Event()
    with progress_bar() as progress, stop_on_interrupt(stop):
        task = progress.add_task(description, total=None)

        def on_plan(plan: Plan) -> None:
            progress.update(task, total=plan.total)

        counts = await consume_range(
            settings, wanted, handle, stop, on_plan=on_plan, on_batch=lambda n: progress.advance(task, n)
        )
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
