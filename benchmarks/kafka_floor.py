"""What one Kafka hop costs aiokafka alone when records come one at a time (the floor under trickle.py).

    .venv/bin/python benchmarks/kafka_floor.py [--write]   # prints the figures (--write: into BENCHMARKS.md)

Two measurements on a topic of its own, with nothing of the project in between:

- produce: one record of 10 KB per batch (``create_batch`` + ``send_batch``, acks=all), each awaited
  before the next; CPU (this process) per acknowledged batch;
- fetch: a child process produces records one at a time every 5 ms; this process reads them with
  ``getmany``; CPU (this process) per record read (about one record per fetch).

Beside the CPU, the wall time of each (medians): a produce until its acknowledgement, and a record's
create time until ``getmany`` hands it over (one hop through the broker, nothing processed: the
least a hop of the worker's can take on this machine).

Beside it, the same two measurements on librdkafka (confluent-kafka, borrowed from Quix Streams'
venv: ``make bench-quix-venv``), in a process of its own: CPU of the whole process (librdkafka's
threads included) and of the calling thread alone (what would hold the event loop's interpreter lock).

A record through the worker's three hops (postprocess, project, ledger) is fetched three times and
produced three times, so three times their sum is what aiokafka takes per record at a trickle before
any station, Faust or Redis work. The machine is shared: the figure is a floor to compare against, not
a fixed number.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import orjson
import uvloop
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.structs import TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import QUIX_PYTHON, ROOT  # noqa: E402

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

RDKAFKA = """
import json, resource, statistics, subprocess, sys, time
from confluent_kafka import Consumer, Producer, TopicPartition
bootstrap, topic, count, python, child = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
def process():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
value = b"x" * 10_000
options = {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, "enable.idempotence": True}
producer = Producer(options)
done = []
def send():
    producer.produce(topic, value, partition=1, on_delivery=lambda error, message: done.append(error))
    while len(done) < want:
        producer.poll(0.05)
want = 0
for _ in range(20):
    want += 1
    send()
cpu, thread, acks = process(), time.thread_time(), []
for _ in range(count):
    want += 1
    sent = time.perf_counter()
    send()
    acks.append((time.perf_counter() - sent) * 1000)
produce, produce_thread = (process() - cpu) / count, (time.thread_time() - thread) / count
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "floor", "enable.auto.commit": False})
low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0))
consumer.assign([TopicPartition(topic, 0, high)])
consumer.poll(1.0)
feeder = subprocess.Popen([python, "-c", child, bootstrap, topic, str(count)])
got, hops = 0, []
cpu, thread = process(), time.thread_time()
while got < count:
    message = consumer.poll(2.0)
    if message is None:
        if feeder.poll() is not None:
            break
        continue
    if message.error() is None:
        got += 1
        hops.append(time.time() * 1000 - message.timestamp()[1])
fetch, fetch_thread = (process() - cpu) / max(got, 1), (time.thread_time() - thread) / max(got, 1)
feeder.wait(30)
consumer.close()
ack_ms, hop_ms = statistics.median(acks), statistics.median(hops)
print(json.dumps([produce, produce_thread, ack_ms, fetch, fetch_thread, hop_ms]))
"""


@dataclass(frozen=True)
class Floor:
    """What one hop costs aiokafka alone: CPU seconds and median wall milliseconds."""

    produce: float
    fetch: float
    per_fetch: float
    ack_ms: float
    hop_ms: float
    rdkafka: list[float] | None = None
    """librdkafka's: produce, produce (calling thread), ack ms, fetch, fetch (calling thread), hop ms."""


async def produce_cost(bootstrap: str, topic: str, count: int) -> tuple[float, float]:
    """CPU seconds per produced batch, and the median wall ms until its acknowledgement."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0, max_batch_size=1 << 20)
    await producer.start()
    try:
        for _ in range(20):  # connections and metadata first
            await (await producer.send(topic, VALUE, partition=1))
        started = time.process_time()
        acks: list[float] = []
        for _ in range(count):
            sent = time.perf_counter()
            batch = producer.create_batch()
            batch.append(key=None, value=VALUE, timestamp=None)
            batch.close()
            await (await producer.send_batch(batch, topic, partition=1))
            acks.append((time.perf_counter() - sent) * 1000)
        return (time.process_time() - started) / count, statistics.median(acks)
    finally:
        await producer.stop()


async def fetch_cost(bootstrap: str, topic: str, count: int) -> tuple[float, float, float]:
    """CPU seconds per record read, records per fetch, and the median ms from a record's create time
    (stamped by the child's producer, on the same clock) until ``getmany`` returned it."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="latest")
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_end(tp)
        await consumer.position(tp)
        child = subprocess.Popen([sys.executable, "-c", CHILD, bootstrap, topic, str(count)])  # noqa: ASYNC220
        got = fetches = 0
        hops: list[float] = []
        started = time.process_time()
        while got < count:
            batch = await consumer.getmany(timeout_ms=2000)
            now = time.time() * 1000
            fetches += 1
            for records in batch.values():
                got += len(records)
                hops += [now - record.timestamp for record in records]
            if not batch and child.poll() is not None:
                break
        spent = time.process_time() - started
        child.wait(30)
        return spent / max(got, 1), got / max(fetches, 1), statistics.median(hops) if hops else float("nan")
    finally:
        await consumer.stop()


async def measure(count: int) -> Floor:
    bootstrap = Settings().kafka_bootstrap
    topic = f"floor-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 2, 1)])
        await asyncio.sleep(1)
        produce, ack_ms = await produce_cost(bootstrap, topic, count)
        fetch, per_fetch, hop_ms = await fetch_cost(bootstrap, topic, count)
        rdkafka = None
        if QUIX_PYTHON.exists():
            argv = [
                str(QUIX_PYTHON),
                "-c",
                RDKAFKA,
                bootstrap,
                topic,
                str(count),
                sys.executable,
                CHILD,
            ]
            answer = await asyncio.to_thread(
                subprocess.run, argv, capture_output=True, check=True, timeout=300
            )
            rdkafka = orjson.loads(answer.stdout.splitlines()[-1])
    finally:
        await admin.delete_topics([topic])
        await admin.close()
    return Floor(produce, fetch, per_fetch, ack_ms, hop_ms, rdkafka)


def rdkafka_rows(floor: Floor) -> list[str]:
    """librdkafka's figures: the process's CPU (its threads included), and the calling thread's."""
    if floor.rdkafka is None:
        return [
            "",
            "(librdkafka not measured: `make bench-quix-venv` installs the confluent-kafka it borrows.)",
        ]
    produce, produce_thread, ack_ms, fetch, fetch_thread, hop_ms = floor.rdkafka
    return [
        "",
        "The same on librdkafka (confluent-kafka, a process of its own; `Producer.produce` + `poll` until",
        "delivered, `Consumer.poll` in assign mode):",
        "",
        "| what | CPU µs, the process | CPU µs, the calling thread | wall ms (median) |",
        "| --- | --- | --- | --- |",
        f"| produce one record, acks=all, until delivered | {produce * 1e6:,.0f} "
        f"| {produce_thread * 1e6:,.0f} | {ack_ms:.1f} |",
        f"| fetch one record | {fetch * 1e6:,.0f} | {fetch_thread * 1e6:,.0f} | {hop_ms:.1f} |",
        f"| three hops (3 × both) | {3 * (produce + fetch) * 1e6:,.0f} "
        f"| {3 * (produce_thread + fetch_thread) * 1e6:,.0f} | {3 * hop_ms:.1f} |",
    ]


def main(argv: list[str] | None = None) -> int:
    count = 30 if argv and "--smoke" in argv else 400
    floor = uvloop.run(measure(count))
    text = "\n".join(
        [
            "## aiokafka's own cost per hop at a trickle (the floor)",
            "",
            "`benchmarks/kafka_floor.py`: aiokafka alone on a topic of its own, 10 KB records, one at a",
            "time (CPU of the reading or producing process only).",
            "",
            "| what | CPU µs | wall ms (median) |",
            "| --- | --- | --- |",
            f"| produce one record as one batch, acks=all, awaited | {floor.produce * 1e6:,.0f} "
            f"| {floor.ack_ms:.1f} (until acknowledged) |",
            f"| fetch one record (getmany, {floor.per_fetch:.1f} records per fetch) "
            f"| {floor.fetch * 1e6:,.0f} | {floor.hop_ms:.1f} (create time → handed over: one hop) |",
            f"| three hops (3 × both): aiokafka per record through the worker "
            f"| {3 * (floor.produce + floor.fetch) * 1e6:,.0f} | {3 * floor.hop_ms:.1f} |",
            *rdkafka_rows(floor),
            "",
            "The wall times are the broker's and the client's on this machine with nothing processed:",
            "a lookup through the worker's three hops waits at least the last row's wall time, before any",
            "station, Redis write or the gateway's own produce and read.",
        ]
    )
    if "--write" in (argv or []):
        harness.write_section(ROOT / "BENCHMARKS.md", SECTION, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
