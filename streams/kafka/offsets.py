"""Consumer groups: their committed offsets and members, a reset's commit, and the worker's offset probe."""

from __future__ import annotations

import time
from collections.abc import Sequence

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from streams.kafka.config import kafka_errors, new_admin, new_consumer, started
from streams.settings import Settings


async def committed_offsets(
    admin: AIOKafkaAdminClient, group: str, partitions: Sequence[TopicPartition]
) -> dict[TopicPartition, int | None]:
    """The group's committed offset of each partition (None where it has none)."""
    with kafka_errors(f"reading the committed offsets of {group}"):
        found = await admin.list_consumer_group_offsets(group, partitions=list(partitions))
    out: dict[TopicPartition, int | None] = {}
    for tp in partitions:
        meta = found.get(tp)
        out[tp] = meta.offset if meta is not None and meta.offset >= 0 else None
    return out


async def group_members(settings: Settings, group: str) -> int:
    """How many members a consumer group has right now.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
    """
    async with started(new_admin(settings), f"describing group {group}") as admin:
        with kafka_errors(f"describing group {group}"):
            responses = await admin.describe_consumer_groups([group])
    members = 0
    for response in responses:
        for described in response.to_object()["groups"]:
            members += len(described.get("members", []))
    return members


async def commit_offsets(settings: Settings, group: str, offsets: dict[TopicPartition, int]) -> None:
    """Commit offsets for a group that has no members (``replay --mode reset``)."""
    consumer = new_consumer(settings, group_id=group)
    async with started(consumer, f"committing offsets of {group}"):
        consumer.assign(list(offsets))
        with kafka_errors(f"committing offsets of {group}"):
            await consumer.commit({tp: OffsetAndMetadata(offset, "") for tp, offset in offsets.items()})


class OffsetProbe:
    """Answers, with a plain consumer of its own, what the broker holds at a partition's offsets.

    The worker asks it only when something looks wrong (a gap between two records it was given, or
    a partition whose first record is not at the committed offset), never per record.
    """

    def __init__(self, settings: Settings, group: str) -> None:
        self.settings = settings
        self.group = group

    async def committed(self, partitions: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int | None]:
        """The group's committed offsets, or where it would start (the log start) without one."""
        tps = [TopicPartition(topic, partition) for topic, partition in partitions]
        async with started(new_admin(self.settings), f"committed offsets of {self.group}") as admin:
            found = await committed_offsets(admin, self.group, tps)
        return {(tp.topic, tp.partition): offset for tp, offset in found.items()}

    async def first_offset_from(
        self, topic: str, partition: int, offset: int, timeout_s: float = 10.0
    ) -> int | None:
        """The offset of the first record the broker serves at or after ``offset`` (None: none yet).

        Kafka returns the first existing data record at or after a fetch position, skipping
        transaction markers, aborted and compacted records, and moving up to the log start when
        retention has deleted the position: exactly the records a consumer could ever see.
        """
        tp = TopicPartition(topic, partition)
        consumer = new_consumer(self.settings, group_id=None, max_partition_fetch_bytes=1024 * 1024)
        async with started(consumer, f"probing {topic}[{partition}]@{offset}"):
            consumer.assign([tp])
            consumer.seek(tp, offset)
            deadline = time.monotonic() + timeout_s
            with kafka_errors(f"probing {topic}[{partition}]@{offset}"):
                while time.monotonic() < deadline:
                    batch = await consumer.getmany(tp, timeout_ms=500, max_records=1)
                    for records in batch.values():
                        if records:
                            return int(records[0].offset)
                    end = (await consumer.end_offsets([tp]))[tp]
                    if await consumer.position(tp) >= end:
                        return None
        return None
