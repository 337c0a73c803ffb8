"""Publish (SPEC 4.3) on the real broker and Redis: a guard worker turns the golden drafts into exactly
one ``reports`` event per PASS or FALLBACK verdict and none for a REJECT, the report holds only the
reviewed fields, it is signed when the guard signs, and a replay of the drafts repeats its bytes and the
verdicts' bytes, the review's CLAIM_* violations among them (issue 31, acceptance 2); one report per
draft however often it is sent (issue 38 M4)."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
from collections import defaultdict
from pathlib import Path

import redis.asyncio as aioredis

from streams import codec
from streams.hashing import sha256_hex
from streams.kafka.admin import ensure_topics
from streams.ledger.keys import report_claim_key
from streams.settings import Settings
from streams.trust import generate_key_pair
from streams.trust.keys import TrustedKeys
from tests.integration.helpers import (
    CLI,
    Worker,
    golden_lines,
    load_golden_ledger,
    publish,
    read_topic,
    worker_env,
)
from tests.integration.test_redis_acl import command, login_url, rules

REVIEWED_KEYS = ["analysis", "conclusion", "action_plan", "limitations"]


def with_unknown_fields(raw: bytes) -> bytes:
    """d-pass as another draft, with fields the guard never judges at every level."""
    draft = codec.loads(raw)
    draft["draft_id"] = "d-extra"
    draft["internal_notes"] = "the model's scratchpad"
    draft["analysis"][0]["confidence"] = 0.97
    draft["conclusion"]["raw_prompt"] = "..."
    draft["action_plan"][0]["owner"] = "someone"
    return codec.dumps(draft)


async def test_one_report_per_pass_or_fallback_and_a_replay_repeats_its_bytes(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    signer, private, _ = generate_key_pair(tmp_path, "guard", "guard")
    env = worker_env(
        unique_prefix, kafka_bootstrap, redis_url, EC_AGENTS="guard", EC_SIGNING_KEY_FILE=str(private)
    )
    settings = Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=unique_prefix, topic_partitions=3)
    await ensure_topics(settings)
    await load_golden_ledger(redis_url, env["EC_NS"])
    golden = golden_lines("guard", "drafts.jsonl")
    extra = with_unknown_fields(next(d for d in golden if b'"d-pass"' in d))
    drafts = [*golden, extra]
    await publish(kafka_bootstrap, settings.topic("diagnosis-drafts"), drafts)

    worker = Worker(env, tmp_path / "worker.log").start()
    try:
        verdicts = [
            codec.loads(v)
            for v in await read_topic(
                kafka_bootstrap, settings.topic("verdicts"), until=lambda v: len(v) >= len(drafts)
            )
        ]
        assert len(verdicts) == len(drafts), worker.log_tail()
        codes = {x["code"] for v in verdicts for x in v["violations"]}
        assert {
            "CLAIM_NUMBER_UNSUPPORTED",
            "CLAIM_IDENTIFIER_UNSUPPORTED",
            "CLAIM_QUOTE_UNSUPPORTED",
        } <= codes
        publishing = [v for v in verdicts if v["verdict"] in ("PASS", "FALLBACK")]
        assert {v["verdict"] for v in publishing} == {"PASS", "FALLBACK"}
        assert any(v["verdict"] == "REJECT" for v in verdicts)
        first = await read_topic(
            kafka_bootstrap,
            settings.topic("reports"),
            until=lambda v: len(v) >= len(publishing),
            settle=2.0,
        )
    finally:
        worker.stop()  # graceful: its offsets are committed

    reports = [codec.loads(r) for r in first]
    # exactly one per PASS or FALLBACK verdict, none for a REJECT
    assert sorted(r["verdict_event_id"] for r in reports) == sorted(v["event_id"] for v in publishing)
    by_verdict = {v["event_id"]: v for v in verdicts}
    by_sha = {sha256_hex(d): d for d in drafts}
    trusted = TrustedKeys.from_hex(guard=[signer.public_hex])
    for report in reports:
        verdict = by_verdict[report["verdict_event_id"]]
        assert report["event_id"] == "publish:" + verdict["event_id"].removeprefix("guard:")
        assert (report["run_id"], report["draft_id"], report["attempt"], report["verdict"]) == (
            verdict["run_id"],
            verdict["draft_id"],
            verdict["attempt"],
            verdict["verdict"],
        )
        assert report["draft_sha256"] == verdict["draft_sha256"]
        assert trusted.verify_report(report) is None
        if verdict["verdict"] == "FALLBACK":
            assert report["report"] == verdict["fallback_report"]
            continue
        assert list(report["report"]) == REVIEWED_KEYS
        draft = codec.loads(by_sha[verdict["draft_sha256"]])
        assert report["report"]["limitations"] == draft["limitations"]
        assert [a["id"] for a in report["report"]["analysis"]] == [a["id"] for a in draft["analysis"]]
    (extra_report,) = [r for r in reports if r["draft_id"] == "d-extra"]
    (plain_report,) = [r for r in reports if r["draft_id"] == "d-pass"]
    assert extra_report["report"] == plain_report["report"]  # nothing the guard did not judge rode along
    for name in (b"internal_notes", b"confidence", b"raw_prompt", b"owner"):
        assert name not in codec.dumps(extra_report)

    # Replay the drafts (the workers stopped, their offsets moved back to 0): the same reports and the same
    # verdicts, byte for byte, those rejected for an unsupported number, key or quotation included.
    done = await asyncio.to_thread(
        subprocess.run,  # our own console script
        [CLI, "replay", "--topic", "diagnosis-drafts", "--mode", "reset", "--from-offset", "0", "--yes"],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    again = Worker(env, tmp_path / "worker2.log").start()
    try:
        both = await read_topic(
            kafka_bootstrap,
            settings.topic("reports"),
            until=lambda v: len(v) >= 2 * len(publishing),
            settle=2.0,
        )
        judged_twice = await read_topic(
            kafka_bootstrap, settings.topic("verdicts"), until=lambda v: len(v) >= 2 * len(drafts), settle=2.0
        )
    finally:
        again.stop()
    twice: dict[str, list[bytes]] = defaultdict(list)
    for value in judged_twice:
        twice[codec.loads(value)["event_id"]].append(value)
    assert len(judged_twice) == 2 * len(drafts), again.log_tail()
    assert all(len(values) == 2 and values[0] == values[1] for values in twice.values())
    claimed = [v for v in twice.values() if b'"CLAIM_NUMBER_UNSUPPORTED"' in v[0]]
    assert claimed and all(codec.loads(v[0])["verdict"] != "PASS" for v in claimed)
    copies: dict[str, list[bytes]] = defaultdict(list)
    for value in both:
        copies[codec.loads(value)["event_id"]].append(value)
    assert len(both) == 2 * len(publishing), again.log_tail()
    assert all(len(values) == 2 and values[0] == values[1] for values in copies.values())


async def test_a_draft_sent_again_and_another_under_its_triple_leave_one_report(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    """Issue 38 M4: the same draft twice (the docs call a resend safe), then another draft under the same
    run, draft_id and attempt — three verdicts, one report. The guard worker logs in as ec-guard, made
    from deploy/redis/users.acl for this namespace: reading the ledger and taking its claims is all it
    may do, and all it needs."""
    ns = unique_prefix.rstrip("-.")
    async with aioredis.Redis.from_url(redis_url) as admin:
        version = str((await admin.info("server"))["redis_version"])
        name, password = f"{unique_prefix}ec-guard", secrets.token_hex(16)
        await command(admin, "ACL", "SETUSER", name, *rules("ec-guard", version, ns), f">{password}")
        try:
            signer, private, _ = generate_key_pair(tmp_path, "guard", "guard")
            env = worker_env(
                unique_prefix,
                kafka_bootstrap,
                login_url(redis_url, name, password),
                EC_AGENTS="guard",
                EC_SIGNING_KEY_FILE=str(private),
            )
            settings = Settings(
                kafka_bootstrap=kafka_bootstrap, topic_prefix=unique_prefix, topic_partitions=3
            )
            await ensure_topics(settings)
            await load_golden_ledger(redis_url, env["EC_NS"])
            first = next(d for d in golden_lines("guard", "drafts.jsonl") if b'"d-pass"' in d)
            other = codec.dumps(
                {**codec.loads(first), "limitations": ["another sender's draft, same triple"]}
            )
            await publish(kafka_bootstrap, settings.topic("diagnosis-drafts"), [first, first, other])
            worker = Worker(env, tmp_path / "worker.log").start()
            try:
                verdicts = [
                    codec.loads(v)
                    for v in await read_topic(
                        kafka_bootstrap, settings.topic("verdicts"), until=lambda v: len(v) >= 3
                    )
                ]
                reports = await read_topic(
                    kafka_bootstrap, settings.topic("reports"), until=lambda v: len(v) >= 1, settle=3.0
                )
            finally:
                worker.stop()
            claim = await admin.get(report_claim_key(ns, "run-g", "d-pass", 1))
        finally:
            await command(admin, "ACL", "DELUSER", name)
            keys = [key async for key in admin.scan_iter(match=f"{ns}:*")]
            if keys:
                await admin.delete(*keys)
    assert [v["verdict"] for v in verdicts] == ["PASS"] * 3, worker.log_tail()
    assert len(reports) == 1, worker.log_tail()
    (report,) = [codec.loads(r) for r in reports]
    assert report["verdict_event_id"] == verdicts[0]["event_id"]
    assert report["draft_sha256"] == sha256_hex(first) == verdicts[0]["draft_sha256"]
    assert TrustedKeys.from_hex(guard=[signer.public_hex]).verify_report(report) is None
    assert claim == f"{sha256_hex(first)} {verdicts[0]['event_id']}".encode()
