"""Every setting of evidence-chain in one frozen object, read from ``EC_*`` environment variables.

Nested limits use ``__``: ``EC_PROJECTION__MAX_ITEMS=8``, ``EC_POSTPROCESS__RETURN_N=5``.
Units are in the names (``ledger_ttl_seconds``, ``max_bytes``) as in aiokafka's settings. Secrets
(``EC_REDIS_URL`` and ``EC_AUDIT_DSN`` may hold a password) are ``SecretStr``: never printed, never logged.
Those two are read here as their drivers will read them (:mod:`streams.redaction`), so one that cannot
work stops the command at once with a message naming the variable and quoting none of its value.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from models.limits import (
    DeadLetterSettings,
    GuardSettings,
    InputLimits,
    PostprocessSettings,
    SemanticSettings,
    ToolProjectionLimits,
)
from models.vocab import Station, Topic
from streams.errors import ConfigurationError
from streams.redaction import check_postgres_dsn, check_redis_url

AGENT_NAMES: tuple[Station, ...] = (
    Station.POSTPROCESS,
    Station.PROJECT,
    Station.LEDGER,
    Station.GUARD,
    Station.SEMANTIC,
)
"""The agents a worker can run (each is the station of the same name); the semantic one only runs with
EC_SEMANTIC__MODE advise or enforce."""


class Settings(BaseSettings):
    """All settings; defaults are the SPEC's numbers and the local stack's addresses."""

    model_config = SettingsConfigDict(
        env_prefix="EC_", env_nested_delimiter="__", frozen=True, extra="ignore"
    )

    # Kafka
    kafka_bootstrap: str = Field("127.0.0.1:9092", description="Kafka bootstrap servers, comma-separated.")
    kafka_security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = Field(
        "PLAINTEXT", description="How every Kafka client connects."
    )
    kafka_sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = Field(
        "PLAIN", description="SASL mechanism (with SASL_PLAINTEXT / SASL_SSL)."
    )
    kafka_sasl_username: str | None = Field(None, description="SASL user name.")
    kafka_sasl_password: SecretStr | None = Field(None, description="SASL password; never printed.")
    kafka_ssl_cafile: str | None = Field(
        None, description="CA bundle that signs the brokers' certificates (SSL)."
    )
    kafka_ssl_certfile: str | None = Field(None, description="Client certificate for mutual TLS (SSL).")
    kafka_ssl_keyfile: str | None = Field(None, description="Key of the client certificate (SSL).")
    kafka_metadata_max_age_ms: int = Field(
        5_000,
        ge=100,
        description="How often each Kafka client that sends or reads refreshes its metadata: how soon it "
        "writes to a new leader after a broker dies (Faust's own producer, which sends nothing: hourly).",
    )

    # Redis
    redis_url: SecretStr = Field(
        SecretStr("redis://127.0.0.1:6379/0"),
        description="Redis URL; rediss:// for TLS; may hold a password (never printed).",
    )
    redis_password: SecretStr | None = Field(
        None, description="Redis password, if not in the URL; never printed."
    )
    redis_ssl_ca_file: str | None = Field(None, description="CA bundle for a rediss:// server.")
    redis_timeout_ms: int = Field(
        2_000,
        ge=1,
        description="Socket timeout of Redis calls. A ledger write pipeline that exceeds it is sent again "
        "in halves (a slow link).",
    )
    redis_durability: Literal["fsync", "replica", "none"] = Field(
        "fsync",
        description="When a ledger write counts as done: fsynced (fsync), on replicas (replica), replied.",
    )
    redis_replicas: int = Field(
        1,
        ge=1,
        description="Replicas that must acknowledge a ledger write (replica). Run one more replica than "
        "this: after a failover the promoted primary needs this many left, or every write is held.",
    )
    redis_wait_timeout_ms: int = Field(1_000, ge=1, description="Longest WAIT / WAITAOF for a ledger write.")
    redis_sentinels: Annotated[tuple[tuple[str, int], ...], NoDecode] = Field(
        (),
        description="Redis Sentinels, host:port comma-separated; set: every client writes to the primary "
        "they name (EC_REDIS_URL then gives only user, password, database and TLS).",
    )
    redis_sentinel_master: str = Field(
        "ec-ledger", min_length=1, description="The master name the sentinels monitor (EC_REDIS_SENTINELS)."
    )
    redis_sentinel_password: SecretStr | None = Field(
        None, description="Password of the sentinels themselves, if they require one; never printed."
    )

    # Signing (SPEC 3.7, 4.1)
    signing_key_file: str | None = Field(
        None,
        description="Ed25519 private key (PEM PKCS#8) the ledger agent signs entries and the guard verdicts "
        "with; unset: unsigned.",
    )
    trusted_keys_file: str | None = Field(
        None,
        description="Trusted public keys by role, one `ledger <64 hex>` or `guard <64 hex>` line each (# "
        "comments); entries verify only under ledger keys, verdicts and reports only under guard keys. Set: "
        "the guard judges an unsigned or untrusted entry LEDGER_PAYLOAD_TAMPERED and the client (gateway, "
        "tool servers) hands none out.",
    )

    # The Faust app
    app_id: str = Field("evidence-chain", description="Faust app id = the workers' consumer group.")
    agents: Annotated[frozenset[Station], NoDecode] = Field(
        frozenset(AGENT_NAMES),
        description="Agents this worker runs, comma-separated (default all; semantic only with "
        "EC_SEMANTIC__MODE advise or enforce).",
    )
    topic_prefix: str = Field("", description="Prepended to every topic name.")
    topic_partitions: int = Field(3, ge=1, description="Partitions of every topic (one count for all).")
    topic_replication_factor: int = Field(1, ge=1, description="Replication factor of created topics.")
    topic_max_message_bytes: int = Field(
        4 * 1024 * 1024, ge=1, description="max.message.bytes of created topics."
    )
    ledger_retention_ms: int = Field(
        -1, description="retention.ms of the ledger and judgements topics (-1 = keep forever)."
    )
    data_dir: str = Field(".local/faust", description="Where Faust keeps its per-app data directory.")
    web_enabled: bool = Field(False, description="Serve the worker's /metrics, /livez, /readyz on web_port.")
    web_port: int = Field(6066, description="Web port when web_enabled.")
    log_format: Literal["text", "json"] = Field(
        "text", description="Log lines for people (text) or one JSON object per line (json)."
    )
    tracing: bool = Field(
        False,
        description="OpenTelemetry spans per batch and record (the otel extra; OTEL_* configure export).",
    )
    stall_seconds: float = Field(
        120.0, gt=0, description="No progress this long while the input has lag fails /livez."
    )
    audit_sink_port: int = Field(
        9108, ge=0, le=65535, description="Port of the audit sink's /metrics, /livez, /readyz (0: none)."
    )
    batch_size: int = Field(
        100,
        ge=1,
        description="Most records an agent takes at once (× EC_BATCHES_IN_FLIGHT: what it holds in memory).",
    )
    batches_in_flight: int = Field(
        4,
        ge=1,
        description="Batches an agent may have awaiting the broker's acks while it takes the next "
        "(1: one at a time). Offsets are committed only past batches finished in order.",
    )
    stream_buffer_maxsize: int = Field(
        2500,
        ge=1,
        description="Records buffered per agent before fetching pauses (records, not bytes: lower it "
        "for records of hundreds of KB).",
    )
    consumer_fetch_bytes: int = Field(
        1 << 20,
        ge=1024,
        description="Bytes the worker's consumer fetches per partition per request; a larger record "
        "still comes whole (the broker returns a partition's first record batch whatever its size). "
        "Small enough that one fetch carries every hop's partitions, not one input's backlog.",
    )
    consumer_thread: bool = Field(
        False,
        description="Run Faust's Kafka consumer in a thread of its own (Faust's way); by default it runs on "
        "the agents' event loop (less CPU per fetch and commit: see docs/design.md).",
    )
    event_loop: Literal["uvloop", "asyncio"] = Field(
        "uvloop", description="The worker's event loop (uvloop moves large records with less CPU)."
    )
    producer_batch_bytes: int = Field(
        1 << 20,
        ge=1024,
        description="Producer batch size per partition (bytes); large records need large batches.",
    )
    producer_linger_ms: int = Field(
        0, ge=0, description="How long the producer waits to fill a batch (the agents send whole batches)."
    )
    producer_compression: Literal["none", "lz4", "zstd", "gzip", "snappy"] = Field(
        "none", description="Compression of produced batches."
    )
    retry_initial_backoff_ms: int = Field(
        200, ge=1, description="First retry delay when Kafka/Redis is down."
    )
    retry_max_backoff_ms: int = Field(
        10_000, ge=1, description="Longest retry delay when Kafka/Redis is down."
    )
    max_hold_seconds: float = Field(
        300.0, gt=0, description="Longest an outage may hold a batch before the worker exits non-zero."
    )
    startup_wait_seconds: float = Field(60.0, ge=0, description="How long a starting worker waits for Kafka.")
    broker_session_timeout_seconds: float = Field(30.0, gt=0, description="Consumer group session timeout.")
    broker_heartbeat_seconds: float = Field(3.0, gt=0, description="Consumer group heartbeat interval.")
    broker_rebalance_timeout_seconds: float = Field(60.0, gt=0, description="Group rebalance timeout.")
    broker_commit_interval_seconds: float = Field(
        1.0, gt=0, description="Longest wait before processed offsets are committed."
    )

    # Ledger
    ns: str = Field("ec", description="Redis key namespace of the ledger.")
    ledger_ttl_seconds: int = Field(7 * 24 * 3600, ge=1, description="Lifetime of a ledger entry.")

    # The agent's side: the client and the HTTP gateway
    gateway_timeout_ms: int = Field(
        10_000, ge=1, description="How long a lookup or check waits for its reply (client and gateway)."
    )
    gateway_host: str = Field(
        "127.0.0.1", description="Address the gateway listens on; not loopback needs EC_GATEWAY_TOKEN."
    )
    gateway_port: int = Field(8080, ge=0, le=65535, description="Port of the gateway.")
    gateway_token: SecretStr | None = Field(
        None, description="Bearer token every /v1 request must carry; never printed."
    )
    gateway_max_connections: int = Field(
        1024, ge=1, description="Connections the gateway serves at once; one more is answered 503 and closed."
    )
    gateway_max_connections_per_peer: int = Field(
        256,
        ge=1,
        description="Connections the gateway serves at once from one peer (then 503): all of loopback counts "
        "as one peer, an IPv6 client by its /64.",
    )
    gateway_header_timeout_seconds: float = Field(
        10.0, gt=0, description="How long a new gateway connection may take to send its request head."
    )
    gateway_body_timeout_seconds: float = Field(
        30.0, gt=0, description="How long a request body may take to arrive whole (then 408)."
    )
    gateway_keepalive_timeout_seconds: float = Field(
        15.0, gt=0, description="How long a gateway connection may sit idle before it is closed."
    )

    # The knowledge tool: py-rag behind KnowledgeSearchPort, and the MCP server (streams/search, streams/mcp)
    pyrag_url: str | None = Field(
        None,
        description="py-rag's search endpoint, POSTed {query, mode, filters} (lookup_knowledge, /v1/search); "
        "a password or query value in it is never shown.",
    )
    pyrag_token: SecretStr | None = Field(
        None, description="Bearer token sent to py-rag, if it needs one; never printed."
    )
    pyrag_timeout_ms: int = Field(5_000, ge=1, description="How long one py-rag request may take.")
    pyrag_attempts: int = Field(
        3,
        ge=1,
        description="Tries of one search on a connection error, a timeout or a 5xx (backoff between).",
    )
    mcp_run_id: str | None = Field(
        None,
        description="The run of `evidence-chain mcp` (stdio: the process's run; --http: every session's, "
        "each with its own ids and attempts); unset: generated (per session over --http).",
    )
    mcp_host: str = Field(
        "127.0.0.1",
        description="Address of `evidence-chain mcp --http`; not loopback needs EC_GATEWAY_TOKEN.",
    )
    mcp_port: int = Field(8081, ge=0, le=65535, description="Port of `evidence-chain mcp --http`.")
    mcp_max_sessions: int = Field(
        1000, ge=1, description="MCP sessions open at once over --http; one more is answered 503."
    )
    mcp_max_sessions_per_peer: int = Field(
        100,
        ge=1,
        description="MCP sessions open at once from one client over --http, so one client cannot take "
        "them all: all of loopback counts as one client, an IPv6 client by its /64. One more closes the "
        "client's least recently used session that is not in use (see EC_MCP_SESSION_IN_USE_SECONDS), "
        "or is answered 503 when every one is.",
    )
    mcp_unused_session_seconds: float = Field(
        30.0,
        gt=0,
        description="An MCP session whose client has asked nothing since initialize is closed after this "
        "long.",
    )
    mcp_session_in_use_seconds: float = Field(
        30.0,
        gt=0,
        description="An MCP session with a request in flight, or one that asked something within this "
        "long, is in use: a new session at a cap never closes it (it is answered 503 instead). A session "
        "that asked nothing but initialize is never in use once its opening request is answered.",
    )
    mcp_session_idle_seconds: float = Field(
        1800.0, gt=0, description="An MCP session with no request in flight this long is closed."
    )

    # Audit sink
    audit_db: str = Field("evidence-chain-audit.db", description="SQLite file of the tool_invocation table.")
    audit_dsn: SecretStr | None = Field(
        None,
        description="PostgreSQL database of the audit tables instead of audit_db: "
        "postgresql://user:pass@host:port/db (the psycopg package); never printed.",
    )

    # The rules
    input: InputLimits = InputLimits()
    postprocess: PostprocessSettings = PostprocessSettings()
    projection: ToolProjectionLimits = ToolProjectionLimits()
    guard: GuardSettings = GuardSettings()
    semantic: SemanticSettings = SemanticSettings()
    dead_letters: DeadLetterSettings = DeadLetterSettings()

    @field_validator("agents", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            names = {part.strip() for part in value.split(",") if part.strip()}
            return frozenset(names) if names else frozenset(AGENT_NAMES)
        return value

    @field_validator("agents")
    @classmethod
    def _some_agent(cls, value: frozenset[Station]) -> frozenset[Station]:
        if not value or Station.DEAD_LETTER in value:
            raise ValueError(f"choose agents from {', '.join(AGENT_NAMES)}")
        return value

    @field_validator("redis_sentinels", mode="before")
    @classmethod
    def _host_ports(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(parse_host_port(part) for part in value.split(",") if part.strip())
        return value

    @field_validator("audit_dsn")
    @classmethod
    def _postgres_dsn(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        if not value.get_secret_value().strip():
            return None  # EC_AUDIT_DSN= (empty) means SQLite, as if it were unset
        # Read as libpq reads it, here rather than at connect: libpq's messages quote the password,
        # and a DSN that cannot work is a setting to fix, not a database to wait for.
        check_postgres_dsn(value.get_secret_value())  # its messages never quote the value
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: SecretStr) -> SecretStr:
        check_redis_url(value.get_secret_value())  # redis-py's and urllib's messages may quote it
        return value

    @property
    def running_agents(self) -> frozenset[Station]:
        """The agents this worker starts: ``agents``, less the semantic one while its mode is off."""
        if self.semantic.mode == "off":
            return self.agents - {Station.SEMANTIC}
        return self.agents

    def topic(self, name: Topic) -> str:
        """The full name of one of the SPEC's topics, with the prefix."""
        return f"{self.topic_prefix}{name}"


def parse_host_port(text: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` too) as a pair.

    Raises:
        ValueError: no host, or a port that is not 1-65535; the message quotes the entry.
    """
    host, _, port = text.strip().rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text.strip()!r} is not host:port (e.g. 127.0.0.1:26379)")
    return host, int(port)


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment (and ``overrides``), as a :class:`ConfigurationError` when invalid.

    Raises:
        ConfigurationError: a variable has a value that cannot work; the message names it.
    """
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"EC_{'__'.join(str(p) for p in error['loc']).upper()}: {error['msg']}" for error in exc.errors()
        )
        raise ConfigurationError(f"invalid settings: {problems}") from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment (for the command line).

    Raises:
        ConfigurationError: a variable has a value that cannot work.
    """
    return load_settings()
