"""The producers: the agents' (:class:`KafkaSink`: a batch's messages as one record batch per topic
partition), and :func:`produce_lines`, which ``evidence-chain publish`` and ``demo`` send JSON lines with."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import DefaultPartitioner, murmur2

from models.vocab import Topic
from streams import codec
from streams.errors import KafkaUnavailable
from streams.kafka.config import kafka_errors, new_producer, started
from streams.messages import Output
from streams.settings import Settings

KEY_HASHES_KEPT = 65_536
"""Record keys whose murmur2 :class:`KafkaSink` remembers (then it starts again): a run's records share
its key, so a batch hashes a handful of keys, not one per message (aiokafka's murmur2 is pure Python)."""

RECORD_OVERHEAD_BYTES = 1024
"""Room left in a topic's ``max.message.bytes`` for the record's key and batch headers: a door (the
gateway's ``/v1/drafts``, the MCP ``check_diagnosis``) takes a value of at most the rest."""


def producer_options(settings: Settings) -> dict[str, Any]:
    """What the worker's producer batches and compresses with (``EC_PRODUCER_*``)."""
    compression = settings.producer_compression
    return {
        "max_batch_size": min(settings.producer_batch_bytes, settings.topic_max_message_bytes),
        "linger_ms": settings.producer_linger_ms,
        "compression_type": None if compression == "none" else compression,
    }


class KafkaSink:
    """The agents' producer: a batch's messages go out as one record batch per topic partition.

    Partitions are chosen as ``AIOKafkaProducer.send`` chooses them (aiokafka's
    :class:`DefaultPartitioner`: murmur2 of the key, so one run stays on one partition), but the
    messages are appended to :meth:`~AIOKafkaProducer.create_batch` builders and submitted with
    :meth:`~AIOKafkaProducer.send_batch`: one future per batch instead of one per message, which is
    most of the producer's CPU for records of a few KB. acks=all; :meth:`send_all` returns only
    when the broker acknowledged every batch.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.names = {topic: settings.topic(topic) for topic in Topic}
        self._producer: AIOKafkaProducer | None = None
        self._partitioner = DefaultPartitioner()
        self._partitions: dict[str, list[int]] = {}
        self._hashes: dict[bytes, int] = {}

    @property
    def producer(self) -> AIOKafkaProducer:
        if self._producer is None:
            raise RuntimeError("KafkaSink.start() was not awaited")
        return self._producer

    async def start(self) -> None:
        """Connect (in the running loop; the broker must be reachable)."""
        if self._producer is None:
            self._producer = new_producer(self.settings, **producer_options(self.settings))
            with kafka_errors("starting the producer"):
                await self._producer.start()

    async def stop(self) -> None:
        """Flush and close."""
        if self._producer is not None:
            producer, self._producer = self._producer, None
            await producer.stop()

    async def ping(self) -> None:
        """Ask the cluster for fresh metadata through the agents' producer (readiness).

        Raises:
            KafkaUnavailable: the producer has not started, or no broker answered.
            KafkaRefused: as :func:`kafka_errors` maps the client's errors.
        """
        if self._producer is None:
            raise KafkaUnavailable("the agents' producer has not started")
        with kafka_errors("asking for metadata"):
            answered = await self._producer.client.force_metadata_update()
        if not answered:
            raise KafkaUnavailable("no broker answered a metadata request")

    async def _partitions_of(self, name: str) -> list[int]:
        known = self._partitions.get(name)
        if known is None:
            known = self._partitions[name] = sorted(await self.producer.partitions_for(name))
        return known

    def partition_for(self, key: bytes | None, partitions: list[int]) -> int:
        """The partition aiokafka's :class:`DefaultPartitioner` gives ``key`` (the Java client's murmur2
        of the key; a random one without a key), each key hashed once."""
        if key is None:
            return int(self._partitioner(None, partitions, partitions))
        hashed = self._hashes.get(key)
        if hashed is None:
            if len(self._hashes) >= KEY_HASHES_KEPT:
                self._hashes.clear()
            hashed = self._hashes[key] = murmur2(key) & 0x7FFFFFFF
        return partitions[hashed % len(partitions)]

    async def send_all(self, messages: Sequence[Output]) -> None:
        """Send every message and wait for every acknowledgement.

        Raises:
            KafkaUnavailable, KafkaRefused: as :func:`kafka_errors` maps the producer's errors.
        """
        await (await self.submit(messages))

    async def submit(self, messages: Sequence[Output]) -> Awaitable[None]:
        """Hand every message to the producer, in order; await the result for the acknowledgements.

        The producer keeps the order of what it was handed per partition, so a batch submitted
        before the next one's is ahead of it in each partition it shares.

        Raises:
            KafkaUnavailable, KafkaRefused: as :func:`kafka_errors` maps the producer's errors (here
                while queueing; from the returned awaitable while waiting for the broker).
        """
        what = f"producing {len(messages)} messages"
        with kafka_errors(what):
            groups: dict[tuple[str, int], list[Output]] = {}
            known = self._partitions
            for message in messages:
                name = self.names[message.topic]
                partitions = known.get(name) or await self._partitions_of(name)
                groups.setdefault((name, self.partition_for(message.key, partitions)), []).append(message)
            futures = []
            for (name, partition), group in groups.items():
                batch = self.producer.create_batch()
                for message in group:
                    if not self._append(batch, message):  # full: send it, start the next
                        batch.close()
                        futures.append(await self.producer.send_batch(batch, name, partition=partition))
                        batch = self.producer.create_batch()
                        self._append(batch, message)  # an empty batch takes any one record
                batch.close()
                futures.append(await self.producer.send_batch(batch, name, partition=partition))
        acks = asyncio.gather(*futures)

        async def acknowledged() -> None:
            with kafka_errors(what):
                await acks

        return acknowledged()

    @staticmethod
    def _append(batch: Any, message: Output) -> bool:
        return (
            batch.append(key=message.key, value=message.value, timestamp=None, headers=list(message.headers))
            is not None
        )


def _nothing() -> None:
    return None


def run_key(line: bytes) -> bytes | None:
    """The record key of a JSON line: its ``run_id`` (so one run stays on one partition), None without one."""
    try:
        doc = codec.loads(line)
    except codec.JSONDecodeError:
        return None
    run_id = doc.get("run_id") if isinstance(doc, dict) else None
    return run_id.encode("utf-8", "replace") if isinstance(run_id, str) else None


async def produce_lines(
    settings: Settings, topic: str, lines: Iterable[bytes], on_sent: Callable[[], None] = _nothing
) -> int:
    """Produce each non-empty line as is (its exact bytes), keyed by its run_id (:func:`run_key`), to
    ``topic`` (its whole name); ``on_sent`` after each one is handed over. Returns the count once the
    broker acknowledged every one.

    Raises:
        KafkaUnavailable: the broker cannot be reached or did not acknowledge.
    """
    count = 0
    async with started(new_producer(settings), f"publishing to {topic}") as producer:
        with kafka_errors(f"publishing to {topic}"):
            futures = []
            for line in lines:
                if not line.strip():
                    continue
                futures.append(await producer.send(topic, line, key=run_key(line)))
                count += 1
                on_sent()
            await asyncio.gather(*futures)
    return count
