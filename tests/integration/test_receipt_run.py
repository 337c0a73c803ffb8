"""A real run with signing on, end to end: workers sign, the audit sink keeps the evidence, the Redis ledger
is flushed, and still ``receipt RUN_ID DRAFT_ID`` writes a receipt that ``receipt verify`` passes — and
fails when one excerpt character, one snapshot hash or the verdict is changed — and the run page shows
the excerpts the agent saw."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from models.vocab import Topic
from streams import codec
from streams.audit.sink import run_sink
from streams.kafka.admin import ensure_topics
from streams.settings import Settings
from streams.trust import generate_key_pair
from tests.integration.evidence_run import RUN, conflicting_hit, sample_lines
from tests.integration.helpers import CLI, Worker, publish, read_topic, worker_env
from tests.integration.serving import browser, serving  # noqa: F401 - browser: a fixture

pytestmark = pytest.mark.timeout(300)


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], env=env, capture_output=True, text=True, timeout=60, check=False)  # noqa: S603


async def _flush(redis_url: str, ns: str) -> int:
    """Delete every key of the test's ledger namespace (a flush that leaves other tests' keys alone)."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        keys = [k async for k in client.scan_iter(match=f"{ns}:*", count=1000)]
        if keys:
            await client.delete(*keys)
        return len(keys)
    finally:
        await client.aclose()


async def test_a_receipt_of_a_real_signed_run_verifies_after_a_redis_flush(
    kafka_bootstrap: str,
    redis_url: str,
    unique_prefix: str,
    tmp_path: Path,
    browser: Any,  # noqa: F811 - the fixture
) -> None:
    signer, private, public = generate_key_pair(tmp_path, "ledger", "ledger")
    # one worker runs every agent here: its key signs entries and verdicts, so it is trusted in both roles
    public.write_text(f"{signer.trusted_line('ledger')}\n{signer.trusted_line('guard')}\n", encoding="utf-8")
    keys = {"EC_SIGNING_KEY_FILE": str(private), "EC_TRUSTED_KEYS_FILE": str(public)}
    env = worker_env(unique_prefix, kafka_bootstrap, redis_url, **keys)
    settings = Settings(
        kafka_bootstrap=kafka_bootstrap,
        topic_prefix=unique_prefix,
        app_id=f"{unique_prefix}app",
        topic_partitions=3,
        audit_db=str(tmp_path / "audit.db"),
    )
    await ensure_topics(settings)
    worker = Worker(env, tmp_path / "worker.log").start()
    try:
        await publish(
            kafka_bootstrap,
            settings.topic(Topic.RAW_HITS),
            [*sample_lines("raw-hits.jsonl"), conflicting_hit()],
        )
        ledger = await read_topic(kafka_bootstrap, settings.topic(Topic.LEDGER), until=lambda v: len(v) >= 4)
        assert len(ledger) == 4, worker.log_tail()
        await publish(kafka_bootstrap, settings.topic(Topic.DIAGNOSIS_DRAFTS), sample_lines("drafts.jsonl"))
        verdicts = await read_topic(
            kafka_bootstrap, settings.topic(Topic.VERDICTS), until=lambda v: len(v) >= 3
        )
        assert len(verdicts) == 3, worker.log_tail()
        await read_topic(
            kafka_bootstrap,
            settings.topic(Topic.AUDIT),
            until=lambda v: sum(b'"station":"guard"' in x for x in v) >= 3,
            settle=1.0,
        )
    finally:
        worker.stop()
    stats = await run_sink(settings, once=True, handle_signals=False)
    assert stats.evidence >= 4 + 3 + 3
    assert await _flush(redis_url, env["EC_NS"]) > 0  # Redis no longer holds the entries

    audit_env = {k: v for k, v in os.environ.items() if not k.startswith("EC_")}
    audit_env |= {"EC_AUDIT_DB": settings.audit_db, "EC_REDIS_URL": "redis://127.0.0.1:1/0", **keys}
    out = tmp_path / "receipt.json"
    made = cli("receipt", RUN, "d-ok", "-o", str(out), env=audit_env)
    assert made.returncode == 0, made.stderr
    receipt = codec.loads(out.read_bytes())
    assert receipt["verdict"]["verdict"] == "PASS" and len(receipt["entries"]) == 2
    assert receipt["public_keys"] == {signer.key_id: signer.public_hex}
    stdout = cli("receipt", RUN, "d-ok", env=audit_env)
    assert codec.loads(stdout.stdout) == receipt
    checked = cli("receipt", "verify", str(out), "--trusted-keys", str(public), env=audit_env)
    assert checked.returncode == 0, checked.stderr

    def fails(change: Any, name: str) -> None:
        doc = codec.loads(out.read_bytes())
        change(doc)
        bad = tmp_path / f"{name}.json"
        bad.write_bytes(codec.dumps(doc))
        result = cli("receipt", "verify", str(bad), "--trusted-keys", str(public), env=audit_env)
        assert result.returncode == 1 and "FAIL" in result.stderr, (name, result.stderr)

    def excerpt(doc: dict[str, Any]) -> None:
        entry = doc["entries"][0]
        text = entry["projection"]
        at = text.index('"excerpt":"') + len('"excerpt":"')
        entry["projection"] = text[:at] + ("X" if text[at] != "X" else "Y") + text[at + 1 :]

    def snapshot_hash(doc: dict[str, Any]) -> None:
        sha = doc["verdict"]["evidence_snapshot"][0]["projection_sha256"]
        doc["verdict"]["evidence_snapshot"][0]["projection_sha256"] = ("0" if sha[0] != "0" else "1") + sha[
            1:
        ]

    def verdict(doc: dict[str, Any]) -> None:
        doc["verdict"]["verdict"] = "REJECT"

    fails(excerpt, "excerpt")
    fails(snapshot_hash, "hash")
    fails(verdict, "verdict")

    for args, words in (
        (("receipt", "run-nobody", "d-ok"), "run run-nobody is unknown"),
        (("receipt", RUN, "d-none"), "no stored verdict of draft d-none"),
        (("receipt", RUN, "d-ok", "--attempt", "2"), "has no attempt 2"),
    ):
        result = cli(*args, env=audit_env)
        assert result.returncode == 2 and words in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1

    # The page reads the audit store: after the flush it still shows what the agent saw.
    from selenium.webdriver.common.by import By

    entry = next(codec.loads(v) for v in ledger if codec.loads(v)["tool_call_id"] == "call_gw")
    excerpts = [e["excerpt"] for e in codec.loads(entry["projection"])["evidence"]]
    with serving(settings.audit_db, tmp_path, env={"EC_TRUSTED_KEYS_FILE": str(public)}) as base:
        browser.get(f"{base}/runs/{RUN}")
        article = browser.find_element(By.ID, "shown-call_gw")
        assert [e.text for e in article.find_elements(By.CSS_SELECTOR, ".seen .excerpt")] == excerpts
        assert (
            article.find_element(By.CSS_SELECTOR, ".sig").text == f"signature verified (key {signer.key_id})"
        )
        assert article.find_elements(By.CSS_SELECTOR, "aside.conflict")
