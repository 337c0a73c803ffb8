"""What an operator relies on, on a real broker and Redis: ``/metrics`` counts what was sent,
``/readyz`` follows Redis, ``/livez`` catches a wedged agent, JSON log lines, and three workers in one
group on six partitions sharing a stream while one of them stops mid-stream."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
import uuid
from collections import defaultdict
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from streams import codec
from tests.faults.support import HookedWorker, Run, expected, fault_env, record_mix, wait_progress
from tests.services import FaultKafka, FaultRedis, free_port


def get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:  # noqa: S310
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


async def http(port: int, path: str) -> tuple[int, bytes]:
    return await asyncio.to_thread(get, port, path)


async def until_status(port: int, path: str, status: int, seconds: float) -> bytes:
    deadline = time.monotonic() + seconds
    last: tuple[int, bytes] = (0, b"")
    while time.monotonic() < deadline:
        last = await http(port, path)
        if last[0] == status:
            return last[1]
        await asyncio.sleep(0.5)
    raise AssertionError(f"{path} answered {last[0]} {last[1][:300]!r}, not {status}, for {seconds}s")


async def counters(port: int) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    status, body = await http(port, "/metrics")
    assert status == 200, body[:300]
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = defaultdict(dict)
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            out[sample.name][tuple(sorted(sample.labels.items()))] = sample.value
    return out


def total(found: dict[str, dict[tuple[tuple[str, str], ...], float]], name: str, **labels: str) -> float:
    return sum(v for k, v in found.get(name, {}).items() if set(labels.items()) <= set(k))


def web_env(run: Run, port: int, **extra: str) -> dict[str, str]:
    return fault_env(run.prefix, run.kafka, run.redis, EC_WEB_ENABLED="true", EC_WEB_PORT=str(port), **extra)


async def test_metrics_count_what_was_sent_and_readiness_follows_redis(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"o-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    records = record_mix(600, hostile_every=23)
    want = expected(records, run.settings)
    await run.prepare()
    port = free_port()
    worker = HookedWorker(web_env(run, port, EC_LOG_FORMAT="json"), tmp_path / "worker.log").start()
    try:
        await until_status(port, "/readyz", 200, 60)
        await run.publish("raw-hits", records)
        await run.wait_entries(sorted(want.entries), [worker])
        await asyncio.sleep(1.0)  # the ledger agent's last batch finishes its sends
        found = await counters(port)
        assert total(found, "evidence_chain_records_total", agent="postprocess") == len(records)
        assert total(found, "evidence_chain_records_total", agent="ledger") == len(want.entries)
        assert total(found, "evidence_chain_records_total", agent="ledger", outcome="ok") == len(want.entries)
        for reason, count in want.rejections.items():
            assert (
                total(found, "evidence_chain_dead_letters_total", agent="postprocess", reason=reason) == count
            )
        assert total(found, "evidence_chain_redis_round_trips_total", agent="ledger") >= 1
        assert total(found, "evidence_chain_batch_seconds_count", agent="project") >= 1
        assert total(found, "evidence_chain_consumer_lag") == 0
        assert (await http(port, "/livez"))[0] == 200

        fault_redis.stop(kill=True)
        body = json.loads(await until_status(port, "/readyz", 503, 20))
        assert "redis" in body["problems"], body
        assert (await http(port, "/livez"))[0] == 200  # an outage is not a stall
        fault_redis.start()
        await until_status(port, "/readyz", 200, 30)
    finally:
        worker.stop()
    lines = [line for line in worker.log_path.read_text().splitlines() if line.strip()]
    parsed = [json.loads(line) for line in lines if line.startswith("{")]
    assert len(parsed) >= 0.9 * len(lines), "EC_LOG_FORMAT=json: not one JSON object per line"
    letters = [p for p in parsed if "dead letter" in p["message"]]
    assert len(letters) == sum(want.rejections.values())
    assert all({"agent", "topic", "partition", "offset", "event_id", "reason"} <= set(p) for p in letters)


async def test_livez_fails_when_an_agent_is_wedged(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"o-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    await run.prepare()
    port = free_port()
    env = web_env(run, port, EC_STALL_SECONDS="3", EC_TEST_STALL_ON="wedge-this-batch")
    worker = HookedWorker(env, tmp_path / "worker.log").start()
    try:
        await until_status(port, "/livez", 200, 60)
        records = record_mix(20)
        records[5] = records[5].replace(b'"query":"', b'"query":"wedge-this-batch ', 1)  # reaches project
        await run.publish("raw-hits", records)
        body = json.loads(await until_status(port, "/livez", 503, 40))
        assert "project" in body["stalled"], body
        assert "postprocess" not in body["stalled"]
    finally:
        worker.stop()


async def test_three_workers_share_six_partitions_and_one_stops_mid_stream(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"o-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    first, second = record_mix(1500, seed=31), record_mix(300, seed=32)
    second = [r.replace(b'"call-', b'"later-call-') for r in second]
    want = expected(first + second, run.settings)
    await run.prepare(partitions=6)
    ports = [free_port() for _ in range(3)]
    workers = [
        HookedWorker(web_env(run, p), tmp_path / f"worker-{i}.log").start() for i, p in enumerate(ports)
    ]
    try:
        for port in ports:
            await until_status(port, "/readyz", 200, 90)
        await run.publish("raw-hits", first)
        await wait_progress(run, sorted(want.entries), 0.3, workers[0])
        workers[2].stop()  # mid-stream: its partitions go to the other two
        await run.wait_entries(sorted(k for k in want.entries if not k[1].startswith("later-")), workers[:2])
        for port in ports[:2]:
            await until_status(port, "/readyz", 200, 60)
        await asyncio.sleep(1.5)  # commits land
        before = [await counters(p) for p in ports[:2]]
        await run.publish("raw-hits", second)
        await run.wait_entries(sorted(want.entries), workers[:2])
        await asyncio.sleep(1.5)
        after = [await counters(p) for p in ports[:2]]
        checked = await run.check(want)
        assert checked["reasons"]["LEDGER_CONFLICT"] == 0
    finally:
        for worker in workers:
            worker.stop()
    assert all(w.exits == [] for w in workers), "a worker exited on its own"
    # the stream after the stop: the two workers' counters add up to exactly what was sent
    moved = [
        total(a, "evidence_chain_records_total", agent="postprocess")
        - total(b, "evidence_chain_records_total", agent="postprocess")
        for a, b in zip(after, before, strict=True)
    ]
    assert sum(moved) == len(second)
    assert all(m > 0 for m in moved), f"one worker took no partition of the 6: {moved}"
    sent_later = sum(1 for k in want.entries if k[1].startswith("later-"))
    written = sum(
        total(a, "evidence_chain_records_total", agent="ledger", outcome="ok")
        - total(b, "evidence_chain_records_total", agent="ledger", outcome="ok")
        for a, b in zip(after, before, strict=True)
    )
    assert written == sent_later
    # every record once in the ledger: one entry per key, never a conflict, repeats identical
    keys = {(e["run_id"], e["tool_call_id"]) for e in map(codec.loads, checked["ledger"])}
    assert keys == set(want.entries)
