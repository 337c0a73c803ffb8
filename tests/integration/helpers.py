"""Helpers for the integration tier: a worker subprocess, a module's stack (its topics and a worker),
publishing, reading topics, a cuttable TCP proxy."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaProducer

from models.ledger import LEDGER_ENTRY_FIELDS
from models.vocab import Topic
from streams import codec
from streams.kafka.admin import ensure_topics
from streams.kafka.ranges import read_topic as kafka_read_topic
from streams.ledger.redis import RedisLedgerStore
from streams.settings import Settings
from tests.console import CLI as CLI  # re-exported: the integration modules take it from here
from tests.console import clean_env
from tests.contracts import validate
from tests.golden import GOLDEN


def golden_lines(*parts: str) -> list[bytes]:
    return [line for line in GOLDEN.joinpath(*parts).read_bytes().split(b"\n") if line]


def redis_store(
    redis_url: str, ns: str, ttl_seconds: int = 3600, durability: str = "none"
) -> RedisLedgerStore:
    """A ledger store on ``redis_url`` under namespace ``ns`` (durability ``none``: the tests seed data)."""
    settings = Settings(
        redis_url=redis_url, ns=ns, ledger_ttl_seconds=ttl_seconds, redis_durability=durability
    )
    return RedisLedgerStore.from_settings(settings)


PRODUCED = tuple(t for t in Topic if t not in (Topic.RAW_HITS, Topic.DIAGNOSIS_DRAFTS))
"""The topics our agents produce: every message a test reads from one is checked against its schema."""


def checked(topic: str, values: list[bytes]) -> list[bytes]:
    """``values`` of a full topic name, each validated against ``docs/schemas`` when we produce it."""
    kind = next((t for t in PRODUCED if topic.endswith(f"-{t.value}") or topic.endswith(f".{t.value}")), None)
    if kind is not None:
        for value in values:
            validate(kind, value)
    return values


async def read_topic(kafka: str, topic: str, **options: Any) -> list[bytes]:
    """Every value of a full topic name (see ``streams.kafka.ranges.read_topic``), contract-checked."""
    return checked(topic, await kafka_read_topic(Settings(kafka_bootstrap=kafka), topic, **options))


async def load_golden_ledger(redis_url: str, ns: str) -> None:
    """Write the golden ledger entries (guard/ledger.jsonl) into Redis under namespace ``ns``."""
    store = redis_store(redis_url, ns)
    try:
        entries = []
        for line in golden_lines("guard", "ledger.jsonl"):
            entry = codec.loads(line)
            for name in LEDGER_ENTRY_FIELDS:
                entry.setdefault(name, None)
            entries.append(entry)
        await store.write_many(entries)
    finally:
        await store.close()


def worker_env(prefix: str, kafka: str, redis: str, **extra: str) -> dict[str, str]:
    """Environment of a worker isolated by topic prefix, app id and ledger namespace (none of the
    caller's own ``EC_*`` settings: the broker and Redis are the arguments). ``EC_TESTS_CONSUMER_THREAD``
    in the tests' environment becomes the workers' ``EC_CONSUMER_THREAD`` (both consumer modes, one suite)."""
    env = clean_env()
    if consumer_thread := os.environ.get("EC_TESTS_CONSUMER_THREAD"):
        env["EC_CONSUMER_THREAD"] = consumer_thread
    env.update(
        EC_KAFKA_BOOTSTRAP=kafka,
        EC_REDIS_URL=redis,
        EC_TOPIC_PREFIX=prefix,
        EC_APP_ID=f"{prefix}app",
        EC_NS=prefix.rstrip("-."),
        EC_TOPIC_PARTITIONS="3",
        EC_BROKER_SESSION_TIMEOUT_SECONDS="10",
        EC_BROKER_HEARTBEAT_SECONDS="1",
        EC_BROKER_REBALANCE_TIMEOUT_SECONDS="10",
        EC_RETRY_INITIAL_BACKOFF_MS="100",
        EC_RETRY_MAX_BACKOFF_MS="1000",
        EC_REDIS_TIMEOUT_MS="1000",
        EC_DATA_DIR=os.path.join(tempfile.gettempdir(), "evidence-chain-tests"),
    )
    env.update(extra)
    return env


def isolated_settings(prefix: str, kafka: str, redis: str, **extra: Any) -> Settings:
    """The in-process settings matching :func:`worker_env`'s worker: the same topic prefix, app id,
    ledger namespace and partition count (a client, a gateway or a store beside that worker)."""
    options: dict[str, Any] = {
        "kafka_bootstrap": kafka,
        "redis_url": redis,
        "topic_prefix": prefix,
        "ns": prefix.rstrip("-."),
        "app_id": f"{prefix}app",
        "topic_partitions": 3,
    }
    return Settings(**(options | extra))


@dataclass
class Worker:
    """A worker in a subprocess of its own session, its log in a file; the integration tier's and the
    fault suite's (``tests.faults.support.HookedWorker`` runs the same with the suite's test hooks)."""

    env: dict[str, str]
    log_path: Path
    command: tuple[str, ...] = (CLI, "worker", "--loglevel", "info")
    cwd: Path | None = None
    process: subprocess.Popen[bytes] | None = field(default=None)
    exits: list[int] = field(default_factory=list)
    """Exit statuses seen by ``kill`` (-9) and ``supervise`` (what the process exited with)."""

    def start(self) -> Worker:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(  # noqa: S603 - our own console script or worker module
                self.command,
                cwd=self.cwd,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, *, kill: bool = False, timeout: float = 30) -> None:
        """SIGTERM (SIGKILL with ``kill``) to its process group; SIGKILL if it outlives ``timeout``."""
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL if kill else signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def kill(self) -> None:
        """SIGKILL: no commit, no flush, no goodbye to the group (recorded in ``exits`` as -9)."""
        if self.running:
            self.stop(kill=True, timeout=10)
            self.exits.append(-9)

    def supervise(self) -> int | None:
        """What ``restart: unless-stopped`` does: start the worker again if it exited on its own."""
        if self.process is not None and self.process.poll() is not None:
            code = self.process.returncode
            self.exits.append(code)
            self.start()
            return code
        return None

    def log_tail(self, lines: int = 60) -> str:
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])


@dataclass(frozen=True)
class Stack:
    """One worker on a topic prefix, app id and ledger namespace of its own, its environment, and the
    settings of a client, gateway or store beside it (:func:`isolated_settings`)."""

    settings: Settings
    env: dict[str, str]
    worker: Worker

    @property
    def prefix(self) -> str:
        return self.settings.topic_prefix

    @property
    def kafka(self) -> str:
        return self.settings.kafka_bootstrap

    @property
    def redis(self) -> str:
        return self.settings.redis_url.get_secret_value()

    @property
    def ns(self) -> str:
        return self.settings.ns

    def topic(self, name: str) -> str:
        """The full name of topic ``name`` under this stack's prefix."""
        return f"{self.prefix}{name}"

    async def values(
        self, name: str, count: int, *, settle: float = 0.0, wait_seconds: float = 90.0
    ) -> list[Any]:
        """The decoded values of topic ``name`` once there are ``count`` (checked against its schema);
        fewer after ``wait_seconds`` fails with the worker's last log lines."""
        raw = await read_topic(
            self.kafka,
            self.topic(name),
            until=lambda v: len(v) >= count,
            settle=settle,
            wait_seconds=wait_seconds,
        )
        assert len(raw) >= count, f"{name}: {len(raw)} of {count} records\n{self.worker.log_tail()}"
        return [codec.loads(v) for v in raw]


ISSUED_PREFIXES: set[str] = set()
"""Every prefix :func:`new_prefix` gave this session: its topics are deleted when the session ends
(``kafka_endpoint``), and only those, so a session never deletes another's topics."""


def new_prefix() -> str:
    """A prefix of a test's own for its topics, groups and Redis keys: ``t-<8 hex>-``."""
    prefix = f"t-{uuid.uuid4().hex[:8]}-"
    ISSUED_PREFIXES.add(prefix)
    return prefix


@contextmanager
def worker_stack(kafka: str, redis: str, logs: Path, **settings: Any) -> Iterator[Stack]:
    """A :class:`Stack` on a new prefix: its topics created first with the worker's partition count (so
    nothing published is auto-created with one), then its worker, logging to ``logs/worker.log`` and
    stopped on exit. ``settings`` are added to the client's settings (not the worker's)."""
    prefix = new_prefix()
    env = worker_env(prefix, kafka, redis)
    beside = isolated_settings(prefix, kafka, redis, **settings)
    asyncio.run(ensure_topics(beside))
    worker = Worker(env, logs / "worker.log").start()
    try:
        yield Stack(beside, env, worker)
    finally:
        worker.stop()


async def publish(kafka: str, topic: str, values: Sequence[bytes]) -> None:
    """Produce each value keyed by its run_id (as the harness does), acks=all."""
    producer = AIOKafkaProducer(bootstrap_servers=kafka, acks="all", max_request_size=5 * 1024 * 1024)
    await producer.start()
    try:
        futures = []
        for value in values:
            try:
                doc = codec.loads(value)
                run_id = doc.get("run_id") if isinstance(doc, dict) else None
            except codec.JSONDecodeError:
                run_id = None
            key = run_id.encode() if isinstance(run_id, str) else None
            futures.append(await producer.send(topic, value, key=key))
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


class CuttableProxy:
    """A TCP proxy to Redis that a test can cut (refuse and drop connections) and restore."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.server: asyncio.base_events.Server | None = None
        self.port = 0
        self.connections: set[asyncio.StreamWriter] = set()

    async def start(self, port: int = 0) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        self.port = self.server.sockets[0].getsockname()[1]
        return self.port

    async def cut(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
            self.server = None
        for writer in list(self.connections):
            writer.transport.abort()
        self.connections.clear()

    async def restore(self) -> None:
        await self.start(self.port)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self.connections.update({writer, up_writer})

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self.connections.difference_update({writer, up_writer})
