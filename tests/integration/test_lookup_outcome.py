"""A lookup says whose record the entry is (issue 32 item 4, SPEC 3.6): ``outcome`` WRITTEN, DUPLICATE
or CONFLICT for *this* request's record, on the real broker, Redis and a worker.

Today's code answered every one of 20 concurrent lookups for one key with the first caller's entry and
nothing to tell the other 19 so; the harness showed its model a projection it never sent.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from models.vocab import LedgerOutcome
from streams import codec
from streams.client import EvidenceChainClient
from streams.client.client import intended_entry
from streams.kafka.admin import ensure_topics
from streams.pipeline import StationRules
from streams.settings import Settings
from tests.integration.helpers import Worker, golden_lines, isolated_settings, new_prefix, worker_env

RAW = codec.loads(golden_lines("pipe", "input.jsonl")[0])


def record(run_id: str, tool_call_id: str, variant: int) -> bytes:
    """The golden record under these ids; ``variant`` changes its query, hence its projection."""
    value = codec.loads(codec.dumps(RAW))
    value["run_id"], value["tool_call_id"] = run_id, tool_call_id
    value["response"]["query"] = f"{value['response']['query']} #{variant}"
    return codec.dumps(value)


@pytest.fixture(scope="module")
def settings(
    kafka_bootstrap: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Settings]:
    prefix = new_prefix()
    chosen = isolated_settings(prefix, kafka_bootstrap, redis_url, gateway_timeout_ms=60_000)
    asyncio.run(ensure_topics(chosen))
    log = Path(tmp_path_factory.mktemp("worker")) / "worker.log"
    worker = Worker(worker_env(prefix, kafka_bootstrap, redis_url), log).start()
    try:
        yield chosen
    finally:
        worker.stop()


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[EvidenceChainClient]:
    async with EvidenceChainClient(settings) as chain:
        yield chain


async def test_twenty_different_records_for_one_key_get_one_written_and_nineteen_conflicts(
    client: EvidenceChainClient, settings: Settings
) -> None:
    run_id, call = f"run-{uuid.uuid4().hex[:8]}", "call_same"
    records = [record(run_id, call, n) for n in range(20)]
    rules = StationRules.without_keys(settings)
    assert len({intended_entry(r, rules)["projection_sha256"] for r in records}) == 20
    replies = await asyncio.gather(*(client.lookup(r) for r in records))
    outcomes = [reply.outcome for reply in replies]
    assert outcomes.count(LedgerOutcome.WRITTEN) == 1, outcomes
    assert outcomes.count(LedgerOutcome.CONFLICT) == 19, outcomes
    stored = {reply.projection_sha256 for reply in replies}
    assert len(stored) == 1  # every caller was answered with the one stored entry
    (winner,) = [
        r for r, reply in zip(records, replies, strict=True) if reply.outcome == LedgerOutcome.WRITTEN
    ]
    assert intended_entry(winner, rules)["projection_sha256"] in stored
    again = await client.lookup(winner)  # read from the ledger now
    assert again.from_ledger and again.outcome == LedgerOutcome.DUPLICATE
    other = await client.lookup(records[0] if records[0] != winner else records[1])
    assert other.from_ledger and other.outcome == LedgerOutcome.CONFLICT
    assert other.as_answer()["outcome"] == "CONFLICT"


async def test_twenty_identical_records_get_one_written_and_the_rest_duplicates(
    client: EvidenceChainClient,
) -> None:
    same = record(f"run-{uuid.uuid4().hex[:8]}", "call_twin", 0)
    replies = await asyncio.gather(*(client.lookup(same) for _ in range(20)))
    outcomes = [reply.outcome for reply in replies]
    assert outcomes.count(LedgerOutcome.WRITTEN) == 1, outcomes
    assert outcomes.count(LedgerOutcome.DUPLICATE) == 19, outcomes
