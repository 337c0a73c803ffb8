"""``evidence-chain ledger check`` on the real broker and Redis: a ledger that agrees with its topic exits
0; after one entry is deleted from Redis and another altered, it exits 1 and names both."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

import redis.asyncio as aioredis

from models.ledger import LEDGER_ENTRY_FIELDS
from streams import codec
from streams.kafka.admin import ensure_topics
from streams.ledger.keys import ledger_key
from streams.settings import Settings
from tests.integration.helpers import CLI, golden_lines, publish, redis_store, worker_env


async def seed(settings: Settings, redis_url: str) -> list[tuple[str, str]]:
    """The golden ledger written to Redis, and each entry as stored on the ledger topic (as the agent
    does); returns the keys."""
    store = redis_store(redis_url, settings.ns)
    try:
        entries: list[Any] = [
            {**dict.fromkeys(LEDGER_ENTRY_FIELDS), **codec.loads(line)}
            for line in golden_lines("guard", "ledger.jsonl")
        ]
        results = await store.write_many(entries)
    finally:
        await store.close()
    await publish(
        settings.kafka_bootstrap, settings.topic("ledger"), [codec.dumps(dict(r.stored)) for r in results]
    )
    return [(r.stored["run_id"], r.stored["tool_call_id"]) for r in results]


async def ledger_check(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return await asyncio.to_thread(
        subprocess.run,  # our own console script
        [CLI, "ledger", "check", *args],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )


async def test_ledger_check_exits_0_when_clean_and_1_naming_a_deleted_and_an_altered_entry(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str
) -> None:
    env = worker_env(unique_prefix, kafka_bootstrap, redis_url)
    settings = Settings(
        kafka_bootstrap=kafka_bootstrap, redis_url=redis_url, topic_prefix=unique_prefix, ns=env["EC_NS"]
    )
    await ensure_topics(settings)
    keys = await seed(settings, redis_url)
    client = aioredis.Redis.from_url(redis_url)
    try:
        clean = await ledger_check(env)
        assert clean.returncode == 0, clean.stdout.decode() + clean.stderr.decode()
        assert "agree" in clean.stdout.decode()

        (deleted_run, deleted_call), (altered_run, altered_call) = keys[0], keys[1]
        await client.delete(ledger_key(settings.ns, deleted_run, deleted_call))
        await client.hset(ledger_key(settings.ns, altered_run, altered_call), "projection_sha256", "0" * 64)

        table = await ledger_check(env, "--limit", "5")
        text = table.stdout.decode()
        assert table.returncode == 1, text + table.stderr.decode()
        assert deleted_call in text and altered_call in text and "2 differences" in text

        found = await ledger_check(env, "--json")
        assert found.returncode == 1, found.stderr.decode()
        report = codec.loads(found.stdout)
        assert report["counts"] | {"same": 0} == {
            "missing": 1,
            "extra": 0,
            "different": 1,
            "conflicting": 0,
            "same": 0,
            "expired": 0,
        }
        assert report["counts"]["same"] == len(keys) - 2
        assert report["examples"]["missing"] == [{"run_id": deleted_run, "tool_call_id": deleted_call}]
        assert report["examples"]["different"] == [{"run_id": altered_run, "tool_call_id": altered_call}]
    finally:
        stale = [key async for key in client.scan_iter(match=f"{settings.ns}:*")]
        if stale:
            await client.delete(*stale)
        await client.aclose()
