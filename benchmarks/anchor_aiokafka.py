"""Anchor for the stream benchmarks: the chain raw-hits → ledger as a plain aiokafka pipeline would run it.

One process, no Faust: it consumes ``<prefix>raw-hits`` in the consumer group ``EC_APP_ID`` from the
earliest offset and runs, per record, the very station functions the worker runs (postprocess →
project → ledger), one ``getmany`` batch at a time: one pipelined write-once Redis round trip for the
batch's ledger entries (``RedisLedgerStore``, the worker's Lua script), then every ``projected``,
``ledger`` and ``dead-letters`` message sent (acks=all) and all their deliveries awaited, and only then
the batch's offsets committed (at-least-once). ``postprocessed`` and audit records are not produced:
the stations hand each other their outputs in memory. The topics must exist (``benchmarks/harness.py``
creates them). It runs until SIGTERM or SIGINT, finishes its batch and exits 0.

With ``--hops 3`` it is the product's topology on plain aiokafka instead: three consumer → station →
producer loops in one process, one per station, each in its own consumer group (``EC_APP_ID-<station>``),
each consuming its station's input topic (raw-hits, postprocessed, projected) and producing everything
the station emits (its output topic, dead letters, and an audit record per input, as SPEC 5 asks), batch
by batch with the same delivery rules: deliveries awaited, then offsets committed. The price of the
topology itself, hops and audit included, beside the one-hop pipeline.

    EC_TOPIC_PREFIX=... EC_APP_ID=... EC_NS=... .venv/bin/python benchmarks/anchor_aiokafka.py
    .venv/bin/python benchmarks/anchor_aiokafka.py --producer-batch-bytes 1048576   # 1 MiB batches
    .venv/bin/python benchmarks/anchor_aiokafka.py --hops 3 --producer-batch-bytes 1048576
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from models.topology import TOPOLOGY
from models.vocab import Station, Topic
from streams.kafka.config import client_options
from streams.ledger.redis import RedisLedgerStore
from streams.messages import Output, Record
from streams.pipeline import (
    OUTPUT_TOPIC,
    Outcome,
    PendingWrite,
    StationRules,
    emissions,
    finish_write,
    run_station,
)
from streams.settings import Settings, load_settings
from streams.worker.runner import wall_clock

MAX_RECORDS = 500
"""Records per ``getmany`` batch (the anchor's own choice; the worker's ``EC_BATCH_SIZE`` is 100)."""

STATIONS = (Station.POSTPROCESS, Station.PROJECT, Station.LEDGER)
PRODUCED = frozenset({Topic.PROJECTED, Topic.LEDGER, Topic.DEAD_LETTERS})
"""The topics the anchor produces; the worker's other messages stay in memory or are left out."""

Done = list[tuple[Outcome[Any], Record]]
"""Outcomes, each with the record its station consumed (for its dead letter)."""


def through_stations(record: Record, rules: StationRules) -> tuple[Done, tuple[PendingWrite, Record] | None]:
    """The stations in turn on one raw-hits record, each fed the previous one's main output.

    Returns the outcomes so far and, when the record reached the ledger with an entry to write, that
    pending write with the record the ledger station consumed.
    """
    done: Done = []
    consumed = record
    for station in STATIONS:
        step = run_station(station, consumed, rules)
        if isinstance(step, PendingWrite):
            return done, (step, consumed)
        assert isinstance(step, Outcome), "only the guard reads the ledger"
        done.append((step, consumed))
        value = next((o.value for o in step.outputs if o.topic == OUTPUT_TOPIC[station]), None)
        if value is None:
            break
        consumed = replace(record, value=value)
    return done, None


async def process(records: Sequence[Record], rules: StationRules, store: RedisLedgerStore) -> list[Output]:
    """One batch through the stations and one Redis round trip; the messages to produce."""
    done: Done = []
    writes: list[tuple[PendingWrite, Record]] = []
    for record in records:
        outcomes, pending = through_stations(record, rules)
        done += outcomes
        if pending is not None:
            writes.append(pending)
    results = await store.write_many([step.entry for step, _ in writes])
    done += [
        (finish_write(step, result, consumed), consumed)
        for (step, consumed), result in zip(writes, results, strict=True)
    ]
    processed_at = wall_clock()
    return [
        m
        for outcome, consumed in done
        for m in emissions(outcome, consumed, rules, processed_at)
        if m.topic in PRODUCED
    ]


async def deliver(producer: AIOKafkaProducer, messages: Sequence[Output], settings: Settings) -> None:
    """Send every message, then wait until the broker acknowledged each one."""
    futures = [
        await producer.send(settings.topic(m.topic), m.value, key=m.key, headers=list(m.headers) or None)
        for m in messages
    ]
    await asyncio.gather(*futures)


def next_offsets(batch: dict[TopicPartition, list[Any]]) -> dict[TopicPartition, OffsetAndMetadata]:
    """The offsets to commit once a batch is done: one past its last record, per partition."""
    return {tp: OffsetAndMetadata(records[-1].offset + 1, "") for tp, records in batch.items() if records}


def to_record(message: Any) -> Record:
    """An aiokafka record as the stations' :class:`Record`."""
    headers = tuple((k, v) for k, v in message.headers or () if isinstance(v, bytes))
    return Record(
        message.topic,
        message.partition,
        message.offset,
        message.timestamp,
        message.key,
        message.value or b"",
        headers,
    )


def clients(
    settings: Settings, batch_bytes: int, topic: Topic = Topic.RAW_HITS, group: str | None = None
) -> tuple[AIOKafkaConsumer, AIOKafkaProducer]:
    """A consumer of ``topic`` in the group and an acks=all producer, both carrying the largest record."""
    consumer = AIOKafkaConsumer(
        settings.topic(topic),
        **client_options(settings),
        group_id=group or settings.app_id,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        max_partition_fetch_bytes=2 * settings.topic_max_message_bytes,
    )
    producer = AIOKafkaProducer(
        **client_options(settings),
        acks="all",
        max_batch_size=batch_bytes,
        linger_ms=5,
        max_request_size=settings.topic_max_message_bytes + 64 * 1024,
    )
    return consumer, producer


Handle = Callable[[Sequence[Record]], Awaitable[list[Output]]]
"""A batch of consumed records → the messages to produce."""


async def pump(
    consumer: AIOKafkaConsumer,
    producer: AIOKafkaProducer,
    handle: Handle,
    settings: Settings,
    stop: asyncio.Event,
) -> None:
    """Consume, handle, deliver (every ack awaited), commit, batch after batch, until ``stop``."""
    await producer.start()
    await consumer.start()
    try:
        while not stop.is_set():
            batch = await consumer.getmany(timeout_ms=200, max_records=MAX_RECORDS)
            records = [to_record(m) for messages in batch.values() for m in messages]
            if not records:
                continue
            await deliver(producer, await handle(records), settings)
            await consumer.commit(next_offsets(batch))
    finally:
        await consumer.stop()
        await producer.stop()


def stop_on_signals() -> asyncio.Event:
    """Set on SIGTERM or SIGINT: the batch in hand is finished, then the pipeline exits 0."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    return stop


async def run(settings: Settings, batch_bytes: int) -> None:
    """One hop: the stations in memory on each raw-hits batch, until SIGTERM or SIGINT."""
    stop = stop_on_signals()
    store = RedisLedgerStore.from_settings(settings)
    rules = StationRules.from_settings(settings)  # once, as the worker builds them
    try:
        await pump(*clients(settings, batch_bytes), lambda rs: process(rs, rules, store), settings, stop)
    finally:
        await store.close()


async def hop_batch(
    station: Station, records: Sequence[Record], rules: StationRules, store: RedisLedgerStore
) -> list[Output]:
    """One station on a batch (the ledger's writes in one Redis round trip); every message it emits."""
    done: Done = []
    writes: list[tuple[PendingWrite, Record]] = []
    for record in records:
        step = run_station(station, record, rules)
        if isinstance(step, PendingWrite):
            writes.append((step, record))
        else:
            assert isinstance(step, Outcome), "only the guard reads the ledger"
            done.append((step, record))
    results = await store.write_many([step.entry for step, _ in writes])
    done += [(finish_write(step, result, r), r) for (step, r), result in zip(writes, results, strict=True)]
    processed_at = wall_clock()
    return [m for outcome, record in done for m in emissions(outcome, record, rules, processed_at)]


async def run_hops(settings: Settings, batch_bytes: int) -> None:
    """The product's topology: a hop per station, each in its own group, side by side in one process."""
    stop = stop_on_signals()
    store = RedisLedgerStore.from_settings(settings)
    rules = StationRules.from_settings(settings)  # once, as the worker builds them

    def hop(station: Station) -> Awaitable[None]:
        group = f"{settings.app_id}-{station.value}"
        consumer, producer = clients(settings, batch_bytes, TOPOLOGY[station].input, group)
        return pump(consumer, producer, lambda rs: hop_batch(station, rs, rules, store), settings, stop)

    try:
        await asyncio.gather(*(hop(station) for station in STATIONS))
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--producer-batch-bytes",
        type=int,
        default=16384,
        metavar="N",
        help="the producer's max_batch_size (default: aiokafka's 16384)",
    )
    parser.add_argument(
        "--hops",
        type=int,
        choices=(1, 3),
        default=1,
        help="1: the stations in memory, one hop (default); 3: the product's topology, a hop per station",
    )
    args = parser.parse_args()
    runner = run_hops if args.hops == 3 else run
    asyncio.run(runner(load_settings(), args.producer_batch_bytes))


if __name__ == "__main__":
    main()
