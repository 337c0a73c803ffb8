"""Replay and recovery on the real broker and Redis (SPEC 7): compare, reset, ledger rebuild, export."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from streams import codec
from streams.cli.ledger import rebuild
from streams.cli.replay import compare
from streams.errors import ConfigurationError
from streams.hashing import sha256_hex
from streams.kafka.admin import ensure_topics
from streams.kafka.ranges import Range
from streams.replay.reset import apply_reset, plan_reset
from streams.settings import Settings
from tests.integration.helpers import CLI, Worker, golden_lines, new_prefix, publish, read_topic, worker_env

RAW = golden_lines("pipe", "input.jsonl")
KEYED = 20  # golden raw-hits records with valid ids: 15 READY + 5 FAILED entries
UNKEYED = len(RAW) - KEYED


def _own_db(redis_url: str) -> str:
    """A Redis database of this module's own, so FLUSHDB loses nothing of other tests."""
    base, _, last = redis_url.rpartition("/")
    return f"{base}/7" if last.isdigit() else f"{redis_url.rstrip('/')}/7"


async def snapshot(client: aioredis.Redis, ns: str) -> dict[bytes, dict[bytes, bytes]]:
    keys = [key async for key in client.scan_iter(match=f"{ns}:ledger:*")]
    return {key: await client.hgetall(key) for key in keys}


def ledger_outcomes(values: list[bytes]) -> Counter[str]:
    return Counter(a["fields"]["outcome"] for a in map(codec.loads, values) if a["station"] == "ledger")


async def test_compare_reset_and_rebuild(kafka_bootstrap: str, redis_url: str, tmp_path: Path) -> None:
    prefix = new_prefix()
    url = _own_db(redis_url)
    env = worker_env(prefix, kafka_bootstrap, url)
    settings = Settings(
        kafka_bootstrap=kafka_bootstrap,
        redis_url=url,
        topic_prefix=prefix,
        topic_partitions=3,
        app_id=env["EC_APP_ID"],
        ns=env["EC_NS"],
    )
    await ensure_topics(settings)
    await publish(kafka_bootstrap, settings.topic("raw-hits"), RAW)
    worker = Worker(env, tmp_path / "worker.log").start()
    client = aioredis.Redis.from_url(url)
    try:
        first = await read_topic(kafka_bootstrap, settings.topic("ledger"), until=lambda v: len(v) >= KEYED)
        assert len(first) == KEYED, worker.log_tail()
        with pytest.raises(ConfigurationError, match="stop the workers first"):
            await apply_reset(settings, await plan_reset(settings, Range("raw-hits", from_offset=0)))
        worker.stop()  # graceful: offsets committed

        # compare: the ledger holds exactly what the stations produce now
        with (tmp_path / "diff.jsonl").open("wb") as diffs:
            counts, interrupted = await compare(settings, Range("raw-hits"), diffs)
        assert not interrupted
        assert counts == Counter(same=KEYED, failed=UNKEYED)

        # tamper one entry: compare reports exactly that one
        before = await snapshot(client, settings.ns)
        key = next(k for k, v in before.items() if v[b"status"] == b"READY")
        await client.hset(key, "projection", before[key][b"projection"].replace(b"truncated", b"TRUNCATED"))
        with (tmp_path / "diff3.jsonl").open("wb") as diffs:
            counts, _ = await compare(settings, Range("raw-hits"), diffs)
        assert counts == Counter(same=KEYED - 1, differs=1, failed=UNKEYED)
        differing = [
            d
            for d in map(codec.loads, (tmp_path / "diff3.jsonl").read_bytes().splitlines())
            if d["outcome"] == "differs"
        ]
        assert len(differing) == 1 and key.decode().endswith(
            f"{{{differing[0]['tool_call_id']}}}:{differing[0]['run_id']}"
        )
        await client.hset(key, mapping=before[key])  # put it back
        assert await snapshot(client, settings.ns) == before

        # reset from offset 0: the workers re-process; only DUPLICATE outcomes, Redis byte-identical
        done = await asyncio.to_thread(
            subprocess.run,  # our own console script
            [CLI, "replay", "--mode", "reset", "--from-offset", "0", "--yes"],
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()
        audits_before = ledger_outcomes(
            await read_topic(
                kafka_bootstrap, settings.topic("audit"), until=lambda v: ledger_outcomes(v).total() >= KEYED
            )
        )
        assert audits_before == Counter(WRITTEN=KEYED)
        again = Worker(env, tmp_path / "worker2.log").start()
        try:
            audits = await read_topic(
                kafka_bootstrap,
                settings.topic("audit"),
                until=lambda v: ledger_outcomes(v).total() >= 2 * KEYED,
                settle=2.0,
            )
            assert ledger_outcomes(audits) == Counter(WRITTEN=KEYED, DUPLICATE=KEYED), again.log_tail()
        finally:
            again.stop()
        assert await snapshot(client, settings.ns) == before

        # rebuild after losing Redis: every entry back, byte for byte
        await client.flushdb()
        counts, interrupted = await rebuild(settings)
        assert not interrupted
        assert counts == Counter(written=KEYED, duplicate=KEYED)  # the ledger topic holds both passes
        assert await snapshot(client, settings.ns) == before
        counts, _ = await rebuild(settings)  # idempotent
        assert counts == Counter(duplicate=2 * KEYED)

        # export of one run is what verify --ledger reads
        done = await asyncio.to_thread(
            subprocess.run,
            [CLI, "ledger", "export", "--run", "run-golden-5"],
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        exported = [codec.loads(line) for line in done.stdout.splitlines()]
        assert sorted(e["tool_call_id"] for e in exported) == [
            "call_e",
            "call_f",
            "call_g",
            "call_h",
            "call_i",
        ]
        assert all(e["projection_sha256"] == sha256_hex(e["projection"].encode()) for e in exported)
    finally:
        worker.stop()
        await client.flushdb()
        await client.aclose()


def test_replay_cli_compare_prints_a_summary(kafka_bootstrap: str, redis_url: str, tmp_path: Path) -> None:
    prefix = new_prefix()
    env = worker_env(prefix, kafka_bootstrap, _own_db(redis_url))
    asyncio.run(
        ensure_topics(Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, topic_partitions=3))
    )
    asyncio.run(publish(kafka_bootstrap, f"{prefix}raw-hits", RAW[:3]))
    out = tmp_path / "d.jsonl"
    done = subprocess.run(  # noqa: S603
        [CLI, "replay", "--out", str(out)], env=env, capture_output=True, timeout=120, check=False
    )
    text = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert "missing" in text and "3" in text  # nothing was written to this ledger namespace
    assert len(out.read_bytes().splitlines()) == 3


async def test_rebuild_restores_the_true_remaining_lifetime(
    kafka_bootstrap: str, redis_url: str, tmp_path: Path
) -> None:
    """Records from eight days ago processed today (a backlog) live a full TTL from today, not from
    their origin's timestamp; an entry whose stamped expiry has passed is not restored."""
    from aiokafka import AIOKafkaProducer

    prefix = new_prefix()
    url = _own_db(redis_url)
    env = worker_env(prefix, kafka_bootstrap, url, EC_LEDGER_TTL_SECONDS="604800")
    settings = Settings(
        kafka_bootstrap=kafka_bootstrap,
        redis_url=url,
        topic_prefix=prefix,
        topic_partitions=3,
        app_id=env["EC_APP_ID"],
        ns=env["EC_NS"],
        ledger_ttl_seconds=604800,
    )
    await ensure_topics(settings)
    eight_days_ago = int((time.time() - 8 * 24 * 3600) * 1000)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    await producer.start()
    try:
        for line in RAW[:5]:
            await producer.send_and_wait(
                settings.topic("raw-hits"),
                line,
                key=codec.loads(line)["run_id"].encode(),
                timestamp_ms=eight_days_ago,
            )
    finally:
        await producer.stop()
    worker = Worker(env, tmp_path / "worker.log").start()
    client = aioredis.Redis.from_url(url)
    try:
        events = await read_topic(kafka_bootstrap, settings.topic("ledger"), until=lambda v: len(v) >= 5)
        assert len(events) == 5, worker.log_tail()
        worker.stop()
        ledger = [codec.loads(v) for v in events]
        assert all(e["source_timestamp"] == eight_days_ago for e in ledger)
        assert all(e["expires_at"] - e["written_at"] == 604800 * 1000 for e in ledger)
        assert all(abs(e["written_at"] - time.time() * 1000) < 120_000 for e in ledger)  # written today
        await client.flushdb()
        counts, _ = await rebuild(settings)
        assert counts == Counter(written=5)  # by the origin's timestamp all five would count as expired
        key = (await snapshot(client, settings.ns)).popitem()[0]
        assert 6 * 24 * 3600 * 1000 < await client.pttl(key) <= 604800 * 1000

        # an entry whose stamped expiry is in the past is skipped, not brought back to life
        expired = dict(ledger[0], tool_call_id="call-expired", written_at=1, expires_at=2)
        await publish(kafka_bootstrap, settings.topic("ledger"), [codec.dumps(expired)])
        counts, _ = await rebuild(settings)
        assert counts == Counter(duplicate=5, expired=1)
    finally:
        worker.stop()
        await client.flushdb()
        await client.aclose()
