"""The agents' producer (``streams.kafka.producer.KafkaSink``) on a real broker: every message arrives once,
on the partition aiokafka's own ``send`` would pick, with its headers, in order per partition —
also a record larger than a producer batch, and with compression on."""

from __future__ import annotations

from collections import defaultdict

import pytest
from aiokafka.partitioner import DefaultPartitioner

from models.vocab import Topic
from streams.kafka.admin import ensure_topics
from streams.kafka.config import new_consumer
from streams.kafka.producer import KafkaSink
from streams.messages import Output
from streams.settings import Settings


def messages() -> list[Output]:
    out = []
    for n in range(60):
        key = f"run-{n % 7}".encode() if n % 10 else None  # some without a key
        topic = (Topic.PROJECTED, Topic.AUDIT, Topic.DEAD_LETTERS)[n % 3]
        headers = (
            (("ec-reason", b"SCHEMA_VIOLATION"), ("n", str(n).encode()))
            if topic == Topic.DEAD_LETTERS
            else ()
        )
        out.append(Output(topic, key, f'{{"n":{n}}}'.encode() + b" " * (n * 97), headers))
    out.append(Output(Topic.PROJECTED, b"run-big", b'"' + b"x" * (2 << 20) + b'"'))  # 2 MiB > one batch
    return out


async def read_all(
    settings: Settings, topics: list[str], count: int
) -> list[tuple[str, int, bytes | None, bytes, list[tuple[str, bytes]]]]:
    consumer = new_consumer(settings, *topics, group_id=None)
    await consumer.start()
    seen = []
    try:
        for _ in range(100):
            batch = await consumer.getmany(timeout_ms=300)
            for tp, records in batch.items():
                seen += [(tp.topic, tp.partition, r.key, r.value, list(r.headers)) for r in records]
            if len(seen) >= count:
                break
    finally:
        await consumer.stop()
    return seen


@pytest.mark.parametrize("compression", ["none", "lz4", "zstd"])
async def test_every_message_arrives_once_where_aiokafka_would_put_it(
    kafka_bootstrap: str, unique_prefix: str, compression: str
) -> None:
    settings = Settings(
        kafka_bootstrap=kafka_bootstrap,
        topic_prefix=f"{unique_prefix}{compression}-",
        producer_batch_bytes=1 << 20,
        producer_compression=compression,  # type: ignore[arg-type]
    )
    await ensure_topics(settings)
    sink = KafkaSink(settings)
    await sink.start()
    sent = messages()
    try:
        await sink.send_all(sent)
    finally:
        await sink.stop()

    names = {t: settings.topic(t) for t in Topic}
    seen = await read_all(
        settings, [names[t] for t in (Topic.PROJECTED, Topic.AUDIT, Topic.DEAD_LETTERS)], len(sent)
    )
    assert sorted(v for *_, v, _ in seen) == sorted(m.value for m in sent)  # each once, none lost
    partitioner = DefaultPartitioner()
    order: dict[tuple[str, int], list[bytes]] = defaultdict(list)
    for topic, partition, key, value, headers in seen:
        message = next(m for m in sent if m.value == value)
        assert topic == names[message.topic] and key == message.key and headers == list(message.headers)
        if key is not None:
            assert partition == partitioner(key, [0, 1, 2], [0, 1, 2])
        order[(topic, partition)].append(value)
    for (topic, partition), values in order.items():
        expected = [m.value for m in sent if names[m.topic] == topic and m.value in set(values)]
        assert values == expected, f"{topic}[{partition}] out of order"


async def test_send_all_before_start_says_what_is_wrong() -> None:
    sink = KafkaSink(Settings())
    with pytest.raises(RuntimeError, match="start"):
        await sink.send_all([Output(Topic.AUDIT, None, b"{}")])
