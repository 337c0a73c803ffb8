"""A worker whose consumer fetches less per partition than one record (``EC_CONSUMER_FETCH_BYTES``) still
gets every record whole, on every hop: the broker returns a partition's first record batch whatever its
size, so the setting bounds what one fetch takes from a backlog, never which records can be read."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from streams import codec
from streams.kafka.admin import ensure_topics
from tests.integration.helpers import (
    Stack,
    Worker,
    golden_lines,
    isolated_settings,
    new_prefix,
    publish,
    worker_env,
)

FETCH_BYTES = 1024
"""The smallest the setting takes; every record below is several times larger on every hop."""


@pytest.fixture(scope="module")
def small_fetches(
    kafka_bootstrap: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    prefix = new_prefix()
    env = worker_env(prefix, kafka_bootstrap, redis_url, EC_CONSUMER_FETCH_BYTES=str(FETCH_BYTES))
    settings = isolated_settings(prefix, kafka_bootstrap, redis_url)
    asyncio.run(ensure_topics(settings))
    logs: Path = tmp_path_factory.mktemp("fetch-size")
    worker = Worker(env, logs / "worker.log").start()
    try:
        yield Stack(settings, env, worker)
    finally:
        worker.stop()


async def test_records_larger_than_a_fetch_pass_every_hop(small_fetches: Stack) -> None:
    stack = small_fetches
    base = codec.loads(golden_lines("pipe", "input.jsonl")[0])
    raws = []
    for i in range(12):
        doc = {**base, "run_id": f"run-fetch-{i % 3}", "tool_call_id": f"call-fetch-{i}"}
        doc["response"] = {
            **base["response"],
            "hits": [
                {**hit, "excerpt": f"{i}:{j} " + "证据" * 2000}
                for j, hit in enumerate(base["response"]["hits"])
            ],
        }
        raws.append(codec.dumps(doc))
    await publish(stack.kafka, stack.topic("raw-hits"), raws)
    ledger = await stack.values("ledger", len(raws))
    assert sorted(e["tool_call_id"] for e in ledger) == sorted(f"call-fetch-{i}" for i in range(12))
    assert {e["status"] for e in ledger} == {"READY"}
    for topic in ("postprocessed", "projected"):
        values = await stack.values(topic, len(raws))
        assert len(values) == len(raws)
        assert min(len(codec.dumps(v)) for v in values) > 4 * FETCH_BYTES  # each hop read records > a fetch
