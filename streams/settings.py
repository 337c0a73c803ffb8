"""Every setting of evidence-chain in one frozen object, read from ``EC_*`` environment variables.

Nested limits use ``__``: ``EC_PROJECTION__MAX_ITEMS=8``, ``EC_POSTPROCESS__RETURN_N=5``.
Units are in the names (``ledger_ttl_seconds``, ``max_bytes``) as in aiokafka's settings.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from models.limits import (
    DeadLetterSettings,
    GuardSettings,
    InputLimits,
    PostprocessSettings,
    ToolProjectionLimits,
)


class Settings(BaseSettings):
    """All settings; defaults are the SPEC's numbers and the local stack's addresses."""

    model_config = SettingsConfigDict(
        env_prefix="EC_", env_nested_delimiter="__", frozen=True, extra="ignore"
    )

    # Infrastructure
    kafka_bootstrap: str = Field("127.0.0.1:9092", description="Kafka bootstrap servers, comma-separated.")
    redis_url: str = Field(
        "redis://127.0.0.1:6379/0", description="Redis URL (put the password in EC_REDIS_PASSWORD)."
    )
    redis_password: SecretStr | None = Field(None, description="Redis password; never printed.")
    app_id: str = Field("evidence-chain", description="Faust app id = the workers' consumer group.")
    topic_prefix: str = Field("", description="Prepended to every topic name.")
    topic_partitions: int = Field(3, ge=1, description="Partitions of every topic (one count for all).")
    topic_replication_factor: int = Field(1, ge=1, description="Replication factor of created topics.")
    topic_max_message_bytes: int = Field(
        4 * 1024 * 1024, ge=1, description="max.message.bytes of created topics."
    )
    ledger_retention_ms: int = Field(-1, description="retention.ms of the ledger topic (-1 = keep forever).")
    data_dir: str = Field(".local/faust", description="Where Faust keeps its per-app data directory.")
    web_enabled: bool = Field(False, description="Run Faust's web server (port web_port).")
    web_port: int = Field(6066, description="Faust web port when web_enabled.")
    batch_size: int = Field(100, ge=1, description="Records an agent takes at once (stream.take).")
    batch_within_seconds: float = Field(0.2, gt=0, description="Longest wait to fill a batch.")
    retry_initial_backoff_ms: int = Field(
        200, ge=1, description="First retry delay when Kafka/Redis is down."
    )
    retry_max_backoff_ms: int = Field(
        10_000, ge=1, description="Longest retry delay when Kafka/Redis is down."
    )
    startup_wait_seconds: float = Field(60.0, ge=0, description="How long a starting worker waits for Kafka.")
    redis_timeout_ms: int = Field(2_000, ge=1, description="Socket timeout of Redis calls.")
    broker_session_timeout_seconds: float = Field(30.0, gt=0, description="Consumer group session timeout.")
    broker_heartbeat_seconds: float = Field(3.0, gt=0, description="Consumer group heartbeat interval.")
    broker_rebalance_timeout_seconds: float = Field(60.0, gt=0, description="Group rebalance timeout.")
    broker_commit_interval_seconds: float = Field(1.0, gt=0, description="Commit interval of acked offsets.")

    # Ledger
    ns: str = Field("ec", description="Redis key namespace of the ledger.")
    ledger_ttl_seconds: int = Field(7 * 24 * 3600, ge=1, description="Lifetime of a ledger entry.")

    # Audit sink
    audit_db: str = Field("evidence-chain-audit.db", description="SQLite file of the tool_invocation table.")

    # The rules
    input: InputLimits = InputLimits()
    postprocess: PostprocessSettings = PostprocessSettings()
    projection: ToolProjectionLimits = ToolProjectionLimits()
    guard: GuardSettings = GuardSettings()
    dead_letters: DeadLetterSettings = DeadLetterSettings()

    def topic(self, name: str) -> str:
        """The full name of one of the SPEC's topics, with the prefix."""
        return f"{self.topic_prefix}{name}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return Settings()
