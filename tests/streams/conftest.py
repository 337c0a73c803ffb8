"""Fakes with the interfaces of the real edges: a Kafka sink and the Redis ledger (in memory)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from streams import json
from streams.errors import KafkaUnavailable
from streams.ledger_store import MemoryLedgerStore
from streams.runtime import Outbound, Record
from streams.settings import Settings

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"


class FakeSink:
    """Collects delivered messages; can refuse the first ``failures`` sends like a broker that is down."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.attempts = 0
        self.messages: list[Outbound] = []

    async def send_all(self, messages: Sequence[Outbound]) -> None:
        self.attempts += 1
        if self.failures:
            self.failures -= 1
            raise KafkaUnavailable("fake broker down")
        self.messages.extend(messages)

    def on(self, topic: str) -> list[Outbound]:
        return [m for m in self.messages if m.topic == topic]

    def values(self, topic: str) -> list[dict]:
        return [json.loads(m.value) for m in self.on(topic)]


@pytest.fixture
def settings() -> Settings:
    return Settings(topic_prefix="t.", retry_initial_backoff_ms=1, retry_max_backoff_ms=5)


@pytest.fixture
def sink() -> FakeSink:
    return FakeSink()


@pytest.fixture
def store() -> MemoryLedgerStore:
    return MemoryLedgerStore()


def records(topic: str, lines: Sequence[bytes], partition: int = 0, start: int = 0) -> list[Record]:
    """Consumed records with deterministic coordinates (timestamp = 1_700_000_000_000 + offset)."""
    return [
        Record(topic, partition, start + i, 1_700_000_000_000 + start + i, None, line)
        for i, line in enumerate(lines)
    ]


def golden_lines(*parts: str) -> list[bytes]:
    return [line for line in GOLDEN.joinpath(*parts).read_bytes().split(b"\n") if line]
