"""``ledger rebuild`` and ``ledger export``: the Redis ledger from and to its durable record."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from typing import Any, cast

from rich.table import Table

from models.ids import is_valid_id
from models.ledger import LedgerEntry, as_stored
from models.vocab import Topic
from streams import codec
from streams.cli.display import console, redact_url
from streams.cli.progress import consume_range
from streams.errors import ConfigurationError
from streams.kafka import Range
from streams.ledger.redis import RedisLedgerStore
from streams.messages import Record
from streams.settings import Settings, get_settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``ledger rebuild`` and ``ledger export``."""
    ledger = sub.add_parser("ledger", help="rebuild the Redis ledger from the ledger topic, or export a run")
    commands = ledger.add_subparsers(dest="ledger_command", required=True, metavar="SUBCOMMAND")
    rebuild = commands.add_parser(
        "rebuild",
        help="restore the Redis ledger from the ledger topic (idempotent)",
        description="Reads the whole ledger topic and writes each entry write-once: entries Redis still "
        "holds are DUPLICATE, lost ones are WRITTEN with their remaining lifetime (from the write time the "
        "ledger event carries), expired ones are skipped.",
    )
    rebuild.set_defaults(handler=run_rebuild)
    export = commands.add_parser("export", help="a run's entries as JSON lines (what verify --ledger reads)")
    export.add_argument("--run", required=True, metavar="RUN_ID")
    export.set_defaults(handler=run_export)


def entry_of(value: bytes) -> LedgerEntry | None:
    """A ``ledger`` event as a ledger entry, or None when it is not one."""
    try:
        doc = codec.loads(value)
    except codec.JSONDecodeError:
        return None
    if (
        not isinstance(doc, dict)
        or not is_valid_id(doc.get("run_id"))
        or not is_valid_id(doc.get("tool_call_id"))
    ):
        return None
    return as_stored(doc)


def restorable(entry: LedgerEntry, record_timestamp: int | None, ttl_ms: int, now_ms: int) -> LedgerEntry:
    """The entry with the lifetime it really has left.

    A ledger event carries the entry's ``expires_at`` (Redis ``TIME`` when it was written). An event
    written before that field existed lives ``ttl`` from the latest moment it can have been written:
    the ledger event's own timestamp (when the agent produced it), else the origin's.
    """
    if entry.get("expires_at") is not None:
        return entry
    born = record_timestamp or entry.get("source_timestamp") or now_ms
    restored = dict(entry)
    restored["written_at"], restored["expires_at"] = born, born + ttl_ms
    return cast(LedgerEntry, restored)


async def rebuild(settings: Settings) -> tuple[Counter[str], bool]:
    """Write every entry of the ledger topic back, write-once; returns the counts and whether interrupted."""
    store = RedisLedgerStore.from_settings(settings)
    ttl_ms = settings.ledger_ttl_seconds * 1000

    async def handle(batch: list[Record]) -> Counter[str]:
        counts: Counter[str] = Counter()
        now_ms = int(time.time() * 1000)
        entries: list[LedgerEntry] = []
        for record in batch:
            entry = entry_of(record.value)
            if entry is None:
                counts["malformed"] += 1
                continue
            entries.append(restorable(entry, record.timestamp, ttl_ms, now_ms))
        for result in await store.write_many(entries, restore=True):
            counts[result.outcome.lower()] += 1
        return counts

    try:
        return await consume_range(
            settings, Range(Topic.LEDGER), f"rebuild from {settings.topic(Topic.LEDGER)}", handle
        )
    finally:
        await store.close()


def run_rebuild(args: argparse.Namespace) -> int:
    """The ``ledger rebuild`` command."""
    settings = get_settings()
    counts, interrupted = asyncio.run(rebuild(settings))
    where = redact_url(settings.redis_url.get_secret_value())
    table = Table(title=f"ledger rebuild into Redis {where} (namespace {settings.ns})")
    table.add_column("outcome")
    table.add_column("entries", justify="right")
    table.add_column("meaning")
    meaning = {
        "written": "restored (Redis had lost it)",
        "duplicate": "Redis already held the same entry",
        "conflict": "Redis holds a different entry for the key; left untouched",
        "expired": "its lifetime is over; not restored",
        "malformed": "not a ledger entry; skipped",
    }
    for outcome, text in meaning.items():
        table.add_row(outcome, str(counts.get(outcome, 0)), text)
    console().print(table)
    if interrupted:
        print("interrupted: the entries read so far were restored; run it again to finish", file=sys.stderr)
        return 130
    return 0


async def export(settings: Settings, run_id: str) -> list[LedgerEntry]:
    """Every entry of one run from Redis."""
    store = RedisLedgerStore.from_settings(settings)
    try:
        return await store.entries_of_run(run_id)
    finally:
        await store.close()


def run_export(args: argparse.Namespace) -> int:
    """The ``ledger export`` command."""
    if not is_valid_id(args.run):
        raise ConfigurationError(f"{args.run!r} is not a run id (1-128 of [A-Za-z0-9._-])")
    entries = asyncio.run(export(get_settings(), args.run))
    out = sys.stdout.buffer
    for entry in entries:
        out.write(codec.dumps_line(cast(dict[str, Any], entry)))
    out.flush()
    print(f"exported {len(entries)} entries of run {args.run}", file=sys.stderr)
    return 0
