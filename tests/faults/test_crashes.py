"""Workers SIGKILLed at random moments and restarted, hostile records among the valid ones: every valid
record READY exactly once, every hostile one as the SPEC decides, no CONFLICT, repeats identical."""

from __future__ import annotations

import random
import uuid
from pathlib import Path

from tests.faults.support import (
    HOSTILE_KINDS,
    HookedWorker,
    Run,
    expected,
    fault_env,
    record_mix,
    wait_progress,
)
from tests.services import FaultKafka, FaultRedis


async def test_three_sigkills_lose_nothing(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"f-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    records = record_mix(10_500)
    want = expected(records, run.settings)
    statuses = [s for s, _ in want.entries.values()]
    assert statuses.count("FAILED") >= 10 and statuses.count("READY") >= 10_000  # the mix is what it says
    assert (
        set(want.rejections) >= {"SCHEMA_VIOLATION", "INVALID_ID", "MALFORMED_JSON"}
        and len(HOSTILE_KINDS) == 7
    )
    await run.prepare()
    await run.publish("raw-hits", records)
    worker = HookedWorker(fault_env(run.prefix, run.kafka, run.redis), tmp_path / "worker.log").start()
    keys = sorted(want.entries)
    try:
        for share in sorted(random.uniform(0.1, 0.8) for _ in range(3)):
            await wait_progress(run, keys, share, worker)
            worker.kill()  # SIGKILL: no commit, no flush, no goodbye to the group
            worker.start()
        await run.wait_entries(keys, [worker])
        await run.check(want)
        assert worker.running, worker.log_tail()
        assert worker.exits == [-9, -9, -9], worker.log_tail()  # it never exited on its own
    finally:
        worker.stop()
