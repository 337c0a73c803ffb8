"""A measurement, not a transport: the worker with its Kafka wire work done by librdkafka.

    make bench-quix-venv      # Quix Streams' venv holds confluent-kafka (librdkafka); it is borrowed here
    .venv/bin/python benchmarks/stream.py --only p2,p4 --pipelines worker,worker-rdkafka,aiokafka-1m
    .venv/bin/python benchmarks/rdkafka_worker.py worker      # the worker itself, as stream.py starts it

Issue 42, item 4 asks what a compiled Kafka client would buy the worker. This measures it at the wire
and nowhere else. Everything stays aiokafka and Faust: the group, the assignment and its generation,
positions, resets, pauses, commits, ``fetched_records``, the agents' drain, batches and acks. Two
methods are replaced:

- **fetch** (``EC_RDKAFKA_FETCH``, default 1): ``Fetcher._proc_fetch_request``, the one method that
  sends a FetchRequest and decodes its response. It hands over records that a librdkafka consumer in
  assign mode (no group, nothing committed), polled by a thread of its own, has already fetched at
  the positions aiokafka asks for. The thread only queues what it polled; records are built on the
  event loop's thread, since a thread that builds them takes the interpreter lock from the loop.
- **produce** (``EC_RDKAFKA_PRODUCE``, default 0): ``KafkaSink.submit``. Each message goes to a
  librdkafka producer (acks=all, idempotent, linger 0, the same partitions, in order), and the
  awaitable resolves when librdkafka has reported every message of the batch delivered.

Knobs of the fetch, each one a finding (BENCHMARKS.md, "A compiled client on the wire, measured"):
``EC_RDKAFKA_PER_TOPIC=1`` (a consumer per topic: confluent-kafka gives one queue per consumer, and a
raw-hits backlog in it would sit ahead of the records the later hops need),
``EC_RDKAFKA_PAUSE_AFTER`` (pause a partition in librdkafka while that many of its records wait
here), ``EC_RDKAFKA_QUEUE_KB`` (``queued.max.messages.kbytes``, default 4096).

It holds none of the project's guarantees under rebalances or broker faults; no test relies on it,
and the smoke benchmark runs it so that it cannot rot.
"""

from __future__ import annotations

import asyncio
import collections
import os
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# confluent-kafka is no dependency of the project: it comes from EC_RDKAFKA_PATH, or else Quix Streams'
# venv (make bench-quix-venv), after the project's own packages so that only it is taken from there.
if os.environ.get("EC_RDKAFKA_PATH"):
    sys.path.append(os.environ["EC_RDKAFKA_PATH"])
sys.path += [str(p) for p in sorted((ROOT / ".local/bench/quix-venv/lib").glob("python3*/site-packages"))]

import aiokafka.consumer.fetcher as fetcher  # noqa: E402
from aiokafka.structs import ConsumerRecord, TopicPartition  # noqa: E402
from confluent_kafka import Consumer, KafkaException, Producer  # noqa: E402
from confluent_kafka import TopicPartition as RdPartition  # noqa: E402

from streams.cli import main  # noqa: E402
from streams.errors import KafkaUnavailable  # noqa: E402
from streams.kafka.producer import KafkaSink  # noqa: E402

FETCH = os.environ.get("EC_RDKAFKA_FETCH", "1") == "1"
PRODUCE = os.environ.get("EC_RDKAFKA_PRODUCE", "") == "1"

PER_TOPIC = os.environ.get("EC_RDKAFKA_PER_TOPIC", "") == "1"
PAUSE_AFTER = int(os.environ.get("EC_RDKAFKA_PAUSE_AFTER", "0")) or None
QUEUE_KB = int(os.environ.get("EC_RDKAFKA_QUEUE_KB", "4096"))


class Handed:
    """What ``FetchResult`` reads from aiokafka's ``PartitionRecords``: the records, and the offset after
    the last one handed out."""

    def __init__(self, records: list[ConsumerRecord[Any, Any]], fetch_offset: int) -> None:
        self._records = iter(records)
        self.next_fetch_offset = fetch_offset

    def __iter__(self) -> Handed:
        return self

    def __next__(self) -> ConsumerRecord[Any, Any]:
        record = next(self._records)
        self.next_fetch_offset = record.offset + 1
        return record


class Source:
    """A librdkafka consumer in assign mode, polled by a thread; records wait here by partition."""

    def __init__(self, bootstrap: str, loop: asyncio.AbstractEventLoop) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "evidence-chain-rdkafka-fetch",  # required; never joined or committed
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "fetch.wait.max.ms": 100,
                "queued.max.messages.kbytes": QUEUE_KB,
                "fetch.queue.backoff.ms": 1,  # default 1,000: a full queue would stop a partition for 1 s
                "max.partition.fetch.bytes": 1 << 20,
            }
        )
        self.loop = loop
        self.lock = threading.Lock()
        self.waiting: dict[TopicPartition, collections.deque[ConsumerRecord[Any, Any]]] = {}
        self.continues: dict[TopicPartition, int] = {}  # the offset after the last record kept
        self.commands: queue.SimpleQueue[tuple[str, TopicPartition, int]] = queue.SimpleQueue()
        self.assigned: set[TopicPartition] = set()
        self.paused: set[TopicPartition] = set()
        self.wakers: list[asyncio.Future[None]] = []
        self.arrived: list[Any] = []
        threading.Thread(target=self._poll, daemon=True, name="rdkafka-fetch").start()

    def _apply(self) -> None:
        while not self.commands.empty():
            kind, tp, offset = self.commands.get()
            rd = [RdPartition(tp.topic, tp.partition)]
            if kind == "assign":
                if tp in self.assigned:
                    self.consumer.incremental_unassign(rd)
                self.consumer.incremental_assign([RdPartition(tp.topic, tp.partition, offset)])
                self.assigned.add(tp)
                self.paused.discard(tp)
            elif kind == "pause" and tp in self.assigned and tp not in self.paused:
                self.consumer.pause(rd)
                self.paused.add(tp)
            elif kind == "resume" and tp in self.paused:
                self.consumer.resume(rd)
                self.paused.discard(tp)
            elif kind == "unassign" and tp in self.assigned:
                self.consumer.incremental_unassign(rd)
                self.assigned.discard(tp)

    def _poll(self) -> None:
        while True:
            self._apply()
            if not self.assigned:
                time.sleep(0.005)
                continue
            first = self.consumer.poll(0.02)  # returns at the first record; consume() waits its timeout
            if first is None:
                continue
            messages = [first, *self.consumer.consume(num_messages=2000, timeout=0)]
            with self.lock:
                self.arrived.extend(messages)  # sorted out on the event loop's thread (see _sort)
            self.loop.call_soon_threadsafe(self._wake)

    def _sort(self) -> None:
        """Arrived messages into records by partition, on the event loop's thread: a poll thread that
        builds them competes for the interpreter lock with the loop in every record's work."""
        with self.lock:
            messages, self.arrived = self.arrived, []
        for m in messages:
            if m.error():
                continue
            tp = TopicPartition(m.topic(), m.partition())
            after = self.continues.get(tp)
            if after is None or m.offset() < after:
                continue  # from before a seek
            kind, stamp = m.timestamp()
            key, value = m.key(), m.value()
            self.waiting.setdefault(tp, collections.deque()).append(
                ConsumerRecord(
                    tp.topic,
                    tp.partition,
                    m.offset(),
                    stamp,
                    max(kind - 1, 0),
                    key,
                    value,
                    None,
                    len(key) if key else -1,
                    len(value) if value else -1,
                    tuple(m.headers() or ()),
                )
            )
            self.continues[tp] = m.offset() + 1
        if PAUSE_AFTER:
            for tp, kept in self.waiting.items():
                if len(kept) > PAUSE_AFTER and tp in self.assigned and tp not in self.paused:
                    self.commands.put(("pause", tp, 0))

    def _wake(self) -> None:
        for waker in self.wakers:
            if not waker.done():
                waker.set_result(None)
        self.wakers.clear()

    def _take(self, wanted: dict[TopicPartition, int]) -> dict[TopicPartition, list[Any]]:
        taken = {}
        self._sort()
        for tp, offset in wanted.items():
            kept = self.waiting.get(tp)
            while kept and kept[0].offset < offset:
                kept.popleft()
            if kept and kept[0].offset == offset:
                taken[tp] = list(kept)
                kept.clear()
                if tp in self.paused:
                    self.commands.put(("resume", tp, 0))
        return taken

    def prepare(self, wanted: dict[TopicPartition, int], assigned: set[TopicPartition]) -> None:
        """Follow aiokafka's assignment and positions: (re)assign a partition it seeks elsewhere."""
        self._sort()
        for tp in [tp for tp in self.continues if tp not in assigned]:
            del self.continues[tp]
            self.waiting.pop(tp, None)
            self.commands.put(("unassign", tp, 0))
        for tp, offset in wanted.items():
            kept, after = self.waiting.get(tp), self.continues.get(tp)
            if after is None or not (kept and kept[0].offset <= offset <= after or offset == after):
                self.waiting[tp], self.continues[tp] = collections.deque(), offset
                self.commands.put(("assign", tp, offset))

    def waker(self) -> asyncio.Future[None]:
        waker = self.loop.create_future()
        self.wakers.append(waker)
        return waker


_sources: dict[tuple[int, str], Source] = {}


async def _proc_fetch_request(self: Any, assignment: Any, node_id: int, request: Any) -> bool:
    """aiokafka's one fetch to a broker, answered from the librdkafka consumers' records."""
    wanted = {TopicPartition(t, p): offset for t, parts in request.topics for p, offset, _ in parts}
    groups: dict[str, dict[TopicPartition, int]] = collections.defaultdict(dict)
    for tp, offset in wanted.items():
        groups[tp.topic if PER_TOPIC else "*"][tp] = offset
    loop = asyncio.get_running_loop()
    assigned = set(assignment.tps)

    sources = {}
    for group, asked in groups.items():
        source = _sources.get((id(self), group))
        if source is None:
            source = _sources[(id(self), group)] = Source(os.environ["EC_KAFKA_BOOTSTRAP"], loop)
        source.prepare(asked, {tp for tp in assigned if group in ("*", tp.topic)})
        sources[group] = source

    def take_all() -> dict[TopicPartition, list[Any]]:
        taken: dict[TopicPartition, list[Any]] = {}
        for group, source in sources.items():
            taken.update(source._take(groups[group]))
        return taken

    got = take_all()
    if not got:  # wait for the first records of any source, then take every source's
        wakers = [source.waker() for source in sources.values()]
        try:
            await asyncio.wait(
                wakers, timeout=self._fetch_max_wait_ms / 1000, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            return False
        got = take_all()
    if not assignment.active:
        return False
    woke = False
    for tp, records in got.items():
        state = assignment.state_value(tp)
        if state.has_valid_position and state.position == wanted[tp]:
            self._records[tp] = fetcher.FetchResult(
                tp,
                partition_records=Handed(records, wanted[tp]),
                assignment=assignment,
                backoff=self._prefetch_backoff,
            )
            woke = True
    return woke


class Deliveries:
    """One submitted batch's messages: done when librdkafka has reported each delivered."""

    def __init__(self, loop: asyncio.AbstractEventLoop, count: int) -> None:
        self.loop, self.left, self.error = loop, count, None
        self.done: asyncio.Future[None] = loop.create_future()

    def report(self, error: Any, _message: Any) -> None:  # on the producer's poll thread: kept short
        if error is not None and self.error is None:
            self.error = error
        self.left -= 1
        if self.left == 0:
            self.loop.call_soon_threadsafe(self._finish)

    def _finish(self) -> None:
        if not self.done.done():
            if self.error is not None:
                self.done.set_exception(KafkaUnavailable(f"librdkafka: {self.error}"))
            else:
                self.done.set_result(None)


_producers: dict[int, Producer] = {}


def _rd_producer(sink: KafkaSink) -> Producer:
    producer = _producers.get(id(sink))
    if producer is None:
        producer = _producers[id(sink)] = Producer(
            {
                "bootstrap.servers": os.environ["EC_KAFKA_BOOTSTRAP"],
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 0,
                "batch.size": 1 << 20,
                "message.max.bytes": 8 << 20,
            }
        )

        def poll() -> None:
            while True:
                producer.poll(0.1)

        threading.Thread(target=poll, daemon=True, name="rdkafka-produce").start()
    return producer


async def _submit(self: KafkaSink, messages: Any) -> Any:
    """``KafkaSink.submit`` on librdkafka: the same partitions, in order; await the result for the acks."""
    producer = _rd_producer(self)
    deliveries = Deliveries(asyncio.get_running_loop(), len(messages))
    for message in messages:
        name = self.names[message.topic]
        partitions = self._partitions.get(name) or await self._partitions_of(name)
        try:
            producer.produce(
                name,
                message.value,
                message.key,
                partition=self.partition_for(message.key, partitions),
                headers=list(message.headers),
                on_delivery=deliveries.report,
            )
        except (BufferError, KafkaException) as error:
            raise KafkaUnavailable(f"librdkafka: {error}") from error
    if not messages:
        deliveries.done.set_result(None)
    return deliveries.done


if FETCH:
    fetcher.Fetcher._proc_fetch_request = _proc_fetch_request  # type: ignore[method-assign]
if PRODUCE:
    KafkaSink.submit = _submit  # type: ignore[method-assign, assignment]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
