"""Three workers in one consumer group on six partitions; one is SIGKILLed mid-stream and its
partitions move to the others: nothing is lost, nothing changes (and the suite's invariants hold)."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

from tests.faults.invariants import check_invariants, rejected_inputs
from tests.faults.support import HookedWorker, Run, expected, fault_env, record_mix, wait_progress
from tests.services import FaultKafka, FaultRedis


async def test_three_workers_one_sigkilled(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"f-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    records = record_mix(4000, seed=9)
    want = expected(records, run.settings)
    keys = sorted(want.entries)
    await run.prepare(partitions=6)
    await run.publish("raw-hits", records[:2000])
    env = fault_env(run.prefix, run.kafka, run.redis, EC_TOPIC_PARTITIONS="6")
    workers = [HookedWorker(env, tmp_path / f"worker{i}.log").start() for i in range(3)]
    try:
        await wait_progress(run, keys, 0.2, workers[0])
        victim = workers.pop(1)
        victim.kill()
        # records keep arriving on every partition, the victim's included: someone must take them over
        await run.publish("raw-hits", records[2000:])
        await run.wait_entries(keys, workers)
        await run.check(want)
        assert all(w.running for w in workers), "\n".join(w.log_tail() for w in workers)
        deadline = time.monotonic() + 30
        while True:
            assigned = [w.log_path.read_text().count("Executing _on_partitions_assigned") for w in workers]
            if all(n >= 2 for n in assigned) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        assert all(n >= 2 for n in assigned), f"the survivors did not take over partitions: {assigned}"
        await check_invariants(
            run.settings, valid_inputs=want.entries, rejected_inputs=rejected_inputs(records, run.settings)
        )
    finally:
        for worker in workers:
            worker.stop()
