"""Bugs, not outages: a station that raises for one record gives that record's dead letter and the
stream goes on; an unexpected batch-level error makes the worker exit non-zero without committing,
and after the restart the whole batch is processed."""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path

from streams import codec
from tests.faults.support import HookedWorker, Run, expected, fault_env, record_mix
from tests.services import FaultKafka, FaultRedis


async def test_a_station_that_raises_for_one_record(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"f-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    records = record_mix(600, hostile_every=10_000)  # all valid
    poisoned = records[300]
    marker = codec.loads(poisoned)["tool_call_id"]
    want = expected(records, run.settings)
    del want.entries[
        (codec.loads(poisoned)["run_id"], marker)
    ]  # INTERNAL_ERROR writes no FAILED entry (SPEC 1)
    await run.prepare()
    await run.publish("raw-hits", records)
    env = fault_env(run.prefix, run.kafka, run.redis, EC_TEST_RAISE_ON=f'"tool_call_id":"{marker}"')
    worker = HookedWorker(env, tmp_path / "worker.log").start()
    try:
        await run.wait_entries(sorted(want.entries), [worker])
        seen = await run.check(want, exact_dead_letters=False)
        assert seen["reasons"] == Counter(INTERNAL_ERROR=1)
        (letter,) = [codec.loads(v) for v in seen["dead_letters"]]
        assert "test hook" in letter["error"] and letter["value"].encode() == poisoned
        assert worker.exits == [] and worker.running  # the worker never stopped
    finally:
        worker.stop()


async def test_an_unexpected_batch_error_exits_and_the_batch_is_processed_after_the_restart(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"f-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    records = record_mix(600, hostile_every=10_000)
    trigger = codec.loads(records[0])["tool_call_id"]
    want = expected(records, run.settings)
    flag = tmp_path / "fail-once"
    flag.write_text("fail the first batch that holds the trigger")
    await run.prepare()
    await run.publish("raw-hits", records)
    env = fault_env(
        run.prefix,
        run.kafka,
        run.redis,
        EC_TEST_BATCH_ERROR_FILE=str(flag),
        EC_TEST_BATCH_ERROR_ON=f'"tool_call_id":"{trigger}"',
    )
    worker = HookedWorker(env, tmp_path / "worker.log").start()
    try:
        assert worker.process is not None
        assert worker.process.wait(120) == 70, worker.log_tail()  # crash-only: exit at once, status 70
        assert not flag.exists()
        log = worker.log_path.read_text()
        assert "exiting (status 70) without committing this batch" in log
        assert "Restarting" not in log  # no in-process agent restart by Faust's supervisor
        # nothing of the failed batch reached the ledger: the first record's entry is not there
        assert await run.entries_found([next(iter(want.entries))]) == 0
        worker.start()  # the supervisor
        await run.wait_entries(sorted(want.entries), [worker])
        await run.check(want)
    finally:
        worker.stop()
