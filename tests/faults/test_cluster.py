"""Faults at cluster scale on ``make up-cluster``'s three brokers (replication factor 3,
``min.insync.replicas=2``): the leader of the partitions in use SIGKILLed mid-stream and brought back,
the active controller SIGKILLed, one broker down for good, and two down at once (below
``min.insync.replicas``: batches held, never dead-lettered, ``/readyz`` says why, work resumes when one
comes back). Each ends with the same check: every valid input READY or FAILED once as decided,
identical in Redis and on the ledger topic, the exact dead letters, no CONFLICT, and the worker never
restarted."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient

from tests.faults.invariants import check_invariants, rejected_inputs
from tests.faults.support import HookedWorker, Run, expected, fault_env, record_mix, wait_progress
from tests.faults.test_operations import http, until_status
from tests.integration.helpers import CLI
from tests.services import FaultRedis, KafkaCluster, free_port


async def leaders(cluster: KafkaCluster, topic: str) -> Counter[int]:
    """How many partitions of ``topic`` each broker leads."""
    admin = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    await admin.start()
    try:
        (described,) = await admin.describe_topics([topic])
    finally:
        await admin.close()
    return Counter(p["leader"] for p in described["partitions"] if p["leader"] >= 0)


def cluster_env(run: Run, **extra: str) -> dict[str, str]:
    return fault_env(run.prefix, run.kafka, run.redis, EC_TOPIC_REPLICATION_FACTOR="3", **extra)


def note(test: str, **figures: object) -> None:
    """What the test measured, for docs/RELIABILITY.md (printed; ``pytest -s`` shows it)."""
    print(f"[figures] {test}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))  # noqa: T201


async def test_the_leader_and_the_controller_sigkilled_mid_stream_and_brought_back(
    kafka_cluster: KafkaCluster, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"c-{uuid.uuid4().hex[:6]}-", kafka_cluster.bootstrap, fault_redis.url, replication=3)
    records = record_mix(2000, seed=21)
    want = expected(records, run.settings)
    keys = sorted(want.entries)
    await run.prepare()
    await run.publish("raw-hits", records[:1000])
    worker = HookedWorker(cluster_env(run), tmp_path / "worker.log").start()
    killed: list[str] = []
    try:
        await wait_progress(run, keys, 0.15, worker)
        leader = (await leaders(kafka_cluster, run.topic("raw-hits"))).most_common(1)[0][0]
        kafka_cluster.kill(leader)
        killed.append(f"leader {leader}")
        await run.publish("raw-hits", records[1000:1500])  # written while that broker is gone
        await asyncio.sleep(3)
        await asyncio.to_thread(kafka_cluster.node_up, leader)

        await wait_progress(run, keys, 0.4, worker)
        controller = await asyncio.to_thread(kafka_cluster.active_controller)
        kafka_cluster.kill(controller)
        killed.append(f"controller {controller}")
        await run.publish("raw-hits", records[1500:])
        await asyncio.sleep(3)
        await asyncio.to_thread(kafka_cluster.node_up, controller)

        started = time.monotonic()
        await run.wait_entries(keys, [worker])
        found = await run.check(want)
        await check_invariants(
            run.settings, valid_inputs=want.entries, rejected_inputs=rejected_inputs(records, run.settings)
        )
        assert worker.running and worker.exits == [], worker.log_tail()
        # what an operator runs after the incident: Redis and the ledger topic agree
        checked = await asyncio.to_thread(
            subprocess.run, [CLI, "ledger", "check", "--json"], env=cluster_env(run), capture_output=True
        )
        assert checked.returncode == 0, checked.stdout.decode() + checked.stderr.decode()
        note(
            "leader+controller",
            records=len(records),
            faults=" then ".join(killed),
            ledger_events=len(found["ledger"]),
            lost=0,
            duplicated_values=0,
            seconds_to_last_entry=round(time.monotonic() - started, 1),
        )
    finally:
        worker.stop()
        await asyncio.to_thread(kafka_cluster.up)


async def test_one_broker_down_for_good_then_two_below_min_insync_replicas(
    kafka_cluster: KafkaCluster, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"c-{uuid.uuid4().hex[:6]}-", kafka_cluster.bootstrap, fault_redis.url, replication=3)
    records = record_mix(1500, seed=23)
    want = expected(records, run.settings)
    keys = sorted(want.entries)
    await run.prepare()
    port = free_port()
    # slowed to about 100 records/s, so half the work is surely still to do when the second broker
    # dies (at full speed the worker could finish first: an idle worker has nothing to hold and stays ready)
    slow = {"EC_BATCH_SIZE": "50", "EC_TEST_BATCH_DELAY": "0.5"}
    worker = HookedWorker(
        cluster_env(run, EC_WEB_ENABLED="true", EC_WEB_PORT=str(port), **slow), tmp_path / "worker.log"
    ).start()
    first, second = 3, 2
    try:
        await until_status(port, "/readyz", 200, 90)
        await run.publish("raw-hits", records[:1400])  # enough that work is left when two are down
        await wait_progress(run, keys, 0.2, worker)
        kafka_cluster.kill(first)  # for good: the ISR shrinks to two and work goes on
        await wait_progress(run, keys, 0.5, worker)

        kafka_cluster.kill(second)  # one broker left: below min.insync.replicas, no controller quorum
        cut = time.monotonic()
        assert await run.entries_found(keys) < 0.9 * len(keys), "the worker must still have work in flight"
        body = json.loads(await until_status(port, "/readyz", 503, 90))
        why = body["problems"]  # a held batch (NotEnoughReplicas, a dead leader) or the lost coordinator
        assert set(why) & {"postprocess", "project", "ledger", "group", "kafka"}, body
        before = await run.entries_found(keys)
        await asyncio.sleep(10)
        assert (await http(port, "/livez"))[0] == 200, "an outage is not a stall"
        assert worker.running, worker.log_tail()
        await asyncio.to_thread(kafka_cluster.node_up, second)
        back = time.monotonic()
        await run.publish("raw-hits", records[1400:])
        await run.wait_entries(keys, [worker])
        resumed = time.monotonic() - back
        await run.check(want)  # exact dead letters: none for the outage
        await check_invariants(
            run.settings, valid_inputs=want.entries, rejected_inputs=rejected_inputs(records, run.settings)
        )
        assert worker.running and worker.exits == [], worker.log_tail()
        await until_status(port, "/readyz", 200, 60)
        note(
            "one down, then two",
            records=len(records),
            faults=f"broker {first} for good, then broker {second} for {back - cut:.0f}s",
            entries_when_two_were_down=before,
            readyz=sorted(why),
            lost=0,
            seconds_from_back_to_last_entry=round(resumed, 1),
        )
    finally:
        worker.stop()
        await asyncio.to_thread(kafka_cluster.up)
