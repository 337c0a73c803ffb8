"""``ledger rebuild``, ``ledger check``, ``ledger export`` and ``ledger rebuild-judgements``: the Redis
ledger, and the semantic review's records beside it, against their durable record (SPEC 7).

The work is the ledger room's (:mod:`streams.ledger.rebuild`, :mod:`streams.ledger.check`); these commands
read the topics under a progress bar and print what came of it.

``rebuild-judgements`` writes the semantic review's recorded judgements back from the ``judgements``
topic: the semantic station looks a draft's judgement up by ``(run_id, digest)`` before it asks the
judge, so a replay after a Redis loss judges from what was recorded and calls no model. With
``--from-prefix`` it reads another prefix's topic: run it before a replay into a new ``EC_TOPIC_PREFIX``
and ``EC_NS`` (SPEC 7) to carry the judgements along, as the chain carries the ledger — the digest names
the model, the prompt version, the claims and the evidence, not where a draft was read, so the replayed
drafts find them; a changed model or prompt asks anew. Only a judgement that holds is recorded (signed
by a trusted guard key, with ``EC_TRUSTED_KEYS_FILE``; its digest that of its own model and case).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter

from rich.table import Table

from models.ids import is_valid_id
from models.ledger import LedgerEntry
from models.vocab import Topic
from streams import codec
from streams.cli.display import cell, console, printable, redact_url
from streams.cli.progress import consume_with_progress
from streams.errors import ConfigurationError, InfrastructureError, Refused
from streams.kafka.ranges import Range
from streams.ledger.check import CheckReport, Finding, TopicLedger, check_ledger
from streams.ledger.rebuild import EntryRestore, JudgementRestore
from streams.ledger.redis import RedisLedgerStore
from streams.messages import Record
from streams.settings import Settings, get_settings
from streams.trust.keys import load_trusted_keys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``ledger rebuild``, ``ledger check`` and ``ledger export``."""
    ledger = sub.add_parser(
        "ledger", help="rebuild the Redis ledger from the ledger topic, check the two agree, or export a run"
    )
    commands = ledger.add_subparsers(dest="ledger_command", required=True, metavar="SUBCOMMAND")
    rebuild = commands.add_parser(
        "rebuild",
        help="restore the Redis ledger from the ledger topic (idempotent)",
        description="Reads the whole ledger topic and writes each entry write-once: entries Redis still "
        "holds are DUPLICATE, lost ones are WRITTEN with their remaining lifetime (from the write time the "
        "ledger event carries), expired ones are skipped.",
    )
    rebuild.set_defaults(handler=run_rebuild)
    check = commands.add_parser(
        "check",
        help="compare the Redis ledger with the ledger topic, key by key (read-only)",
        description="Scans the namespace's ledger keys in Redis, reads the whole ledger topic (to its end "
        "offsets at start), and reports per (run_id, tool_call_id): missing (on the topic, not in Redis, "
        "not expired), extra (in Redis, not on the topic), different (not the same entry by the write-once "
        "rule) and conflicting (two different values on the topic). Exit 0: they agree; 1: a difference; "
        "2: a setting, Kafka or Redis problem.",
    )
    check.add_argument("--limit", type=int, default=10, metavar="N", help="example keys per finding (10)")
    check.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    check.set_defaults(handler=run_check)
    export = commands.add_parser("export", help="a run's entries as JSON lines (what verify --ledger reads)")
    export.add_argument("--run", required=True, metavar="RUN_ID")
    export.set_defaults(handler=run_export)
    rebuild_judgements = commands.add_parser(
        "rebuild-judgements",
        help="restore the semantic review's recorded judgements from the judgements topic (idempotent)",
        description="Reads the whole judgements topic (this prefix's, or --from-prefix's) and records each "
        "judgement write-once in this namespace (EC_NS), under (run_id, digest): a replay then judges "
        "from the record and calls no model. A judgement that does not hold (with EC_TRUSTED_KEYS_FILE: "
        "not signed by a trusted guard key; its digest not that of its model and case) is not recorded.",
    )
    rebuild_judgements.add_argument(
        "--from-prefix",
        metavar="PREFIX",
        help="read <PREFIX>judgements (a replay into a new prefix carries the old one's judgements)",
    )
    rebuild_judgements.set_defaults(handler=run_rebuild_judgements)


async def rebuild(settings: Settings) -> tuple[Counter[str], bool]:
    """Write every entry of the ledger topic back, write-once; returns the counts and whether interrupted."""
    store = RedisLedgerStore.from_settings(settings)
    restore = EntryRestore(store, ttl_ms=settings.ledger_ttl_seconds * 1000)
    try:
        what = f"rebuild from {settings.topic(Topic.LEDGER)}"
        return await consume_with_progress(settings, Range(Topic.LEDGER), what, restore)
    finally:
        await store.close()


_REBUILT = {
    "written": "restored (Redis had lost it)",
    "duplicate": "Redis already held the same entry",
    "conflict": "Redis holds a different entry for the key; left untouched",
    "expired": "its lifetime is over; not restored",
    "malformed": "not a ledger entry; skipped",
}


def run_rebuild(args: argparse.Namespace) -> int:
    """The ``ledger rebuild`` command."""
    settings = get_settings()
    counts, interrupted = asyncio.run(rebuild(settings))
    where = redact_url(settings.redis_url.get_secret_value())
    title = f"ledger rebuild into Redis {where} (namespace {settings.ns})"
    console().print(_outcomes(title, "entries", _REBUILT, counts))
    return _finished(interrupted, "the entries read so far were restored")


def _outcomes(title: str, unit: str, meaning: dict[str, str], counts: Counter[str]) -> Table:
    """How many records came to each outcome of a rebuild, and what the outcome means."""
    table = Table(title=title)
    table.add_column("outcome")
    table.add_column(unit, justify="right")
    table.add_column("meaning")
    for outcome, text in meaning.items():
        table.add_row(outcome, str(counts.get(outcome, 0)), text)
    return table


def _finished(interrupted: bool, done: str) -> int:
    """A rebuild's exit code: 130, saying what was done, when Ctrl-C stopped it."""
    if interrupted:
        print(f"interrupted: {done}; run it again to finish", file=sys.stderr)
        return 130
    return 0


async def check(settings: Settings) -> CheckReport | None:
    """The Redis ledger against the whole ledger topic, with a progress bar; None when interrupted."""
    store = RedisLedgerStore.from_settings(settings)

    async def read_topic(topic: TopicLedger) -> bool:
        async def handle(batch: list[Record]) -> Counter[str]:
            return topic.add_records(batch)

        what = f"check {settings.topic(Topic.LEDGER)}"
        _, interrupted = await consume_with_progress(settings, Range(Topic.LEDGER), what, handle)
        return not interrupted

    try:
        now_ms = int(time.time() * 1000)
        return await check_ledger(store, read_topic, ttl_ms=settings.ledger_ttl_seconds * 1000, now_ms=now_ms)
    finally:
        await store.close()


_FINDINGS = {
    Finding.MISSING: "on the topic, not in Redis, lifetime not over (ledger rebuild restores it)",
    Finding.EXTRA: "in Redis, no event on the ledger topic",
    Finding.DIFFERENT: "Redis holds another entry (projection_sha256 or status) than the topic",
    Finding.CONFLICTING: "the topic holds two different values for the key",
}


def check_tables(report: CheckReport, settings: Settings, limit: int) -> list[Table]:
    """The summary (keys per outcome), then up to ``limit`` example keys of each finding."""
    where = redact_url(settings.redis_url.get_secret_value())
    summary = Table(
        title=f"ledger check: {settings.topic(Topic.LEDGER)} against Redis namespace {settings.ns}",
        caption=f"Redis {where}; {report.events} ledger events ({report.malformed} malformed, skipped); "
        f"{report.topic_keys} keys on the topic, {report.redis_keys} in Redis",
    )
    summary.add_column("outcome")
    summary.add_column("keys", justify="right")
    summary.add_column("meaning")
    summary.add_row("same", str(report.same), "Redis holds the topic's entry")
    summary.add_row("expired", str(report.expired), "its lifetime is over: gone from Redis by design")
    for finding, meaning in _FINDINGS.items():
        count = len(report.findings[finding])
        summary.add_row(finding.value, cell(count, "bold red" if count else ""), meaning)
    tables = [summary]
    for finding, keys in report.findings.items():
        if not keys or limit == 0:
            continue
        shown = keys[:limit]
        examples = Table(title=f"{finding.value}: {len(shown)} of {len(keys)}", title_justify="left")
        examples.add_column("run_id")
        examples.add_column("tool_call_id")
        for run_id, tool_call_id in shown:
            examples.add_row(cell(run_id), cell(tool_call_id))
        tables.append(examples)
    return tables


def run_check(args: argparse.Namespace) -> int:
    """The ``ledger check`` command: exit 0 when Redis and the topic agree, 1 on a difference, 2 when
    a setting, Kafka or Redis does not work (nothing compared)."""
    if args.limit < 0:
        raise ConfigurationError(f"--limit must be 0 or more, not {args.limit}")
    settings = get_settings()
    try:
        report = asyncio.run(check(settings))
    except (InfrastructureError, Refused) as exc:
        where = redact_url(settings.redis_url.get_secret_value())
        print(f"evidence-chain ledger check: {type(exc).__name__}: {exc}", file=sys.stderr)
        print(f"(Kafka {settings.kafka_bootstrap}, Redis {where}): nothing was compared", file=sys.stderr)
        return 2
    if report is None:
        print("interrupted: nothing was compared (unread keys would all count as extra)", file=sys.stderr)
        return 130
    if args.json:
        sys.stdout.buffer.write(codec.dumps_line(report.as_json(args.limit)))
        sys.stdout.flush()
    else:
        out = console()
        for table in check_tables(report, settings, args.limit):
            out.print(table)
        differ = sum(len(keys) for keys in report.findings.values())
        out.print("Redis and the ledger topic agree" if report.clean else f"{differ} differences")
    return 0 if report.clean else 1


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
        out.write(codec.dumps_line(entry))
    out.flush()
    print(f"exported {len(entries)} entries of run {args.run}", file=sys.stderr)
    return 0


async def rebuild_judgements(
    settings: Settings, from_prefix: str | None = None
) -> tuple[Counter[str], bool, list[str]]:
    """Record every judgement of the topic that holds, write-once; returns the counts, whether interrupted,
    and the first judgements refused (``topic[partition]@offset: why``)."""
    source = settings if from_prefix is None else settings.model_copy(update={"topic_prefix": from_prefix})
    trusted = load_trusted_keys(settings.trusted_keys_file) if settings.trusted_keys_file else None
    store = RedisLedgerStore.from_settings(settings)
    restore = JudgementRestore(store, trusted, settings.semantic.max_chars_per_draft)
    try:
        what = f"judgements from {source.topic(Topic.JUDGEMENTS)}"
        counts, interrupted = await consume_with_progress(source, Range(Topic.JUDGEMENTS), what, restore)
    finally:
        await store.close()
    return counts, interrupted, restore.refused


_JUDGEMENTS_REBUILT = {
    "recorded": "recorded (Redis had none for its run and digest)",
    "present": "Redis already held the same record",
    "different": "Redis holds another record for the run and digest; left untouched",
    "refused": "a judgement that does not hold (its signature or its digest); not recorded",
    "skipped": "nothing to record (NOT_ASKED over the characters cap, or not a judgement)",
}


def run_rebuild_judgements(args: argparse.Namespace) -> int:
    """The ``ledger rebuild-judgements`` command."""
    settings = get_settings()
    counts, interrupted, refused = asyncio.run(rebuild_judgements(settings, args.from_prefix))
    where = redact_url(settings.redis_url.get_secret_value())
    title = f"judgements recorded into Redis {where} (namespace {settings.ns})"
    console().print(_outcomes(title, "judgements", _JUDGEMENTS_REBUILT, counts))
    for line in refused:
        print(f"refused {printable(line)}", file=sys.stderr)
    if counts["refused"] > len(refused):
        print(f"refused … and {counts['refused'] - len(refused)} more", file=sys.stderr)
    return _finished(interrupted, "the judgements read so far were recorded")
