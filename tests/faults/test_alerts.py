"""The held-batch alert on a real Prometheus (Debian's package): it scrapes a real worker every second
with deploy/prometheus/evidence-chain.rules.yml loaded as shipped. Redis is killed mid-stream; within
two minutes Prometheus's own API says EvidenceChainBatchHeld fires for the ledger agent; Redis comes
back, the alert resolves, and every record ends as the spec decides (nothing lost, no dead letter
for the outage). Quiet before the outage and after it."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from tests.faults.support import HookedWorker, Run, expected, fault_env, record_mix, wait_progress
from tests.services import FaultKafka, FaultRedis, Prometheus, free_port

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "deploy" / "prometheus" / "evidence-chain.rules.yml"
ALERT = "EvidenceChainBatchHeld"
FIRES_WITHIN_S = 120
"""Acceptance: the alert fires within two minutes of the outage (its rule: a batch held over 60 s)."""
RESOLVES_WITHIN_S = 60


def api(prometheus: Prometheus, path: str) -> Any:
    try:
        with urllib.request.urlopen(f"{prometheus.url}{path}", timeout=5) as response:  # noqa: S310 - local
            return json.loads(response.read())
    except (urllib.error.URLError, OSError) as exc:
        raise AssertionError(f"Prometheus {path}: {exc}\n{prometheus.log_tail()}") from exc


async def alerts(prometheus: Prometheus) -> list[dict[str, Any]]:
    """The active alerts (pending and firing) of the rule, as ``GET /api/v1/alerts`` lists them."""
    answer = await asyncio.to_thread(api, prometheus, "/api/v1/alerts")
    assert answer["status"] == "success", answer
    return [a for a in answer["data"]["alerts"] if a["labels"]["alertname"] == ALERT]


async def until(check: Any, seconds: float, what: str, worker: HookedWorker, prometheus: Prometheus) -> float:
    """Seconds until ``await check()`` is true (at most ``seconds``), restarting an exited worker."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        worker.supervise()
        if await check():
            return time.monotonic() - started
        await asyncio.sleep(1)
    raise AssertionError(f"not {what} within {seconds}s\n{worker.log_tail()}\n{prometheus.log_tail()}")


async def test_a_redis_outage_fires_the_held_batch_alert_and_recovery_resolves_it(
    fault_kafka: FaultKafka, fault_redis: FaultRedis, tmp_path: Path
) -> None:
    run = Run(f"f-{uuid.uuid4().hex[:6]}-", fault_kafka.bootstrap, fault_redis.url)
    records = record_mix(3000, seed=43)
    want = expected(records, run.settings)
    keys = sorted(want.entries)
    await run.prepare()
    await run.publish("raw-hits", records)
    port = free_port()
    # slowed to about 100 records/s, so most of the work is surely still to do when Redis dies (at full
    # speed the worker can finish first: an idle worker holds no batch, and nothing fires)
    slow = {"EC_BATCH_SIZE": "50", "EC_TEST_BATCH_DELAY": "0.5"}
    env = fault_env(run.prefix, run.kafka, run.redis, EC_WEB_ENABLED="true", EC_WEB_PORT=str(port), **slow)
    worker = HookedWorker(env, tmp_path / "worker.log").start()
    prometheus = Prometheus(tmp_path / "prometheus", [f"127.0.0.1:{port}"], [RULES], job="evidence-chain")
    prometheus.start()
    try:

        async def scraped() -> bool:
            query = "/api/v1/query?query=evidence_chain_held_seconds%7Bagent%3D%22ledger%22%7D"
            answer = await asyncio.to_thread(api, prometheus, query)
            return bool(answer["data"]["result"])

        await until(scraped, 60, "scraping the worker", worker, prometheus)
        rules = await asyncio.to_thread(api, prometheus, "/api/v1/rules")
        loaded = {r["name"] for g in rules["data"]["groups"] for r in g["rules"]}
        assert ALERT in loaded and len(loaded) >= 12, loaded
        await wait_progress(run, keys, 0.3, worker)
        assert await alerts(prometheus) == [], "the alert is active before any outage"

        assert await run.entries_found(keys) < 0.9 * len(keys), "the worker must still have work in flight"
        fault_redis.stop(kill=True)  # mid-stream: the ledger agent holds its batch

        async def firing() -> bool:
            return any(
                a["state"] == "firing" and a["labels"].get("agent") == "ledger"
                for a in await alerts(prometheus)
            )

        fired_after = await until(firing, FIRES_WITHIN_S, f"{ALERT} firing", worker, prometheus)
        (alert,) = [a for a in await alerts(prometheus) if a["state"] == "firing"]
        assert alert["labels"]["severity"] == "critical" and alert["labels"]["job"] == "evidence-chain"
        assert alert["annotations"]["runbook_url"] == "docs/OPERATIONS.md#evidencechainbatchheld"
        assert "ledger on 127.0.0.1:" in alert["annotations"]["summary"]
        assert fired_after > 55, f"fired after {fired_after:.0f}s: the rule waits for a minute's hold"

        fault_redis.start()

        async def resolved() -> bool:
            return await alerts(prometheus) == []

        await until(resolved, RESOLVES_WITHIN_S, f"{ALERT} resolved", worker, prometheus)
        await run.wait_entries(keys, [worker])
        await run.check(want)  # every entry as decided, dead letters exactly the hostile records'
        assert await alerts(prometheus) == [], "the alert came back after the recovery"
        assert worker.exits == [], f"the worker exited ({worker.exits}) during a 1-2 minute outage"
    finally:
        prometheus.stop()
        worker.stop()
