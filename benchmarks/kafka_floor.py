"""What one Kafka hop costs aiokafka alone when records come one at a time (the floor under trickle.py).

    .venv/bin/python benchmarks/kafka_floor.py [--write]   # prints the figures (--write: into BENCHMARKS.md)

Two measurements on a topic of its own, with nothing of the project in between:

- produce: one record of 10 KB per batch (``create_batch`` + ``send_batch``, acks=all), each awaited
  before the next; CPU (this process) per acknowledged batch;
- fetch: a child process produces records one at a time every 5 ms; this process reads them with
  ``getmany``; CPU (this process) per record read (about one record per fetch).

A record through the worker's three hops (postprocess, project, ledger) is fetched three times and
produced three times, so three times their sum is what aiokafka takes per record at a trickle before
any station, Faust or Redis work. The machine is shared: the figure is a floor to compare against, not
a fixed number.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import uuid
from pathlib import Path

import uvloop
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.structs import TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import ROOT  # noqa: E402

from streams.settings import Settings  # noqa: E402

SECTION = "kafka_floor.py"
VALUE = b"x" * 10_000
CHILD = """
import asyncio, sys, uvloop
from aiokafka import AIOKafkaProducer
async def main(bootstrap, topic, n):
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)
    await p.start()
    for _ in range(n):
        await (await p.send(topic, b"x" * 10_000, partition=0))
        await asyncio.sleep(0.005)
    await p.stop()
uvloop.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


async def produce_cost(bootstrap: str, topic: str, count: int) -> float:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0, max_batch_size=1 << 20)
    await producer.start()
    try:
        for _ in range(20):  # connections and metadata first
            await (await producer.send(topic, VALUE, partition=1))
        started = time.process_time()
        for _ in range(count):
            batch = producer.create_batch()
            batch.append(key=None, value=VALUE, timestamp=None)
            batch.close()
            await (await producer.send_batch(batch, topic, partition=1))
        return (time.process_time() - started) / count
    finally:
        await producer.stop()


async def fetch_cost(bootstrap: str, topic: str, count: int) -> tuple[float, float]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="latest")
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_end(tp)
        await consumer.position(tp)
        child = subprocess.Popen([sys.executable, "-c", CHILD, bootstrap, topic, str(count)])  # noqa: ASYNC220
        got = fetches = 0
        started = time.process_time()
        while got < count:
            batch = await consumer.getmany(timeout_ms=2000)
            fetches += 1
            got += sum(len(records) for records in batch.values())
            if not batch and child.poll() is not None:
                break
        spent = time.process_time() - started
        child.wait(30)
        return spent / max(got, 1), got / max(fetches, 1)
    finally:
        await consumer.stop()


async def measure(count: int) -> tuple[float, float, float]:
    bootstrap = Settings().kafka_bootstrap
    topic = f"floor-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 2, 1)])
        await asyncio.sleep(1)
        produce = await produce_cost(bootstrap, topic, count)
        fetch, per_fetch = await fetch_cost(bootstrap, topic, count)
    finally:
        await admin.delete_topics([topic])
        await admin.close()
    return produce, fetch, per_fetch


def main(argv: list[str] | None = None) -> int:
    count = 30 if argv and "--smoke" in argv else 400
    produce, fetch, per_fetch = uvloop.run(measure(count))
    text = "\n".join(
        [
            "## aiokafka's own cost per hop at a trickle (the floor)",
            "",
            "`benchmarks/kafka_floor.py`: aiokafka alone on a topic of its own, 10 KB records, one at a",
            "time (CPU of the reading or producing process only).",
            "",
            "| what | CPU µs |",
            "| --- | --- |",
            f"| produce one record as one batch, acks=all, awaited | {produce * 1e6:,.0f} |",
            f"| fetch one record (getmany, {per_fetch:.1f} records per fetch) | {fetch * 1e6:,.0f} |",
            f"| three hops (3 × both): aiokafka per record through the worker "
            f"| {3 * (produce + fetch) * 1e6:,.0f} |",
        ]
    )
    if "--write" in (argv or []):
        harness.write_section(ROOT / "BENCHMARKS.md", SECTION, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
