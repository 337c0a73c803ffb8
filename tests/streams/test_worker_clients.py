"""What the worker asks of Faust's Kafka clients (issue 42): fetches bounded per partition, and Faust's
unused producer kept from refreshing every topic's metadata every few seconds."""

from __future__ import annotations

from streams.settings import Settings
from streams.worker.app import FAUST_PRODUCER_METADATA_MAX_AGE_MS, app_options


def test_the_consumer_fetches_the_setting_per_partition_not_twice_the_largest_record() -> None:
    settings = Settings(consumer_fetch_bytes=256 * 1024, topic_max_message_bytes=4 * 1024 * 1024)
    assert app_options(settings)["consumer_max_fetch_size"] == 256 * 1024
    assert app_options(Settings())["consumer_max_fetch_size"] == 1 << 20


def test_faust_s_producer_refreshes_rarely_and_the_consumer_as_configured() -> None:
    """Faust's producer sends nothing and tracks no topic, so each refresh asks for every topic in the
    cluster: once an hour, not every EC_KAFKA_METADATA_MAX_AGE_MS. The consumer, which follows leaders
    of the partitions it reads, keeps the setting."""
    options = app_options(Settings(kafka_metadata_max_age_ms=5_000))
    assert options["producer_metadata_max_age_ms"] == FAUST_PRODUCER_METADATA_MAX_AGE_MS >= 600_000
    assert options["consumer_metadata_max_age_ms"] == 5_000
