"""Every metric an alert (deploy/prometheus) or a dashboard panel (deploy/grafana) reads is on a running
process's ``/metrics``: a real worker with all five agents on the shared broker and Redis (the semantic
one in advise mode, against the tests' fake judge: its alert reads the judge's calls), scraped once it is
ready (the consumer-lag gauge needs its assignment), and the gateway's routes over a client. ``up`` alone
is Prometheus's own. A name that nothing exports would make an alert that never fires."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

from streams.client import EvidenceChainClient
from streams.web.gateway import create_gateway
from tests.integration.helpers import Worker, isolated_settings, worker_env
from tests.judge import FakeJudge, serve
from tests.promql import metric_names
from tests.services import free_port

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "evidence-chain.rules.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "evidence-chain.json"
PROMETHEUS_OWN = frozenset({"up"})
PARTITIONS = 3
INPUTS = 5
"""worker_env's partition count, and the agents' input topics (raw-hits, postprocessed, projected,
diagnosis-drafts, semantic-review): one lag series each per partition."""


def queried() -> dict[str, set[str]]:
    """``{metric: where it is read}`` over every alert and every dashboard query."""
    where: dict[str, set[str]] = {}
    for group in yaml.safe_load(RULES.read_text())["groups"]:
        for rule in group["rules"]:
            for name in metric_names(rule["expr"]):
                where.setdefault(name, set()).add(f"alert {rule['alert']}")
    dashboard = json.loads(DASHBOARD.read_text())
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            for name in metric_names(target["expr"]):
                where.setdefault(name, set()).add(f"panel {panel['title']!r}")
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            name = variable["definition"].removeprefix("label_values(").split(",")[0]
            where.setdefault(name, set()).add(f"variable {variable['name']}")
    return where


def sample_names(text: str) -> set[str]:
    return {sample.name for family in text_string_to_metric_families(text) for sample in family.samples}


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - a local worker
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""


async def scrape_when_ready(port: int, worker: Worker, seconds: float = 90) -> str:
    """The worker's ``/metrics`` once ``/readyz`` says 200 (assigned, Kafka and Redis answering) and its
    consumer has fetched from every input partition (the lag of a partition needs its high watermark)."""
    deadline = time.monotonic() + seconds
    body = ""
    while time.monotonic() < deadline:
        assert worker.running, worker.log_tail()
        status, _ = await asyncio.to_thread(get, f"http://127.0.0.1:{port}/readyz")
        if status == 200:
            status, body = await asyncio.to_thread(get, f"http://127.0.0.1:{port}/metrics")
            assert status == 200, body[:300]
            if body.count("evidence_chain_consumer_lag{") == INPUTS * PARTITIONS:
                return body
        await asyncio.sleep(0.5)
    raise AssertionError(
        f"the worker was not ready with its lags within {seconds}s\n{body}\n{worker.log_tail()}"
    )


async def test_every_metric_an_alert_or_a_panel_reads_is_exported(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    port = free_port()
    judge, judge_port = await serve(FakeJudge())
    env = worker_env(
        unique_prefix,
        kafka_bootstrap,
        redis_url,
        EC_WEB_ENABLED="true",
        EC_WEB_PORT=str(port),
        EC_SEMANTIC__MODE="advise",
        EC_SEMANTIC__JUDGE_URL=f"http://127.0.0.1:{judge_port}/v1",
        EC_SEMANTIC__JUDGE_MODEL="fake-judge",
    )
    worker = Worker(env, tmp_path / "worker.log").start()
    try:
        worker_text = await scrape_when_ready(port, worker)
    finally:
        worker.stop()
        await judge.cleanup()
    settings = isolated_settings(unique_prefix, kafka_bootstrap, redis_url)
    async with TestClient(TestServer(create_gateway(settings, EvidenceChainClient(settings)))) as gateway:
        # twice, as Prometheus scrapes: a request is counted once it is answered, so the first scrape
        # shows on the second (evidence_chain_gateway_requests_total{route,status} has no series before)
        for _ in range(2):
            response = await gateway.get("/metrics")
            assert response.status == 200
            gateway_text = await response.text()

    exported = sample_names(worker_text) | sample_names(gateway_text)
    wanted = queried()
    assert len(wanted) >= 15, sorted(wanted)  # the alerts and the panels were read
    missing = {name: sorted(where) for name, where in wanted.items() if name not in exported | PROMETHEUS_OWN}
    assert missing == {}, f"read but exported by no process: {missing}"
    # the series the alerts compare are there from the start, at 0, not only after a first event
    assert 'evidence_chain_commits_total{agent="ledger"} 0.0' in worker_text
    assert 'evidence_chain_dead_letters_total{agent="postprocess",reason="INTERNAL_ERROR"} 0.0' in worker_text
    assert "evidence_chain_ready 1.0" in worker_text
    assert 'evidence_chain_door_refusals_total{door="gateway",reason="LEDGER_INTEGRITY"} 0.0' in gateway_text
