"""``replay``: re-process a topic range, comparing with the ledger (default) or resetting the workers."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from typing import IO

from rich.console import Console
from rich.table import Table

from streams.cli.progress import consume_range
from streams.errors import ConfigurationError
from streams.ledger_store import RedisLedgerStore
from streams.replay import (
    COMPARABLE_TOPICS,
    OUTCOMES,
    Range,
    compare_batch,
    parse_time,
    reset_offsets,
)
from streams.runtime import Record
from streams.settings import Settings, get_settings
from streams.topics import TOPIC_NAMES


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``replay``."""
    replay = sub.add_parser(
        "replay",
        help="re-process a topic range: compare with the ledger (default) or reset the workers' offsets",
        description="compare: read the range with a plain consumer, run the stations in-process, compare "
        "with the ledger; nothing is written to Kafka or Redis. reset: move the workers' committed offsets "
        "to the start of the range (workers stopped) so they re-process it; unchanged records end as "
        "DUPLICATE, changed ones as CONFLICT dead letters, never as an overwrite.",
    )
    replay.add_argument("--topic", default="raw-hits", choices=TOPIC_NAMES)
    start = replay.add_mutually_exclusive_group()
    start.add_argument("--from-offset", type=int, metavar="N", help="first offset (per partition)")
    start.add_argument("--from-time", metavar="ISO8601", help="first record at or after this time")
    end = replay.add_mutually_exclusive_group()
    end.add_argument("--to-offset", type=int, metavar="N", help="last offset, inclusive (per partition)")
    end.add_argument("--until", metavar="ISO8601", help="stop before records at or after this time")
    replay.add_argument("--partition", type=int, action="append", help="a partition (repeat; default all)")
    replay.add_argument("--mode", choices=("compare", "reset"), default="compare")
    replay.add_argument(
        "--out", default="replay-differences.jsonl", metavar="FILE", help="compare: where differences go"
    )
    replay.set_defaults(handler=run_replay)


def _range(args: argparse.Namespace) -> Range:
    return Range(
        topic=args.topic,
        partitions=args.partition,
        from_offset=args.from_offset,
        from_time_ms=parse_time(args.from_time) if args.from_time else None,
        to_offset=args.to_offset,
        until_ms=parse_time(args.until) if args.until else None,
    )


async def compare(settings: Settings, wanted: Range, diffs: IO[bytes]) -> tuple[Counter[str], bool]:
    """Compare the range with the ledger; returns the counts and whether it was interrupted."""
    store = RedisLedgerStore.from_settings(settings)

    async def handle(batch: list[Record]) -> Counter[str]:
        return await compare_batch(batch, settings, wanted.topic, store, diffs)

    try:
        return await consume_range(settings, wanted, f"compare {settings.topic(wanted.topic)}", handle)
    finally:
        await store.close()


def _summary(counts: Counter[str], title: str) -> Table:
    table = Table(title=title)
    table.add_column("outcome")
    table.add_column("records", justify="right")
    meaning = {
        "same": "the ledger holds what the stations produce now",
        "differs": "the ledger holds something else (see the differences file)",
        "missing": "nothing in the ledger for that run / tool call",
        "failed": "the stations reject the record without ids (a dead letter; nothing to compare)",
    }
    table.add_column("meaning")
    for outcome in OUTCOMES:
        table.add_row(outcome, str(counts.get(outcome, 0)), meaning[outcome])
    table.add_row("total", str(sum(counts.values())), "", style="bold")
    return table


def run_replay(args: argparse.Namespace) -> int:
    """The ``replay`` command."""
    settings = get_settings()
    wanted = _range(args)
    console = Console()
    if args.mode == "reset":
        moved = asyncio.run(reset_offsets(settings, wanted))
        table = Table(title=f"consumer group {settings.app_id}: offsets of {settings.topic(args.topic)}")
        for column in ("partition", "committed before", "now"):
            table.add_column(column, justify="right")
        for tp, (old, new) in sorted(moved.items(), key=lambda item: item[0].partition):
            table.add_row(str(tp.partition), "-" if old is None else str(old), str(new))
        console.print(table)
        console.print(
            "Start the workers (evidence-chain worker) to re-process; unchanged records end as "
            "DUPLICATE, changed projections as LEDGER_CONFLICT dead letters."
        )
        return 0
    if args.topic not in COMPARABLE_TOPICS:
        raise ConfigurationError(f"--mode compare reads {' or '.join(COMPARABLE_TOPICS)}, not {args.topic}")
    with open(args.out, "wb") as diffs:
        counts, interrupted = asyncio.run(compare(settings, wanted, diffs))
    title = f"replay compare of {settings.topic(args.topic)}" + (" (interrupted)" if interrupted else "")
    console.print(_summary(counts, title))
    console.print(f"differences: {args.out}")
    if interrupted:
        print("interrupted: the summary covers the records read so far", file=sys.stderr)
        return 130
    return 0
