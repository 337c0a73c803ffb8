"""Delivery promises on the real broker and Redis: re-delivery repeats bytes, a Redis outage holds
drafts instead of losing them, and a draft's citations cost at most two Redis round trips."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlparse

import pytest
import redis.asyncio as aioredis
from redis.asyncio.connection import AbstractConnection

from models.vocab import Station, Topic
from streams import codec
from streams.hashing import sha256_hex
from streams.kafka.admin import ensure_topics
from streams.ledger.redis import RedisLedgerStore
from streams.messages import Record
from streams.settings import Settings
from streams.stations.project import canonical_projection
from streams.worker.runner import BatchRunner, RunnerConfig
from tests.integration.helpers import (
    CuttableProxy,
    Worker,
    golden_lines,
    load_golden_ledger,
    publish,
    read_topic,
    redis_store,
    worker_env,
)

RAW = golden_lines("pipe", "input.jsonl")


def _prepare(kafka: str, prefix: str) -> None:
    asyncio.run(ensure_topics(Settings(kafka_bootstrap=kafka, topic_prefix=prefix, topic_partitions=3)))


async def test_restart_without_commit_repeats_identical_outputs(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    await asyncio.to_thread(_prepare, kafka_bootstrap, unique_prefix)
    # No commit happens in this test's lifetime, so the restarted worker re-reads everything.
    env = worker_env(unique_prefix, kafka_bootstrap, redis_url, EC_BROKER_COMMIT_INTERVAL_SECONDS="3600")
    await publish(kafka_bootstrap, f"{unique_prefix}raw-hits", RAW)
    worker = Worker(env, tmp_path / "worker.log").start()
    try:
        first = await read_topic(kafka_bootstrap, f"{unique_prefix}ledger", until=lambda v: len(v) >= 20)
        assert len(first) == 20, worker.log_tail()
    finally:
        worker.stop(kill=True)  # SIGKILL: no commit on the way out
    again = Worker(env, tmp_path / "worker2.log").start()
    try:
        # Nothing was committed at any hop, so each hop re-reads its whole input, the first
        # worker's outputs included: postprocessed 2×20, projected 20 + 2×20, ledger 20 + 3×20.
        for topic, distinct, total in (
            ("postprocessed", 20, 40),
            ("projected", 20, 60),
            ("ledger", 20, 80),
            ("dead-letters", 9, 18),
        ):
            values = await read_topic(
                kafka_bootstrap, f"{unique_prefix}{topic}", until=lambda v, n=total: len(v) >= n, settle=2.0
            )
            assert len(values) == total, f"{topic}: {len(values)}\n{again.log_tail()}"
            by_id: dict[str, set[bytes]] = defaultdict(set)
            for value in values:
                by_id[codec.loads(value)["event_id"]].add(value)
            assert len(by_id) == distinct, topic
            assert all(len(copies) == 1 for copies in by_id.values()), f"{topic}: a repeat differs in bytes"
    finally:
        again.stop()


async def test_redis_outage_holds_drafts_until_it_is_back(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    await asyncio.to_thread(_prepare, kafka_bootstrap, unique_prefix)
    target = urlparse(redis_url)
    proxy = CuttableProxy(target.hostname or "127.0.0.1", target.port or 6379)
    port = await proxy.start()
    ns = unique_prefix.rstrip("-.")
    await load_golden_ledger(redis_url, ns)
    proxied = (
        redis_url.replace(f":{target.port}", f":{port}", 1) if target.port else f"redis://127.0.0.1:{port}/0"
    )
    env = worker_env(unique_prefix, kafka_bootstrap, proxied, EC_AGENTS="guard")
    worker = Worker(env, tmp_path / "worker.log").start()
    drafts = golden_lines("guard", "drafts.jsonl")[:2]  # two PASS drafts
    try:
        await proxy.cut()
        await publish(kafka_bootstrap, f"{unique_prefix}diagnosis-drafts", drafts)
        held = await read_topic(
            kafka_bootstrap, f"{unique_prefix}verdicts", until=lambda v: len(v) > 0, wait_seconds=20
        )
        assert held == [], "a verdict was emitted while the ledger could not be read"
        await proxy.restore()
        verdicts = await read_topic(kafka_bootstrap, f"{unique_prefix}verdicts", until=lambda v: len(v) >= 2)
        assert [codec.loads(v)["verdict"] for v in verdicts] == ["PASS", "PASS"], worker.log_tail()
        assert "holding the batch" in worker.log_path.read_text()
    finally:
        worker.stop()
        await proxy.cut()


async def test_worker_stopped_while_holding_does_not_commit_the_held_drafts(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    """Stopped (SIGTERM, a graceful stop that commits acked offsets) while a batch is held: the batch's
    offsets are not committed, so the next worker judges those drafts once Redis is back."""
    await asyncio.to_thread(_prepare, kafka_bootstrap, unique_prefix)
    target = urlparse(redis_url)
    proxy = CuttableProxy(target.hostname or "127.0.0.1", target.port or 6379)
    port = await proxy.start()
    await load_golden_ledger(redis_url, unique_prefix.rstrip("-."))
    proxied = (
        redis_url.replace(f":{target.port}", f":{port}", 1) if target.port else f"redis://127.0.0.1:{port}/0"
    )
    env = worker_env(unique_prefix, kafka_bootstrap, proxied, EC_AGENTS="guard")
    drafts = golden_lines("guard", "drafts.jsonl")[:2]  # two PASS drafts
    first = Worker(env, tmp_path / "worker.log").start()
    try:
        await proxy.cut()
        await publish(kafka_bootstrap, f"{unique_prefix}diagnosis-drafts", drafts)
        for _ in range(120):  # until the guard holds the batch
            if "holding the batch" in first.log_path.read_text():
                break
            await asyncio.sleep(0.5)
        assert "holding the batch" in first.log_path.read_text(), first.log_tail()
    finally:
        first.stop()  # graceful: Faust commits what was acked on the way out
    await proxy.restore()
    second = Worker(env, tmp_path / "worker2.log").start()
    try:
        verdicts = await read_topic(kafka_bootstrap, f"{unique_prefix}verdicts", until=lambda v: len(v) >= 2)
        assert [codec.loads(v)["verdict"] for v in verdicts] == ["PASS", "PASS"], second.log_tail()
    finally:
        second.stop()
    # ...and a batch that was fully processed is committed: a third worker judges nothing again.
    third = Worker(env, tmp_path / "worker3.log").start()
    try:
        more = await read_topic(
            kafka_bootstrap, f"{unique_prefix}verdicts", until=lambda v: len(v) > 2, wait_seconds=15
        )
        assert len(more) == 2, third.log_tail()
        assert "Worker ready" in third.log_path.read_text()  # it did start and consume
    finally:
        third.stop()
        await proxy.cut()


class _CountingSink:
    def __init__(self) -> None:
        self.messages: list = []

    async def send_all(self, messages) -> None:  # type: ignore[no-untyped-def]
        self.messages.extend(messages)


async def test_twenty_citations_cost_at_most_two_read_round_trips_and_one_claim(
    redis_url: str, unique_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ns = unique_prefix.rstrip("-.")
    store = redis_store(redis_url, ns)
    entries = []
    for i in range(10):  # ten entries of this run; ten cited tool calls have none (one owned by another run)
        result = {
            "evidence_status": "NO_EVIDENCE",
            "tool_call_id": f"c{i}",
            "query": "q",
            "evidence": [],
            "returned_count": 0,
            "relevance_level": None,
            "truncated": False,
        }
        projection = canonical_projection(result)  # type: ignore[arg-type]
        entries.append(
            {
                "event_id": None,
                "run_id": "run-rt",
                "tool_call_id": f"c{i}",
                "status": "READY",
                "evidence_status": "NO_EVIDENCE",
                "projection": projection.decode(),
                "projection_sha256": sha256_hex(projection),
                "origin": None,
                "source_timestamp": None,
                "failure_reason": None,
                "written_at": None,
                "expires_at": None,
            }
        )
    entries.append(dict(entries[0], run_id="run-other", tool_call_id="c10"))
    await store.write_many(entries)
    draft = {
        "run_id": "run-rt",
        "draft_id": "d",
        "analysis": [
            {"id": f"a{i}", "kind": "NEGATIVE_OBSERVATION", "content": "x", "tool_call_ids": [f"c{i}"]}
            for i in range(20)
        ],
        "conclusion": None,
        "limitations": ["l"],
    }
    trips = 0
    original = AbstractConnection.send_packed_command

    async def counting(self, command, check_health=True):  # type: ignore[no-untyped-def]
        nonlocal trips
        trips += 1
        return await original(self, command, check_health)

    settings = Settings(ns=ns)
    sink = _CountingSink()
    runner = BatchRunner(Station.GUARD, RunnerConfig.from_settings(settings), sink, store)
    await store.client.ping()  # connect before counting
    monkeypatch.setattr(AbstractConnection, "send_packed_command", counting)
    await runner.run([Record("drafts", 0, 0, 1, None, codec.dumps(draft))])
    monkeypatch.undo()
    await store.close()
    verdict = codec.loads(sink.messages[0].value)
    codes = sorted({v["code"] for v in verdict["violations"]})
    assert codes == ["CITATION_CROSS_RUN", "CITATION_NOT_FOUND"]
    assert len(verdict["evidence_snapshot"]) == 10
    # SPEC 4: the cited entries in at most two read round trips; SPEC 4.3: the batch's report claims in
    # one more (a pipeline per batch, however many drafts)
    assert trips == 3, f"{trips} round trips for 20 citations and one claim"


async def test_redis_store_round_trip_with_real_ttl_and_owners(redis_url: str, unique_prefix: str) -> None:
    ns = unique_prefix.rstrip("-.")
    store = redis_store(redis_url, ns, ttl_seconds=60)
    client = aioredis.Redis.from_url(redis_url)
    try:
        entry = {
            "event_id": "e",
            "run_id": "r1",
            "tool_call_id": "c1",
            "status": "FAILED",
            "evidence_status": None,
            "projection": None,
            "projection_sha256": None,
            "origin": {"topic": "t", "partition": 0, "offset": 1, "timestamp": 5},
            "source_timestamp": 5,
            "failure_reason": "SCHEMA_VIOLATION",
            "written_at": None,
            "expires_at": None,
        }
        (written,) = await store.write_many([entry])
        stamps = ("written_at", "expires_at")
        assert written.outcome == "WRITTEN"
        assert {k: v for k, v in written.stored.items() if k not in stamps} == {
            k: v for k, v in entry.items() if k not in stamps
        }
        # the store stamps the entry with Redis TIME: its lifetime is ledger_ttl_seconds from then
        assert written.stored["expires_at"] - written.stored["written_at"] == 60_000
        assert abs(written.stored["written_at"] - time.time() * 1000) < 60_000
        (again,) = await store.write_many([dict(entry, event_id="other")])
        assert again.outcome == "DUPLICATE" and again.stored["event_id"] == "e"
        assert 0 < await client.pttl(f"{ns}:ledger:{{c1}}:r1") <= 60_000
        assert 0 < await client.pttl(f"{ns}:owners:{{c1}}") <= 60_000
        lookups = await store.read_many([("r2", "c1"), ("r1", "c1"), ("r2", "nope")])
        assert lookups[("r2", "c1")].entry is None and lookups[("r2", "c1")].foreign_owner
        assert lookups[("r1", "c1")].entry is not None
        assert not lookups[("r2", "nope")].foreign_owner
    finally:
        await client.aclose()
        await store.close()


async def test_an_unknown_run_id_is_not_foreign_when_its_owner_expired(
    redis_url: str, unique_prefix: str
) -> None:
    ns = unique_prefix.rstrip("-.")
    client = aioredis.Redis.from_url(redis_url)
    store = RedisLedgerStore(client, ns=ns, ttl_seconds=60, durability="none")
    try:
        await client.zadd(f"{ns}:owners:{{c9}}", {"old-run": 1})  # expired long ago: readers ignore it
        lookups = await store.read_many([("r", "c9")])
        assert lookups[("r", "c9")].foreign_owner is False
    finally:
        await client.aclose()


def test_uuid_prefixes_are_unique() -> None:
    assert len({uuid.uuid4().hex[:8] for _ in range(100)}) == 100


async def test_topics_auto_created_by_an_early_producer_are_adopted(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    """raw-hits published before any worker ran: the broker auto-creates it with its default count
    (1 here); the worker creates the other nine with that same count instead of refusing to start."""
    await publish(kafka_bootstrap, f"{unique_prefix}raw-hits", RAW[:3])
    worker = Worker(worker_env(unique_prefix, kafka_bootstrap, redis_url), tmp_path / "worker.log").start()
    try:
        ledger = await read_topic(kafka_bootstrap, f"{unique_prefix}ledger", until=lambda v: len(v) >= 3)
        assert len(ledger) == 3, worker.log_tail()
    finally:
        worker.stop()
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        names = [t for t in await admin.list_topics() if t.startswith(unique_prefix)]
        counts = {t["topic"]: len(t["partitions"]) for t in await admin.describe_topics(names)}
    finally:
        await admin.close()
    spec_topics = {name: count for name, count in counts.items() if "__" not in name}
    assert len(spec_topics) == len(Topic) and set(spec_topics.values()) == {1}, counts
