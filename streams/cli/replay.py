"""``replay``: re-process a topic range, comparing with the ledger (default) or resetting the workers."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from datetime import datetime
from typing import IO

from rich.table import Table

from models.vocab import Topic
from streams.cli.display import cell, console
from streams.cli.progress import consume_with_progress
from streams.errors import ConfigurationError
from streams.kafka.admin import TOPIC_NAMES
from streams.kafka.ranges import Range
from streams.ledger.redis import RedisLedgerStore
from streams.messages import Record
from streams.pipeline import StationRules
from streams.replay.compare import COMPARABLE_TOPICS, OUTCOMES, compare_batch
from streams.replay.reset import ResetPlan, apply_reset, check_range, plan_reset
from streams.settings import Settings, get_settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``replay``."""
    replay = sub.add_parser(
        "replay",
        help="re-process a topic range: compare with the ledger (default) or reset the workers' offsets",
        description="compare: read the range with a plain consumer, run the stations in-process, compare "
        "with the ledger; nothing is written to Kafka or Redis. reset: show how the workers' committed "
        "offsets would move to the start of the range (workers stopped), and move them with --yes; "
        "unchanged records end as DUPLICATE, changed ones as CONFLICT dead letters, never as an overwrite.",
    )
    replay.add_argument("--topic", default=Topic.RAW_HITS.value, choices=TOPIC_NAMES)
    start = replay.add_mutually_exclusive_group()
    start.add_argument("--from-offset", type=int, metavar="N", help="first offset (per partition)")
    start.add_argument("--from-time", metavar="ISO8601", help="first record at or after this time")
    end = replay.add_mutually_exclusive_group()
    end.add_argument(
        "--to-offset", type=int, metavar="N", help="compare: last offset, inclusive (per partition)"
    )
    end.add_argument("--until", metavar="ISO8601", help="compare: stop before records at or after this time")
    replay.add_argument("--partition", type=int, action="append", help="a partition (repeat; default all)")
    replay.add_argument("--mode", choices=("compare", "reset"), default="compare")
    replay.add_argument(
        "--out", default="replay-differences.jsonl", metavar="FILE", help="compare: where differences go"
    )
    replay.add_argument(
        "--yes", action="store_true", help="reset: move the offsets (without it, only the plan is shown)"
    )
    replay.add_argument(
        "--allow-skip",
        action="store_true",
        help="reset: allow moving offsets forward (skipping unprocessed records)",
    )
    replay.set_defaults(handler=run_replay)


def parse_time(text: str) -> int:
    """ISO 8601 (``2026-12-02T10:00:00Z``) → epoch milliseconds.

    Raises:
        ConfigurationError: the text is not an ISO 8601 time with a zone.
    """
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ConfigurationError(f"{text!r} is not an ISO 8601 time such as 2026-12-02T10:00:00Z") from exc
    if moment.tzinfo is None:
        raise ConfigurationError(f"{text!r} has no time zone; add Z or +08:00")
    return int(moment.timestamp() * 1000)


def _range(args: argparse.Namespace) -> Range:
    if args.from_offset is not None and args.from_offset < 0:
        raise ConfigurationError(f"--from-offset must be 0 or more, not {args.from_offset}")
    return Range(
        topic=Topic(args.topic),
        partitions=args.partition,
        from_offset=args.from_offset,
        from_time_ms=parse_time(args.from_time) if args.from_time else None,
        to_offset=args.to_offset,
        until_ms=parse_time(args.until) if args.until else None,
    )


async def compare(settings: Settings, wanted: Range, diffs: IO[bytes]) -> tuple[Counter[str], bool]:
    """Compare the range with the ledger; returns the counts and whether it was interrupted."""
    rules = StationRules.from_settings(settings)  # the keys read once for the whole range
    store = RedisLedgerStore.from_settings(settings)

    async def handle(batch: list[Record]) -> Counter[str]:
        return await compare_batch(batch, rules, wanted.topic, store, diffs)

    try:
        what = f"compare {settings.topic(wanted.topic)}"
        return await consume_with_progress(settings, wanted, what, handle)
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


def plan_table(plan: ResetPlan) -> Table:
    """The reset plan as a person reads it."""
    table = Table(title=f"consumer group {plan.group}: offsets of {plan.topic}", title_justify="left")
    for column in ("partition", "committed now", "new offset", "log begin..end", "re-processed", "skipped"):
        table.add_column(column, justify="right")
    for move in plan.moves:
        table.add_row(
            str(move.partition),
            cell(move.committed, empty=f"none (starts at {move.beginning})"),
            str(move.target),
            f"{move.beginning}..{move.end}",
            str(move.reprocessed),
            cell(move.skipped or "0", "bold red" if move.skipped else ""),
        )
    return table


def run_replay(args: argparse.Namespace) -> int:
    """The ``replay`` command."""
    settings = get_settings()
    wanted = _range(args)
    out = console()
    if args.mode == "reset":
        check_range(wanted)
        plan = asyncio.run(plan_reset(settings, wanted))
        out.print(plan_table(plan))
        if not args.yes:
            out.print("Nothing was changed: this is the plan. Run again with --yes to move the offsets.")
            if plan.skips:
                out.print("The plan moves offsets forward (skips records); it also needs --allow-skip.")
            return 0
        asyncio.run(apply_reset(settings, plan, allow_skip=args.allow_skip))
        out.print(
            "Offsets moved. Start the workers (evidence-chain worker) to re-process; unchanged records "
            "end as "
            "DUPLICATE, changed projections as LEDGER_CONFLICT dead letters."
        )
        return 0
    if wanted.topic not in COMPARABLE_TOPICS:
        raise ConfigurationError(f"--mode compare reads {' or '.join(COMPARABLE_TOPICS)}, not {wanted.topic}")
    with open(args.out, "wb") as diffs:
        counts, interrupted = asyncio.run(compare(settings, wanted, diffs))
    title = f"replay compare of {settings.topic(wanted.topic)}" + (" (interrupted)" if interrupted else "")
    out.print(_summary(counts, title))
    out.print(f"differences: {args.out}")
    if interrupted:
        print("interrupted: the summary covers the records read so far", file=sys.stderr)
        return 130
    return 0
