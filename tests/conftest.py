"""Fixtures every tier may use: a Kafka broker and Redis servers of the tests' own (``tests.services``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.services import FaultKafka, FaultRedis

HERE = Path(__file__).resolve().parent
FAULTS = HERE / "faults"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under tests/faults carries the ``faults`` marker and a time bound."""
    for item in items:
        if item.path.is_relative_to(FAULTS):
            item.add_marker(pytest.mark.faults)
            item.add_marker(pytest.mark.timeout(420))


@pytest.fixture(scope="session")
def fault_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultKafka]:
    """The tests' own broker (PLAINTEXT and SASL_PLAINTEXT listeners), started once per session."""
    broker = FaultKafka(tmp_path_factory.mktemp("fault-kafka"))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop(kill=True)


@pytest.fixture
def fault_redis(tmp_path: Path) -> Iterator[FaultRedis]:
    """A Redis of this test's own (appendfsync always), which it may kill and restart."""
    server = FaultRedis(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.stop()
