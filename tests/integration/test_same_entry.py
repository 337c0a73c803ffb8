"""One "same entry?" rule (issue 20, item 1): the Lua script of the real ``RedisLedgerStore`` answers
as ``streams.ledger.store.write_outcome`` and the ``MemoryLedgerStore`` do, case by case (SPEC 3.6:
compare ``projection_sha256`` and status only). Lua cannot call the Python rule, so this table holds
the three to one answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import pytest

from models.ledger import LEDGER_ENTRY_FIELDS, LedgerEntry
from models.vocab import LedgerOutcome, LedgerStatus
from streams.hashing import sha256_hex
from streams.ledger.memory import MemoryLedgerStore
from streams.ledger.store import write_outcome
from tests.integration.helpers import redis_store

TEXT = '{"query":"网关超时怎么排查","hits":[]}'
OTHER_TEXT = '{"query":"网关超时怎么排查","hits":[{}]}'
SHA, OTHER_SHA = sha256_hex(TEXT.encode("utf-8")), sha256_hex(OTHER_TEXT.encode("utf-8"))


def entry(status: str = "READY", **fields: Any) -> dict[str, Any]:
    """An entry as the ledger station asks to write it: READY with TEXT unless told otherwise."""
    base: dict[str, Any] = dict.fromkeys(LEDGER_ENTRY_FIELDS)
    base.update(
        event_id="ev-1",
        status=status,
        origin={"topic": "raw-hits", "partition": 0, "offset": 7, "timestamp": 1_700_000_000_000},
        source_timestamp=1_700_000_000_000,
    )
    if status == "READY":
        base.update(evidence_status="EVIDENCE_FOUND", projection=TEXT, projection_sha256=SHA)
    else:
        base.update(failure_reason="SCHEMA_VIOLATION")
    base.update(fields)
    return base


@dataclass(frozen=True)
class Case:
    name: str
    first: dict[str, Any]
    second: dict[str, Any]
    expected: LedgerOutcome


CASES = [
    Case("same sha and status", entry(), entry(), LedgerOutcome.DUPLICATE),
    Case("same sha, other status", entry(), entry("FAILED", projection_sha256=SHA), LedgerOutcome.CONFLICT),
    Case(
        "other sha, same status",
        entry(),
        entry(projection=OTHER_TEXT, projection_sha256=OTHER_SHA),
        LedgerOutcome.CONFLICT,
    ),
    Case("FAILED, then READY", entry("FAILED"), entry(), LedgerOutcome.CONFLICT),
    Case("READY, then FAILED", entry(), entry("FAILED"), LedgerOutcome.CONFLICT),
    Case("FAILED twice, both without a sha", entry("FAILED"), entry("FAILED"), LedgerOutcome.DUPLICATE),
    Case(
        "FAILED twice, other failure reason (not compared)",
        entry("FAILED"),
        entry("FAILED", failure_reason="INPUT_TOO_LARGE"),
        LedgerOutcome.DUPLICATE,
    ),
    Case(
        "FAILED without a sha, then FAILED with one",
        entry("FAILED"),
        entry("FAILED", projection_sha256=SHA),
        LedgerOutcome.CONFLICT,
    ),
    Case(
        "an empty sha is not a null one",
        entry("FAILED"),
        entry("FAILED", projection_sha256=""),
        LedgerOutcome.CONFLICT,
    ),
    Case(
        "the same bytes under another event_id and origin",
        entry(),
        entry(event_id="ev-2", origin={"topic": "raw-hits", "partition": 3, "offset": 99, "timestamp": None}),
        LedgerOutcome.DUPLICATE,
    ),
    Case(
        "the same sha and status over another projection text (not compared)",
        entry(),
        entry(projection=OTHER_TEXT),
        LedgerOutcome.DUPLICATE,
    ),
    Case(
        "status as the enum, then as text", entry(LedgerStatus.READY), entry("READY"), LedgerOutcome.DUPLICATE
    ),
]


def test_the_rule_alone() -> None:
    for case in CASES:
        assert write_outcome(None, case.second) == LedgerOutcome.WRITTEN, case.name
        assert write_outcome(case.first, case.second) == case.expected, case.name


@pytest.mark.parametrize("in_one_batch", [False, True], ids=["two batches", "one batch"])
async def test_redis_memory_and_the_rule_give_one_answer(
    redis_url: str, unique_prefix: str, in_one_batch: bool
) -> None:
    """Each case on its own key: the first write is WRITTEN everywhere; the second is what the rule says,
    over the entry as each store holds it, and changes nothing."""
    ns = unique_prefix.rstrip("-")
    firsts = [_keyed(c.first, i) for i, c in enumerate(CASES)]
    seconds = [_keyed(c.second, i) for i, c in enumerate(CASES)]
    redis, memory = redis_store(redis_url, ns), MemoryLedgerStore(ns=ns)
    try:
        if in_one_batch:  # the second write of each case sees the first within one pipeline
            redis_results = await redis.write_many(firsts + seconds)
            memory_results = await memory.write_many(firsts + seconds)
            redis_firsts, redis_seconds = redis_results[: len(CASES)], redis_results[len(CASES) :]
            memory_firsts, memory_seconds = memory_results[: len(CASES)], memory_results[len(CASES) :]
            redis_held = memory_held = None
        else:
            redis_firsts, memory_firsts = await redis.write_many(firsts), await memory.write_many(firsts)
            keys = [(e["run_id"], e["tool_call_id"]) for e in firsts]
            redis_held, memory_held = await redis.read_many(keys), await memory.read_many(keys)
            redis_seconds, memory_seconds = await redis.write_many(seconds), await memory.write_many(seconds)
        for i, case in enumerate(CASES):
            key = (firsts[i]["run_id"], firsts[i]["tool_call_id"])
            assert redis_firsts[i].outcome == memory_firsts[i].outcome == LedgerOutcome.WRITTEN, case.name
            answers = {
                "redis": redis_seconds[i].outcome,
                "memory": memory_seconds[i].outcome,
                "rule": write_outcome(firsts[i], seconds[i]),
            }
            if redis_held is not None and memory_held is not None:
                # the rule over each store's own form of the stored entry (Redis: all text)
                answers["rule over Redis's entry"] = write_outcome(redis_held[key].entry, seconds[i])
                answers["rule over memory's entry"] = write_outcome(memory_held[key].entry, seconds[i])
            assert set(answers.values()) == {case.expected}, (case.name, answers)
            for stored in (redis_seconds[i].stored, memory_seconds[i].stored):  # the first entry stays
                assert stored["event_id"] == firsts[i]["event_id"], case.name
                assert stored["projection_sha256"] == firsts[i]["projection_sha256"], case.name
                assert stored["status"] == firsts[i]["status"], case.name
    finally:
        await redis.close()


def _keyed(fields: dict[str, Any], i: int) -> LedgerEntry:
    return cast(LedgerEntry, {**fields, "run_id": "run-same", "tool_call_id": f"call_{i}"})
