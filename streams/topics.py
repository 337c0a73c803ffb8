"""The nine topics, created with one partition count so a run's events are co-partitioned (SPEC 1)."""

from __future__ import annotations

import logging

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError

from streams.errors import ConfigurationError, KafkaUnavailable
from streams.settings import Settings

log = logging.getLogger(__name__)

TOPIC_NAMES: tuple[str, ...] = (
    "raw-hits",
    "postprocessed",
    "projected",
    "ledger",
    "diagnosis-drafts",
    "verdicts",
    "violations",
    "audit",
    "dead-letters",
)
"""Every topic of the SPEC, without the prefix; all keyed by ``run_id``."""


def topic_configs(settings: Settings, name: str) -> dict[str, str]:
    """Broker configs of one topic: 4 MiB messages; the ledger is history (never compacted)."""
    configs = {"max.message.bytes": str(settings.topic_max_message_bytes)}
    if name == "ledger":
        configs["cleanup.policy"] = "delete"
        configs["retention.ms"] = str(settings.ledger_retention_ms)
    return configs


async def ensure_topics(settings: Settings) -> list[str]:
    """Create the missing topics with the partition count the existing ones already share.

    All nine topics need one count so a run's events stay in one partition number. On a fresh
    deployment that count is ``EC_TOPIC_PARTITIONS``; when some topics exist already (created by a
    producer, by hand, or auto-created by the broker), their common count wins and the rest are
    created to match, with a warning if it differs from the setting. Returns the names created.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
        ConfigurationError: existing topics disagree on the partition count.
    """
    admin = AIOKafkaAdminClient(
        bootstrap_servers=settings.kafka_bootstrap, client_id=f"{settings.app_id}-admin"
    )
    try:
        await admin.start()
    except KafkaError as exc:
        raise KafkaUnavailable(
            f"cannot reach Kafka at {settings.kafka_bootstrap}: {exc}; is it up (make up)?"
        ) from exc
    try:
        wanted = {settings.topic(name): name for name in TOPIC_NAMES}
        existing = set(await admin.list_topics())
        present = [full for full in wanted if full in existing]
        counts: dict[str, int] = {}
        if present:
            for topic in await admin.describe_topics(present):
                if topic.get("partitions"):
                    counts[topic["topic"]] = len(topic["partitions"])
        partitions = settings.topic_partitions
        if len(set(counts.values())) > 1:
            listing = ", ".join(f"{name}={count}" for name, count in sorted(counts.items()))
            raise ConfigurationError(
                f"the topics disagree on their partition count ({listing}); all need one count so a run "
                "stays in one partition number — recreate them with one count or use a new EC_TOPIC_PREFIX"
            )
        if counts:
            partitions = next(iter(counts.values()))
            if partitions != settings.topic_partitions:
                log.warning(
                    "existing topics have %d partitions (EC_TOPIC_PARTITIONS=%d); using %d for the rest",
                    partitions,
                    settings.topic_partitions,
                    partitions,
                )
        missing = [full for full in wanted if full not in existing]
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
        return missing
    except KafkaError as exc:
        raise KafkaUnavailable(f"creating topics on {settings.kafka_bootstrap}: {exc}") from exc
    finally:
        await admin.close()
