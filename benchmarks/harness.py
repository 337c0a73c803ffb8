"""What every stream benchmark needs from the local stack: fresh topics, preloaded records,
pipeline processes, and the ledger events they produce, read back with their own timestamps.

A pipeline under test is any process that consumes ``<prefix>raw-hits`` in the consumer group
``EC_APP_ID`` and produces ``<prefix>ledger`` (the worker, or an anchor in ``benchmarks/``); it is
given its prefix, group and Redis namespace in the environment.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import orjson
import redis.asyncio as aioredis
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import TopicPartition

from models.vocab import Topic
from streams.kafka.admin import TOPIC_NAMES, ensure_topics
from streams.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / ".local" / "bench" / "logs"
QUIX_PYTHON = ROOT / ".local" / "bench" / "quix-venv" / "bin" / "python"
"""Quix Streams' venv (``make bench-quix-venv``): the Quix anchor, and the confluent-kafka others borrow."""
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def fresh_settings(label: str, partitions: int) -> Settings:
    """Settings with a prefix, group and namespace nobody else uses."""
    tag = f"b{uuid.uuid4().hex[:6]}-{label}"
    return Settings(topic_prefix=f"{tag}-", app_id=f"{tag}-app", ns=f"{tag}-ns", topic_partitions=partitions)


CROWDED_BROKER_TOPICS = 100
"""More topics than this on the broker before a run, and its figures are not a clean broker's: on one
that held 3,879 topics left by earlier test runs, the one-hop pipeline drained about a sixth slower."""


async def broker_topics(settings: Settings) -> int:
    """How many topics the broker holds (the benchmarks delete theirs; tests and demos may not)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    await admin.start()
    try:
        return len(await admin.list_topics())
    finally:
        await admin.close()


def crowded_broker(topics: int) -> str | None:
    """What to say of a broker holding ``topics`` before a run (None: nothing to say)."""
    if topics <= CROWDED_BROKER_TOPICS:
        return None
    return (
        f"the broker holds {topics:,} topics before this run (a clean one holds a few): its figures run "
        "slower than a clean broker's; `make clean up` starts afresh (it resets .local's data and keys)"
    )


def pipeline_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment of a pipeline process for ``settings``."""
    return {
        **os.environ,
        "EC_TOPIC_PREFIX": settings.topic_prefix,
        "EC_APP_ID": settings.app_id,
        "EC_NS": settings.ns,
        "EC_TOPIC_PARTITIONS": str(settings.topic_partitions),
        "EC_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
        "EC_DATA_DIR": str(ROOT / ".local" / "bench" / "faust"),
        **extra,
    }


@contextlib.asynccontextmanager
async def topics(settings: Settings) -> AsyncIterator[Settings]:
    """The nine topics for ``settings``, deleted afterwards with the Redis keys of its namespace."""
    await ensure_topics(settings)
    try:
        yield settings
    finally:
        admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
        await admin.start()
        try:
            names = [settings.topic(t) for t in TOPIC_NAMES]
            with contextlib.suppress(Exception):
                await admin.delete_topics(names + [f"{settings.app_id}-__assignor-__leader"])
        finally:
            await admin.close()
        client = aioredis.from_url(settings.redis_url.get_secret_value())
        keys = [k async for k in client.scan_iter(match=f"{settings.ns}*", count=1000)]
        for i in range(0, len(keys), 1000):
            await client.delete(*keys[i : i + 1000])
        await client.aclose()


@contextlib.asynccontextmanager
async def redis_config(settings: Settings, changes: dict[str, str]) -> AsyncIterator[None]:
    """Redis ``CONFIG SET`` of ``changes`` for the block, the previous values restored after it."""
    if not changes:
        yield
        return
    client = aioredis.from_url(settings.redis_url.get_secret_value(), decode_responses=True)
    before = {name: (await client.config_get(name))[name] for name in changes}
    try:
        for name, value in changes.items():
            await client.config_set(name, value)
        yield
    finally:
        for name, value in before.items():
            await client.config_set(name, value)
        await client.aclose()


def producer(settings: Settings, linger_ms: int = 5) -> AIOKafkaProducer:
    """A producer for loading records quickly (1 MiB batches, acks=all; ``linger_ms`` 5 by default)."""
    return AIOKafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap,
        acks="all",
        max_batch_size=1 << 20,
        linger_ms=linger_ms,
        max_request_size=settings.topic_max_message_bytes + 65536,
    )


def key_of(value: bytes) -> bytes | None:
    """The run_id of a raw-hits record, as the key ``publish`` gives it."""
    run_id = orjson.loads(value).get("run_id")
    return run_id.encode() if isinstance(run_id, str) else None


async def preload(settings: Settings, values: Sequence[bytes], topic: Topic = Topic.RAW_HITS) -> None:
    """Produce ``values`` (keyed by run_id) and wait for every acknowledgement."""
    client = producer(settings)
    await client.start()
    try:
        name = settings.topic(topic)
        futures = [await client.send(name, v, key=key_of(v)) for v in values]
        await asyncio.gather(*futures)
    finally:
        await client.stop()


BATCHED_LINGER_MS = 5
"""The linger of :func:`offer` at hundreds of records a second (P4 and ``stages.py``, at a quarter and half
of a pipeline's sustained rate): their latencies include up to this much wait in the offering process.
Sent one a record, 600/s on the two shared cores read p50 143-581 ms against 101-168 batched (interleaved
runs, 2026-12-07), the offering process's and the broker's extra requests taking the pipeline's CPU."""


async def offer(
    settings: Settings, values: Sequence[bytes], rate: float, linger_ms: int = 0
) -> dict[str, int]:
    """Produce ``values`` at ``rate`` per second; returns each tool_call_id's create time (epoch ms).

    By default each record is sent as it is offered (linger 0), as a caller's client sends one lookup:
    with a linger every record waits in this process after its create time (at a trickle, all of
    it), and that wait counts in every latency measured from the create time. A rate of hundreds a
    second can pass ``linger_ms`` to batch its sends instead: on two shared cores the offering
    process's own requests, one a record, take CPU the pipeline under test would otherwise have."""
    client = producer(settings, linger_ms=linger_ms)
    await client.start()
    sent: dict[str, int] = {}
    try:
        name = settings.topic(Topic.RAW_HITS)
        start = time.monotonic()
        futures = []
        for i, value in enumerate(values):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            now = int(time.time() * 1000)
            sent[orjson.loads(value)["tool_call_id"]] = now
            futures.append(await client.send(name, value, key=key_of(value), timestamp_ms=now))
        await asyncio.gather(*futures)
    finally:
        await client.stop()
    return sent


@dataclass
class Events:
    """What a pipeline wrote to one topic: each event's timestamp (ms) and tool_call_id."""

    timestamps: list[int] = field(default_factory=list)
    tool_call_ids: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Events per second, first to last event by their own timestamps (milliseconds: events that
        all share one millisecond count as spread over one, so a tiny run gives a finite rate)."""
        if len(self.timestamps) < 2:
            return 0.0
        span = max(max(self.timestamps) - min(self.timestamps), 1) / 1000
        return (len(self.timestamps) - 1) / span


class Watcher:
    """Reads a topic from its start as events arrive; the figures are the events' own timestamps."""

    def __init__(self, settings: Settings, topic: Topic = Topic.LEDGER) -> None:
        self.consumer = AIOKafkaConsumer(
            settings.topic(topic),
            bootstrap_servers=settings.kafka_bootstrap,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            group_id=None,
            max_partition_fetch_bytes=2 * settings.topic_max_message_bytes,
        )
        self.events = Events()

    async def __aenter__(self) -> Watcher:
        await self.consumer.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.consumer.stop()

    async def until(self, count: int, seconds: float, on_event: object = None) -> Events:
        """Read until ``count`` events arrived or ``seconds`` passed."""
        deadline = time.monotonic() + seconds
        while len(self.events.timestamps) < count and time.monotonic() < deadline:
            batch = await self.consumer.getmany(timeout_ms=200)
            for records in batch.values():
                for r in records:
                    self.events.timestamps.append(r.timestamp)
                    self.events.tool_call_ids.append(orjson.loads(r.value).get("tool_call_id", ""))
            if callable(on_event):
                on_event(len(self.events.timestamps))
        return self.events


async def first_writes(settings: Settings, names: Sequence[Topic]) -> dict[Topic, int]:
    """The create timestamp (epoch ms) of the earliest record in each of ``names`` that holds any.

    Read after a run from each partition's first record batch only (the topics are the run's own, so
    their first records are the first ones the pipeline wrote), not by reading the topics through.
    """
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap,
        group_id=None,
        enable_auto_commit=False,
        max_partition_fetch_bytes=1,  # one record batch per partition (a batch is always returned whole)
        fetch_max_bytes=1,
    )
    await consumer.start()
    try:
        partitions = [
            TopicPartition(settings.topic(t), p) for t in names for p in range(settings.topic_partitions)
        ]
        ends = await consumer.end_offsets(partitions)
        starts = await consumer.beginning_offsets(partitions)
        waiting = {tp for tp in partitions if ends[tp] > starts[tp]}
        consumer.assign(list(waiting))
        for tp in waiting:
            consumer.seek(tp, starts[tp])
        found: dict[str, int] = {}
        deadline = time.monotonic() + 30
        while waiting and time.monotonic() < deadline:
            for tp, records in (await consumer.getmany(*waiting, timeout_ms=500)).items():
                if records and tp in waiting:
                    waiting.discard(tp)
                    first = min(r.timestamp for r in records)
                    found[tp.topic] = min(found.get(tp.topic, first), first)
    finally:
        await consumer.stop()
    return {t: found[settings.topic(t)] for t in names if settings.topic(t) in found}


class CpuTrace:
    """A process's CPU sampled every ``interval`` seconds in a thread, against the wall clock, so the CPU
    spent between two events' own timestamps (epoch ms) can be read afterwards (:meth:`between`)."""

    def __init__(self, process: Process, interval: float = 0.02) -> None:
        self.process = process
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-trace", daemon=True)

    def __enter__(self) -> CpuTrace:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(OSError, ValueError):
                self.samples.append((time.time() * 1000, self.process.cpu_seconds()))
            self._stop.wait(self.interval)

    def at(self, epoch_ms: float) -> float:
        """The process's CPU seconds at ``epoch_ms``, interpolated between the samples around it."""
        i = bisect.bisect_left(self.samples, (epoch_ms, -1.0))
        if i == 0:
            return self.samples[0][1]
        if i == len(self.samples):
            return self.samples[-1][1]
        (t0, c0), (t1, c1) = self.samples[i - 1], self.samples[i]
        return c0 + (c1 - c0) * (epoch_ms - t0) / (t1 - t0) if t1 > t0 else c1

    def between(self, first_ms: float, last_ms: float) -> float:
        """CPU seconds the process spent from ``first_ms`` to ``last_ms`` (epoch ms)."""
        return self.at(last_ms) - self.at(first_ms)

    def cores(self, first_ms: float, last_ms: float) -> float:
        """Cores the process kept busy from ``first_ms`` to ``last_ms``: CPU seconds ÷ wall seconds (nan
        for an empty span)."""
        if last_ms <= first_ms:
            return float("nan")
        return self.between(first_ms, last_ms) / ((last_ms - first_ms) / 1000)


@dataclass
class Process:
    """A pipeline process; its CPU and memory read from ``/proc``."""

    popen: subprocess.Popen[bytes]
    name: str

    @property
    def pid(self) -> int:
        return self.popen.pid

    def cpu_seconds(self) -> float:
        """User + system CPU of the process and its reaped children."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / CLOCK_TICKS

    def rss_bytes(self) -> int:
        with open(f"/proc/{self.pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, then SIGKILL if it does not stop in time; returns the exit status."""
        if self.alive():
            os.killpg(self.pid, signal.SIGTERM)
            try:
                return self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.pid, signal.SIGKILL)
        return self.popen.wait()


def start(name: str, argv: Sequence[str], env: dict[str, str]) -> Process:
    """Start ``argv`` in its own session, its output in ``.local/bench/logs/<name>.log``."""
    LOGS.mkdir(parents=True, exist_ok=True)
    log = open(LOGS / f"{name}.log", "wb")  # noqa: SIM115 - the child owns it for its lifetime
    popen = subprocess.Popen(
        list(argv), env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT
    )
    return Process(popen, name)


def worker_argv(agents: str | None = None) -> list[str]:
    """The evidence-chain worker, as users start it."""
    argv = [str(Path(sys.executable).with_name("evidence-chain")), "worker", "--loglevel", "warning"]
    return argv + (["--agents", agents] if agents else [])


def free_port() -> int:
    """A loopback port nobody listens on right now (for a worker's /metrics)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def worker_metrics(port: int) -> dict[str, float]:
    """Every ``evidence_chain_*`` sample of a worker's ``/metrics``, by its full name with labels."""
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/metrics") as answer:
        text = await answer.text()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("evidence_chain_"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0-1) of ``values``, nearest rank."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


# --- BENCHMARKS.md sections ------------------------------------------------------------------------

_SECTION = re.compile(r"<!-- (?P<name>[\w.-]+): begin -->\n.*?<!-- (?P=name): end -->\n?", re.DOTALL)


def sections(text: str) -> dict[str, str]:
    """The marked sections of a report (``<!-- name: begin -->`` … ``<!-- name: end -->``), by name."""
    return {m.group("name"): m.group(0).rstrip("\n") + "\n" for m in _SECTION.finditer(text)}


def smoke_line(script: str, ran: str, out: Path) -> str:
    """The one line a ``--smoke`` run prints. Its figures come from toy sizes (a ``nan`` where a span is
    too short to measure) and its report carries other sections and findings along, so none of it is
    printed: the line says what ran and where the report is."""
    return f"{script} --smoke: {ran} ran at toy sizes (the figures are not results); report: {out}"


def write_section(path: Path, name: str, body: str) -> None:
    """Put ``body`` into ``path`` as the marked section ``name``: in place of the one there, else appended.

    The rest of the file is left as it is, so each benchmark owns only its own section (``stream.py``
    writes the whole report and carries these sections over).
    """
    block = f"<!-- {name}: begin -->\n{body.strip()}\n<!-- {name}: end -->\n"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    found = next((m for m in _SECTION.finditer(text) if m.group("name") == name), None)
    if found is not None:
        text = text[: found.start()] + block + text[found.end() :]
    else:
        text = text.rstrip("\n") + ("\n\n" if text.strip() else "") + block
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
