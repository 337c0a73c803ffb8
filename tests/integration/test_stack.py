"""The stack the integration tier runs on is real: Kafka 4 in KRaft mode, groups, transactions, Redis Lua.

These guard the infrastructure itself (``make up``, docker-compose, testcontainers), so that a failing
agent test later is about the agent, not about a broker that was never there.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import redis.asyncio as aioredis
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.client import AIOKafkaClient
from aiokafka.protocol.admin import ApiVersionRequest

if TYPE_CHECKING:  # fixtures come from conftest.py; pytest advises against importing it at run time
    from conftest import CreateTopic, Endpoint

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(180)

# Kafka protocol API keys (https://kafka.apache.org/protocol#protocol_api_keys).
FETCH = 1
LIST_OFFSETS = 2
LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA, CONTROLLED_SHUTDOWN = 4, 5, 6, 7
DESCRIBE_QUORUM = 55
CONSUMER_GROUP_HEARTBEAT = 68

FOUR_MIB = 4 * 1024 * 1024


async def _consume(consumer: AIOKafkaConsumer, count: int, timeout_s: float = 30.0) -> list[ConsumerRecord]:
    """Records until ``count`` arrived; fails the test after ``timeout_s``."""
    records: list[ConsumerRecord] = []
    deadline = asyncio.get_running_loop().time() + timeout_s
    while len(records) < count:
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"got {len(records)} of {count} records within {timeout_s}s")
        batches = await consumer.getmany(timeout_ms=500)
        for batch in batches.values():
            records.extend(batch)
    return records


@pytest.fixture
async def kafka_client(kafka_bootstrap: str) -> AsyncIterator[AIOKafkaClient]:
    client = AIOKafkaClient(bootstrap_servers=kafka_bootstrap)
    await client.bootstrap()
    try:
        yield client
    finally:
        await client.close()


async def test_broker_is_kafka_4_in_kraft_mode(
    kafka_client: AIOKafkaClient, kafka_admin: AIOKafkaAdminClient, kafka_endpoint: Endpoint
) -> None:
    node_id = next(iter(kafka_client.cluster.brokers())).nodeId
    response = await kafka_client.send(node_id, ApiVersionRequest())
    assert response.error_code == 0
    versions = {key: (low, high) for key, low, high in response.api_versions}

    # Kafka 4.0 removed Fetch v0-v3 and ListOffsets v0 (KIP-896); every 3.x broker still serves them.
    assert versions[FETCH][0] >= 4, f"Fetch versions {versions[FETCH]}: older than Kafka 4"
    assert versions[LIST_OFFSETS][0] >= 1, f"ListOffsets {versions[LIST_OFFSETS]}: older than Kafka 4"
    # The KIP-848 consumer group protocol is on by default from 4.0.
    assert CONSUMER_GROUP_HEARTBEAT in versions
    # KRaft: DescribeQuorum is served (forwarded to the controller quorum); no ZooKeeper-era controller RPCs.
    assert DESCRIBE_QUORUM in versions
    zk_only = {LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA, CONTROLLED_SHUTDOWN} & versions.keys()
    assert not zk_only, f"ZooKeeper-mode APIs advertised: {sorted(zk_only)}"

    # process.roles is set only in KRaft mode (a ZooKeeper-mode broker reports it empty).
    [described] = await kafka_admin.describe_configs(
        [ConfigResource(ConfigResourceType.BROKER, str(node_id), {"process.roles": None})]
    )
    [resource] = described.to_object()["resources"]
    assert resource["error_code"] == 0, resource
    roles = {entry["config_names"]: entry["config_value"] for entry in resource["config_entries"]}
    assert "broker" in roles["process.roles"].split(","), roles

    if kafka_endpoint.source == "local":
        # The local stack runs the jars deploy/local/kafka/pom.xml fetched.
        jars = sorted((REPO_ROOT / ".local/kafka/libs").glob("kafka_2.13-*.jar"))
        assert jars, "no kafka_2.13 jar under .local/kafka/libs"
        match = re.fullmatch(r"kafka_2\.13-(\d+)\.(\d+)\.(\d+)\.jar", jars[0].name)
        assert match is not None and (int(match[1]), int(match[2])) >= (4, 1), jars[0].name


async def test_topic_is_created_with_three_partitions(
    kafka_admin: AIOKafkaAdminClient, create_topic: CreateTopic
) -> None:
    topic = await create_topic("three", partitions=3)

    [described] = await kafka_admin.describe_topics([topic])

    assert described["error_code"] == 0, described
    assert described["topic"] == topic
    assert sorted(p["partition"] for p in described["partitions"]) == [0, 1, 2]


async def test_consumer_group_commit_is_seen_by_a_new_consumer(
    kafka_bootstrap: str, create_topic: CreateTopic, unique_prefix: str
) -> None:
    topic = await create_topic("group", partitions=3)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    await producer.start()
    try:
        # Fixed keys: the default (murmur2) partitioner spreads them over all three partitions.
        sent = [
            await producer.send_and_wait(topic, key=f"run-{i}".encode(), value=f"v{i}".encode())
            for i in range(12)
        ]
    finally:
        await producer.stop()
    per_partition = Counter(meta.partition for meta in sent)
    assert set(per_partition) == {0, 1, 2}

    group = f"{unique_prefix}group"
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka_bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        records = await _consume(consumer, 12)
        await consumer.commit()
    finally:
        await consumer.stop()
    assert sorted(r.value for r in records) == sorted(f"v{i}".encode() for i in range(12))

    checker = AIOKafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=group, enable_auto_commit=False)
    await checker.start()
    try:
        partitions = [TopicPartition(topic, p) for p in range(3)]
        checker.assign(partitions)
        committed = {tp.partition: await checker.committed(tp) for tp in partitions}
        positions = {tp.partition: await checker.position(tp) for tp in partitions}
    finally:
        await checker.stop()
    assert committed == dict(per_partition)
    assert positions == dict(per_partition)


async def test_transaction_commit_is_read_committed_and_abort_is_not(
    kafka_bootstrap: str, create_topic: CreateTopic, unique_prefix: str
) -> None:
    topic = await create_topic("tx")
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, transactional_id=f"{unique_prefix}tx")
    await producer.start()
    try:
        await producer.begin_transaction()
        await producer.send_and_wait(topic, key=b"run-1", value=b"aborted")
        await producer.abort_transaction()
        async with producer.transaction():
            await producer.send_and_wait(topic, key=b"run-1", value=b"committed-1")
            await producer.send_and_wait(topic, key=b"run-1", value=b"committed-2")
    finally:
        await producer.stop()

    async def read(isolation_level: str, count: int) -> list[bytes | None]:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=kafka_bootstrap, isolation_level=isolation_level, enable_auto_commit=False
        )
        await consumer.start()
        try:
            tp = TopicPartition(topic, 0)
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            return [r.value for r in await _consume(consumer, count)]
        finally:
            await consumer.stop()

    assert await read("read_committed", 2) == [b"committed-1", b"committed-2"]
    # The aborted record is in the log: read_uncommitted sees it, so the filter above is real.
    assert await read("read_uncommitted", 3) == [b"aborted", b"committed-1", b"committed-2"]


async def test_a_record_near_4_mib_round_trips(kafka_bootstrap: str, create_topic: CreateTopic) -> None:
    # SPEC 1 "Sizes": topics allow 4 MiB records and producers allow requests of that size.
    topic = await create_topic("big", configs={"max.message.bytes": str(FOUR_MIB)})
    value = os.urandom(FOUR_MIB - 64 * 1024)  # incompressible, below the limit with record overhead
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all", max_request_size=FOUR_MIB)
    await producer.start()
    try:
        await producer.send_and_wait(topic, key=b"run-1", value=value)
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka_bootstrap,
        enable_auto_commit=False,
        max_partition_fetch_bytes=2 * FOUR_MIB,
        fetch_max_bytes=2 * FOUR_MIB,
    )
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        [record] = await _consume(consumer, 1)
    finally:
        await consumer.stop()
    assert record.value == value


WRITE_ONCE = """
local existing = redis.call('HGET', KEYS[1], 'projection_sha256')
if not existing then
  redis.call('HSET', KEYS[1], 'projection_sha256', ARGV[1], 'projection', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 'WRITTEN'
elseif existing == ARGV[1] then
  return 'DUPLICATE'
else
  return 'CONFLICT'
end
"""


async def test_redis_runs_a_write_once_lua_script(
    redis_url: str, redis_endpoint: Endpoint, unique_prefix: str
) -> None:
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    key = f"{unique_prefix}ec:ledger:{{call-1}}:run-1"
    try:
        write_once = client.register_script(WRITE_ONCE)
        assert await write_once(keys=[key], args=["sha-a", '{"a":1}', 60_000]) == "WRITTEN"
        assert await write_once(keys=[key], args=["sha-a", '{"a":1}', 60_000]) == "DUPLICATE"
        assert await write_once(keys=[key], args=["sha-b", '{"b":2}', 60_000]) == "CONFLICT"
        assert await client.hgetall(key) == {"projection_sha256": "sha-a", "projection": '{"a":1}'}
        assert 0 < await client.pttl(key) <= 60_000
        # Plain EVAL too (the script cache is not what makes it work).
        assert await client.eval("return redis.call('HGET', KEYS[1], 'projection')", 1, key) == '{"a":1}'
        if redis_endpoint.source != "env":
            # SPEC 7: Redis runs with AOF persistence (the local stack and the container both set it).
            assert await client.config_get("appendonly") == {"appendonly": "yes"}
    finally:
        await client.delete(key)
        await client.aclose()
