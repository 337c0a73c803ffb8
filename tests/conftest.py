"""Fixtures every tier may use: a Kafka broker and Redis servers of the tests' own (``tests.services``),
and, outside the service tiers, an environment without the caller's ``EC_*`` settings."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lanes import JustInTime
from tests.services import FaultKafka, FaultRedis, KafkaCluster

HERE = Path(__file__).resolve().parent
FAULTS = HERE / "faults"
INTEGRATION = HERE / "integration"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under tests/faults carries the ``faults`` marker and a time bound."""
    for item in items:
        if item.path.is_relative_to(FAULTS):
            item.add_marker(pytest.mark.faults)
            item.add_marker(pytest.mark.timeout(420))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> JustInTime | None:
    """``--dist loadfile`` hands out files just in time (``tests/lanes.py``)."""
    return JustInTime(config, log) if config.getoption("dist", None) == "loadfile" else None


def _needs_services(path: Path) -> bool:
    """The service tiers keep the caller's settings: ``EC_KAFKA_BOOTSTRAP`` and ``EC_REDIS_URL`` say
    which broker and Redis they use (``tests/integration/conftest.py``)."""
    return path.is_relative_to(INTEGRATION) or path.is_relative_to(FAULTS)


@contextlib.contextmanager
def _without_caller_settings() -> Iterator[None]:
    saved = {name: value for name, value in os.environ.items() if name.startswith("EC_")}
    for name in saved:
        del os.environ[name]
    try:
        yield
    finally:
        os.environ.update(saved)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    """A module that needs no service is imported without the developer's ``EC_*`` settings (some
    build their ``Settings()`` at import)."""
    if isinstance(collector, pytest.Module) and not _needs_services(collector.path):
        with _without_caller_settings():
            return (yield)
    return (yield)


@pytest.fixture(autouse=True)
def _no_caller_settings(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that needs no service sees the SPEC's defaults and what it sets itself, never the
    developer's ``EC_*`` settings."""
    if _needs_services(request.node.path):
        return
    for name in [name for name in os.environ if name.startswith("EC_")]:
        monkeypatch.delenv(name)


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


@pytest.fixture(scope="session")
def kafka_cluster() -> Iterator[KafkaCluster]:
    """``make up-cluster``'s three brokers, started when down (once per session); what this session
    started is stopped at its end, a cluster the developer had running is left running."""
    cluster = KafkaCluster()
    was_running = cluster.running()
    try:
        cluster.up()
    except BaseException:
        if not was_running:  # nodes it started must not outlive a failed start
            cluster.down()
        raise
    try:
        yield cluster
    finally:
        if not was_running:
            cluster.down()
        else:
            cluster.up()  # the nodes a test killed come back
