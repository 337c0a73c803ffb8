"""Signing on a real worker (SPEC 3.7, 4.1): entries signed as stored, re-delivery byte-identical, a
forgery in Redis with a recomputed hash judged LEDGER_PAYLOAD_TAMPERED, an untrusted own key refused."""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from streams import codec
from streams.hashing import sha256_hex
from streams.kafka.admin import ensure_topics
from streams.ledger.keys import ledger_key
from streams.settings import Settings
from streams.trust import Signer, TrustedKeys, generate_key_pair
from tests.integration.helpers import CLI, Worker, golden_lines, new_prefix, publish, read_topic, worker_env

RAW = golden_lines("pipe", "input.jsonl")


class Signed:
    def __init__(self, prefix: str, kafka: str, redis: str, worker: Worker, signer: Signer) -> None:
        self.prefix, self.kafka, self.redis, self.worker, self.signer = prefix, kafka, redis, worker, signer
        self.ns = prefix.rstrip("-.")

    async def values(self, name: str, count: int, **options: Any) -> list[bytes]:
        raw = await read_topic(
            self.kafka, f"{self.prefix}{name}", until=lambda v: len(v) >= count, wait_seconds=90, **options
        )
        assert len(raw) >= count, f"{name}: {len(raw)} of {count}\n{self.worker.log_tail()}"
        return raw


@pytest.fixture(scope="module")
def signed(
    kafka_bootstrap: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Signed]:
    keys = tmp_path_factory.mktemp("keys")
    signer, private, public = generate_key_pair(keys, "worker", "ledger")
    # one worker runs every agent here: its key signs entries and verdicts, so it is trusted in both roles
    public.write_text(f"{signer.trusted_line('ledger')}\n{signer.trusted_line('guard')}\n", encoding="utf-8")
    prefix = new_prefix()
    env = worker_env(
        prefix, kafka_bootstrap, redis_url, EC_SIGNING_KEY_FILE=str(private), EC_TRUSTED_KEYS_FILE=str(public)
    )
    settings = Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, topic_partitions=3)
    asyncio.run(ensure_topics(settings))
    worker = Worker(env, Path(tmp_path_factory.mktemp("worker")) / "worker.log").start()
    try:
        yield Signed(prefix, kafka_bootstrap, redis_url, worker, signer)
    finally:
        worker.stop()


async def test_entries_are_signed_and_redelivery_repeats_the_same_bytes(signed: Signed) -> None:
    ready = [
        line for line in golden_lines("pipe", "expected_projection.jsonl") if not line.startswith(b'{"dead')
    ]
    await publish(signed.kafka, f"{signed.prefix}raw-hits", RAW)
    first = await signed.values("ledger", len(ready))
    await publish(signed.kafka, f"{signed.prefix}raw-hits", RAW)  # the same records again: re-delivery
    both = await signed.values("ledger", 2 * len(first), settle=1.0)
    trusted = TrustedKeys.from_hex(ledger=[signed.signer.public_hex])
    by_key: dict[tuple[str, str], set[bytes]] = {}
    for value in both:
        doc = codec.loads(value)
        by_key.setdefault((doc["run_id"], doc["tool_call_id"]), set()).add(value)
        assert doc["key_id"] == signed.signer.key_id
        assert trusted.verify_entry(doc) is None
    assert all(len(values) == 1 for values in by_key.values()), (
        "a re-delivered record changed its ledger event"
    )
    async with aioredis.from_url(signed.redis) as client:
        doc = codec.loads(first[0])
        stored = await client.hgetall(ledger_key(signed.ns, doc["run_id"], doc["tool_call_id"]))
    # a Redis hash has no field order to speak of once a value is long (hashtable encoding)
    assert stored[b"key_id"].decode() == doc["key_id"] and stored[b"signature"].decode() == doc["signature"]


def draft_citing(run_id: str, tool_call_id: str, draft_id: str) -> bytes:
    return codec.dumps(
        {
            "run_id": run_id,
            "draft_id": draft_id,
            "attempt": 1,
            "analysis": [
                {"id": "a1", "kind": "NORMAL", "content": "网关超时", "tool_call_ids": [tool_call_id]}
            ],
            "conclusion": {"content": "见 a1", "based_on_analysis_ids": ["a1"]},
            "action_plan": [],
            "limitations": ["只看了知识库"],
        }
    )


async def test_a_forged_entry_with_a_recomputed_hash_is_tampered(signed: Signed) -> None:
    docs = [codec.loads(v) for v in await signed.values("ledger", 1)]
    found = [d for d in docs if d["status"] == "READY" and d["evidence_status"] == "EVIDENCE_FOUND"]
    honest, victim = found[0], found[-1]
    assert (honest["run_id"], honest["tool_call_id"]) != (victim["run_id"], victim["tool_call_id"])
    forged = victim["projection"].replace('"excerpt":"', '"excerpt":"已确认：', 1)
    key = ledger_key(signed.ns, victim["run_id"], victim["tool_call_id"])
    async with aioredis.from_url(signed.redis) as client:  # what anyone holding the password could do
        await client.hset(
            key, mapping={"projection": forged, "projection_sha256": sha256_hex(forged.encode())}
        )
    tag = uuid.uuid4().hex[:6]
    await publish(
        signed.kafka,
        f"{signed.prefix}diagnosis-drafts",
        [
            draft_citing(honest["run_id"], honest["tool_call_id"], f"honest-{tag}"),
            draft_citing(victim["run_id"], victim["tool_call_id"], f"forged-{tag}"),
        ],
    )
    raw = await read_topic(
        signed.kafka,
        f"{signed.prefix}verdicts",
        until=lambda v: sum(tag.encode() in x for x in v) >= 2,
        wait_seconds=90,
    )
    verdicts = {codec.loads(v)["draft_id"]: codec.loads(v) for v in raw if tag.encode() in v}
    assert verdicts[f"honest-{tag}"]["verdict"] == "PASS", signed.worker.log_tail()
    forged_verdict = verdicts[f"forged-{tag}"]
    assert forged_verdict["verdict"] == "REJECT"
    assert [v["code"] for v in forged_verdict["violations"]] == ["LEDGER_PAYLOAD_TAMPERED"]
    trusted = TrustedKeys.from_hex(guard=[signed.signer.public_hex])
    assert all(trusted.verify_verdict(v) is None for v in verdicts.values())


def test_a_worker_whose_own_key_is_not_trusted_refuses_to_start(
    kafka_bootstrap: str, redis_url: str, tmp_path: Path
) -> None:
    own, private, _ = generate_key_pair(tmp_path, "own", "ledger")
    _, _, other = generate_key_pair(tmp_path, "other", "ledger")
    env = worker_env(
        new_prefix(),
        kafka_bootstrap,
        redis_url,
        EC_SIGNING_KEY_FILE=str(private),
        EC_TRUSTED_KEYS_FILE=str(other),
    )
    done = subprocess.run([CLI, "worker"], env=env, capture_output=True, timeout=60, check=False)  # noqa: S603
    assert done.returncode == 2, done.stderr.decode()[-2000:]
    assert b"does not trust it as a ledger key" in done.stderr
    assert b"Traceback" not in done.stderr
    # SPEC 3.7: trusted, but only as a ledger key, it cannot run the guard (its verdicts would not verify)
    ledger_only = tmp_path / "ledger-only.keys"
    ledger_only.write_text(f"{own.trusted_line('ledger')}\n", encoding="utf-8")
    env |= {"EC_TRUSTED_KEYS_FILE": str(ledger_only), "EC_AGENTS": "guard"}
    done = subprocess.run([CLI, "worker"], env=env, capture_output=True, timeout=60, check=False)  # noqa: S603
    assert done.returncode == 2, done.stderr.decode()[-2000:]
    assert b"does not trust it as a guard key" in done.stderr and b"Traceback" not in done.stderr
    # a bare key line (trusted keys before roles) is a configuration error naming the line
    bare = tmp_path / "bare.keys"
    bare.write_text(f"# the old format\n{own.public_hex}\n", encoding="utf-8")
    env |= {"EC_TRUSTED_KEYS_FILE": str(bare), "EC_AGENTS": "ledger"}
    done = subprocess.run([CLI, "worker"], env=env, capture_output=True, timeout=60, check=False)  # noqa: S603
    assert done.returncode == 2, done.stderr.decode()[-2000:]
    assert b"line 2" in done.stderr and b"ledger <key>" in done.stderr and b"Traceback" not in done.stderr
