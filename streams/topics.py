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
    """Create the missing topics; refuse existing ones with another partition count.

    Returns the names created.

    Raises:
        KafkaUnavailable: the broker cannot be reached.
        ConfigurationError: a topic exists with a different partition count.
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
        missing = [full for full in wanted if full not in existing]
        if missing:
            new = [
                NewTopic(
                    full,
                    num_partitions=settings.topic_partitions,
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
        present = [full for full in wanted if full in existing]
        if present:
            described = await admin.describe_topics(present)
            for topic in described:
                count = len(topic.get("partitions", []))
                if count and count != settings.topic_partitions:
                    raise ConfigurationError(
                        f"topic {topic['topic']} has {count} partitions but EC_TOPIC_PARTITIONS="
                        f"{settings.topic_partitions}; all topics need one count so a run stays in one "
                        "partition number — set EC_TOPIC_PARTITIONS to match or use a new EC_TOPIC_PREFIX"
                    )
        return missing
    except KafkaError as exc:
        raise KafkaUnavailable(f"creating topics on {settings.kafka_bootstrap}: {exc}") from exc
    finally:
        await admin.close()
