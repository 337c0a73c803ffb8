"""What the fault tests share: a record mix with hostile records in it, workers under a supervisor,
and the checks that nothing was lost, forged or changed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from models.vocab import Station
from streams import codec
from streams.kafka.admin import ensure_topics
from streams.kafka.ranges import read_topic as kafka_read_topic
from streams.ledger.redis import RedisLedgerStore
from streams.messages import Record
from streams.pipeline import Outcome, PendingWrite, StationRules, chain
from streams.settings import Settings
from tests.integration.helpers import Worker, checked, publish, worker_env

REPO = Path(__file__).resolve().parents[2]
TEXT = "网关超时先检查上游配置，再看连接池。Check proxy_read_timeout and upstream latency. "
HOSTILE_KINDS = ("deep", "long-chunk", "bad-run-id", "not-json", "nan", "long-call-id", "huge-attempt-field")


def valid(n: int, rng: random.Random) -> bytes:
    hits = [
        {
            "evidence_key": f"doc-{n % 37}-{k}#chunk-{k}",
            "document_id": f"doc-{n % 37}-{k}",
            "source": f"runbooks/doc-{k}.md",
            "title": f"标题 {k}",
            "breadcrumb": "排查 > 步骤",
            "excerpt": (TEXT * 6)[rng.randrange(30) :][: rng.randrange(200, 500)],
            "quality_score": round(0.95 - k * 0.1, 3),
        }
        for k in range(4)
    ]
    response = {
        "query": "网关超时怎么排查",
        "hits": hits,
        "evidence_status": "supported",
        "retrieval_trace": {"k": n},
    }
    return codec.dumps({"run_id": f"run-{n % 300}", "tool_call_id": f"call-{n}", "response": response})


def hostile(n: int, kind: str) -> bytes:
    ids = f'"run_id":"run-h{n % 50}","tool_call_id":"hostile-{n}"'
    head = '"response":{"query":"q","evidence_status":"supported","hits":'
    if kind == "deep":  # nested 400 levels: SCHEMA_VIOLATION, a FAILED entry
        return ("{" + ids + "," + head + '[],"retrieval_trace":' + "[" * 400 + "]" * 400 + "}}").encode()
    if kind == "long-chunk":  # a 5,000-digit chunk number: well formed, chunk_index null, READY
        hit = {
            "evidence_key": "d#chunk-" + "9" * 5000,
            "document_id": "d",
            "source": "s",
            "excerpt": "e",
            "quality_score": 0.9,
        }
        return ("{" + ids + "," + head + codec.dumps([hit]).decode() + "}}").encode()
    if kind == "bad-run-id":  # INVALID_ID, no entry
        return codec.dumps({"run_id": "run:with:colons", "tool_call_id": f"hostile-{n}", "response": {}})
    if kind == "not-json":
        return b"\xff\xfe not json at all " + str(n).encode()
    if kind == "nan":  # MALFORMED_JSON: ids not readable
        return ("{" + ids + "," + head + '[],"x":NaN}}').encode()
    if kind == "long-call-id":  # a 300-character id: INVALID_ID
        return codec.dumps({"run_id": "run-h", "tool_call_id": "c" * 300, "response": {}})
    if kind == "huge-attempt-field":  # an unknown field with a huge integer: ignored, READY
        return ("{" + ids + "," + head + '[],"attempt":18446744073709551615}}').encode()
    raise ValueError(kind)


def record_mix(count: int, hostile_every: int = 97, seed: int = 11) -> list[bytes]:
    """``count`` records, one hostile record (cycling through every kind) every ``hostile_every``."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        if n % hostile_every == hostile_every - 1:
            out.append(hostile(n, HOSTILE_KINDS[(n // hostile_every) % len(HOSTILE_KINDS)]))
        else:
            out.append(valid(n, rng))
    return out


@dataclass
class Expected:
    """What the SPEC decides for a set of raw-hits records (computed with the station functions)."""

    entries: dict[tuple[str, str], tuple[str, str | None]] = field(default_factory=dict)
    """(run_id, tool_call_id) → (status, projection_sha256)."""
    rejections: Counter[str] = field(default_factory=Counter)
    """Dead letters by reason."""


def expected(records: Iterable[bytes], settings: Settings) -> Expected:
    out = Expected()
    rules = StationRules.from_settings(settings)  # once, as the worker builds them
    for value in records:
        record = Record.offline(value)
        first = chain(record, rules, (Station.POSTPROCESS,))
        assert isinstance(first, Outcome)
        if first.rejection is not None:
            out.rejections[first.rejection["reason"]] += 1
        step = chain(record, rules, (Station.POSTPROCESS, Station.PROJECT, Station.LEDGER))
        if isinstance(step, PendingWrite):
            entry = step.entry
            out.entries[(entry["run_id"], entry["tool_call_id"])] = (
                entry["status"],
                entry["projection_sha256"],
            )
    return out


def fault_env(prefix: str, kafka: str, redis: str, **extra: str) -> dict[str, str]:
    """``worker_env`` with the fault suite's overrides: a shorter session timeout, frequent commits, a
    longer start-up wait, its own data directory, and the repository on ``PYTHONPATH`` for the hooked
    worker; ``extra`` wins over both."""
    return worker_env(
        prefix,
        kafka,
        redis,
        **{
            "EC_BROKER_SESSION_TIMEOUT_SECONDS": "6",
            "EC_BROKER_COMMIT_INTERVAL_SECONDS": "0.5",
            "EC_STARTUP_WAIT_SECONDS": "60",
            "EC_DATA_DIR": str(Path(os.environ.get("TMPDIR", "/tmp")) / "evidence-chain-faults"),
            "PYTHONPATH": str(REPO),
            **extra,
        },
    )


@dataclass
class HookedWorker(Worker):
    """A worker with the suite's test hooks (``python -m tests.faults.hooked_worker``)."""

    command: tuple[str, ...] = (sys.executable, "-m", "tests.faults.hooked_worker")
    cwd: Path | None = REPO


async def wait_progress(run: Run, keys: list[tuple[str, str]], share: float, worker: Worker) -> None:
    """Until ``share`` of ``keys`` have ledger entries, restarting a worker that exits (3 minutes at most)."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        worker.supervise()
        if await run.entries_found(keys) >= share * len(keys):
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"no progress to {share:.0%}\n{worker.log_tail()}")


async def wait_for(condition: Callable[[], bool], worker: Worker, what: str, timeout_s: float = 120) -> None:
    """Until ``condition()`` holds; fails at once when the worker has exited, and after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if not worker.running or time.monotonic() > deadline:
            raise AssertionError(f"no {what} (worker running: {worker.running})\n{worker.log_tail()}")
        await asyncio.sleep(0.1)


@dataclass
class Run:
    """One isolated flow on the fault broker and Redis."""

    prefix: str
    kafka: str
    redis: str
    replication: int = 1
    """Replication factor of the topics it creates (3 on ``make up-cluster``'s brokers)."""

    @property
    def settings(self) -> Settings:
        return Settings(
            kafka_bootstrap=self.kafka,
            redis_url=self.redis,
            topic_prefix=self.prefix,
            ns=self.prefix.rstrip("-"),
            app_id=f"{self.prefix}app",
            redis_durability="none",
            topic_replication_factor=self.replication,
        )

    def topic(self, name: str) -> str:
        return f"{self.prefix}{name}"

    async def prepare(self, partitions: int = 3) -> None:
        await ensure_topics(self.settings.model_copy(update={"topic_partitions": partitions}))

    async def publish(self, topic: str, values: list[bytes]) -> None:
        await publish(self.kafka, self.topic(topic), values)

    async def read(self, topic: str, **options: Any) -> list[bytes]:
        """A topic's values; those of topics we produce checked against their schemas."""
        return checked(self.topic(topic), await kafka_read_topic(self.settings, self.topic(topic), **options))

    async def entries_found(self, keys: list[tuple[str, str]]) -> int:
        store = RedisLedgerStore.from_settings(self.settings)
        try:
            found = await store.read_many(keys)
        except Exception:  # noqa: BLE001 - Redis may be down in the middle of a fault test
            return -1
        finally:
            await store.close()
        return sum(1 for lookup in found.values() if lookup.entry is not None)

    async def wait_entries(
        self, keys: list[tuple[str, str]], workers: list[Worker], timeout_s: float = 240
    ) -> None:
        """Until Redis holds every key, restarting workers that exited (the supervisor's job)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for worker in workers:
                worker.supervise()
            if await self.entries_found(keys) == len(keys):
                return
            await asyncio.sleep(0.5)
        raise AssertionError(
            f"{await self.entries_found(keys)} of {len(keys)} entries after {timeout_s}s\n"
            + "\n".join(w.log_tail() for w in workers)
        )

    async def check(self, want: Expected, *, exact_dead_letters: bool = True) -> dict[str, Any]:
        """Every expected entry READY/FAILED as decided, in Redis and on the ledger topic, no CONFLICT,
        repeats byte-identical. Returns what was read."""
        keys = sorted(want.entries)
        store = RedisLedgerStore.from_settings(self.settings)
        try:
            found = await store.read_many(keys)
        finally:
            await store.close()
        wrong = {
            k: (found[k].entry or {}).get("status")
            for k in keys
            if found[k].entry is None
            or (found[k].entry["status"], found[k].entry["projection_sha256"]) != want.entries[k]  # type: ignore[index]
        }
        assert wrong == {}, f"{len(wrong)} entries are missing or differ: {list(wrong.items())[:5]}"
        ledger = await self.read(
            "ledger", until=lambda v: len({e for e in v}) >= 1 and _keys(v) >= set(keys), settle=1.0
        )
        by_key: dict[tuple[str, str], set[bytes]] = defaultdict(set)
        for value in ledger:
            event = codec.loads(value)
            by_key[(event["run_id"], event["tool_call_id"])].add(value)
        assert set(by_key) == set(keys), f"ledger topic keys differ: {len(set(by_key) ^ set(keys))}"
        assert all(len(copies) == 1 for copies in by_key.values()), "a repeated ledger event differs in bytes"
        letters = await self.read("dead-letters", until=lambda v: True, settle=2.0)
        by_id: dict[str, set[bytes]] = defaultdict(set)
        reasons: Counter[str] = Counter()
        for value in letters:
            letter = codec.loads(value)
            if letter["event_id"] not in by_id:
                reasons[letter["reason"]] += 1
            by_id[letter["event_id"]].add(value)
        assert reasons["LEDGER_CONFLICT"] == 0
        assert all(len(copies) == 1 for copies in by_id.values()), "a repeated dead letter differs in bytes"
        if exact_dead_letters:
            assert reasons == want.rejections, f"dead letters {dict(reasons)} != {dict(want.rejections)}"
        return {"ledger": ledger, "dead_letters": letters, "reasons": reasons}


def _keys(values: list[bytes]) -> set[tuple[str, str]]:
    out = set()
    for value in values:
        with contextlib.suppress(Exception):
            event = codec.loads(value)
            out.add((event["run_id"], event["tool_call_id"]))
    return out


async def flush(url: str) -> None:
    client = aioredis.Redis.from_url(url)
    try:
        await client.flushall()
    finally:
        await client.aclose()
