"""Three workers in one consumer group on six partitions; one is SIGKILLed mid-stream and its
partitions move to the others: nothing is lost, nothing changes (and the suite's invariants hold)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from tests.faults.invariants import check_invariants, rejected_inputs
from tests.faults.support import HookedWorker, Run, expected, fault_env, record_mix, wait_progress
from tests.integration.helpers import Worker
from tests.services import FaultKafka, FaultRedis


def assignments(worker: Worker) -> int:
    """How many times ``worker`` was given its partitions (Faust logs each assignment)."""
    return worker.log_path.read_text(errors="replace").count("Executing _on_partitions_assigned")


async def assignments_when(
    workers: list[Worker], ok: Callable[[list[int]], bool], seconds: float
) -> list[int]:
    """Each worker's :func:`assignments`, read every 0.5 s until ``ok`` holds or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while True:
        counts = [assignments(w) for w in workers]
        if ok(counts) or time.monotonic() > deadline:
            return counts
        await asyncio.sleep(0.5)


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
        # all three in the group before the kill (a worker still starting would be no victim at all)
        joined = await assignments_when(workers, lambda counts: min(counts) > 0, 60)
        assert min(joined) > 0, "\n".join(w.log_tail() for w in workers)
        victim = workers.pop(1)
        before = [assignments(w) for w in workers]
        victim.kill()
        # records keep arriving on every partition, the victim's included: someone must take them over
        await run.publish("raw-hits", records[2000:])
        await run.wait_entries(keys, workers)
        await run.check(want)
        assert all(w.running for w in workers), "\n".join(w.log_tail() for w in workers)

        def taken_over(counts: list[int]) -> bool:  # each survivor was given partitions again after the kill
            return all(n > b for n, b in zip(counts, before, strict=True))

        assigned = await assignments_when(workers, taken_over, 30)
        assert taken_over(assigned), (
            f"no new assignment for a survivor: {before} assignments before the kill, {assigned} after"
        )
        await check_invariants(
            run.settings, valid_inputs=want.entries, rejected_inputs=rejected_inputs(records, run.settings)
        )
    finally:
        for worker in workers:
            worker.stop()
