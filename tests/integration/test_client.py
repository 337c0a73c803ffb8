"""The agent's client on the real broker, Redis and a real worker: lookups and checks end to end."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiokafka.structs import TopicPartition

from models.vocab import DeadLetterReason, LedgerStatus, Topic
from streams import codec
from streams.client import EvidenceChainClient, LookupTimeout, RejectedInput, repair_prompt
from streams.hashing import sha256_hex
from streams.kafka.admin import ensure_topics
from streams.kafka.config import new_consumer, started
from streams.ledger.redis import RedisLedgerStore
from streams.settings import Settings
from tests.integration.helpers import (
    Stack,
    Worker,
    golden_lines,
    isolated_settings,
    load_golden_ledger,
    new_prefix,
    worker_env,
)

RAW = golden_lines("pipe", "input.jsonl")
EXPECTED = golden_lines("pipe", "expected_projection.jsonl")
DRAFTS = golden_lines("guard", "drafts.jsonl")
VERDICTS = golden_lines("guard", "expected_verdicts.jsonl")
UNSTAMPED = ("event_id", "origin", "source_timestamp")
STACK_SETTINGS = {"gateway_timeout_ms": 30_000}
"""The module's worker stack (conftest.py's ``stack``): the client waits up to 30 s for a reply."""


def _comparable(verdict: dict) -> dict:
    """A verdict without its stamps and free-text messages (the golden messages are the reference's)."""
    out = {k: v for k, v in verdict.items() if k not in UNSTAMPED}
    out["violations"] = [(v["code"], v["path"]) for v in out["violations"]]
    return out


@pytest.fixture
async def client(stack: Stack) -> AsyncIterator[EvidenceChainClient]:
    async with EvidenceChainClient(stack.settings) as chain:
        yield chain


async def _end_offsets(settings: Settings, topic: str) -> dict[int, int]:
    name = settings.topic(topic)
    consumer = new_consumer(settings, group_id=None)
    async with started(consumer, "end offsets"):
        await consumer.topics()  # loads the metadata
        tps = [TopicPartition(name, p) for p in sorted(consumer.partitions_for_topic(name) or [])]
        ends = await consumer.end_offsets(tps)
    return {tp.partition: offset for tp, offset in ends.items()}


async def test_golden_lookups_return_the_exact_ledger_bytes(client: EvidenceChainClient) -> None:
    first: dict[tuple[str, str], bytes] = {}
    for raw, expected in zip(RAW, EXPECTED, strict=True):
        want = codec.loads(expected)
        if isinstance(want, dict) and "dead_letter" in want and want["dead_letter"]["run_id"] is None:
            with pytest.raises(RejectedInput) as refused:
                await client.lookup(raw)
            assert refused.value.reason == want["dead_letter"]["reason"]
            continue
        reply = await client.lookup(raw)
        key = (reply.run_id, reply.tool_call_id)
        if "dead_letter" in want:
            assert reply.status == LedgerStatus.FAILED
            assert reply.failure_reason == want["dead_letter"]["reason"]
            assert reply.projection is None
            continue
        assert reply.status == LedgerStatus.READY
        assert reply.projection_bytes is not None
        # A key seen before keeps its first entry (write-once); otherwise the exact golden bytes.
        assert reply.projection_bytes == first.setdefault(key, expected)
        assert reply.projection_sha256 == sha256_hex(reply.projection_bytes)
        assert reply.as_answer()["projection"] == reply.projection


async def test_golden_drafts_get_the_reference_verdicts(stack: Stack, client: EvidenceChainClient) -> None:
    await load_golden_ledger(stack.settings.redis_url.get_secret_value(), stack.settings.ns)
    for draft, expected in zip(DRAFTS, VERDICTS, strict=True):
        reply = await client.check(draft)
        assert _comparable(reply.verdict) == _comparable(codec.loads(expected))
        assert reply.verdict["draft_sha256"] == sha256_hex(draft)
        assert reply.verdict["origin"]["topic"] == stack.settings.topic(Topic.DIAGNOSIS_DRAFTS)
        assert codec.loads(reply.raw) == reply.verdict


async def test_unparsable_drafts_get_their_verdicts_too(client: EvidenceChainClient) -> None:
    for draft in (b"not json", b"[1, 2]", b'{"run_id": "r:1", "draft_id": ""}', b'{"draft_id": "x"}'):
        reply = await client.check(draft)
        assert reply.verdict["draft_sha256"] == sha256_hex(draft)
        assert reply.kind == "REJECT"
        assert repair_prompt(reply.verdict)


async def test_many_lookups_in_flight_share_one_reader_per_partition(
    stack: Stack, client: EvidenceChainClient
) -> None:
    base = codec.loads(RAW[0])
    records = []
    for run in range(40):
        for call in range(6):
            records.append(codec.dumps({**base, "run_id": f"run-many-{run}", "tool_call_id": f"call-{call}"}))
    replies = await asyncio.gather(*(client.lookup(r) for r in records))
    assert [(r.run_id, r.tool_call_id) for r in replies] == [
        (codec.loads(r)["run_id"], codec.loads(r)["tool_call_id"]) for r in records
    ]
    assert {r.status for r in replies} == {LedgerStatus.READY}
    assert len({r.projection_sha256 for r in replies}) == 6  # the projection carries the tool call id
    ledger_readers = [r for r in client.readers if r.tp.topic == stack.settings.topic(Topic.LEDGER)]
    assert len(ledger_readers) == len({r.tp.partition for r in ledger_readers}) == 3
    assert all(r.waiting == 0 for r in client.readers)


async def test_a_key_the_ledger_holds_returns_at_once_without_producing(
    stack: Stack, client: EvidenceChainClient
) -> None:
    record = codec.dumps({**codec.loads(RAW[0]), "run_id": "run-held", "tool_call_id": "call-held"})
    first = await client.lookup(record)
    before = await _end_offsets(stack.settings, Topic.RAW_HITS)
    again = await client.lookup(record)
    assert again.from_ledger and not first.from_ledger
    assert again.entry == first.entry
    assert await _end_offsets(stack.settings, Topic.RAW_HITS) == before


async def test_invalid_ids_raise_at_once_and_produce_nothing(
    stack: Stack, client: EvidenceChainClient
) -> None:
    before = await _end_offsets(stack.settings, Topic.RAW_HITS)
    for bad, reason in (
        (b"{not json", DeadLetterReason.MALFORMED_JSON),
        (b'{"run_id": "a:b", "tool_call_id": "c", "response": {}}', DeadLetterReason.INVALID_ID),
        (b'{"run_id": "a", "response": {}}', DeadLetterReason.INVALID_ID),
    ):
        with pytest.raises(RejectedInput) as refused:
            await client.lookup(bad, timeout_ms=100)
        assert refused.value.reason == reason
    assert await _end_offsets(stack.settings, Topic.RAW_HITS) == before


async def test_a_retried_lookup_after_a_timeout_returns_identical_bytes_and_one_entry(
    kafka_bootstrap: str, redis_url: str, tmp_path: Path
) -> None:
    prefix = new_prefix()
    settings = isolated_settings(prefix, kafka_bootstrap, redis_url, gateway_timeout_ms=30_000)
    await ensure_topics(settings)
    record = codec.dumps({**codec.loads(RAW[0]), "run_id": "run-retry", "tool_call_id": "call-retry"})
    async with EvidenceChainClient(settings) as client:
        started_at = time.monotonic()
        with pytest.raises(LookupTimeout):
            await client.lookup(record, timeout_ms=500)  # no worker yet: the record waits in raw-hits
        assert time.monotonic() - started_at < 5
        assert all(r.waiting == 0 for r in client.readers)  # nothing left behind
        worker = Worker(worker_env(prefix, kafka_bootstrap, redis_url), tmp_path / "worker.log").start()
        try:
            retried = await client.lookup(record, timeout_ms=60_000)
            again = await client.lookup(record, timeout_ms=60_000)
        finally:
            worker.stop()
    assert retried.status == LedgerStatus.READY
    assert again.projection_bytes == retried.projection_bytes
    assert again.entry == retried.entry
    store = RedisLedgerStore.from_settings(settings)
    try:
        keys = [k async for k in store.client.scan_iter(match=f"{settings.ns}:ledger:*", count=1000)]
    finally:
        await store.close()
    assert len(keys) == 1
