"""Plain-consumer reads of whole topics, for the commands that show or compare what the workers wrote."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaError
from aiokafka.structs import TopicPartition

from streams.errors import KafkaUnavailable


async def read_topic(
    bootstrap: str,
    topic: str,
    *,
    until: Callable[[list[bytes]], bool],
    wait_seconds: float = 90.0,
    settle: float = 0.0,
) -> list[bytes]:
    """All values of ``topic`` from the beginning (no consumer group), once ``until(values)`` holds.

    Reading stops when the condition has held for ``settle`` seconds, or after ``wait_seconds``.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
    """
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        group_id=None,
        max_partition_fetch_bytes=8 * 1024 * 1024,
        fetch_max_bytes=16 * 1024 * 1024,
    )
    try:
        await consumer.start()
    except KafkaError as exc:
        raise KafkaUnavailable(f"cannot reach Kafka at {bootstrap}: {exc}; is it up (make up)?") from exc
    values: list[bytes] = []
    try:
        deadline = time.monotonic() + wait_seconds
        while not consumer.partitions_for_topic(topic) and time.monotonic() < deadline:
            await consumer._client.force_metadata_update()  # noqa: SLF001 - the topic may not exist yet
            await asyncio.sleep(0.5)
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        if not tps:
            return values
        consumer.assign(tps)
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
    except KafkaError as exc:
        raise KafkaUnavailable(f"reading {topic}: {exc}") from exc
    finally:
        await consumer.stop()
