"""Replay a topic range: read it with a plain consumer (compare) or move the workers' offsets (reset).

SPEC 7: the ledger is history. Replaying into the live topics is a no-op when nothing changed
(DUPLICATE) and a CONFLICT dead letter per changed projection when something did; to try a change,
``compare`` runs the stations in-process over the range and compares with what the ledger holds,
writing nothing to Kafka or Redis.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from models.ids import is_valid_id
from models.vocab import DeadLetterReason, LedgerStatus, RecordStatus
from streams import json
from streams.errors import ConfigurationError, KafkaUnavailable
from streams.ledger_store import LedgerStore
from streams.pipeline import process_lookup, process_raw_hits
from streams.runtime import Record
from streams.settings import Settings

COMPARABLE_TOPICS = ("raw-hits", "postprocessed")
OUTCOMES = ("same", "differs", "missing", "failed")


@dataclass(frozen=True, slots=True)
class Range:
    """Which records to replay: one topic, some partitions, offsets or times (epoch ms)."""

    topic: str
    partitions: list[int] | None = None
    from_offset: int | None = None
    from_time_ms: int | None = None
    to_offset: int | None = None
    until_ms: int | None = None


def parse_time(text: str) -> int:
    """ISO 8601 (``2026-12-02T10:00:00Z``) → epoch milliseconds.

    Raises:
        ConfigurationError: the text is not an ISO 8601 time.
    """
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ConfigurationError(f"{text!r} is not an ISO 8601 time such as 2026-12-02T10:00:00Z") from exc
    if moment.tzinfo is None:
        raise ConfigurationError(f"{text!r} has no time zone; add Z or +08:00")
    return int(moment.timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class Plan:
    """Start and end (exclusive) offset per partition, fixed when the replay starts."""

    starts: dict[TopicPartition, int]
    ends: dict[TopicPartition, int]

    @property
    def total(self) -> int:
        return sum(max(0, self.ends[tp] - self.starts[tp]) for tp in self.starts)


async def plan_range(consumer: AIOKafkaConsumer, full_topic: str, wanted: Range) -> Plan:
    """Resolve the range to offsets.

    Raises:
        ConfigurationError: the topic or a partition does not exist.
    """
    partitions = consumer.partitions_for_topic(full_topic)
    if not partitions:
        await consumer._client.force_metadata_update()  # noqa: SLF001 - fresh metadata for a new topic
        partitions = consumer.partitions_for_topic(full_topic)
    if not partitions:
        raise ConfigurationError(f"topic {full_topic} does not exist; check --topic and EC_TOPIC_PREFIX")
    chosen = sorted(partitions) if wanted.partitions is None else wanted.partitions
    missing = sorted(set(chosen) - set(partitions))
    if missing:
        raise ConfigurationError(f"{full_topic} has no partition {missing}; it has {sorted(partitions)}")
    tps = [TopicPartition(full_topic, p) for p in chosen]
    begin = await consumer.beginning_offsets(tps)
    end = await consumer.end_offsets(tps)
    starts = {tp: begin[tp] for tp in tps}
    if wanted.from_offset is not None:
        starts = {tp: max(begin[tp], min(wanted.from_offset, end[tp])) for tp in tps}
    elif wanted.from_time_ms is not None:
        found = await consumer.offsets_for_times({tp: wanted.from_time_ms for tp in tps})
        starts = {tp: (found[tp].offset if found.get(tp) else end[tp]) for tp in tps}
    ends = dict(end)
    if wanted.to_offset is not None:
        ends = {tp: min(end[tp], wanted.to_offset + 1) for tp in tps}
    if wanted.until_ms is not None:
        found = await consumer.offsets_for_times({tp: wanted.until_ms for tp in tps})
        ends = {tp: min(ends[tp], found[tp].offset if found.get(tp) else end[tp]) for tp in tps}
    return Plan(starts, ends)


async def read_range(
    settings: Settings, wanted: Range, on_plan: Callable[[Plan], None], stop: asyncio.Event
) -> AsyncIterator[list[Record]]:
    """Batches of the records in the range, in offset order per partition.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
    """
    full_topic = settings.topic(wanted.topic)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap,
        group_id=None,
        enable_auto_commit=False,
        max_partition_fetch_bytes=2 * settings.topic_max_message_bytes,
        fetch_max_bytes=4 * settings.topic_max_message_bytes,
    )
    try:
        await consumer.start()
    except KafkaError as exc:
        raise KafkaUnavailable(f"cannot reach Kafka at {settings.kafka_bootstrap}: {exc}") from exc
    try:
        plan = await plan_range(consumer, full_topic, wanted)
        on_plan(plan)
        pending = {tp for tp in plan.starts if plan.starts[tp] < plan.ends[tp]}
        if not pending:
            return
        consumer.assign(list(pending))
        for tp in pending:
            consumer.seek(tp, plan.starts[tp])
        while pending and not stop.is_set():
            batch = await consumer.getmany(timeout_ms=500, max_records=500)
            out: list[Record] = []
            for tp, messages in batch.items():
                for m in messages:
                    if m.offset >= plan.ends[tp]:
                        break
                    out.append(Record(m.topic, m.partition, m.offset, m.timestamp, m.key, m.value or b""))
                if messages and (messages[-1].offset + 1 >= plan.ends[tp]):
                    pending.discard(tp)
                    consumer.pause(tp)
            if out:
                yield out
    except KafkaError as exc:
        raise KafkaUnavailable(f"reading {full_topic}: {exc}") from exc
    finally:
        await consumer.stop()


@dataclass(frozen=True, slots=True)
class Expected:
    """What the stations make of one record today, as a ledger key and entry."""

    run_id: str | None
    tool_call_id: str | None
    status: str | None
    sha256: str | None
    projection: str | None
    reason: str | None


def expected_entry(record: Record, settings: Settings, topic: str) -> Expected:
    """Run the stations on one record (nothing is written anywhere)."""
    origin = record.coordinates
    if topic == "raw-hits":
        outcome = process_raw_hits(record.value, settings, origin)
        lookup = outcome.lookup
        if lookup is None:
            reason = outcome.rejection["reason"] if outcome.rejection else None
            return Expected(None, None, None, None, None, reason)
        if lookup["status"] == RecordStatus.FAILED:
            return Expected(
                lookup["run_id"],
                lookup["tool_call_id"],
                LedgerStatus.FAILED,
                None,
                None,
                lookup["failure_reason"],
            )
        text: bytes = json.dumps(lookup)
    else:
        text = record.value
    projected = process_lookup(text, settings, fallback_origin=origin)
    event = projected.event
    if event is None or not is_valid_id(event["run_id"]) or not is_valid_id(event["tool_call_id"]):
        why = projected.rejection["reason"] if projected.rejection else DeadLetterReason.INVALID_ID
        return Expected(None, None, None, None, None, why)
    if projected.projection is None:
        return Expected(
            event["run_id"], event["tool_call_id"], LedgerStatus.FAILED, None, None, event["failure_reason"]
        )
    return Expected(
        event["run_id"],
        event["tool_call_id"],
        LedgerStatus.READY,
        projected.projection.sha256,
        event["projection"],
        None,
    )


async def compare_batch(
    records: list[Record], settings: Settings, topic: str, store: LedgerStore, diffs: IO[bytes] | None
) -> Counter[str]:
    """Classify each record of a batch as same / differs / missing / failed; write the non-same ones."""
    expectations = [(record, expected_entry(record, settings, topic)) for record in records]
    keys = [(e.run_id, e.tool_call_id) for _, e in expectations if e.run_id and e.tool_call_id]
    lookups = await store.read_many([(r, t) for r, t in keys if r and t]) if keys else {}
    counts: Counter[str] = Counter()
    for record, expected in expectations:
        stored: dict[str, Any] | None = None
        if expected.run_id is None or expected.tool_call_id is None:
            outcome = "failed"
        else:
            lookup = lookups[(expected.run_id, expected.tool_call_id)]
            stored = dict(lookup.entry) if lookup.entry is not None else None
            if stored is None:
                outcome = "missing"
            elif (stored.get("status"), stored.get("projection_sha256"), stored.get("projection")) == (
                expected.status,
                expected.sha256,
                expected.projection,
            ):
                outcome = "same"
            else:
                outcome = "differs"
        counts[outcome] += 1
        if diffs is not None and outcome != "same":
            diffs.write(
                json.dumps_line(
                    {
                        "outcome": outcome,
                        "source": {
                            "topic": record.topic,
                            "partition": record.partition,
                            "offset": record.offset,
                        },
                        "run_id": expected.run_id,
                        "tool_call_id": expected.tool_call_id,
                        "expected": {
                            "status": expected.status,
                            "projection_sha256": expected.sha256,
                            "projection": expected.projection,
                            "reason": expected.reason,
                        },
                        "stored": None
                        if stored is None
                        else {
                            "status": stored.get("status"),
                            "projection_sha256": stored.get("projection_sha256"),
                            "projection": stored.get("projection"),
                            "failure_reason": stored.get("failure_reason"),
                        },
                    }
                )
            )
    return counts


async def group_members(settings: Settings) -> int:
    """How many members the workers' consumer group has right now.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
    """
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    try:
        await admin.start()
        responses = await admin.describe_consumer_groups([settings.app_id])
    except KafkaError as exc:
        raise KafkaUnavailable(f"describing group {settings.app_id}: {exc}") from exc
    finally:
        await admin.close()
    members = 0
    for response in responses:
        for group in response.to_object()["groups"]:
            members += len(group.get("members", []))
    return members


async def reset_offsets(settings: Settings, wanted: Range) -> dict[TopicPartition, tuple[int | None, int]]:
    """Move the workers' committed offsets for the range's partitions to its start.

    Returns ``{partition: (old committed offset, new offset)}``.

    Raises:
        ConfigurationError: workers of the group are running (stop them first).
        KafkaUnavailable: the broker cannot be reached.
    """
    members = await group_members(settings)
    if members:
        raise ConfigurationError(
            f"consumer group {settings.app_id} has {members} running member(s); stop the workers first "
            "(a live group's offsets cannot be moved), then run replay --mode reset again"
        )
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap, group_id=settings.app_id, enable_auto_commit=False
    )
    try:
        await consumer.start()
        plan = await plan_range(consumer, settings.topic(wanted.topic), wanted)
        tps = list(plan.starts)
        consumer.assign(tps)
        old: dict[TopicPartition, int | None] = {tp: await consumer.committed(tp) for tp in tps}
        await consumer.commit({tp: OffsetAndMetadata(plan.starts[tp], "") for tp in tps})
    except KafkaError as exc:
        raise KafkaUnavailable(f"resetting the offsets of {settings.app_id}: {exc}") from exc
    finally:
        await consumer.stop()
    return {tp: (old[tp], plan.starts[tp]) for tp in tps}
