"""The topics: their names and configs, and creating the missing ones with one partition count."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError
from aiokafka.structs import TopicPartition

from models.topology import TOPOLOGY
from models.vocab import Topic
from streams.errors import ConfigurationError, KafkaRefused, KafkaUnavailable
from streams.kafka.config import kafka_errors, new_admin, new_consumer, started
from streams.retry import RetryPolicy, hold
from streams.settings import Settings

log = logging.getLogger(__name__)

TOPIC_NAMES: tuple[str, ...] = tuple(topic.value for topic in Topic)
"""Every topic of the SPEC, without the prefix, as plain text (the CLI's choices); all keyed by ``run_id``."""

WORKER_INPUTS: tuple[Topic, ...] = tuple(wiring.input for wiring in TOPOLOGY.values())
"""The topics the workers' consumer group consumes (the only ones ``replay --mode reset`` may move)."""


NEW_TOPIC_LEADERS_WAIT_SECONDS = 10.0
"""How long :func:`ensure_topics` waits for the partitions it created to take requests."""


def topic_configs(settings: Settings, name: Topic) -> dict[str, str]:
    """Broker configs of one topic: 4 MiB messages; the ledger is history (never compacted), and so are the
    semantic review's judgements (SPEC 4.4: the record a replay judges from), kept as long."""
    configs = {"max.message.bytes": str(settings.topic_max_message_bytes)}
    if name in (Topic.LEDGER, Topic.JUDGEMENTS):
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
    policy = RetryPolicy.for_startup(settings)
    await hold(
        lambda: ensure_topics(settings),
        what=f"waiting for Kafka at {settings.kafka_bootstrap}",
        policy=policy,
    )
