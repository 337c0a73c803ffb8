"""Real Kafka and real Redis for the integration tier, found once per session.

Where they come from, first match wins (per service):
1. ``EC_KAFKA_BOOTSTRAP`` / ``EC_REDIS_URL`` in the environment: an existing broker or server.
2. A Docker engine that answers: testcontainers starts ``apache/kafka`` (KRaft) and ``redis:7``.
3. The local stack that ``make up`` starts: ``127.0.0.1:9092`` and ``redis://127.0.0.1:6379/0``.

A service that does not answer fails the tests that need it; these tests are never skipped
(STYLE: "These run in CI; they are never skipped there").
Every test gets its own topic/key prefix (``unique_prefix``) and Faust app id (``app_id``); a module that
asks for ``stack`` gets a worker of its own on a prefix of its own (``STACK_SETTINGS`` in the module, a
dict, adds to the settings its clients use).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
import redis.asyncio as aioredis
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from tests.integration.audit_db import postgres_admin, target  # noqa: F401 - the audit tests' fixtures
from tests.integration.helpers import ISSUED_PREFIXES, Stack, new_prefix, worker_stack
from tests.lanes import longest_first
from tests.services import SINGLE_NODE, docker_env

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]

# Keep in step with deploy/local/kafka/pom.xml and docker-compose.yml.
KAFKA_IMAGE = "apache/kafka:4.1.0"
REDIS_IMAGE = "redis:7"
LOCAL_KAFKA_BOOTSTRAP = "127.0.0.1:9092"
LOCAL_REDIS_URL = "redis://127.0.0.1:6379/0"
DOCKER_START_TIMEOUT_S = 120.0

Source = Literal["env", "docker", "local"]

LONGEST_FIRST = (
    # Seconds of each file on the two-core EPYC of 2026-12-07, for make test's three lanes
    # (tests/lanes.py): collected in name order, test_mcp_sessions.py started last and ran alone.
    "test_mcp_sessions.py",  # 138, most of it ten thousand sessions opened from one address
    "test_security.py",  # 90
    "test_audit_sink.py",  # 84
    "test_delivery.py",  # 84
    "test_semantic.py",  # 52
    "test_serve.py",  # 45
    "test_reset.py",  # 42
    "test_serve_evidence.py",  # 38
    "test_receipt_run.py",  # 37
    "test_replay.py",  # 37
)
"""Files not named run after these, in their usual order."""


@dataclass(frozen=True)
class Endpoint:
    """Where a service is and who runs it."""

    source: Source
    address: str


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under tests/integration carries the ``integration`` marker; the longest files first."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.integration)
    longest_first(items, HERE, LONGEST_FIRST)


# --- probes -------------------------------------------------------------------------------------------


async def _kafka_error(bootstrap: str, timeout_s: float) -> str | None:
    """None when the broker answers a metadata request, else what went wrong."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=int(timeout_s * 1000))
    try:
        await asyncio.wait_for(admin.start(), timeout_s)
        cluster = await asyncio.wait_for(admin.describe_cluster(), timeout_s)
        if not cluster["brokers"]:
            return "the metadata response lists no broker"
        return None
    except Exception as exc:
        return _describe(exc)
    finally:
        await admin.close()


async def _redis_error(url: str, timeout_s: float) -> str | None:
    """None when the server answers PING, else what went wrong."""
    client = aioredis.Redis.from_url(url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s)
    try:
        if await client.ping() is not True:
            return "PING did not answer PONG"
        return None
    except Exception as exc:
        return _describe(exc)
    finally:
        await client.aclose()


def _wait_until_ready(probe: Callable[[], Coroutine[Any, Any, str | None]], timeout_s: float) -> str | None:
    deadline = time.monotonic() + timeout_s
    while True:
        error = asyncio.run(probe())
        if error is None or time.monotonic() >= deadline:
            return error
        time.sleep(1.0)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return text if text.startswith(type(exc).__name__) else f"{type(exc).__name__}: {text}"


def _unavailable(what: str, where: str, source: Source, error: str, env_var: str) -> None:
    if source == "env":
        hint = f"check the server {env_var} names, or unset {env_var} to use the local stack (`make up`)"
    elif source == "docker":
        hint = "check the Docker engine, or set EC_KAFKA_BOOTSTRAP / EC_REDIS_URL, or run `make up`"
    else:
        hint = "run `make up` (see docs/local-stack.md), then `make status`"
    ci = " [CI]" if os.environ.get("CI", "").lower() == "true" else ""
    pytest.fail(
        f"{what} at {where} does not answer ({error}).{ci} The integration tests need it: {hint}.",
        pytrace=False,
    )


# --- docker -------------------------------------------------------------------------------------------


def _docker_answers() -> bool:
    """True when a Docker engine answers. Uses the CLI: the Docker SDK leaks a socket when it fails."""
    if shutil.which("docker") is None:
        return bool(os.environ.get("DOCKER_HOST")) or Path("/var/run/docker.sock").exists()
    try:
        done = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, timeout=15, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@pytest.fixture(scope="session")
def docker_available() -> bool:
    return not (os.environ.get("EC_KAFKA_BOOTSTRAP") and os.environ.get("EC_REDIS_URL")) and _docker_answers()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_kafka_container() -> tuple[Any, str]:
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.docker_client import DockerClient

    host = DockerClient().host()
    # The advertised listener must be the address the tests dial, so the host port is chosen up front
    # and mapped to the same port inside the container.
    port = _free_port()
    container = DockerContainer(KAFKA_IMAGE).with_bind_ports(port, port)
    properties = {
        **SINGLE_NODE,
        "listeners": f"PLAINTEXT://0.0.0.0:{port},CONTROLLER://0.0.0.0:9093",
        "advertised.listeners": f"PLAINTEXT://{host}:{port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "controller.quorum.voters": "1@localhost:9093",
    }
    for name, value in docker_env(properties).items():
        container = container.with_env(name, value)
    container.start()
    return container, f"{host}:{port}"


def _start_redis_container() -> tuple[Any, str]:
    from testcontainers.core.container import DockerContainer

    container = (
        DockerContainer(REDIS_IMAGE).with_exposed_ports(6379).with_command("redis-server --appendonly yes")
    )
    container.start()
    return container, f"redis://{container.get_container_host_ip()}:{container.get_exposed_port(6379)}/0"


async def _topics(bootstrap: str) -> set[str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000)
    await admin.start()
    try:
        return set(await admin.list_topics())
    finally:
        await admin.close()


async def delete_topics_of(bootstrap: str, prefixes: Collection[str]) -> list[str]:
    """Delete every topic named under one of ``prefixes`` (the workers the tests start create their
    prefix's topics and Faust's own); the names deleted."""
    starts = tuple(prefixes)
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=60_000)
    await admin.start()
    try:
        made = sorted(t for t in await admin.list_topics() if starts and t.startswith(starts))
        for first in range(0, len(made), 200):
            await admin.delete_topics(made[first : first + 200], timeout_ms=60_000)
    finally:
        await admin.close()
    return made


# --- fixtures -----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def kafka_endpoint(docker_available: bool) -> Iterator[Endpoint]:
    """The Kafka broker for this session (see the module docstring for the order)."""
    container = None
    if bootstrap := os.environ.get("EC_KAFKA_BOOTSTRAP"):
        endpoint, wait_s = Endpoint("env", bootstrap), 10.0
    elif docker_available:
        container, bootstrap = _start_kafka_container()
        endpoint, wait_s = Endpoint("docker", bootstrap), DOCKER_START_TIMEOUT_S
    else:
        endpoint, wait_s = Endpoint("local", LOCAL_KAFKA_BOOTSTRAP), 10.0
    try:
        error = _wait_until_ready(lambda: _kafka_error(endpoint.address, 5.0), wait_s)
        if error is not None:
            _unavailable("Kafka", endpoint.address, endpoint.source, error, "EC_KAFKA_BOOTSTRAP")
        yield endpoint
        # Clean up what the tests started: a broker that keeps every run's topics slows down (on one that
        # held 3,879 from earlier runs, the benchmarks' one-hop pipeline drained about a sixth slower).
        # Only this session's prefixes: another session on the same broker keeps its topics.
        try:
            asyncio.run(delete_topics_of(endpoint.address, ISSUED_PREFIXES))
        except Exception as exc:  # noqa: BLE001 - the tests ran; a broker that will not delete is told, not failed
            print(f"\nleft this session's test topics on {endpoint.address}: {type(exc).__name__}: {exc}")
    finally:
        if container is not None:
            container.stop()


@pytest.fixture(scope="session")
def redis_endpoint(docker_available: bool) -> Iterator[Endpoint]:
    """The Redis server for this session (see the module docstring for the order)."""
    container = None
    if url := os.environ.get("EC_REDIS_URL"):
        # The URL may carry a password: show only where it points.
        endpoint, where, wait_s = Endpoint("env", url), "EC_REDIS_URL", 10.0
    elif docker_available:
        container, url = _start_redis_container()
        endpoint, where, wait_s = Endpoint("docker", url), url, DOCKER_START_TIMEOUT_S
    else:
        endpoint, where, wait_s = Endpoint("local", LOCAL_REDIS_URL), LOCAL_REDIS_URL, 10.0
    try:
        error = _wait_until_ready(lambda: _redis_error(endpoint.address, 3.0), wait_s)
        if error is not None:
            _unavailable("Redis", where, endpoint.source, error, "EC_REDIS_URL")
        yield endpoint
    finally:
        if container is not None:
            container.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_endpoint: Endpoint) -> str:
    """``host:port`` of a Kafka broker that answers."""
    return kafka_endpoint.address


@pytest.fixture(scope="session")
def redis_url(redis_endpoint: Endpoint) -> str:
    """``redis://`` URL of a Redis server that answers."""
    return redis_endpoint.address


@pytest.fixture(scope="module")
def stack(
    request: pytest.FixtureRequest,
    kafka_bootstrap: str,
    redis_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Stack]:
    """One worker for the module's tests, on topics, an app id and a namespace of the module's own
    (:func:`tests.integration.helpers.worker_stack`), with the module's ``STACK_SETTINGS`` if it has any."""
    extra: dict[str, Any] = getattr(request.module, "STACK_SETTINGS", {})
    logs = tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])
    with worker_stack(kafka_bootstrap, redis_url, logs, **extra) as running:
        yield running


@pytest.fixture
def unique_prefix() -> str:
    """A prefix for this test's topics, groups, transactional ids and Redis keys: ``t-<8 hex>-``."""
    return new_prefix()


@pytest.fixture
def app_id(unique_prefix: str) -> str:
    """A Faust app id of this test's own, so its consumer group and changelogs are its own."""
    return f"{unique_prefix}evidence-chain"


@pytest.fixture
async def kafka_admin(kafka_bootstrap: str) -> AsyncIterator[AIOKafkaAdminClient]:
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap, request_timeout_ms=30_000)
    await admin.start()
    try:
        yield admin
    finally:
        await admin.close()


CreateTopic = Callable[..., Awaitable[str]]


async def _until_described(
    admin: AIOKafkaAdminClient, topic: str, partitions: int, seconds: float = 10.0
) -> None:
    """Wait until the broker's metadata has ``topic`` with all its partitions: CreateTopics answers
    when the controller made it, and a describe right after can still say UNKNOWN_TOPIC_OR_PARTITION."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        [described] = await admin.describe_topics([topic])
        if described["error_code"] == 0 and len(described["partitions"]) == partitions:
            return
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"topic {topic}: not {partitions} partitions after {seconds:g}s: {described}")
        await asyncio.sleep(0.1)


@pytest.fixture
async def create_topic(kafka_admin: AIOKafkaAdminClient, unique_prefix: str) -> AsyncIterator[CreateTopic]:
    """``await create_topic("name", partitions=3, configs={...})`` creates ``<unique_prefix>name``.

    Every topic created through it is deleted when the test ends.
    """
    created: list[str] = []

    async def create(name: str, partitions: int = 1, configs: dict[str, str] | None = None) -> str:
        topic = f"{unique_prefix}{name}"
        response = await kafka_admin.create_topics(
            [NewTopic(topic, num_partitions=partitions, replication_factor=1, topic_configs=configs or {})]
        )
        errors = [e for e in response.to_object()["topic_errors"] if e["error_code"] != 0]
        if errors:
            pytest.fail(f"creating topic {topic} failed: {errors}")
        created.append(topic)
        await _until_described(kafka_admin, topic, partitions)
        return topic

    try:
        yield create
    finally:
        if created:
            response = await kafka_admin.delete_topics(created)
            errors = [e for e in response.to_object()["topic_error_codes"] if e["error_code"] != 0]
            if errors:
                pytest.fail(f"deleting topics {created} failed: {errors}")
