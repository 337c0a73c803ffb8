"""Topics created by ``ensure_topics`` take writes as soon as it returns (issue 23, item 8).

``make run`` printed aiokafka's "Got error produce response ... NotLeaderForPartitionError,
retrying" between its own lines: it published right after creating its topics, while the broker
already named a leader in its metadata but that leader did not yet take writes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest
from aiokafka.admin import AIOKafkaAdminClient

from streams.kafka.admin import TOPIC_NAMES, ensure_topics
from streams.kafka.config import new_producer, started
from streams.kafka.producer import produce_lines
from streams.settings import Settings


@pytest.fixture
async def settings(
    kafka_bootstrap: str, unique_prefix: str, app_id: str, kafka_admin: AIOKafkaAdminClient
) -> AsyncIterator[Settings]:
    made = Settings(
        kafka_bootstrap=kafka_bootstrap, topic_prefix=unique_prefix, app_id=app_id, topic_partitions=3
    )
    yield made
    existing = set(await kafka_admin.list_topics())
    await kafka_admin.delete_topics([name for name in map(made.topic, TOPIC_NAMES) if name in existing])


def library_noise(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What aiokafka logged at WARNING or above (a person running ``make run`` reads it)."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("aiokafka") and r.levelno >= logging.WARNING
    ]


async def test_every_new_partition_takes_a_write_right_after_the_topics_are_created(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="aiokafka")
    created = await ensure_topics(settings)
    assert sorted(created) == sorted(map(settings.topic, TOPIC_NAMES))
    async with started(new_producer(settings), "writing to every new partition") as producer:
        sent = [
            await producer.send(name, b"{}", key=b"k", partition=partition)
            for name in created
            for partition in range(settings.topic_partitions)
        ]
        await asyncio.gather(*sent)
    assert library_noise(caplog) == []


async def test_publishing_right_after_the_topics_are_created_logs_no_leader_retries(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """What ``demo`` and ``publish`` do: create the topics, then publish at once."""
    caplog.set_level(logging.WARNING, logger="aiokafka")
    await ensure_topics(settings)
    lines = [b'{"run_id":"run-%d"}' % i for i in range(30)]
    assert await produce_lines(settings, settings.topic("raw-hits"), lines) == len(lines)
    assert library_noise(caplog) == []
