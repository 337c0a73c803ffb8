"""Fakes with the interfaces of the real edges: a Kafka sink and the Redis ledger (in memory)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from models.events import Origin
from models.vocab import Station
from streams import codec
from streams.errors import KafkaUnavailable
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Output, Record
from streams.pipeline import Outcome
from streams.settings import Settings
from streams.worker.runner import BatchRunner, RunnerConfig
from tests.golden import GOLDEN


@dataclass(frozen=True)
class Sent:
    """One message as the broker got it: the full topic name (prefix included)."""

    topic: str
    key: bytes | None
    value: bytes
    headers: tuple[tuple[str, bytes], ...]


class FakeSink:
    """Collects delivered messages; can refuse the first ``failures`` sends like a broker that is down."""

    def __init__(self, failures: int = 0, prefix: str = "t.") -> None:
        self.failures = failures
        self.prefix = prefix
        self.attempts = 0
        self.messages: list[Sent] = []

    async def send_all(self, messages: Sequence[Output]) -> None:
        self.attempts += 1
        if self.failures:
            self.failures -= 1
            raise KafkaUnavailable("fake broker down")
        self.messages.extend(Sent(f"{self.prefix}{m.topic}", m.key, m.value, m.headers) for m in messages)

    def on(self, topic: str) -> list[Sent]:
        return [m for m in self.messages if m.topic == topic]

    def raw(self, topic: str) -> list[bytes]:
        return [m.value for m in self.on(topic)]

    def values(self, topic: str) -> list[dict]:
        return [codec.loads(m.value) for m in self.on(topic)]


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


def origin_of(topic: str, partition: int, offset: int, timestamp: int | None) -> Origin:
    return {"topic": topic, "partition": partition, "offset": offset, "timestamp": timestamp}


async def handle(
    station: Station, settings: Settings, sink: Any, batch: list[Record], store: Any = None
) -> list[Outcome[Any]]:
    """One batch through the station's runner, as its agent runs it."""
    return await BatchRunner(station, RunnerConfig.from_settings(settings), sink, store).run(batch)


async def run_chain(
    settings: Settings, raw: Sequence[bytes], store: MemoryLedgerStore | None = None
) -> tuple[FakeSink, MemoryLedgerStore]:
    """``t.raw-hits`` values → postprocess → project → ledger, each hop consuming the previous hop's output;
    the sink that got every hop's messages, and the ledger (a fresh one unless ``store``)."""
    sink, ledger = FakeSink(), store if store is not None else MemoryLedgerStore()
    await handle(Station.POSTPROCESS, settings, sink, records("t.raw-hits", raw))
    await handle(Station.PROJECT, settings, sink, records("t.postprocessed", sink.raw("t.postprocessed")))
    await handle(Station.LEDGER, settings, sink, records("t.projected", sink.raw("t.projected")), ledger)
    return sink, ledger


def golden_lines(*parts: str) -> list[bytes]:
    return [line for line in GOLDEN.joinpath(*parts).read_bytes().split(b"\n") if line]
