"""Reads of topic ranges for the commands: a range resolved to offsets, its records in batches handed to
whoever counts them, a whole topic."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition

from models.vocab import Topic
from streams.errors import ConfigurationError
from streams.kafka.admin import partition_counts
from streams.kafka.config import kafka_errors, new_admin, new_consumer, started
from streams.messages import Record
from streams.settings import Settings


@dataclass(frozen=True, slots=True)
class Range:
    """Which records to read: one topic, some partitions, offsets or times (epoch ms)."""

    topic: Topic
    partitions: list[int] | None = None
    from_offset: int | None = None
    from_time_ms: int | None = None
    to_offset: int | None = None
    until_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """Per partition: the log's beginning and end, and the range's start and end (exclusive)."""

    beginning: dict[TopicPartition, int]
    end: dict[TopicPartition, int]
    starts: dict[TopicPartition, int]
    ends: dict[TopicPartition, int]

    @property
    def total(self) -> int:
        """Records in the range."""
        return sum(max(0, self.ends[tp] - self.starts[tp]) for tp in self.starts)


async def plan_range(settings: Settings, consumer: AIOKafkaConsumer, wanted: Range) -> Plan:
    """Resolve a range to offsets.

    A ``--from-offset`` past the end, or a ``--from-time`` after the last record, resolves to the
    end (nothing to read); ``replay --mode reset`` refuses such a start.

    Raises:
        ConfigurationError: the topic or a partition does not exist.
        KafkaUnavailable: the broker cannot be reached.
    """
    full_topic = settings.topic(wanted.topic)
    async with started(new_admin(settings), f"describing {full_topic}") as admin:
        with kafka_errors(f"describing {full_topic}"):
            counts = await partition_counts(admin, [full_topic])
    if full_topic not in counts:
        raise ConfigurationError(f"topic {full_topic} does not exist; check --topic and EC_TOPIC_PREFIX")
    partitions = set(range(counts[full_topic]))
    chosen = sorted(partitions) if wanted.partitions is None else wanted.partitions
    missing = sorted(set(chosen) - partitions)
    if missing:
        raise ConfigurationError(f"{full_topic} has no partition {missing}; it has {sorted(partitions)}")
    tps = [TopicPartition(full_topic, p) for p in chosen]
    with kafka_errors(f"reading the offsets of {full_topic}"):
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
    return Plan(dict(begin), dict(end), starts, ends)


async def read_range(
    settings: Settings, wanted: Range, on_plan: Callable[[Plan], None], stop: asyncio.Event
) -> AsyncIterator[list[Record]]:
    """Batches of the records in the range, in offset order per partition.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
    """
    full_topic = settings.topic(wanted.topic)
    consumer = new_consumer(settings, group_id=None)
    async with started(consumer, f"reading {full_topic}"):
        plan = await plan_range(settings, consumer, wanted)
        on_plan(plan)
        pending = {tp for tp in plan.starts if plan.starts[tp] < plan.ends[tp]}
        if not pending:
            return
        consumer.assign(list(pending))
        for tp in pending:
            consumer.seek(tp, plan.starts[tp])
        while pending and not stop.is_set():
            with kafka_errors(f"reading {full_topic}"):
                batch = await consumer.getmany(timeout_ms=500, max_records=500)
            out: list[Record] = []
            for tp, messages in batch.items():
                for m in messages:
                    if m.offset >= plan.ends[tp]:
                        break
                    out.append(Record(m.topic, m.partition, m.offset, m.timestamp, m.key, m.value or b""))
                if messages and messages[-1].offset + 1 >= plan.ends[tp]:
                    pending.discard(tp)
                    consumer.pause(tp)
            if out:
                yield out


BatchHandler = Callable[[list[Record]], Awaitable[Counter[str]]]
"""What is done with one batch of a range, and what it counted (``replay compare``, ``ledger rebuild``)."""


def _nothing(_: object) -> None:
    return None


async def consume_range(
    settings: Settings,
    wanted: Range,
    handle: BatchHandler,
    stop: asyncio.Event,
    *,
    on_plan: Callable[[Plan], None] = _nothing,
    on_batch: Callable[[int], None] = _nothing,
) -> Counter[str]:
    """Each batch of the range handed to ``handle`` in turn, until the range is read or ``stop`` is set
    (after the batch in hand); the counts ``handle`` reported, summed. ``on_plan`` is told the range's
    offsets once, ``on_batch`` how many records each batch held.

    Raises:
        ConfigurationError: the topic or a partition does not exist.
        KafkaUnavailable: the broker cannot be reached.
    """
    counts: Counter[str] = Counter()
    async for batch in read_range(settings, wanted, on_plan, stop):
        counts += await handle(batch)
        on_batch(len(batch))
    return counts


async def read_topic(
    settings: Settings,
    topic: str,
    *,
    until: Callable[[list[bytes]], bool],
    wait_seconds: float = 90.0,
    settle: float = 0.0,
) -> list[bytes]:
    """All values of a full topic name from the beginning (no group), once ``until(values)`` holds.

    Reading stops when the condition has held for ``settle`` seconds, or after ``wait_seconds``.
    A topic that does not exist yet is waited for.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
    """
    values: list[bytes] = []
    deadline = time.monotonic() + wait_seconds
    consumer = new_consumer(settings, group_id=None, max_partition_fetch_bytes=8 * 1024 * 1024)
    async with (
        started(consumer, f"reading {topic}"),
        started(new_admin(settings), f"reading {topic}") as admin,
    ):
        counts: dict[str, int] = {}
        while time.monotonic() < deadline:
            with kafka_errors(f"describing {topic}"):
                counts = await partition_counts(admin, [topic])
            if counts:
                break
            await asyncio.sleep(0.5)
        if not counts:
            return values
        tps = [TopicPartition(topic, p) for p in range(counts[topic])]
        consumer.assign(tps)
        with kafka_errors(f"reading {topic}"):
            await consumer.seek_to_beginning(*tps)
            met_at: float | None = None
            while time.monotonic() < deadline:
                batch = await consumer.getmany(timeout_ms=300)
                for records in batch.values():
                    values += [r.value for r in records if r.value is not None]
                if met_at is None and until(values):
                    met_at = time.monotonic()
                if met_at is not None and time.monotonic() - met_at >= settle:
                    break
    return values
