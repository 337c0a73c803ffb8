"""Outages, not bad input: Redis stopped mid-stream and mid-guard, Kafka restarted mid-stream, Redis
SIGKILLed after the last ledger event. Nothing is lost, nothing is dead-lettered because of them,
and no verdict is given while the ledger cannot be read."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections import Counter
from pathlib import Path

from streams import codec
from tests.faults.support import HookedWorker, Run, expected, fault_env, record_mix, wait_for, wait_progress
from tests.services import FaultKafka, FaultRedis

OUTAGE_S = 10
LEDGER_HOLD = re.compile(r"ledger: writing \d+ entries failed .*; holding the batch")  # streams.retry.hold


def draft(run_id: str, tool_call_id: str, n: int) -> bytes:
    return codec.dumps(
        {
            "run_id": run_id,
            "draft_id": f"d-{n}",
            "analysis": [{"id": "a1", "kind": "NORMAL", "content": "x", "tool_call_ids": [tool_call_id]}],
            "conclusion": {"content": "c", "based_on_analysis_ids": ["a1"]},
            "limitations": ["only the runbooks"],
        }
    )


async def test_redis_down_mid_stream_and_mid_guard(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"f-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    records = record_mix(3000)
    want = expected(records, run.settings)
    keys = sorted(want.entries)
    # The ledger batch holding a record 40 % into the stream waits at a gate until Redis is dead
    # (tests/faults/hooked_worker.py): a batch is in flight when Redis dies, however busy the machine.
    calls = Counter(tool_call for _, tool_call in keys)
    in_order = list(want.entries)  # in the order of the records
    gate_on = next(t for _, t in in_order[len(in_order) * 2 // 5 :] if calls[t] == 1)
    gate = tmp_path / "gate"
    gate.mkdir()
    await run.prepare()
    await run.publish("raw-hits", records)
    env = fault_env(
        run.prefix,
        run.kafka,
        run.redis,
        EC_TEST_GATE_DIR=str(gate),
        EC_TEST_GATE_ON=f'"tool_call_id":"{gate_on}"',
    )
    worker = HookedWorker(env, tmp_path / "worker.log").start()
    try:
        # mid-stream: the ledger agent holds its batch; nothing is written FAILED or dead-lettered
        await wait_for(lambda: (gate / "waiting").exists(), worker, "the ledger batch at the gate")
        assert await run.entries_found([k for k in keys if k[1] == gate_on]) == 0
        fault_redis.stop(kill=True)
        (gate / "go").touch()
        await wait_for(lambda: bool(LEDGER_HOLD.search(worker.log_path.read_text())), worker, "ledger hold")
        before = len(await run.read("ledger", until=lambda v: True, settle=1.0))
        await asyncio.sleep(OUTAGE_S)
        during = len(await run.read("ledger", until=lambda v: True, settle=0.5))
        assert during - before < 500  # at most the batches that were already written when Redis died
        fault_redis.start()
        await run.wait_entries(keys, [worker])
        await run.check(want)  # exact dead letters: none for the outage

        # mid-guard: drafts that cite READY entries wait for the ledger, then PASS
        ready = [k for k, (status, _) in want.entries.items() if status == "READY"][:50]
        fault_redis.stop(kill=True)
        await run.publish("diagnosis-drafts", [draft(r, t, i) for i, (r, t) in enumerate(ready)])
        held = await run.read("verdicts", until=lambda v: len(v) > 0, wait_seconds=OUTAGE_S)
        assert held == [], "a verdict was given while the ledger could not be read"
        fault_redis.start()
        verdicts = await run.read(
            "verdicts", until=lambda v: len({codec.loads(x)["draft_id"] for x in v}) >= 50
        )
        judged = {codec.loads(v)["draft_id"]: codec.loads(v)["verdict"] for v in verdicts}
        assert judged == {f"d-{i}": "PASS" for i in range(50)}, worker.log_tail()
        assert worker.running, worker.log_tail()
    finally:
        worker.stop()


async def test_kafka_restarted_mid_stream(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"f-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    records = record_mix(3000, seed=5)
    want = expected(records, run.settings)
    keys = sorted(want.entries)
    await run.prepare()
    await run.publish("raw-hits", records)
    worker = HookedWorker(fault_env(run.prefix, run.kafka, run.redis), tmp_path / "worker.log").start()
    try:
        await wait_progress(run, keys, 0.3, worker)
        await asyncio.to_thread(fault_kafka.stop)
        await asyncio.sleep(3)
        await asyncio.to_thread(fault_kafka.start)
        await run.wait_entries(keys, [worker])
        await run.check(want)
    finally:
        worker.stop()


async def test_redis_sigkilled_after_the_last_ledger_event_keeps_every_entry(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    """EC_REDIS_DURABILITY=fsync (the default; the fault Redis runs appendfsync always): an entry whose
    ledger event was sent survives a SIGKILL of Redis."""
    run = Run(f"f-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    records = record_mix(1000, seed=3)
    want = expected(records, run.settings)
    await run.prepare()
    await run.publish("raw-hits", records)
    worker = HookedWorker(fault_env(run.prefix, run.kafka, run.redis), tmp_path / "worker.log").start()
    try:
        ledger = await run.read(
            "ledger", until=lambda v: len({codec.loads(x)["tool_call_id"] for x in v}) >= len(want.entries)
        )
        fault_redis.stop(kill=True)  # the moment the last ledger event is on the topic
        worker.stop()
    finally:
        worker.stop()
    fault_redis.start()
    sent = {(e["run_id"], e["tool_call_id"]) for e in map(codec.loads, ledger)}
    assert sent == set(want.entries)
    assert await run.entries_found(sorted(sent)) == len(sent)
