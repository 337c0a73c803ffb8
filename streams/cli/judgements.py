"""``ledger rebuild-judgements``: the semantic review's recorded judgements, back from the topic.

Redis is an index that can be rebuilt (SPEC 7): the topic is the durable record of every judgement, and
the semantic station looks a draft's judgement up by ``(run_id, digest)`` before it asks the judge. This
command writes each judged event's record back, write-once, so a replay after a Redis loss judges from what
was recorded and calls no model. With ``--from-prefix`` it reads another prefix's topic: run it before a
replay into a new ``EC_TOPIC_PREFIX`` and ``EC_NS`` (SPEC 7) to carry the judgements along, as the chain
carries the ledger — the digest names the model, the prompt version, the claims and the evidence, not
where a draft was read, so the replayed drafts find them; a changed model or prompt asks anew.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from typing import Any

from rich.table import Table

from models.semantic import JudgementRecord
from models.vocab import JudgementStatus, Topic
from streams import codec
from streams.cli.display import console, redact_url
from streams.cli.progress import consume_with_progress
from streams.kafka.ranges import Range
from streams.ledger.redis import RedisLedgerStore
from streams.messages import Record
from streams.settings import Settings, get_settings


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``ledger rebuild-judgements`` under ``ledger``."""
    rebuild = commands.add_parser(
        "rebuild-judgements",
        help="restore the semantic review's recorded judgements from the judgements topic (idempotent)",
        description="Reads the whole judgements topic (this prefix's, or --from-prefix's) and records each "
        "judgement write-once in this namespace (EC_NS), under (run_id, digest): a replay then judges "
        "from the record and calls no model.",
    )
    rebuild.add_argument(
        "--from-prefix",
        metavar="PREFIX",
        help="read <PREFIX>judgements (a replay into a new prefix carries the old one's judgements)",
    )
    rebuild.set_defaults(handler=run_rebuild_judgements)


def record_of(value: bytes) -> tuple[str, str, bytes] | None:
    """``(run_id, digest, record)`` of a judged ``judgements`` value, None for anything else."""
    try:
        event: Any = codec.loads(value)
    except codec.JSONDecodeError:
        return None
    if not isinstance(event, dict) or event.get("status") != JudgementStatus.JUDGED:
        return None
    run_id, digest = event.get("run_id"), event.get("digest")
    if not isinstance(run_id, str) or not isinstance(digest, str) or not isinstance(event.get("answer"), str):
        return None
    record: JudgementRecord = {
        "digest": digest,
        "model": event.get("model"),  # type: ignore[typeddict-item]
        "answer": event["answer"],
        "claims": event.get("claims"),  # type: ignore[typeddict-item]
    }
    return run_id, digest, codec.dumps(record)


async def rebuild_judgements(settings: Settings, from_prefix: str | None = None) -> tuple[Counter[str], bool]:
    """Record every judgement of the topic write-once; returns the counts and whether interrupted."""
    source = settings if from_prefix is None else settings.model_copy(update={"topic_prefix": from_prefix})
    store = RedisLedgerStore.from_settings(settings)

    async def handle(batch: list[Record]) -> Counter[str]:
        counts: Counter[str] = Counter()
        items = []
        for record in batch:
            item = record_of(record.value)
            if item is None:
                counts["skipped"] += 1
            else:
                items.append(item)
        before = await store.recorded_judgements([(run_id, digest) for run_id, digest, _ in items])
        held = await store.record_judgements(items)
        for (_, _, value), was, now in zip(items, before, held, strict=True):
            counts["recorded" if was is None else "present" if now == value else "different"] += 1
        return counts

    try:
        return await consume_with_progress(
            source, Range(Topic.JUDGEMENTS), f"judgements from {source.topic(Topic.JUDGEMENTS)}", handle
        )
    finally:
        await store.close()


def run_rebuild_judgements(args: argparse.Namespace) -> int:
    """The ``ledger rebuild-judgements`` command."""
    settings = get_settings()
    counts, interrupted = asyncio.run(rebuild_judgements(settings, args.from_prefix))
    where = redact_url(settings.redis_url.get_secret_value())
    table = Table(title=f"judgements recorded into Redis {where} (namespace {settings.ns})")
    table.add_column("outcome")
    table.add_column("judgements", justify="right")
    table.add_column("meaning")
    meaning = {
        "recorded": "recorded (Redis had none for its run and digest)",
        "present": "Redis already held the same record",
        "different": "Redis holds another record for the run and digest; left untouched",
        "skipped": "not a judged event (NOT_ASKED, or not a judgement); nothing to record",
    }
    for outcome, text in meaning.items():
        table.add_row(outcome, str(counts.get(outcome, 0)), text)
    console().print(table)
    if interrupted:
        print(
            "interrupted: the judgements read so far were recorded; run it again to finish", file=sys.stderr
        )
        return 130
    return 0
