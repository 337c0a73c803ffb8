"""The agent's client while the worker is SIGKILLed with lookups in flight: every lookup completes after
the restart (within its timeout) or times out cleanly, and none ever returns other bytes than the ledger's."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from pathlib import Path

from streams import codec
from streams.client import EvidenceChainClient, LedgerReply, LookupTimeout
from streams.hashing import sha256_hex
from tests.faults.support import HookedWorker, Run, expected, fault_env, hostile, valid
from tests.services import FaultKafka, FaultRedis

LOOKUPS = 300
READABLE_HOSTILE = ("deep", "long-chunk", "huge-attempt-field")  # ids readable: FAILED or READY entries


async def test_lookups_in_flight_survive_a_worker_sigkill(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"f-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    rng = random.Random(5)
    # Hostile records with readable ids among them: they end FAILED (or READY), never in another's bytes.
    records = [
        hostile(n, READABLE_HOSTILE[(n // 50) % 3]) if n % 50 == 49 else valid(n, rng) for n in range(LOOKUPS)
    ]
    want = expected(records, run.settings)
    await run.prepare()
    worker = HookedWorker(fault_env(run.prefix, run.kafka, run.redis), tmp_path / "worker.log").start()
    settings = run.settings.model_copy(update={"gateway_timeout_ms": 120_000})
    try:
        async with EvidenceChainClient(settings) as client:
            warm = await client.lookup(records[0])  # the worker is up and its partitions assigned
            assert warm.status == "READY", worker.log_tail()

            async def paced(n: int, record: bytes) -> LedgerReply | BaseException:
                await asyncio.sleep(n * 0.01)  # ~100 lookups/s: the kill lands mid-stream
                try:
                    return await client.lookup(record)
                except LookupTimeout as exc:
                    return exc

            flights = [asyncio.create_task(paced(n, r)) for n, r in enumerate(records)]
            await asyncio.sleep(1.0)
            done_before_kill = sum(f.done() for f in flights)
            worker.kill()  # SIGKILL: no commit, no flush
            await asyncio.sleep(1.0)
            killed_at = time.monotonic()
            worker.start()
            results = await asyncio.gather(*flights)
            recovered_in = time.monotonic() - killed_at
            assert all(r.waiting == 0 for r in client.readers)  # nothing left behind
    finally:
        worker.stop()
    assert done_before_kill < LOOKUPS, "the kill came after every lookup had finished"
    replies = [r for r in results if isinstance(r, LedgerReply)]
    timeouts = [r for r in results if isinstance(r, LookupTimeout)]
    assert len(replies) + len(timeouts) == LOOKUPS  # nothing else was raised
    assert not timeouts, f"{len(timeouts)} lookups timed out (recovery took {recovered_in:.1f} s)"
    for record, reply in zip(records, results, strict=True):
        assert isinstance(reply, LedgerReply)
        doc = codec.loads(record)
        assert (reply.run_id, reply.tool_call_id) == (doc["run_id"], doc["tool_call_id"])
        status, sha = want.entries[(reply.run_id, reply.tool_call_id)]
        assert (reply.status, reply.projection_sha256) == (status, sha)
        if reply.projection_bytes is not None:
            assert sha256_hex(reply.projection_bytes) == sha
    assert worker.exits == [-9], worker.log_tail()
