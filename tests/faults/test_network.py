"""The network between a worker and its broker and Redis delayed and lossy, then cut for 20 s: the
worker runs in a network namespace of its own, joined to the broker and Redis by a wire of the test's
own (tests/faults/wire.py, two TUN devices and a process copying packets: this machine's kernel is built
without ``sch_netem``, so ``tc netem`` cannot run here; the wire does what it would). Every packet
leaving the worker waits 200 ms ± 50 ms and 1 % of the packets each way are dropped while it starts and
works; then the wire drops everything for 20 s (connections left hanging, as in a partition) and comes
back, still slow and lossy. No loss, no zombie (the worker never exits and finishes the stream), nothing
written while cut (the batch in flight waits for its acknowledgements, uncommitted), recovery after:
the broker dropped the silent member, which joins again and finishes. Then more records go through on
a clean link."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.invariants import check_invariants, rejected_inputs
from tests.faults.support import REPO, HookedWorker, Run, expected, fault_env, record_mix, wait_progress
from tests.services import FaultKafka, FaultRedis, NetNamespace

CUT_SECONDS = 20
DELAY_MS, JITTER_MS = 200, 50
LOSS_PERCENT = 1


@pytest.fixture
def namespace() -> Iterator[NetNamespace]:
    made = NetNamespace().create()
    try:
        yield made
    finally:
        made.delete()


@pytest.fixture
def services(namespace: NetNamespace, tmp_path: Path) -> Iterator[tuple[FaultKafka, FaultRedis]]:
    """A broker and a Redis on this side's end of the wire (the only address the worker can reach)."""
    kafka = FaultKafka(tmp_path / "kafka", host=namespace.host_ip)
    # with a password: Redis's protected mode refuses a passwordless default user beyond the loopback
    redis = FaultRedis(tmp_path / "redis", password=uuid.uuid4().hex, host=namespace.host_ip)
    kafka.start()
    redis.start()
    try:
        yield kafka, redis
    finally:
        kafka.stop(kill=True)
        redis.stop()


async def test_the_network_to_a_worker_delayed_and_lossy_then_cut_for_20_s_mid_stream(
    namespace: NetNamespace, services: tuple[FaultKafka, FaultRedis], tmp_path: Path
) -> None:
    kafka, redis = services
    run = Run(f"n-{uuid.uuid4().hex[:6]}-", kafka.bootstrap, redis.url)
    records = record_mix(800, seed=31)  # lean: the slow link carries a few records a second
    first, later = records[:400], records[400:]  # slow, lossy and cut during the first; clean later
    want = expected(records, run.settings)
    keys = sorted(expected(first, run.settings).entries)
    await run.prepare()
    await run.publish("raw-hits", first)
    namespace.delay(DELAY_MS, JITTER_MS)
    namespace.lose(LOSS_PERCENT)
    worker = HookedWorker(
        fault_env(run.prefix, run.kafka, run.redis),
        tmp_path / "worker.log",
        command=namespace.command(sys.executable, "-m", "tests.faults.hooked_worker"),
        cwd=REPO,
    ).start()
    try:
        slow = time.monotonic()
        await wait_progress(run, keys, 0.3, worker)
        slow_seconds = time.monotonic() - slow
        slow_entries = await run.entries_found(keys)
        namespace.cut()
        cut_at = await run.entries_found(keys)
        await asyncio.sleep(CUT_SECONDS)
        during = await run.entries_found(keys) - cut_at
        assert worker.running, worker.log_tail()
        namespace.restore()  # still delayed and lossy
        back = time.monotonic()
        await run.wait_entries(keys, [worker])
        recovered = time.monotonic() - back

        namespace.delay(0)
        namespace.lose(0)
        await run.publish("raw-hits", later)
        await run.wait_entries(sorted(want.entries), [worker])
        await run.check(want)  # exact dead letters: none for the delay, the loss or the cut
        await check_invariants(
            run.settings, valid_inputs=want.entries, rejected_inputs=rejected_inputs(records, run.settings)
        )
        assert worker.running and worker.exits == [], worker.log_tail()
        assert during == 0, f"{during} entries written while the worker could reach neither Kafka nor Redis"
        log = worker.log_path.read_text(errors="replace")
        # the broker dropped the silent member; it came back, joined again and finished the stream
        assert "(Re-)joining group" in log.split("Worker ready", 1)[1], "the worker never joined again"
        print(  # noqa: T201 - the figures docs/RELIABILITY.md quotes (pytest -s)
            f"[figures] network: records={len(records)}, {DELAY_MS}±{JITTER_MS} ms and {LOSS_PERCENT}% loss: "
            f"{slow_entries} entries in {slow_seconds:.1f}s from the worker's start; cut={CUT_SECONDS}s at "
            f"{cut_at} entries, entries_written_while_cut={during}, lost=0, "
            f"seconds_from_restore_to_last_entry={recovered:.1f} (still delayed and lossy); then "
            f"{len(later)} records on a clean link, lost=0"
        )
    finally:
        worker.stop()
