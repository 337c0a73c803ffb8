"""The whole topology on the real broker and Redis: one worker per module, golden in → golden out."""

from __future__ import annotations

import asyncio
import uuid

import redis.asyncio as aioredis

from models.vocab import LedgerStatus
from streams import codec
from streams.hashing import sha256_hex
from streams.ledger.keys import ledger_key
from tests.integration.helpers import (
    Stack,
    golden_lines,
    load_golden_ledger,
    publish,
    read_topic,
)

RAW = golden_lines("pipe", "input.jsonl")
EXPECTED = golden_lines("pipe", "expected_projection.jsonl")


async def test_golden_raw_hits_end_to_end(stack: Stack) -> None:
    await publish(stack.kafka, stack.topic("raw-hits"), RAW)
    letters_expected = [codec.loads(e)["dead_letter"] for e in EXPECTED if e.startswith(b'{"dead_letter"')]
    with_ids = [d for d in letters_expected if d["run_id"]]
    projected = await stack.values("projected", len(RAW) - len(letters_expected) + len(with_ids))
    expected = {}
    for raw, exp in zip(RAW, EXPECTED, strict=True):
        if not exp.startswith(b'{"dead_letter"'):
            doc = codec.loads(raw)
            expected[(doc["run_id"], doc["tool_call_id"])] = exp
    ok = {(p["run_id"], p["tool_call_id"]): p for p in projected if p["status"] == "OK"}
    assert {k: p["projection"].encode() for k, p in ok.items()} == expected
    assert all(p["projection_sha256"] == sha256_hex(p["projection"].encode()) for p in ok.values())
    assert all(p["origin"]["topic"] == stack.topic("raw-hits") for p in projected)

    ledger = await stack.values("ledger", len(projected))
    assert len({(e["run_id"], e["tool_call_id"]) for e in ledger}) == len(projected)
    client = aioredis.Redis.from_url(stack.redis)
    try:
        for (run_id, tool_call_id), exp in expected.items():
            stored = await client.hgetall(ledger_key(stack.ns, run_id, tool_call_id))
            assert stored[b"status"] == b"READY" and stored[b"projection"] == exp
            assert stored[b"projection_sha256"] == sha256_hex(exp).encode()
        for d in with_ids:
            stored = await client.hgetall(ledger_key(stack.ns, d["run_id"], d["tool_call_id"]))
            assert stored[b"status"] == LedgerStatus.FAILED.encode()
            assert stored[b"failure_reason"] == d["reason"].encode()
            assert b"projection" not in stored
    finally:
        await client.aclose()

    letters = await stack.values("dead-letters", len(letters_expected), settle=2.0)
    assert sorted((d["reason"], d["run_id"], d["tool_call_id"]) for d in letters) == sorted(
        (d["reason"], d["run_id"], d["tool_call_id"]) for d in letters_expected
    )
    assert all(d["source"]["topic"] == stack.topic("raw-hits") and d["value_sha256"] for d in letters)

    audits_expected = len(RAW) + len(letters_expected) + 2 * len(projected)
    audits = await stack.values("audit", audits_expected, settle=2.0)
    by_station: dict[str, int] = {}
    for a in audits:
        by_station[a["station"]] = by_station.get(a["station"], 0) + 1
    assert by_station == {
        "postprocess": len(RAW),
        "dead-letter": len(letters_expected),
        "project": len(projected),
        "ledger": len(projected),
    }


async def test_guard_golden_verdicts(stack: Stack) -> None:
    await load_golden_ledger(stack.redis, stack.ns)
    drafts = golden_lines("guard", "drafts.jsonl")
    await publish(stack.kafka, stack.topic("diagnosis-drafts"), drafts)
    verdicts = await stack.values("verdicts", len(drafts))
    expected = {
        codec.loads(e)["draft_sha256"]: codec.loads(e)
        for e in golden_lines("guard", "expected_verdicts.jsonl")
    }

    def comparable(v: dict) -> dict:
        out = {k: x for k, x in v.items() if k not in ("event_id", "origin", "source_timestamp")}
        out["violations"] = sorted((x["code"], x["path"]) for x in v["violations"])
        return out

    assert {v["draft_sha256"]: comparable(v) for v in verdicts} == {
        k: comparable(e) for k, e in expected.items()
    }
    origin = "{topic}:{partition}:{offset}:{timestamp}"
    assert all(v["event_id"] == f"guard:{origin.format(**v['origin'])}" for v in verdicts)
    violations = await stack.values("violations", sum(v["violation_count"] for v in verdicts), settle=2.0)
    assert len(violations) == sum(v["violation_count"] for v in verdicts)
    by_verdict = {v["event_id"]: v for v in verdicts}
    for event in violations:
        verdict_id, index = event["event_id"].rsplit("#", 1)
        assert by_verdict[verdict_id]["violations"][int(index)]["code"] == event["code"]


async def test_write_once_duplicate_and_conflict(stack: Stack) -> None:
    run_id = f"run-wo-{uuid.uuid4().hex[:6]}"
    projection = codec.dumps(
        {
            "evidence_status": "NO_EVIDENCE",
            "tool_call_id": "call_wo",
            "query": "q",
            "evidence": [],
            "returned_count": 0,
            "relevance_level": None,
            "truncated": False,
        }
    )
    event = {
        "run_id": run_id,
        "tool_call_id": "call_wo",
        "event_id": None,
        "origin": None,
        "source_timestamp": None,
        "status": "OK",
        "failure_reason": None,
        "projection": projection.decode(),
        "projection_sha256": sha256_hex(projection),
    }
    changed = projection.replace(b'"q"', b'"q2"')
    conflicting = dict(event, projection=changed.decode(), projection_sha256=sha256_hex(changed))
    await publish(stack.kafka, stack.topic("projected"), [codec.dumps(event)])
    key = ledger_key(stack.ns, run_id, "call_wo")
    client = aioredis.Redis.from_url(stack.redis)
    try:
        for _ in range(120):
            if await client.exists(key):
                break
            await asyncio.sleep(0.5)
        first = await client.hgetall(key)
        assert first[b"projection"] == projection
        await publish(stack.kafka, stack.topic("projected"), [codec.dumps(event), codec.dumps(conflicting)])

        def mine(values: list[bytes]) -> list[dict]:
            return [
                a for a in map(codec.loads, values) if a.get("run_id") == run_id and a["station"] == "ledger"
            ]

        raw = await read_topic(stack.kafka, stack.topic("audit"), until=lambda v: len(mine(v)) >= 3)
        assert [a["fields"]["outcome"] for a in mine(raw)] == ["WRITTEN", "DUPLICATE", "CONFLICT"]
        assert await client.hgetall(key) == first  # what the agent was shown is never overwritten
        letters = await read_topic(
            stack.kafka,
            stack.topic("dead-letters"),
            until=lambda v: any(codec.loads(x).get("run_id") == run_id for x in v),
        )
        conflict = [d for d in map(codec.loads, letters) if d.get("run_id") == run_id]
        assert [d["reason"] for d in conflict] == ["LEDGER_CONFLICT"]
    finally:
        await client.aclose()


async def test_topology_matches_the_offline_pipeline_on_new_cases(stack: Stack) -> None:
    """Cases not in golden/: the workers produce exactly what ``pipe`` (the same stations) produces."""
    from streams.pipeline import StationRules, process_lookup, process_raw_hits
    from streams.settings import Settings

    def record(tool_call_id: str, hits: list[dict], status: str = "supported", query: str = "q") -> bytes:
        return codec.dumps(
            {
                "run_id": "run-new",
                "tool_call_id": tool_call_id,
                "response": {"query": query, "hits": hits, "evidence_status": status},
            }
        )

    def hit(key: str, doc: str, score: float, text: str = "正文") -> dict:
        return {
            "evidence_key": key,
            "document_id": doc,
            "source": doc,
            "excerpt": text,
            "quality_score": score,
        }

    cases = [
        record("c-astral", [hit("e#chunk-0", "e", 0.8, "𝒜" * 1500), hit("e#chunk-1", "e", 0.9, "🔥")]),
        record("c-caps", [hit(f"d{i % 3}#chunk-{i}", f"d{i % 3}", 0.99 - i / 100) for i in range(12)]),
        record("c-dup", [hit("k#chunk-1", "k", 0.4), hit("j", "j", 0.95), hit("k#chunk-1", "k", 0.99)]),
        record("c-noev", [hit("x#chunk-0", "x", 0.9)], status="no_evidence"),
        record("c-query", [], query="问" * 700),
        record("c-big", [hit(f"b{i}#chunk-0", f"b{i}", 0.9, "字" * 3000) for i in range(5)]),
        codec.dumps(
            {
                "run_id": "run-new",
                "tool_call_id": "c-nan",
                "response": {"query": "q", "hits": [], "evidence_status": "supported", "x": 1},
            }
        ).replace(b'"x":1', b'"x":NaN'),
        codec.dumps(
            {
                "run_id": "run-new",
                "tool_call_id": "c-bool",
                "response": {"query": "q", "evidence_status": "supported", "hits": [hit("a", "a", True)]},
            }
        ),  # type: ignore[arg-type]
    ]
    await publish(stack.kafka, stack.topic("raw-hits"), cases)
    rules = StationRules.from_settings(Settings())
    expected: dict[str, tuple[str, str | None]] = {}
    for raw in cases:
        outcome = process_raw_hits(raw, rules)
        if outcome.lookup is None:
            continue
        if outcome.lookup["status"] == "FAILED":
            expected[outcome.lookup["tool_call_id"]] = ("FAILED", None)
            continue
        projection = process_lookup(codec.dumps(outcome.lookup), rules).projection
        assert projection is not None
        expected[outcome.lookup["tool_call_id"]] = ("READY", projection.canonical.decode())
    assert len(expected) == 7  # the NaN record is MALFORMED_JSON without readable ids

    def mine(values: list[bytes]) -> dict[str, dict]:
        return {e["tool_call_id"]: e for e in map(codec.loads, values) if e["run_id"] == "run-new"}

    ledger = await read_topic(
        stack.kafka, stack.topic("ledger"), until=lambda v: len(mine(v)) >= len(expected)
    )
    got = {t: (e["status"], e["projection"]) for t, e in mine(ledger).items()}
    assert got == expected
