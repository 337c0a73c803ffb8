"""Anchor for the stream benchmarks: the chain raw-hits → ledger as a Quix Streams application.

One ``Application`` (librdkafka underneath) and one StreamingDataFrame over ``<prefix>raw-hits``,
consumed in the consumer group ``EC_APP_ID`` from the earliest offset, at-least-once. Per record it
runs the very station functions the worker runs (postprocess → project → ledger), writes the ledger
entry once with a synchronous Redis client through the worker's own Lua script (one round trip per
record, durable as ``EC_REDIS_DURABILITY`` asks, as ``RedisLedgerStore`` does), and produces the
``projected``, ``ledger`` and ``dead-letters`` messages with ``to_topic``: Quix flushes its producer
before it commits offsets. ``postprocessed`` and audit records are not produced: the stations hand
each other their outputs in memory. The topics must exist (``benchmarks/harness.py`` creates them).
It runs until SIGTERM or SIGINT, then commits what it finished and exits 0.

Quix Streams is no dependency of the product: it lives in its own virtualenv.

    make bench-quix-venv
    EC_TOPIC_PREFIX=... EC_APP_ID=... EC_NS=... .local/bench/quix-venv/bin/python benchmarks/anchor_quix.py
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import redis
from quixstreams import Application, message_context
from quixstreams.kafka.configuration import ConnectionConfig
from quixstreams.models.serializers import SerializationContext, Serializer

from models.ledger import LedgerEntry, WriteResult
from models.vocab import LedgerOutcome, Station, Topic
from streams.ledger.keys import ledger_key, owners_key
from streams.ledger.redis import _WRITE_ONCE, from_hash, packed, to_hash
from streams.messages import Headers, Output, Record
from streams.pipeline import (
    OUTPUT_TOPIC,
    Outcome,
    PendingWrite,
    StationRules,
    emissions,
    finish_write,
    run_station,
)
from streams.settings import Settings, load_settings
from streams.worker.runner import wall_clock

STATIONS = (Station.POSTPROCESS, Station.PROJECT, Station.LEDGER)
PRODUCED = (Topic.PROJECTED, Topic.LEDGER, Topic.DEAD_LETTERS)
"""The topics the anchor produces; the worker's other messages stay in memory or are left out."""


class Ledger:
    """The write-once ledger over a synchronous client: the worker's script and hash layout."""

    def __init__(self, settings: Settings) -> None:
        password = settings.redis_password.get_secret_value() if settings.redis_password else None
        timeout = settings.redis_timeout_ms / 1000
        self.client = redis.Redis.from_url(
            settings.redis_url.get_secret_value(),
            password=password,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
        )
        self.script = self.client.register_script(_WRITE_ONCE)
        self.settings = settings
        self.wait = self._durability_wait()

    def _durability_wait(self) -> list[Any] | None:
        """The command that ends each write so it is as durable as ``EC_REDIS_DURABILITY`` asks."""
        s = self.settings
        if s.redis_durability == "replica":
            return ["WAIT", s.redis_replicas, s.redis_wait_timeout_ms]
        if s.redis_durability == "none":
            return None
        version = str(self.client.info("server")["redis_version"])
        if tuple(int(p) for p in version.split(".")[:2]) >= (7, 2):
            return ["WAITAOF", 1, 0, s.redis_wait_timeout_ms]
        config = self.client.config_get("append*")
        if config.get("appendonly") != "yes" or config.get("appendfsync") != "always":
            raise SystemExit(
                f"EC_REDIS_DURABILITY=fsync needs Redis 7.2+ or appendfsync always (Redis {version})"
            )
        return None  # Redis fsyncs every write before it replies

    def _acknowledged(self, reply: Any) -> bool:
        """Whether the wait's reply says enough replicas (WAIT) or the local AOF (WAITAOF) hold the write."""
        if self.wait is not None and self.wait[0] == "WAIT":
            return int(reply) >= self.settings.redis_replicas
        return bool(reply) and int(reply[0]) >= 1

    def write_once(self, entry: LedgerEntry) -> WriteResult:
        """Write one entry once and wait for durability, in one round trip."""
        key = ledger_key(self.settings.ns, entry["run_id"], entry["tool_call_id"])
        fields = to_hash(entry)
        args = [self.settings.ledger_ttl_seconds * 1000, entry["run_id"], 0, 0, packed(fields)]
        with self.client.pipeline(transaction=False) as pipe:
            self.script(
                keys=[key, owners_key(self.settings.ns, entry["tool_call_id"])], args=args, client=pipe
            )
            if self.wait is not None:
                pipe.execute_command(*self.wait)
            replies = pipe.execute()
        if self.wait is not None and not self._acknowledged(replies.pop()):
            raise RuntimeError(f"{self.wait[0]}: the ledger write of {key} was not made durable in time")
        outcome, flat = LedgerOutcome(replies[0][0].decode()), replies[0][1]
        stored: dict[Any, Any] = dict(zip(flat[0::2], flat[1::2], strict=True))
        if outcome == LedgerOutcome.WRITTEN:  # the script returns the stamps it added to the entry's fields
            stored = {**fields, **{k.decode(): v.decode() for k, v in stored.items()}}
        return WriteResult(outcome, from_hash(stored), key)


def chain(record: Record, rules: StationRules, ledger: Ledger) -> list[Output]:
    """The stations in turn on one raw-hits record, each fed the previous one's main output."""
    done: list[tuple[Outcome[Any], Record]] = []
    consumed = record
    for station in STATIONS:
        step = run_station(station, consumed, rules)
        if isinstance(step, PendingWrite):
            step = finish_write(step, ledger.write_once(step.entry), consumed)
        assert isinstance(step, Outcome), "only the guard reads the ledger"
        done.append((step, consumed))
        value = next((o.value for o in step.outputs if o.topic == OUTPUT_TOPIC[station]), None)
        if value is None:
            break
        consumed = replace(record, value=value)
    processed_at = wall_clock()
    return [
        m
        for outcome, consumed in done
        for m in emissions(outcome, consumed, rules, processed_at)
        if m.topic in PRODUCED
    ]


class OutputValue(Serializer):
    """Serializes an :class:`Output` as its encoded value (topic, key and headers are set before)."""

    def __call__(self, value: Output, ctx: SerializationContext) -> bytes:
        return value.value


def connection(settings: Settings) -> ConnectionConfig:
    """The broker address and the ``EC_KAFKA_*`` security settings, as librdkafka takes them."""
    options: dict[str, Any] = {
        "bootstrap_servers": settings.kafka_bootstrap,
        "security_protocol": settings.kafka_security_protocol,
    }
    if settings.kafka_security_protocol.startswith("SASL"):
        password = settings.kafka_sasl_password
        options["sasl_mechanism"] = settings.kafka_sasl_mechanism
        options["sasl_username"] = settings.kafka_sasl_username
        options["sasl_password"] = password.get_secret_value() if password else None
    if settings.kafka_security_protocol.endswith("SSL"):
        options["ssl_ca_location"] = settings.kafka_ssl_cafile
        options["ssl_certificate_location"] = settings.kafka_ssl_certfile
        options["ssl_key_location"] = settings.kafka_ssl_keyfile
    return ConnectionConfig(**{k: v for k, v in options.items() if v is not None})


def application(settings: Settings) -> Application:
    """The app: at-least-once, committing as often as the worker, clients sized for the largest record."""
    return Application(
        broker_address=connection(settings),
        consumer_group=settings.app_id,
        auto_offset_reset="earliest",
        processing_guarantee="at-least-once",
        commit_interval=settings.broker_commit_interval_seconds,
        auto_create_topics=False,
        state_dir=Path(settings.data_dir) / "quix-state",  # the app keeps none, but makes the folder
        consumer_extra_config={"max.partition.fetch.bytes": 2 * settings.topic_max_message_bytes},
        producer_extra_config={
            "acks": "all",
            "message.max.bytes": settings.topic_max_message_bytes + 64 * 1024,
        },
    )


def build(app: Application, settings: Settings, ledger: Ledger) -> None:
    """raw-hits → the chain per record → one message per output, each to its own topic."""
    raw = app.topic(settings.topic(Topic.RAW_HITS), value_deserializer="bytes", key_deserializer="bytes")
    rules = StationRules.from_settings(settings)  # once, as the worker builds them
    targets = {
        topic: app.topic(settings.topic(topic), value_serializer=OutputValue(), key_serializer="bytes")
        for topic in PRODUCED
    }

    def run_chain(value: bytes, key: bytes | None, timestamp: int, headers: Any) -> list[Output]:
        where = message_context()
        own: Headers = tuple((k, v) for k, v in headers or () if isinstance(v, bytes))
        record = Record(where.topic, where.partition, where.offset, timestamp, key, value, own)
        return chain(record, rules, ledger)

    sdf = app.dataframe(raw).apply(run_chain, expand=True, metadata=True)
    sdf = sdf.set_headers(lambda out, *_: list(out.headers))
    sdf = sdf.set_timestamp(lambda *_: time.time_ns() // 1_000_000)  # produced now, as the worker's are
    sdf.to_topic(lambda out, *_: targets[out.topic], key=lambda out: out.key)


def main() -> None:
    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
    settings = load_settings()
    app = application(settings)
    build(app, settings, Ledger(settings))
    app.run()


if __name__ == "__main__":
    main()
