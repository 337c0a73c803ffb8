"""The Kafka edge: client factories with the security settings, error mapping, the topics, and reads
of topic ranges and offsets for the commands and the worker's gap checks.

Only this module builds aiokafka clients (the Faust app turns the same settings into Faust's
``broker_credentials`` in ``streams.worker.credentials``), so ``EC_KAFKA_SECURITY_PROTOCOL``, SASL and SSL
settings reach every one of them. Every
aiokafka exception is translated here, once, by :func:`kafka_errors`, using aiokafka's own
``retriable`` flag. Public aiokafka API only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaConnectionError, KafkaError, KafkaTimeoutError, TopicAlreadyExistsError
from aiokafka.helpers import create_ssl_context
from aiokafka.partitioner import DefaultPartitioner
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from models.topology import TOPOLOGY
from models.vocab import Topic
from streams.errors import ConfigurationError, KafkaRefused, KafkaUnavailable
from streams.messages import Output, Record
from streams.settings import Settings

log = logging.getLogger(__name__)

TOPIC_NAMES: tuple[str, ...] = tuple(topic.value for topic in Topic)
"""Every topic of the SPEC, without the prefix, as plain text (the CLI's choices); all keyed by ``run_id``."""

WORKER_INPUTS: tuple[Topic, ...] = tuple(wiring.input for wiring in TOPOLOGY.values())
"""The topics the workers' consumer group consumes (the only ones ``replay --mode reset`` may move)."""


# --- errors -------------------------------------------------------------------------------------


@contextlib.contextmanager
def kafka_errors(what: str) -> Iterator[None]:
    """Translate aiokafka exceptions raised inside the block into the project's error tree.

    Raises:
        KafkaUnavailable: a connection, timeout or other error aiokafka marks retriable.
        KafkaRefused: an error retrying cannot fix (authorization, a record too large, ...).
    """
    try:
        yield
    except (KafkaConnectionError, KafkaTimeoutError, TimeoutError, OSError) as exc:
        raise KafkaUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc
    except KafkaError as exc:
        if getattr(exc, "retriable", False):
            raise KafkaUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc
        raise KafkaRefused(f"{what}: {type(exc).__name__}: {exc}") from exc


# --- clients ------------------------------------------------------------------------------------


def client_options(settings: Settings) -> dict[str, Any]:
    """Connection and security options every aiokafka client of the project gets."""
    options: dict[str, Any] = {
        "bootstrap_servers": settings.kafka_bootstrap,
        "security_protocol": settings.kafka_security_protocol,
        # aiokafka refreshes metadata on a stale-leader answer but not when a leader's broker is gone
        # (NodeNotReady): without a short age it retries the dead broker until the request times out.
        "metadata_max_age_ms": settings.kafka_metadata_max_age_ms,
    }
    if settings.kafka_security_protocol.startswith("SASL"):
        options["sasl_mechanism"] = settings.kafka_sasl_mechanism
        options["sasl_plain_username"] = settings.kafka_sasl_username
        options["sasl_plain_password"] = (
            settings.kafka_sasl_password.get_secret_value() if settings.kafka_sasl_password else None
        )
    context = ssl_context(settings)
    if context is not None:
        options["ssl_context"] = context
    return options


def ssl_context(settings: Settings) -> ssl.SSLContext | None:
    """The TLS context of ``SSL`` / ``SASL_SSL`` (CA bundle, optional client certificate); else None.

    Raises:
        ConfigurationError: a CA bundle, certificate or key that is missing or not PEM; the message
            names its variable (a missing file is a setting to fix, not a broker to wait for).
    """
    if not settings.kafka_security_protocol.endswith("SSL"):
        return None
    cafile, certfile, keyfile = (
        settings.kafka_ssl_cafile,
        settings.kafka_ssl_certfile,
        settings.kafka_ssl_keyfile,
    )
    with _tls_files(("EC_KAFKA_SSL_CAFILE", cafile)):
        context: ssl.SSLContext = create_ssl_context(cafile=cafile)
    if certfile is not None:
        with _tls_files(("EC_KAFKA_SSL_CERTFILE", certfile), ("EC_KAFKA_SSL_KEYFILE", keyfile)):
            context.load_cert_chain(certfile, keyfile)
    return context


@contextlib.contextmanager
def _tls_files(*files: tuple[str, str | None]) -> Iterator[None]:
    """Load the ``(variable, path)`` files inside the block; a failure names the variables.

    Raises:
        ConfigurationError: a file is missing, unreadable or not PEM.
    """
    for variable, path in files:
        if path is not None and not os.path.isfile(path):
            raise ConfigurationError(f"{variable}: no such file {path!r}; point it at a PEM file it can read")
    named = " / ".join(variable for variable, path in files if path is not None)
    try:
        yield
    except ssl.SSLError as exc:  # before OSError, of which it is one
        raise ConfigurationError(f"{named}: not a usable PEM file ({exc.reason or exc})") from exc
    except OSError as exc:
        raise ConfigurationError(f"{named}: cannot be read ({exc.strerror or exc})") from exc


def new_producer(settings: Settings, **overrides: Any) -> AIOKafkaProducer:
    """A producer with acks=all and requests as large as the topics allow."""
    options = {
        **client_options(settings),
        "acks": "all",
        "max_request_size": settings.topic_max_message_bytes + 64 * 1024,
        "linger_ms": 5,
        **overrides,
    }
    return AIOKafkaProducer(**options)


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
            for message in messages:
                name = self.names[message.topic]
                partitions = await self._partitions_of(name)
                partition = self._partitioner(message.key, partitions, partitions)
                groups.setdefault((name, partition), []).append(message)
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


def new_consumer(settings: Settings, *topics: str, **overrides: Any) -> AIOKafkaConsumer:
    """A consumer without auto-commit, able to fetch the largest record a topic allows."""
    options = {
        **client_options(settings),
        "enable_auto_commit": False,
        "auto_offset_reset": "earliest",
        "max_partition_fetch_bytes": 2 * settings.topic_max_message_bytes,
        "fetch_max_bytes": 4 * settings.topic_max_message_bytes,
        **overrides,
    }
    return AIOKafkaConsumer(*topics, **options)


def new_admin(settings: Settings, **overrides: Any) -> AIOKafkaAdminClient:
    """An admin client."""
    return AIOKafkaAdminClient(
        **{**client_options(settings), "client_id": f"{settings.app_id}-admin", **overrides}
    )


@contextlib.asynccontextmanager
async def started(client: Any, what: str) -> AsyncIterator[Any]:
    """Start a client (mapping its errors), yield it, and always stop/close it."""
    with kafka_errors(f"{what}: connecting"):
        await client.start()
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            await (client.close() if isinstance(client, AIOKafkaAdminClient) else client.stop())


# --- topics -------------------------------------------------------------------------------------

NEW_TOPIC_LEADERS_WAIT_SECONDS = 10.0
"""How long :func:`ensure_topics` waits for the partitions it created to take requests."""


def topic_configs(settings: Settings, name: Topic) -> dict[str, str]:
    """Broker configs of one topic: 4 MiB messages; the ledger is history (never compacted)."""
    configs = {"max.message.bytes": str(settings.topic_max_message_bytes)}
    if name == Topic.LEDGER:
        configs["cleanup.policy"] = "delete"
        configs["retention.ms"] = str(settings.ledger_retention_ms)
    return configs


async def partition_counts(admin: AIOKafkaAdminClient, topics: Sequence[str]) -> dict[str, int]:
    """The partition count of each topic that exists (missing topics are left out)."""
    existing = set(await admin.list_topics())
    present = [topic for topic in topics if topic in existing]
    counts: dict[str, int] = {}
    if present:
        for described in await admin.describe_topics(present):
            if described.get("partitions"):
                counts[described["topic"]] = len(described["partitions"])
    return counts


async def ensure_topics(settings: Settings) -> list[str]:
    """Create the missing topics with the partition count the existing ones already share.

    All nine topics need one count so a run's events stay in one partition number. On a fresh
    deployment that count is ``EC_TOPIC_PARTITIONS``; when some topics exist already (created by a
    producer, by hand, or auto-created by the broker), their common count wins and the rest are
    created to match, with a warning if it differs from the setting. It returns once the partitions
    it created take requests (:func:`wait_for_leaders`). Returns the names created.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
        ConfigurationError: existing topics disagree on the partition count.
    """
    wanted = {settings.topic(topic): topic for topic in Topic}
    async with started(new_admin(settings), f"creating topics on {settings.kafka_bootstrap}") as admin:
        with kafka_errors(f"creating topics on {settings.kafka_bootstrap}"):
            counts = await partition_counts(admin, list(wanted))
            if len(set(counts.values())) > 1:
                listing = ", ".join(f"{name}={count}" for name, count in sorted(counts.items()))
                raise ConfigurationError(
                    f"the topics disagree on their partition count ({listing}); all need one count so a run "
                    "stays in one partition number — recreate them with one count or use a new "
                    "EC_TOPIC_PREFIX"
                )
            partitions = settings.topic_partitions
            if counts:
                partitions = next(iter(counts.values()))
                if partitions != settings.topic_partitions:
                    log.warning(
                        "existing topics have %d partitions (EC_TOPIC_PARTITIONS=%d); using %d for the rest",
                        partitions,
                        settings.topic_partitions,
                        partitions,
                    )
            missing = [full for full in wanted if full not in counts]
            if missing:
                new = [
                    NewTopic(
                        full,
                        num_partitions=partitions,
                        replication_factor=settings.topic_replication_factor,
                        topic_configs=topic_configs(settings, wanted[full]),
                    )
                    for full in missing
                ]
                try:
                    await admin.create_topics(new)
                except TopicAlreadyExistsError:
                    pass  # created concurrently by another worker: fine
                log.info("created topics: %s", ", ".join(missing))
    if missing:
        try:
            await wait_for_leaders(settings, missing, partitions, NEW_TOPIC_LEADERS_WAIT_SECONDS)
        except (KafkaUnavailable, KafkaRefused) as exc:  # the topics exist; the first writes may be retried
            log.warning("the new topics' partition leaders did not answer: %s", exc)
    return missing


async def wait_for_leaders(
    settings: Settings, topics: Sequence[str], partitions: int, timeout_s: float
) -> None:
    """Wait until the leader of every partition of ``topics`` answers, for at most ``timeout_s``.

    A broker names a new partition's leader in its metadata a moment before that leader takes
    requests; a producer writing in that moment is refused (NotLeaderForPartition) and aiokafka logs
    a warning per retry. First the broker's metadata must name every leader (asked quietly, see
    :func:`_all_led`); then a ListOffsets request, which needs the same leader as a write and which
    the consumer retries quietly, is the probe that the leaders answer.

    Raises:
        KafkaUnavailable: not all of them answered within ``timeout_s``.
        KafkaRefused: the broker refused the probe (e.g. no Describe permission on a topic).
    """
    what = f"waiting for the leaders of {len(topics)} new topics"
    tps = [TopicPartition(topic, partition) for topic in topics for partition in range(partitions)]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    async with started(new_admin(settings), what) as admin:
        with kafka_errors(what):
            while not await _all_led(admin, topics, partitions):
                if loop.time() >= deadline:
                    raise KafkaUnavailable(f"{what}: not in the broker's metadata after {timeout_s:g} s")
                await asyncio.sleep(0.05)
    async with started(new_consumer(settings, group_id=None), what) as consumer:
        with kafka_errors(what):
            await asyncio.wait_for(consumer.end_offsets(tps), max(0.1, deadline - loop.time()))


async def _all_led(admin: AIOKafkaAdminClient, topics: Sequence[str], partitions: int) -> bool:
    """Whether the broker's metadata names a leader for every partition of ``topics``.

    Asked with the admin client's raw metadata request: a consumer or producer asking about a topic
    the broker has not applied yet (KRaft answers CreateTopics a moment before) logs aiokafka's
    "Topic ... not found in cluster metadata" at ERROR, which a person running ``make run`` reads.
    """
    described = {found["topic"]: found for found in await admin.describe_topics(list(topics))}
    for topic in topics:
        found = described.get(topic)
        if found is None or found.get("error_code", 0) != 0:
            return False
        leaders = [p for p in found.get("partitions", []) if p.get("leader", -1) >= 0]
        if len(leaders) < partitions:
            return False
    return True


async def wait_for_topics(settings: Settings) -> None:
    """:func:`ensure_topics`, waiting up to ``startup_wait_seconds`` for a broker that is still starting.

    Raises:
        HoldExpired: the broker did not answer in time.
        ConfigurationError: existing topics disagree on the partition count.
    """
    from streams.retry import RetryPolicy, hold

    policy = RetryPolicy.for_startup(settings)
    await hold(
        lambda: ensure_topics(settings),
        what=f"waiting for Kafka at {settings.kafka_bootstrap}",
        policy=policy,
    )


# --- offsets ------------------------------------------------------------------------------------


async def committed_offsets(
    admin: AIOKafkaAdminClient, group: str, partitions: Sequence[TopicPartition]
) -> dict[TopicPartition, int | None]:
    """The group's committed offset of each partition (None where it has none)."""
    with kafka_errors(f"reading the committed offsets of {group}"):
        found = await admin.list_consumer_group_offsets(group, partitions=list(partitions))
    out: dict[TopicPartition, int | None] = {}
    for tp in partitions:
        meta = found.get(tp)
        out[tp] = meta.offset if meta is not None and meta.offset >= 0 else None
    return out


async def group_members(settings: Settings, group: str) -> int:
    """How many members a consumer group has right now.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
    """
    async with started(new_admin(settings), f"describing group {group}") as admin:
        with kafka_errors(f"describing group {group}"):
            responses = await admin.describe_consumer_groups([group])
    members = 0
    for response in responses:
        for described in response.to_object()["groups"]:
            members += len(described.get("members", []))
    return members


async def commit_offsets(settings: Settings, group: str, offsets: dict[TopicPartition, int]) -> None:
    """Commit offsets for a group that has no members (``replay --mode reset``)."""
    consumer = new_consumer(settings, group_id=group)
    async with started(consumer, f"committing offsets of {group}"):
        consumer.assign(list(offsets))
        with kafka_errors(f"committing offsets of {group}"):
            await consumer.commit({tp: OffsetAndMetadata(offset, "") for tp, offset in offsets.items()})


class OffsetProbe:
    """Answers, with a plain consumer of its own, what the broker holds at a partition's offsets.

    The worker asks it only when something looks wrong (a gap between two records it was given, or
    a partition whose first record is not at the committed offset), never per record.
    """

    def __init__(self, settings: Settings, group: str) -> None:
        self.settings = settings
        self.group = group

    async def committed(self, partitions: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int | None]:
        """The group's committed offsets, or where it would start (the log start) without one."""
        tps = [TopicPartition(topic, partition) for topic, partition in partitions]
        async with started(new_admin(self.settings), f"committed offsets of {self.group}") as admin:
            found = await committed_offsets(admin, self.group, tps)
        return {(tp.topic, tp.partition): offset for tp, offset in found.items()}

    async def first_offset_from(
        self, topic: str, partition: int, offset: int, timeout_s: float = 10.0
    ) -> int | None:
        """The offset of the first record the broker serves at or after ``offset`` (None: none yet).

        Kafka returns the first existing data record at or after a fetch position, skipping
        transaction markers, aborted and compacted records, and moving up to the log start when
        retention has deleted the position: exactly the records a consumer could ever see.
        """
        tp = TopicPartition(topic, partition)
        consumer = new_consumer(self.settings, group_id=None, max_partition_fetch_bytes=1024 * 1024)
        async with started(consumer, f"probing {topic}[{partition}]@{offset}"):
            consumer.assign([tp])
            consumer.seek(tp, offset)
            deadline = time.monotonic() + timeout_s
            with kafka_errors(f"probing {topic}[{partition}]@{offset}"):
                while time.monotonic() < deadline:
                    batch = await consumer.getmany(tp, timeout_ms=500, max_records=1)
                    for records in batch.values():
                        if records:
                            return int(records[0].offset)
                    end = (await consumer.end_offsets([tp]))[tp]
                    if await consumer.position(tp) >= end:
                        return None
        return None


# --- topic ranges -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Range:
    """Which records to read: one topic, some partitions, offsets or times (epoch ms)."""

    topic: Topic
    partitions: list[int] | None = None
    from_offset: int | None = None
    from_time_ms: int | None = None
    to_offset: int | None = None
    until_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """Per partition: the log's beginning and end, and the range's start and end (exclusive)."""

    beginning: dict[TopicPartition, int]
    end: dict[TopicPartition, int]
    starts: dict[TopicPartition, int]
    ends: dict[TopicPartition, int]

    @property
    def total(self) -> int:
        """Records in the range."""
        return sum(max(0, self.ends[tp] - self.starts[tp]) for tp in self.starts)


async def plan_range(settings: Settings, consumer: AIOKafkaConsumer, wanted: Range) -> Plan:
    """Resolve a range to offsets.

    A ``--from-offset`` past the end, or a ``--from-time`` after the last record, resolves to the
    end (nothing to read); ``replay --mode reset`` refuses such a start.

    Raises:
        ConfigurationError: the topic or a partition does not exist.
        KafkaUnavailable: the broker cannot be reached.
    """
    full_topic = settings.topic(wanted.topic)
    async with started(new_admin(settings), f"describing {full_topic}") as admin:
        with kafka_errors(f"describing {full_topic}"):
            counts = await partition_counts(admin, [full_topic])
    if full_topic not in counts:
        raise ConfigurationError(f"topic {full_topic} does not exist; check --topic and EC_TOPIC_PREFIX")
    partitions = set(range(counts[full_topic]))
    chosen = sorted(partitions) if wanted.partitions is None else wanted.partitions
    missing = sorted(set(chosen) - partitions)
    if missing:
        raise ConfigurationError(f"{full_topic} has no partition {missing}; it has {sorted(partitions)}")
    tps = [TopicPartition(full_topic, p) for p in chosen]
    with kafka_errors(f"reading the offsets of {full_topic}"):
        begin = await consumer.beginning_offsets(tps)
        end = await consumer.end_offsets(tps)
        starts = {tp: begin[tp] for tp in tps}
        if wanted.from_offset is not None:
            starts = {tp: max(begin[tp], min(wanted.from_offset, end[tp])) for tp in tps}
        elif wanted.from_time_ms is not None:
            found = await consumer.offsets_for_times({tp: wanted.from_time_ms for tp in tps})
            starts = {tp: (found[tp].offset if found.get(tp) else end[tp]) for tp in tps}
        ends = dict(end)
        if wanted.to_offset is not None:
            ends = {tp: min(end[tp], wanted.to_offset + 1) for tp in tps}
        if wanted.until_ms is not None:
            found = await consumer.offsets_for_times({tp: wanted.until_ms for tp in tps})
            ends = {tp: min(ends[tp], found[tp].offset if found.get(tp) else end[tp]) for tp in tps}
    return Plan(dict(begin), dict(end), starts, ends)


async def read_range(
    settings: Settings, wanted: Range, on_plan: Callable[[Plan], None], stop: asyncio.Event
) -> AsyncIterator[list[Record]]:
    """Batches of the records in the range, in offset order per partition.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
    """
    full_topic = settings.topic(wanted.topic)
    consumer = new_consumer(settings, group_id=None)
    async with started(consumer, f"reading {full_topic}"):
        plan = await plan_range(settings, consumer, wanted)
        on_plan(plan)
        pending = {tp for tp in plan.starts if plan.starts[tp] < plan.ends[tp]}
        if not pending:
            return
        consumer.assign(list(pending))
        for tp in pending:
            consumer.seek(tp, plan.starts[tp])
        while pending and not stop.is_set():
            with kafka_errors(f"reading {full_topic}"):
                batch = await consumer.getmany(timeout_ms=500, max_records=500)
            out: list[Record] = []
            for tp, messages in batch.items():
                for m in messages:
                    if m.offset >= plan.ends[tp]:
                        break
                    out.append(Record(m.topic, m.partition, m.offset, m.timestamp, m.key, m.value or b""))
                if messages and messages[-1].offset + 1 >= plan.ends[tp]:
                    pending.discard(tp)
                    consumer.pause(tp)
            if out:
                yield out


async def read_topic(
    settings: Settings,
    topic: str,
    *,
    until: Callable[[list[bytes]], bool],
    wait_seconds: float = 90.0,
    settle: float = 0.0,
) -> list[bytes]:
    """All values of a full topic name from the beginning (no group), once ``until(values)`` holds.

    Reading stops when the condition has held for ``settle`` seconds, or after ``wait_seconds``.
    A topic that does not exist yet is waited for.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
    """
    values: list[bytes] = []
    deadline = time.monotonic() + wait_seconds
    consumer = new_consumer(settings, group_id=None, max_partition_fetch_bytes=8 * 1024 * 1024)
    async with (
        started(consumer, f"reading {topic}"),
        started(new_admin(settings), f"reading {topic}") as admin,
    ):
        counts: dict[str, int] = {}
        while time.monotonic() < deadline:
            with kafka_errors(f"describing {topic}"):
                counts = await partition_counts(admin, [topic])
            if counts:
                break
            await asyncio.sleep(0.5)
        if not counts:
            return values
        tps = [TopicPartition(topic, p) for p in range(counts[topic])]
        consumer.assign(tps)
        with kafka_errors(f"reading {topic}"):
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
