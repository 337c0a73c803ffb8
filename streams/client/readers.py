"""Replies read straight from the partition a request's key maps to: one reader per partition.

A request-reply over Kafka needs no consumer group and no commits: the reply (a ledger event, a
verdict) lands on the same partition number as the request, because every topic is keyed by
``run_id`` and has one partition count (SPEC 1). So a :class:`PartitionReader` is a plain consumer
assigned one partition and started at its end offset; every request waiting on that partition
shares it. A waiter is registered *before* the request is produced (and before the ledger is
checked), so a reply can never slip past between the two: the reader's position at registration
is at most the end offset, and any reply written afterwards is at or after it.

Values are parsed only for keys someone is waiting on; everything else on the partition is skipped
by its key.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition

from streams import codec
from streams.errors import KafkaUnavailable
from streams.kafka.config import kafka_errors, new_consumer
from streams.settings import Settings

log = logging.getLogger(__name__)

Match = Callable[[Any], bool]
"""Whether a decoded reply value is the one a waiter wants."""


@dataclass(frozen=True, slots=True)
class Reply:
    """One reply: its exact bytes on the topic and their decoded value."""

    raw: bytes
    value: Any
    offset: int


@dataclass(eq=False)
class Waiter:
    """One request waiting for its reply on one partition."""

    key: bytes
    match: Match
    future: asyncio.Future[Reply] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class PartitionReader:
    """A consumer of one topic partition from its end offset, handing replies to waiters by key."""

    def __init__(self, settings: Settings, topic: str, partition: int, *, fetch_wait_ms: int = 100) -> None:
        self.tp = TopicPartition(topic, partition)
        self._consumer: AIOKafkaConsumer = new_consumer(
            settings,
            group_id=None,
            enable_auto_commit=False,
            fetch_max_wait_ms=fetch_wait_ms,
            # A reply is at most one event of a few KB to 4 MiB; large fetches waste memory here.
            max_partition_fetch_bytes=2 * settings.topic_max_message_bytes,
        )
        self._waiters: dict[bytes, list[Waiter]] = {}
        self._task: asyncio.Task[None] | None = None
        self._started = asyncio.Event()
        self.start_offset: int | None = None
        self.error: BaseException | None = None

    @property
    def waiting(self) -> int:
        """How many requests wait on this partition."""
        return sum(len(group) for group in self._waiters.values())

    async def start(self) -> None:
        """Assign the partition and resolve its end offset now (the reader starts there).

        Raises:
            KafkaUnavailable, KafkaRefused: the broker cannot be reached or refused.
        """
        with kafka_errors(f"starting a reply reader on {self.tp.topic}[{self.tp.partition}]"):
            await self._consumer.start()
            self._consumer.assign([self.tp])
            await self._consumer.seek_to_end(self.tp)
            self.start_offset = await self._consumer.position(self.tp)
        name = f"reply-reader-{self.tp.topic}-{self.tp.partition}"
        self._task = asyncio.create_task(self._run(), name=name)

    async def stop(self) -> None:
        """Stop reading; every waiter still here gets a :class:`KafkaUnavailable`."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        with contextlib.suppress(Exception):
            await self._consumer.stop()
        self._fail_all(KafkaUnavailable(f"the reply reader of {self.tp.topic}[{self.tp.partition}] stopped"))

    def add(self, key: bytes, match: Match) -> Waiter:
        """Register a waiter for a reply with this key that ``match`` accepts."""
        waiter = Waiter(key, match)
        self._waiters.setdefault(key, []).append(waiter)
        return waiter

    def discard(self, waiter: Waiter) -> None:
        """Forget a waiter (answered, timed out or cancelled): nothing stays behind."""
        group = self._waiters.get(waiter.key)
        if group is None:
            return
        with contextlib.suppress(ValueError):
            group.remove(waiter)
        if not group:
            del self._waiters[waiter.key]

    async def position(self) -> int:
        """The next offset this reader will hand out."""
        return int(await self._consumer.position(self.tp))

    def _fail_all(self, error: BaseException) -> None:
        for group in self._waiters.values():
            for waiter in group:
                if not waiter.future.done():
                    waiter.future.set_exception(error)
        self._waiters.clear()

    async def _run(self) -> None:
        backoff = 0.1
        while True:
            try:
                with kafka_errors(f"reading replies from {self.tp.topic}[{self.tp.partition}]"):
                    batch = await self._consumer.getmany(self.tp, timeout_ms=1000, max_records=1000)
                backoff = 0.1
            except KafkaUnavailable as exc:
                # The consumer reconnects by itself; the waiters keep their own deadlines.
                log.warning("%s; retrying in %.1f s", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            except Exception as exc:  # noqa: BLE001 - a refused read fails every waiter, loudly
                log.exception("reply reader %s[%d] stopped", self.tp.topic, self.tp.partition)
                self.error = exc
                self._fail_all(exc)
                return
            for messages in batch.values():
                for message in messages:
                    self._dispatch(message.key, message.value, message.offset)

    def _dispatch(self, key: bytes | None, value: bytes | None, offset: int) -> None:
        if key is None or value is None:
            return
        group = self._waiters.get(key)
        if not group:
            return
        try:
            decoded = codec.loads(value)
        except codec.JSONDecodeError:
            return  # not a reply of ours: the topics we read carry only our own JSON
        for waiter in list(group):
            if not waiter.future.done() and waiter.match(decoded):
                waiter.future.set_result(Reply(value, decoded, offset))
                self.discard(waiter)


class ReaderPool:
    """One :class:`PartitionReader` per topic partition, created on first use and shared."""

    def __init__(self, settings: Settings, *, fetch_wait_ms: int = 100) -> None:
        self.settings = settings
        self.fetch_wait_ms = fetch_wait_ms
        self._readers: dict[tuple[str, int], PartitionReader] = {}
        self._starting: dict[tuple[str, int], asyncio.Task[PartitionReader]] = {}

    @property
    def readers(self) -> list[PartitionReader]:
        """The readers started so far."""
        return list(self._readers.values())

    async def reader(self, topic: str, partition: int) -> PartitionReader:
        """The reader of one partition, started (at the end offset) if it was not yet.

        Raises:
            KafkaUnavailable, KafkaRefused: the reader could not start.
        """
        where = (topic, partition)
        found = self._readers.get(where)
        if found is not None and found.error is None:
            return found
        task = self._starting.get(where)
        if task is None:
            task = self._starting[where] = asyncio.ensure_future(self._start(topic, partition))
        try:
            return await asyncio.shield(task)
        finally:
            if task.done():
                self._starting.pop(where, None)

    async def _start(self, topic: str, partition: int) -> PartitionReader:
        old = self._readers.pop((topic, partition), None)
        if old is not None:
            await old.stop()
        reader = PartitionReader(self.settings, topic, partition, fetch_wait_ms=self.fetch_wait_ms)
        try:
            await reader.start()
        except BaseException:
            await reader.stop()
            raise
        self._readers[(topic, partition)] = reader
        return reader

    async def stop(self) -> None:
        """Stop every reader."""
        readers, self._readers = list(self._readers.values()), {}
        for reader in readers:
            await reader.stop()


async def read_key_from_start(
    settings: Settings,
    topic: str,
    partition: int,
    key: bytes,
    *,
    until: Match | None = None,
) -> list[Any]:
    """The decoded values of one key on one partition, from its first offset, in offset order.

    Reads up to the end offset the partition had when the read began; with ``until``, goes on
    reading (the caller bounds the wait) until some value of the key satisfies it. A value that is not
    JSON is skipped (the topics read here carry only the project's own JSON).

    Raises:
        KafkaUnavailable, KafkaRefused: the broker cannot be reached or refused.
    """
    tp = TopicPartition(topic, partition)
    consumer = new_consumer(
        settings,
        group_id=None,
        enable_auto_commit=False,
        max_partition_fetch_bytes=2 * settings.topic_max_message_bytes,
    )
    found: list[Any] = []
    try:
        with kafka_errors(f"reading {topic}[{partition}] from its start"):
            await consumer.start()
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            end = (await consumer.end_offsets([tp]))[tp]
            satisfied = until is None
            while not (satisfied and await consumer.position(tp) >= end):
                batch = await consumer.getmany(tp, timeout_ms=200, max_records=1000)
                for message in batch.get(tp, []):
                    if message.key != key or message.value is None:
                        continue
                    try:
                        value = codec.loads(message.value)
                    except codec.JSONDecodeError:
                        continue
                    found.append(value)
                    satisfied = satisfied or (until is not None and until(value))
    finally:
        with contextlib.suppress(Exception):
            await consumer.stop()
    return found
